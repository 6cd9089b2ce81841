"""Per-rule counting: one table of count shapes, each batch's counts, and rule_stats.json.

Every number a release shows is a sum over record batches of one of the
int64 arrays named in COUNTS. The table is the only list of them: the zero
totals of an empty pool, the arrays a batch fills and the sums the release
keeps are all allocated from it, so a new count is added in one place.
Shapes are written in the sizes of the plan:

- `1`: a single number (stored as an array of one);
- `R`: one per rule, in the plan's rule order (highest precedence first);
- `P`: one per pile, in piles.json order;
- `REASONS`: one per entry of REASONS (index 0: not pending).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InternalError

REASONS = (None, "unrouted", "no_text")
"""Pending reasons, as stored per row (index 0: the row is not pending)."""


class Count(NamedTuple):
    """One count of the table: its shape in the plan's sizes and what it counts."""

    shape: tuple[str, ...]
    what: str


COUNTS: dict[str, Count] = {
    "rows": Count(("1",), "rows routed"),
    "with_title": Count(("1",), "rows with a non-blank title"),
    "with_abstract": Count(("1",), "rows with a non-blank abstract"),
    "piles": Count(("P",), "rows per final pile"),
    "reasons": Count(("REASONS",), "rows per pending reason"),
    "title_only": Count(("1",), "rows screened on their title alone"),
    "matched": Count(("R",), "rows the rule's match hit"),
    "won": Count(("R",), "rows the rule won that went to its pile (non-shadow)"),
    "no_text": Count(("R",), "rows the rule won that were downgraded to pending/no_text (non-shadow)"),
    "outranked": Count(("R",), "rows the rule matched that a higher-precedence rule won (non-shadow)"),
    "would_win": Count(("R",), "rows a shadow rule would win if promoted"),
    "would_move": Count(("R",), "of those, rows whose pile would change"),
    "outranked_by": Count(("R", "R"), "[j, i]: rows rule j matched that rule i won"),
    "domain_rows": Count(("R",), "rows in the rule's domain"),
    "domain_matched": Count(("R",), "rows in the domain the rule matched"),
    "domain_miss": Count(("R",), "rows in the domain the rule missed that reached a paying pile"),
    "miss_winners": Count(("R", "R"), "[j, i]: domain misses of rule j that rule i won"),
    "overlap": Count(("R", "R"), "[i, j]: rows both rules matched (the diagonal is matched)"),
}


def count_shape(name: str, plan) -> tuple[int, ...]:
    """The numpy shape of one count for a plan."""
    sizes = {"1": 1, "R": len(plan.rule_ids), "P": len(plan.pile_names), "REASONS": len(REASONS)}
    return tuple(sizes[d] for d in COUNTS[name].shape)


def compile_empty_totals(plan) -> dict[str, np.ndarray]:
    """Every count of the table at zero, in its shape: the totals of a pool with no rows."""
    return {name: np.zeros(count_shape(name, plan), dtype=np.int64) for name in COUNTS}


def add_counts(totals: dict[str, np.ndarray], counts: dict[str, np.ndarray]) -> None:
    """Add one batch's counts into the running totals (both hold exactly the table's counts)."""
    if counts.keys() != totals.keys():
        raise InternalError(f"a batch counted {sorted(counts.keys() ^ totals.keys())} outside the count table")
    for name, value in counts.items():
        totals[name] += value


@dataclass(frozen=True)
class Decisions:
    """What routing decided for one batch: everything per-rule counting reads."""

    matched: np.ndarray
    """(rows, R) bool: rule j's match hit the row."""
    domain: np.ndarray
    """(rows, R) bool: the row is in rule j's domain (all false for a rule without one)."""
    has_domain: np.ndarray
    """(R,) bool: the rule has a domain."""
    winner: np.ndarray
    """Per row: the winning rule's index, -1 for none."""
    pile: np.ndarray
    """Per row: the final pile's index (after the no_text policy)."""
    reason: np.ndarray
    """Per row: index into REASONS."""
    downgraded: np.ndarray
    """Per row: a win downgraded to pending/no_text."""
    title_only: np.ndarray
    """Per row: screened on its title alone."""
    has_title: np.ndarray
    """Per row: a non-blank title."""
    has_abstract: np.ndarray
    """Per row: a non-blank abstract."""
    final_pile: Callable[[int, np.ndarray], np.ndarray]
    """final_pile(j, rows): the piles the rows would reach if rule j won them (the no_text policy applied)."""


def count_batch(plan, d: Decisions) -> tuple[dict[str, np.ndarray], dict[int, np.ndarray]]:
    """One batch's counts (every count of the table) and, per rule with domain misses, their row mask."""
    n, R = d.matched.shape
    c = compile_empty_totals(plan)
    M, winner = d.matched, d.winner
    won_any = winner >= 0
    c["rows"][0] = n
    c["with_title"][0] = d.has_title.sum()
    c["with_abstract"][0] = d.has_abstract.sum()
    c["piles"][:] = np.bincount(d.pile, minlength=len(plan.pile_names))
    c["reasons"][:] = np.bincount(d.reason, minlength=len(REASONS))
    c["title_only"][0] = d.title_only.sum()
    c["matched"][:] = M.sum(axis=0)
    win_counts = np.bincount(winner[won_any], minlength=R)
    nt_counts = np.bincount(winner[d.downgraded], minlength=R)
    paying_final = plan.paying[d.pile]
    miss_masks: dict[int, np.ndarray] = {}
    for j in range(R):
        mj = M[:, j]
        if plan.shadow[j]:
            ww = mj & ((winner < 0) | (winner > j))
            c["would_win"][j] = ww.sum()
            if c["would_win"][j]:
                c["would_move"][j] = (ww & (d.final_pile(j, ww) != d.pile)).sum()
        else:
            c["won"][j] = win_counts[j] - nt_counts[j]
            c["no_text"][j] = nt_counts[j]
            beaten = mj & won_any & (winner < j)
            c["outranked"][j] = beaten.sum()
            if c["outranked"][j]:
                c["outranked_by"][j] = np.bincount(winner[beaten], minlength=R)
        if d.has_domain[j]:
            dj = d.domain[:, j]
            c["domain_rows"][j] = dj.sum()
            c["domain_matched"][j] = (dj & mj).sum()
            miss = dj & ~mj & paying_final
            c["domain_miss"][j] = miss.sum()
            if c["domain_miss"][j]:
                c["miss_winners"][j] = np.bincount(winner[miss], minlength=R)
                miss_masks[j] = miss
    c["overlap"][:] = pair_counts(M)
    return c, miss_masks


def pair_counts(M: np.ndarray) -> np.ndarray:
    """(R, R) int64: rows where both rules matched, from a (rows, R) bool matrix.

    Exact integer arithmetic without a BLAS call (a large float product
    wakes BLAS's thread pool, whose spinning threads cost more CPU than the
    product). Sparse matches are summed rule by rule over the rows each rule
    matched; dense ones as bit columns, 64 rows a word.
    """
    n, R = M.shape
    out = np.zeros((R, R), dtype=np.int64)
    total = int(np.count_nonzero(M))
    if total * 64 > n * R and hasattr(np, "bitwise_count"):
        words = np.packbits(M, axis=0, bitorder="little")
        pad = (-len(words)) % 8
        if pad:
            words = np.concatenate([words, np.zeros((pad, R), dtype=np.uint8)])
        cols = np.ascontiguousarray(words.T).view(np.uint64)  # (R, n/64)
        for j in range(R):
            out[j, j:] = np.bitwise_count(cols[j:] & cols[j]).sum(axis=1)
    else:
        for j in np.flatnonzero(M.any(axis=0)):
            out[j, j:] = M[M[:, j], j:].sum(axis=0)
    return out + np.triu(out, 1).T


NO_SOURCE = "(no source)"
"""The key under which `sources` counts works whose `source` is null or blank."""


def count_sources(table) -> dict[str, int]:
    """Works per value of the pool's `source` column (one more pass over that one column), by name.

    A release statistic (`rule_stats.json` `sources`, engine routing.4): the first box of the
    release page's flow diagram. Null or blank sources are counted under NO_SOURCE.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    counts: dict[str, int] = {}
    for batch in table.batches(["source"]):
        column = batch.column(0)
        if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
            column = pc.cast(column, pa.string())
        for item in pc.value_counts(column).to_pylist():
            value = item["values"]
            key = value if value is not None and value.strip() else NO_SOURCE
            counts[key] = counts.get(key, 0) + int(item["counts"])
    return dict(sorted(counts.items()))


def build_rule_stats(plan, t: dict[str, np.ndarray], release_id: str, ov, replaced: int,
                     sources: dict[str, int] | None = None) -> dict:
    """rule_stats.json from the summed counts; fails loudly if the identity breaks."""
    ids = plan.rule_ids
    rules = []
    for j, rule in enumerate(plan.book.rules):
        shadow = bool(plan.shadow[j])
        has_domain = rule.domain is not None
        entry = {
            "id": rule.id, "description": rule.description, "file": rule.file, "pile": rule.pile,
            "precedence": rule.precedence, "shadow": shadow, "spec": rule.spec,
            "spec_text": json.dumps(rule.spec, indent=2, ensure_ascii=False),
            "matched": int(t["matched"][j]),
            "won": 0 if shadow else int(t["won"][j]),
            "no_text": 0 if shadow else int(t["no_text"][j]),
            "outranked": 0 if shadow else int(t["outranked"][j]),
            "would_win": int(t["would_win"][j]) if shadow else None,
            "would_move": int(t["would_move"][j]) if shadow else None,
            "domain": rule.spec.get("domain") if has_domain else None,
            "domain_rows": int(t["domain_rows"][j]) if has_domain else None,
            "domain_matched": int(t["domain_matched"][j]) if has_domain else None,
            "domain_miss": int(t["domain_miss"][j]) if has_domain else None,
            "domain_miss_winners": _ranked(t["miss_winners"][j], ids) if has_domain else [],
            "outranked_by": _ranked(t["outranked_by"][j], ids),
        }
        if not shadow and entry["matched"] != entry["won"] + entry["no_text"] + entry["outranked"]:
            raise InternalError(
                f"rule {rule.id!r}: matched {entry['matched']} != won {entry['won']} + no_text "
                f"{entry['no_text']} + outranked {entry['outranked']}; the routing identity must hold")
        rules.append(entry)
    piles = {name: int(t["piles"][p]) for p, name in enumerate(plan.pile_names)}
    rows = int(t["rows"][0])
    if sum(piles.values()) != rows:
        raise InternalError(f"piles sum to {sum(piles.values())} but the pool has {rows} rows")
    pending = {REASONS[i]: int(t["reasons"][i]) for i in (1, 2)}
    if sum(pending.values()) != piles[plan.pile_names[plan.pending_index]]:
        raise InternalError("pending reasons do not add up to the pending pile")
    if sources is not None and sum(sources.values()) != rows:
        raise InternalError(f"works per source sum to {sum(sources.values())} but the pool has {rows} rows")
    return {
        "schema_version": 1, "release_id": release_id, "rows": rows, "identity_holds": True,
        "piles": piles,
        "pile_order": [{"name": p.name, "kind": p.kind, "tier": p.tier} for p in plan.book.piles],
        "pending": pending, "title_only": int(t["title_only"][0]),
        "title_only_sources": list(plan.book.title_only_sources),
        "sources": sources,
        "pool": {"rows": rows, "with_title": int(t["with_title"][0]),
                 "with_abstract": int(t["with_abstract"][0]), "utf8_replaced": int(replaced)},
        "overlay": ov.summary() if ov else None,
        "rules": rules,
        "overlap": {"rules": list(ids), "matrix": t["overlap"].astype(int).tolist()},
    }


def _ranked(counts: np.ndarray, ids: tuple[str, ...]) -> list[dict]:
    """Non-zero counts per rule as [{"rule", "rows"}], rows descending, then rule id."""
    pairs = [(int(c), ids[i]) for i, c in enumerate(counts) if c]
    return [{"rule": rid, "rows": c} for c, rid in sorted(pairs, key=lambda x: (-x[0], x[1]))]



def no_text_note(release_dir: Path) -> str | None:
    """The route's warning about works that rules sent to a screening pile but that wait as `pending/no_text` (no
    abstract, and not of a `title_only_sources` source): how many, per pile, and what to set. None when there
    are none. The screen never sees those works: a real review lost an include so."""
    from .artifacts import read_stats
    stats = read_stats(release_dir)
    paying = {p.name for p in stats.pile_order if p.kind == "screen"}
    per_pile: dict[str, int] = {}
    for rule in stats.rules:
        if rule.pile in paying and rule.no_text:
            per_pile[rule.pile] = per_pile.get(rule.pile, 0) + rule.no_text
    total = sum(per_pile.values())
    if not total:
        return None
    piles = ", ".join(f"{pile} {n:,}" for pile, n in sorted(per_pile.items()))
    sources = ", ".join(stats.title_only_sources) if stats.title_only_sources else "none"
    return (f"warning: {total:,} work{'s' * (total != 1)} that rules sent to screening piles ({piles}) "
            f"{'have' if total != 1 else 'has'} no abstract and wait{'s' * (total == 1)} as pending/no_text: the "
            f"screen never sees {'them' if total != 1 else 'it'}. To screen such works on their title alone, list "
            f"their sources in specs/piles.json `title_only_sources` (now: {sources}); docs/rules.md")
