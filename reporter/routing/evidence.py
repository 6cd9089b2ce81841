"""Evidence: the winner's first text hit per row, as character offsets, and its text.

Title before abstract, then the lowest start; phrase hits come from the
literal pass (byte offsets, converted to characters only on non-ASCII rows),
regex hits from RE2 with a prefix group that measures the start.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .normalise import is_word_char
from .regexlit import span_pattern
from .specs import Phrase
from .textscan import _ASCII_WORD, FieldBuffer, _char_at

FIELDS = ("title", "abstract")
EVIDENCE_TEXT_MAX = 200
VECTOR_STEPS = 32
"""Characters a prefix hit is extended by for all rows at once; longer words are finished row by row."""
_WORD_RUN = re.compile(r"\w*")


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
                    arr = ft.norm.take(pa.array(cand))
                    ext = pc.extract_regex(arr, span_pattern(leaf.pattern, leaf.case_sensitive))
                    valid = ext.is_valid().to_numpy(zero_copy_only=False)
                    if not valid.any():
                        continue
                    ext = ext.filter(pa.array(valid))
                    pre = pc.utf8_length(ext.field("pre")).to_numpy().astype(np.int64)
                    mlen = pc.utf8_length(ext.field("m")).to_numpy().astype(np.int64)
                    rows = cand[valid]
                    _take_better(best_field, best_start, best_end, rows, fi, pre, pre + mlen)
    return best_field, best_start, best_end


def _word_end(buf: FieldBuffer, rows: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Extend prefix-phrase hits (`trial*`) to the end of the word they start.

    Every unfinished hit moves on one character per step, all rows at once;
    after VECTOR_STEPS steps the few words still going are finished row by
    row with a regex from where the steps stopped, so time stays linear in a
    word's length however long it is.
    """
    end = end.copy()
    row_end = buf.offsets[rows + 1]
    active = np.flatnonzero(end < row_end)
    for _ in range(VECTOR_STEPS):
        if not len(active):
            break
        nxt = buf.data[end[active]]
        word = _ASCII_WORD[nxt]
        for k in np.flatnonzero(nxt >= 0x80):
            i = active[k]
            ch = _char_at(buf.data, int(end[i]), int(row_end[i]))
            if is_word_char(ch):
                word[k] = True
                end[i] += len(ch.encode("utf-8")) - 1
        end[active[word]] += 1
        active = active[word]
        active = active[end[active] < row_end[active]]
    for i in active:
        end[i] += _word_bytes(buf.data, int(end[i]), int(row_end[i]))
    return end


def _word_bytes(data: np.ndarray, pos: int, hi: int) -> int:
    """Bytes of the run of word characters (Python's \\w, as is_word_char) starting at byte pos, before hi."""
    width = 1 << 12
    while True:
        stop = min(pos + width, hi)
        while stop < hi and (data[stop] & 0xC0) == 0x80:
            stop -= 1  # end the window on a character boundary
        chunk = data[pos:stop].tobytes().decode("utf-8", "replace")
        n = _WORD_RUN.match(chunk).end()
        if n < len(chunk) or stop == hi:
            return len(chunk[:n].encode("utf-8"))
        width *= 4


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
        base = ft.buf.offsets[rows]
        end = _word_end(ft.buf, rows, end + base) - base
    # Byte offsets equal character offsets on ASCII rows; decode the rest.
    odd = np.flatnonzero(~ft.ascii[rows])
    if len(odd):
        start = start.copy()
        end = end.copy()
        base = ft.buf.offsets[rows[odd]]
        for k, i in enumerate(odd):
            r = int(rows[i])
            start[i] = ft.buf.char_offset(r, int(base[k] + start[i]))
            end[i] = ft.buf.char_offset(r, int(base[k] + end[i]))
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
        text = ft.buf_norm_text(int(rows[k]))
        a, ln = int(begin[k]), int(length[k])
        begin[k] = len(text[:a].encode("utf-8"))
        length[k] = len(text[a:a + ln].encode("utf-8"))
    begin += ft.norm_buf.offsets[rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    idx = np.repeat(begin - offsets[:-1], length) + np.arange(offsets[-1])
    data = ft.norm_buf.data[idx]
    return pa.StringArray.from_buffers(len(rows), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
