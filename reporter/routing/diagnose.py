"""Measuring rules: seeded samples of a pile or of a rule's wins, matches or domain misses,
every matched condition's span shown in context, and precision with a Wilson interval from labels."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from ..pool.overlay import load_overlay, pool_batches
from ..pool.reader import open_table
from .engine import Evaluator
from .fieldtext import FieldText
from .normalise import normalise_array
from .plan import compile_plan
from .samples import context_windows
from .specs import RuleBook

KINDS = ("wins", "matches", "domain-misses")


@dataclass(frozen=True)
class Sample:
    """One sampled work with its fate and every matched condition's span in context.

    `evidence_all` is routing.parquet's column (one span per text condition of the winner that
    matched, in the rule's order), or `[evidence]` (`[]` where that is null) for a release of an
    engine before routing.5, which lacks it. `contexts` holds a window per span as samples.json
    does: `evidence`'s first (`context`), then the others in the rule's order; empty without the pool.
    """

    work_id: str
    pile: str
    pending_reason: str | None
    winner: str | None
    title: str | None
    evidence: dict | None
    evidence_all: list[dict]
    context: dict | None
    contexts: list[dict]


def select_rows(routing: Path, book: RuleBook, *, pile: str | None = None, rule: str | None = None,
                kind: str = "wins", pool: Path | None = None, overlay: Path | None = None) -> np.ndarray:
    """Row positions (pool order) of a pile, or of a rule's wins, matches or domain misses."""
    table = pq.read_table(routing, columns=["pile", "winner", "matched", "shadow_matched"])
    df = pl.from_arrow(table)
    if pile is not None:
        if pile not in {p.name for p in book.piles}:
            raise InputError(f"unknown pile {pile!r}; piles: {', '.join(p.name for p in book.piles)}")
        mask = df["pile"] == pile
        return np.flatnonzero(mask.to_numpy())
    rules = {r.id: r for r in book.rules}
    if rule not in rules:
        raise InputError(f"unknown rule {rule!r}; the rule book has {len(rules)} rules (see specs/rules/)")
    r = rules[rule]
    if kind not in KINDS:
        raise InputError(f"unknown sample kind {kind!r}; use one of {', '.join(KINDS)}")
    if kind == "wins":
        if r.shadow:
            raise InputError(f"rule {rule!r} is a shadow rule: it never wins; sample its matches")
        mask = (df["winner"] == rule) & (df["pile"] == r.pile)
        return np.flatnonzero(mask.fill_null(False).to_numpy())
    col = "shadow_matched" if r.shadow else "matched"
    matched = df[col].list.contains(rule).to_numpy()
    if kind == "matches":
        return np.flatnonzero(matched)
    if r.domain is None:
        raise InputError(f"rule {rule!r} has no domain, so it has no domain misses")
    if pool is None:
        raise InputError("sampling domain misses needs the pool (--pool or a workspace)")
    kinds = {p.name: p.kind for p in book.piles}
    paying = df["pile"].replace_strict(kinds, default=None).to_numpy() == "screen"
    domain = _evaluate(book, r.domain, pool, overlay, len(df))
    return np.flatnonzero(domain & ~matched & paying)


def _evaluate(book: RuleBook, pred, pool: Path, overlay: Path | None, rows: int) -> np.ndarray:
    source = open_table(pool, "pool")
    plan = compile_plan(book, source.schema)
    ov = load_overlay(overlay) if overlay else None
    out = []
    for batch in source.batches(list(plan.columns)):
        if ov is not None:
            batch = ov.apply(batch)
        fields = {f: FieldText(batch.column(f), plan.scanners[f]) for f in ("title", "abstract")}
        out.append(Evaluator(plan, batch, fields).eval(pred))
    result = np.concatenate(out) if out else np.zeros(0, dtype=bool)
    if len(result) != rows:
        raise InputError(f"{pool}: has {len(result)} rows but the release routed {rows}; "
                         "use the pool the release was routed from")
    return result


def sample(routing: Path, positions: np.ndarray, n: int, seed: int,
           pool: Path | None = None, overlay: Path | None = None) -> list[Sample]:
    """A seeded sample of n of the given rows, ordered by work_id, with context from the pool."""
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(positions)), min(n, len(positions))))
    rows = positions[picked] if len(positions) else positions
    table = pq.read_table(routing).take(pa.array(rows, pa.int64())).to_pylist()
    texts: dict[str, dict] = {}
    if pool is not None and table:
        texts = _pool_text(pool, overlay, [r["work_id"] for r in table])
    out = []
    for r in table:
        t = texts.get(r["work_id"], {})
        ev = r["evidence"]
        spans = r["evidence_all"] if "evidence_all" in r else ([ev] if ev else [])
        contexts = context_windows([(s["field"], s["start"], s["end"]) for s in _best_first(ev, spans)
                                    if t.get(s["field"]) is not None], t.get)
        out.append(Sample(r["work_id"], r["pile"], r["pending_reason"], r["winner"], t.get("raw_title"), ev,
                          spans, contexts[0] if contexts else None, contexts))
    return sorted(out, key=lambda s: s.work_id)


def _best_first(best: dict | None, spans: list[dict]) -> list[dict]:
    """The spans with the best (routing.parquet's `evidence`) first, then the others in the rule's order."""
    if best is None:
        return spans
    at = (best["field"], best["start"], best["end"])
    return [best] + [s for s in spans if (s["field"], s["start"], s["end"]) != at]


def _pool_text(pool: Path, overlay: Path | None, ids: list[str]) -> dict[str, dict]:
    """Normalised (case-preserved) title and abstract of the given works."""
    found: dict[str, dict] = {}
    for batch in pool_batches(pool, overlay, ids, ("source", "title", "abstract")):
        title, _ = normalise_array(batch.column("title"))
        abstract, _ = normalise_array(batch.column("abstract"))
        for wid, raw, t, a in zip(batch.column("work_id").to_pylist(), batch.column("title").to_pylist(),
                                  title.to_pylist(), abstract.to_pylist()):
            found[wid] = {"raw_title": raw, "title": t, "abstract": a}
    return found
