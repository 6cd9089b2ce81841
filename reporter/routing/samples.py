"""Seeded samples drawn while routing: what the pages show of single works."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .evidence import FIELDS
from .fieldbuffer import FieldBuffer

CONTEXT_CHARS = 80
"""Characters of the normalised field shown either side of an evidence span (samples.json `context_chars`)."""


MATCH_CHARS = 2 * CONTEXT_CHARS
"""The most characters of a match a sample keeps: a `trial*` word or a regex can match megabytes."""


def context_window(field: str, text: str, start: int, end: int) -> dict:
    """An evidence span in context: {field, before, match, after, match_cut}, at most CONTEXT_CHARS either side.

    A match longer than MATCH_CHARS keeps its first MATCH_CHARS characters (`match_cut` true, and
    nothing after it), so a release's samples stay small whatever the pool holds.
    """
    cut = end - start > MATCH_CHARS
    stop = start + MATCH_CHARS if cut else end
    return {"field": field, "before": text[max(0, start - CONTEXT_CHARS):start], "match": text[start:stop],
            "after": "" if cut else text[end:end + CONTEXT_CHARS], "match_cut": cut}


def context_windows(spans, text_of) -> list[dict]:
    """A context_window per (field name, start, end) span, in the given order; text_of(field) is that field's
    normalised text (case preserved). samples.json's `contexts` and `reporter diagnose` both build theirs here."""
    return [context_window(field, text_of(field), start, end) for field, start, end in spans]


_POWERS = np.ones(1, dtype=np.uint64)


def id_hashes(work_ids: pa.Array, seed: int) -> np.ndarray:
    """A seeded 64-bit hash (uint64) per work, from its work_id alone (a null hashes as "").

    The source of the sample keys, and of the duplicate check: equal ids
    have equal hashes, so only ids whose hashes meet need comparing.
    """
    global _POWERS
    buf = FieldBuffer.of(work_ids if work_ids.type == pa.string() else work_ids.cast(pa.string()))
    n = len(work_ids)
    lengths = np.diff(buf.offsets)
    longest = int(lengths.max()) if n else 0
    if len(_POWERS) < longest + 1:
        p = np.ones(longest + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(1, longest + 1):
                p[i] = p[i - 1] * np.uint64(1099511628211)
        _POWERS = p
    starts = buf.offsets[:-1] - buf.offsets[0]
    terms = buf.data[buf.offsets[0]:buf.offsets[-1]].astype(np.uint64)
    terms += np.uint64(1)
    pos = np.arange(len(terms), dtype=np.int64)
    pos -= np.repeat(starts, lengths)  # each byte's place in its id
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        terms *= _POWERS[pos]
        # Each id's bytes are one run: summed run by run (ufunc.at, per element, cost 1.6 times as much).
        filled = lengths > 0
        if filled.any():
            h[filled] = np.add.reduceat(terms, starts[filled])
        h ^= np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * np.uint64(0x9E3779B97F4A7C15)
        # splitmix64 finaliser
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def sample_keys(work_ids: pa.Array, seed: int, hashes: np.ndarray | None = None) -> np.ndarray:
    """A seeded pseudo-random key in [0, 1) per work, from its work_id alone (`hashes`: id_hashes, if known).

    Samples are the works with the smallest keys, so they depend only on the
    seed and the ids: not on batch size, worker count or pool order, and a
    work sampled in one release is sampled again in the next.
    """
    h = id_hashes(work_ids, seed) if hashes is None else hashes
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def batch_samples(plan, batch, fields, table, evidence, seed, k, rule_k,
                  pile, winner, downgraded, miss_masks,
                  hashes: np.ndarray | None = None,
                  bounds: dict[str, float] | None = None) -> dict[str, list[tuple[float, str, int, dict]]]:
    """Seeded sample candidates of this batch: the k smallest work keys per group.

    `bounds`: per group, the k-th smallest key among the candidates the caller already holds
    (`sample_bounds`). A row whose key is above it has k candidates before it in (key, work_id)
    order and is never sampled, so no payload is built for it: most batches of a long piece
    then build a few payloads instead of k per group.
    """
    keys = sample_keys(batch.column("work_id"), seed, hashes)
    groups: dict[str, np.ndarray] = {}
    for p, name in enumerate(plan.pile_names):
        groups[f"pile:{name}"] = (pile == p, k)
    for j, rid in enumerate(plan.rule_ids):
        if not plan.shadow[j]:
            groups[f"wins:{rid}"] = ((winner == j) & ~downgraded, rule_k)
    for j, miss in miss_masks.items():
        groups[f"miss:{plan.rule_ids[j]}"] = (miss, rule_k)
    chosen: dict[str, np.ndarray] = {}
    for name, (mask, limit) in groups.items():
        rows = np.flatnonzero(mask)
        bound = None if bounds is None else bounds.get(name)
        if bound is not None and len(rows):
            rows = rows[keys[rows] <= bound]
        if len(rows) > limit:
            rows = rows[np.argpartition(keys[rows], limit - 1)[:limit]]
        if len(rows):
            chosen[name] = rows
    if not chosen:
        return {}
    wanted = np.unique(np.concatenate(list(chosen.values())))
    payloads = _payloads(plan, batch, fields, table, evidence, wanted)
    return {name: [(float(keys[r]), payloads[int(r)]["work_id"], int(r), payloads[int(r)]) for r in rows]
            for name, rows in chosen.items()}


def sample_bounds(samples: dict[str, list], k: int, rule_k: int) -> dict[str, float]:
    """Per group holding at least its k candidates: the k-th smallest key among them (`batch_samples`)."""
    out = {}
    for group, items in samples.items():
        limit = k if group.startswith("pile:") else rule_k
        if len(items) >= limit:
            out[group] = sorted(item[0] for item in items)[limit - 1]
    return out


def _payloads(plan, batch, fields, table, evidence, rows: np.ndarray) -> dict[int, dict]:
    """What a page shows of one work: ids, title, fate, evidence and every span in its context.

    `contexts` holds one window per span of the row (one per text condition of the winner that
    matched): the best span's first (`context`, the one span routing.parquet's `evidence` holds),
    then the others in the rule's order.
    """
    sub = table.select(["work_id", "pile", "pending_reason", "winner", "title_only", "evidence"]) \
        .take(pa.array(rows)).to_pylist()
    src = batch.column("source").take(pa.array(rows)).to_pylist()
    titles = batch.column("title").take(pa.array(rows)).to_pylist()
    out = {}
    for i, r in enumerate(rows.tolist()):
        row = sub[i]
        contexts = context_windows([(FIELDS[f], s, e) for f, s, e in evidence.row_spans(r)],
                                   lambda name, r=r: fields[name].norm_text(r))
        out[r] = {"work_id": row["work_id"], "source": src[i], "title": titles[i], "pile": row["pile"],
                  "pending_reason": row["pending_reason"], "winner": row["winner"],
                  "title_only": row["title_only"], "evidence": _capped(row["evidence"]),
                  "context": contexts[0] if contexts else None, "contexts": contexts}
    return out


def _capped(evidence: dict | None) -> dict | None:
    """The evidence as routing.parquet holds it, its text cut to MATCH_CHARS like the context's match."""
    if evidence is None or evidence["text"] is None or len(evidence["text"]) <= MATCH_CHARS:
        return evidence
    return {**evidence, "text": evidence["text"][:MATCH_CHARS]}

