"""Evidence: the spans of the winner's text hits per row, as character offsets, and their text.

Each text leaf of the winning rule not under a `not` (a Phrase or Regex
leaf: one condition) gives its first hit in a row: title before abstract,
then the lowest start, a Phrase leaf's phrases in their order on a tie. A
row keeps one span per leaf that matched in it, in the rule's leaf order
(a span equal to an earlier leaf's is kept once), and which is the best of
them: the lowest (field, start), the earlier leaf on a tie (`Evidence.best`:
routing.parquet's `evidence`, the one span it held before every condition
was kept). Phrase hits come from the literal pass (byte offsets, converted
to characters only on non-ASCII rows), regex hits from one RE2 search a
row that reports the match's byte start and length (`regex_spans`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .fieldtext import _EXTRACT_SPAN  # pyarrow's one-search span, or None: regex_spans searches twice
from .predicates import Phrase
from .regexlit import span_pattern

FIELDS = ("title", "abstract")
NO_FIELD = 9
"""The field index of a row without a span (sorts after every field)."""
EVIDENCE_TEXT_MAX = 200


@dataclass(frozen=True)
class Evidence:
    """One batch's evidence: every condition's span per row, and which of them is the best."""

    offsets: np.ndarray
    """n + 1 offsets into the span arrays: row r's spans are [offsets[r], offsets[r + 1]), in leaf order."""
    field: np.ndarray
    """Every span's field index into FIELDS."""
    start: np.ndarray
    """Every span's character start."""
    end: np.ndarray
    """Every span's character end."""
    best: np.ndarray
    """Per row: the index of its best span (routing.parquet's `evidence`), -1 where it has none."""

    def row_spans(self, r: int) -> list[tuple[int, int, int]]:
        """Row r's spans, (field index, start, end): the best first, then the others in leaf order."""
        a, b = int(self.offsets[r]), int(self.offsets[r + 1])
        order = [int(self.best[r])] + [i for i in range(a, b) if i != self.best[r]] if b > a else []
        return [(int(self.field[i]), int(self.start[i]), int(self.end[i])) for i in order]


def find_evidence(plan, fields: dict, winner: np.ndarray, n: int) -> Evidence:
    """Every row's spans of its winner's text leaves (see the module docstring), and the best of them.

    Works per winning rule on that rule's rows only: per leaf, the first hit
    per row of each (field, phrase) or (field, regex) in turn, kept where it
    is lower (field, start) than the leaf's so far.
    """
    parts: list[tuple[np.ndarray, ...]] = []
    for j in np.unique(winner[winner >= 0]):
        rows_mask = winner == j
        won = np.flatnonzero(rows_mask)
        seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for li, leaf in enumerate(plan.positive_text[j]):
            lf = np.full(len(won), NO_FIELD, dtype=np.int64)
            ls = np.full(len(won), np.iinfo(np.int64).max, dtype=np.int64)
            le = np.zeros(len(won), dtype=np.int64)
            for name in (FIELDS if leaf.field == "text" else (leaf.field,)):
                fi = FIELDS.index(name)
                ft = fields[name]
                if isinstance(leaf, Phrase):
                    for lit, prefix in leaf.phrases:
                        rows, start, end, _ = phrase_spans(ft, plan.lit_index[lit], prefix, rows_mask)
                        _take_better(lf, ls, le, np.searchsorted(won, rows), fi, start, end)
                else:
                    cand = np.flatnonzero(rows_mask & ~ft.blank)
                    if len(cand) == 0:
                        continue
                    rows, start, end = regex_spans(ft, cand, leaf.pattern, leaf.case_sensitive)
                    _take_better(lf, ls, le, np.searchsorted(won, rows), fi, start, end)
            keep = lf != NO_FIELD
            for sf, ss, se in seen:  # the same span as an earlier leaf's is kept once
                keep &= ~((lf == sf) & (ls == ss) & (le == se))
            seen.append((lf, ls, le))
            k = np.flatnonzero(keep)
            parts.append((won[k], np.full(len(k), li, dtype=np.int64), lf[k], ls[k], le[k]))
    row, leaf_no, sf, ss, se = (np.concatenate(p) for p in zip(*parts)) if parts else (np.zeros(0, np.int64),) * 5
    order = np.lexsort((leaf_no, row))
    row, sf, ss, se = row[order], sf[order], ss[order], se[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=offsets[1:])
    return Evidence(offsets, sf, ss, se, _best(row, sf, ss, offsets))


def _best(row: np.ndarray, field: np.ndarray, start: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per row: the index of its first span (leaf order) of the lowest (field, start), -1 where it has none."""
    best = np.full(len(offsets) - 1, -1, dtype=np.int64)
    if not len(row):
        return best
    key = field * (1 << 40) + start  # starts are int32 offsets
    counts = np.diff(offsets)
    lowest = np.minimum.reduceat(key, offsets[:-1][counts > 0])
    at = np.flatnonzero(key == np.repeat(lowest, counts[counts > 0]))
    first = at[np.concatenate([[True], row[at[1:]] != row[at[:-1]]])]
    best[row[first]] = first
    return best


def regex_spans(ft, cand: np.ndarray, pattern: str, case_sensitive: bool):
    """A regex's first match in each candidate row of a field: (rows, char start, char end), rows it matched only.

    The rows the engine's search of this regex covered in this batch
    (`FieldText.known_spans`) are read from what it kept; the others are
    searched here, one RE2 search a row (`extract_regex_span`: the byte
    start and byte length of the group `m`, the leftmost match); pyarrow
    without it takes two, where the match starts and then its text. A
    capture of everything before the match would make RE2 run its slow
    submatch engine over the whole prefix.
    """
    known = ft.known_spans(pattern, not case_sensitive)
    if known is None:
        return _searched_spans(ft, cand, pattern, case_sensitive)
    covered = known.covered[cand]
    rows = cand[covered]
    rows = rows[known.found[rows]]
    start, end = known.start[rows], known.end[rows]
    odd = np.flatnonzero(~ft.ascii[rows])
    _to_chars(start, end, odd, [ft.norm_text(int(r)) for r in rows[odd]])
    rest = cand[~covered]
    if not len(rest):
        return rows, start, end
    more = _searched_spans(ft, rest, pattern, case_sensitive)
    rows, start, end = (np.concatenate([a, b]) for a, b in zip((rows, start, end), more))
    order = np.argsort(rows, kind="stable")
    return rows[order], start[order], end[order]


def _searched_spans(ft, cand: np.ndarray, pattern: str, case_sensitive: bool):
    """regex_spans by searching every candidate row."""
    arr = ft.norm_rows(cand)
    wrapped = span_pattern(pattern, case_sensitive)
    if _EXTRACT_SPAN is None:
        return _regex_spans_two(ft, cand, arr, wrapped)
    spans = _EXTRACT_SPAN(arr, wrapped)
    found = spans.is_valid().to_numpy(zero_copy_only=False)
    rows = cand[found]
    if not len(rows):
        return rows, rows, rows
    pairs = spans.filter(pa.array(found)).field("m").flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    start, end = pairs[0::2], pairs[0::2] + pairs[1::2]
    odd = np.flatnonzero(~ft.ascii[rows])
    _to_chars(start, end, odd, arr.take(pa.array(np.flatnonzero(found)[odd], pa.int64())).to_pylist())
    return rows, start, end


def _to_chars(start: np.ndarray, end: np.ndarray, odd: np.ndarray, texts: list[str]) -> None:
    """Byte offsets made character offsets in place, at the positions `odd` (whose rows' texts are given)."""
    for k, text in zip(odd, texts):
        data = text.encode("utf-8")
        a = len(data[:start[k]].decode("utf-8"))
        end[k] = a + len(data[start[k]:end[k]].decode("utf-8"))
        start[k] = a


def _regex_spans_two(ft, cand: np.ndarray, arr: pa.Array, wrapped: str):
    """regex_spans without extract_regex_span: where the leftmost match starts (bytes), then its text."""
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


def spans_text(fields: dict, field: np.ndarray, rows: np.ndarray, start: np.ndarray, end: np.ndarray) -> pa.Array:
    """The text of each given span (its field index, row, character start and end), in the given order,
    case-preserved and cut at EVIDENCE_TEXT_MAX characters."""
    parts, where = [], []
    for fi, name in enumerate(FIELDS):
        k = np.flatnonzero(field == fi)
        if len(k):
            parts.append(span_texts(fields[name], rows[k], start[k], end[k], EVIDENCE_TEXT_MAX))
            where.append(k)
    if not parts:
        return pa.array([], pa.string())
    back = np.empty(len(field), dtype=np.int64)
    back[np.concatenate(where)] = np.arange(len(field))
    return pa.concat_arrays(parts).take(pa.array(back))


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
