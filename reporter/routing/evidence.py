"""Evidence: the winner's first text hit per row, as character offsets, and its text.

Title before abstract, then the lowest start; phrase hits come from the
literal pass (byte offsets, converted to characters only on non-ASCII rows),
regex hits from RE2 with a prefix group that measures the start.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .regexlit import span_pattern
from .specs import Phrase

FIELDS = ("title", "abstract")
EVIDENCE_TEXT_MAX = 200


def find_evidence(plan, fields: dict, winner: np.ndarray, n: int):
    """Per row: (field index, char start, char end) of the winner's first text hit; field 9 where none."""
    best_field = np.full(n, 9, dtype=np.int64)
    best_start = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    best_end = np.zeros(n, dtype=np.int64)
    for j in np.unique(winner[winner >= 0]):
        rows_mask = winner == j
        for leaf in plan.positive_text[j]:
            names = FIELDS if leaf.field == "text" else (leaf.field,)
            for name in names:
                fi = FIELDS.index(name)
                ft = fields[name]
                if isinstance(leaf, Phrase):
                    for lit, prefix in leaf.phrases:
                        rows, start, end, _ = phrase_spans(ft, plan.lit_index[lit], prefix, rows_mask)
                        _take_better(best_field, best_start, best_end, rows, fi, start, end)
                else:
                    cand = np.flatnonzero(rows_mask & ~ft.blank)
                    if len(cand) == 0:
                        continue
                    rows, start, end = regex_spans(ft, cand, leaf.pattern, leaf.case_sensitive)
                    _take_better(best_field, best_start, best_end, rows, fi, start, end)
    return best_field, best_start, best_end


def regex_spans(ft, cand: np.ndarray, pattern: str, case_sensitive: bool):
    """A regex's first match in each candidate row of a field: (rows, char start, char end), rows it matched only.

    RE2 finds where the leftmost match starts (bytes) and its text in two
    searches of the matched rows; a capture of everything before the match
    would make RE2 run its slow submatch engine over the whole prefix.
    """
    arr = ft.norm_rows(cand)
    wrapped = span_pattern(pattern, case_sensitive)
    at = pc.find_substring_regex(arr, wrapped).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    found = at >= 0
    rows = cand[found]
    if not len(rows):
        return rows, rows, rows
    sub = arr.filter(pa.array(found))
    length = pc.utf8_length(pc.extract_regex(sub, wrapped).field("m")).to_numpy(zero_copy_only=False).astype(np.int64)
    start = at[found]
    for k in np.flatnonzero(~ft.ascii[rows]):  # bytes to characters
        start[k] = len(sub[int(k)].as_py().encode("utf-8")[:start[k]].decode("utf-8"))
    return rows, start, start + length


def phrase_spans(ft, lit: int, prefix: bool, rows_mask: np.ndarray | None = None):
    """One phrase's first boundary-checked hit per row of a field, and the row's number of hits.

    Returns (rows, start, end, count): rows ascending (only rows with a hit,
    and only those in rows_mask when given), the first hit's character
    offsets into the normalised field (for a prefix phrase, `trial*`, the
    span runs to the end of the word it starts) and the number of hits
    (every start position, overlapping ones included).
    """
    idx = ft.good_hits(lit, prefix)
    if rows_mask is not None:
        idx = idx[rows_mask[ft.hits.row[idx]]]
    rows, start, end = ft.hits.row[idx], ft.hits.start[idx], ft.hits.end[idx]
    # First hit per row: within one row, byte order is character order.
    order = np.lexsort((start, rows))
    rows, start, end = rows[order], start[order], end[order]
    first = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]])) if len(rows) else order[:0]
    count = np.diff(np.append(first, len(rows)))
    rows, start, end = rows[first], start[first], end[first]
    if prefix and len(rows):
        end = ft.word_end(rows, end)
    # Byte offsets equal character offsets on ASCII rows; decode the rest.
    odd = np.flatnonzero(~ft.ascii[rows])
    if len(odd):
        start = start.copy()
        end = end.copy()
        start[odd] = ft.char_offsets(rows[odd], start[odd])
        end[odd] = ft.char_offsets(rows[odd], end[odd])
    return rows, start, end, count


def _take_better(bf, bs, be, rows, fi, start, end):
    """Keep, per row, the lower (field, start) of the best so far and this hit (one per row, in characters)."""
    better = (fi < bf[rows]) | ((fi == bf[rows]) & (start < bs[rows]))
    r = rows[better]
    bf[r] = fi
    bs[r] = start[better]
    be[r] = end[better]


def evidence_texts(fields: dict, evidence, n: int) -> pa.Array:
    """The evidence spans' text (case-preserved, at most 200 characters), null where none."""
    bf, bs, be = evidence
    out = pa.nulls(n, pa.string())
    for fi, name in enumerate(FIELDS):
        rows = np.flatnonzero(bf == fi)
        if len(rows) == 0:
            continue
        arr = span_texts(fields[name], rows, bs[rows], be[rows], EVIDENCE_TEXT_MAX)
        mask = np.zeros(n, dtype=bool)
        mask[rows] = True
        out = pc.replace_with_mask(out, pa.array(mask), arr)
    return out


def span_texts(ft, rows: np.ndarray, start: np.ndarray, end: np.ndarray, limit: int | None = None) -> pa.Array:
    """The case-preserved normalised text of one span per given row (character offsets), cut at limit characters."""
    span = end - start if limit is None else np.minimum(end - start, limit)
    # Character offsets equal byte offsets on ASCII rows; encode the rest.
    begin = np.array(start, dtype=np.int64)
    length = np.array(span, dtype=np.int64)
    for k in np.flatnonzero(~ft.ascii[rows]):
        text = ft.norm_text(int(rows[k]))
        a, ln = int(begin[k]), int(length[k])
        begin[k] = len(text[:a].encode("utf-8"))
        length[k] = len(text[a:a + ln].encode("utf-8"))
    return ft.norm_slices(rows, begin, length)
