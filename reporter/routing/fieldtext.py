"""One text field of a record batch, normalised and scanned once: its literal hits with word-boundary flags.

Normalisation (normalise.py) leaves most rows of a real pool as they are,
apart from ASCII case: plain text with single spaces. FieldText therefore
keeps the raw column as the normalised, case-preserved text of those rows,
and a *patch*: the few rows normalisation changes (whitespace runs, control
whitespace, spaces at either end, non-ASCII characters that NFKC, the dash
rule or lower-casing change), normalised in full. The whole column costs
one literal pass (which also finds the whitespace trouble; with Hyperscan
it folds ASCII case itself, with the DFA the column is ASCII-lower-cased
first) and Arrow's ASCII test; only the rows that are not plain ASCII are
examined in numpy, and only the patch rows are normalised and scanned
again. With Hyperscan no whole-column copy is made at all.

Hits are byte offsets within their row: into the raw row, or
into the patched row for a patch row (the case-preserved and lower-cased
text of a row have the same characters at the same character offsets, and
on a plain-ASCII row the same bytes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .fieldbuffer import FieldBuffer
from .normalise import normalise_batch, unicode_work
from .regexlit import span_pattern
from .textscan import Hits, Scanner, word_end

_EMPTY = np.zeros(0, dtype=np.int64)


class FieldText:
    """One text field of a batch: normalised text (raw rows plus a patch) and its boundary-checked literal hits."""

    def __init__(self, raw: pa.Array | pa.ChunkedArray, scanner: Scanner, high: np.ndarray | None = None):
        """`high`: `FieldBuffer.of(raw).high_bytes()` when the caller has it (read only where the
        scanner reads raw itself)."""
        given = raw
        if isinstance(raw, pa.ChunkedArray):
            raw = raw.combine_chunks()
        if raw.type != pa.string():
            raw = raw.cast(pa.string())
        n = len(raw)
        self.n = n
        self.raw = raw
        # The text the scanner reads: raw when it folds ASCII case itself (no copy), else lower-cased.
        low = None if scanner.caseless else pc.ascii_lower(raw)
        self._low = low
        self._base = FieldBuffer.of(raw if low is None else low)
        hits = scanner.scan(self._base)
        lengths = np.diff(self._base.offsets)
        ws = np.zeros(n, dtype=bool)
        ws[scanner.trouble_rows(hits)] = True
        nonempty = np.flatnonzero(lengths > 0)
        if len(nonempty):
            first = self._base.data[self._base.offsets[nonempty]]
            last = self._base.data[self._base.offsets[nonempty + 1] - 1]
            ws[nonempty[(first == 32) | (last == 32)]] = True
        # Rows that held no non-ASCII byte before normalisation hold none after it; ASCII
        # lower-casing (the DFA's text) changes no byte's high bit.
        if high is None or low is not None or raw is not given:
            high = self._base.high_bytes()
        self.ascii = self._base.ascii_rows(high)
        self.patch_rows = _EMPTY
        """Rows normalisation changes (ascending)."""
        self.patch_norm = self.patch_low = None
        self._patch: FieldBuffer | None = None
        self._pos = None
        real = hits.lit < scanner.n
        if ws.any() or len(high):
            self._normalise_patch(raw, ws, high)
        if len(self.patch_rows):
            sub_hits = scanner.scan(self._patch)
            in_patch = self._pos[hits.row] >= 0
            hits = Scanner.concat(Scanner.select(hits, real & ~in_patch),
                                  Scanner.select(sub_hits, sub_hits.lit < scanner.n, self.patch_rows))
            lengths[self.patch_rows] = np.diff(self._patch.offsets)
        else:
            hits = Scanner.select(hits, real)
        self.hits: Hits = hits
        self.blank = lengths == 0
        order = np.argsort(self.hits.lit, kind="stable")
        bounds = np.searchsorted(self.hits.lit[order], np.arange(scanner.n + 1))
        self._by_lit = (order, bounds)
        self._good: dict[tuple[int, bool], np.ndarray] = {}
        self._raw_buf: FieldBuffer | None = None
        self._patch_norm_buf: FieldBuffer | None = None
        self._spans: dict[tuple[str, bool], KnownSpans] = {}

    def _normalise_patch(self, raw: pa.Array, ws: np.ndarray, high: np.ndarray) -> None:
        """Normalise the rows normalisation changes: whitespace trouble (`ws`), or a non-ASCII character
        it changes, found from the positions of the column's high bytes.

        Most non-ASCII rows of a real pool come through unchanged ('’', 'é'): only the others are
        taken out of the column and normalised.
        """
        base = self._base
        work = unicode_work(base.data, base.offsets, high[base.data[high] >= 0xC0])
        changed = ws.copy()
        changed[work.rows] = True
        keep = np.flatnonzero(changed)
        if not len(keep):
            return
        sub_raw = raw.take(pa.array(keep))
        sub = FieldBuffer.of(sub_raw)
        work = work.only(keep, base.offsets, sub.offsets)
        norm, lowered = normalise_batch(sub_raw, sub.offsets, work, ws[keep])
        self.patch_rows = keep
        self.patch_norm, self.patch_low = _flat(norm), _flat(lowered)
        self._patch = FieldBuffer.of(self.patch_low)
        self._pos = np.full(self.n, -1, dtype=np.int64)
        self._pos[self.patch_rows] = np.arange(len(keep))

    # ---------------------------------------------------------------- hits

    def hit_index(self, lit: int) -> np.ndarray:
        """Indices into hits of one literal."""
        order, bounds = self._by_lit
        return order[bounds[lit]: bounds[lit + 1]]

    def good_hits(self, lit: int, prefix: bool) -> np.ndarray:
        """Indices of one literal's hits that satisfy the word boundaries (computed once per batch)."""
        key = (lit, prefix)
        found = self._good.get(key)
        if found is None:
            idx = self.hit_index(lit)
            ok = self.hits.left_ok[idx]
            if not prefix:
                ok = ok & self.hits.right_ok[idx]
            found = self._good[key] = idx[ok]
        return found

    # ---------------------------------------------------------------- rows in their buffers

    def _split(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(in_patch, local): per row, whether it is a patch row, and its index in its own buffer."""
        if self._pos is None:
            return np.zeros(len(rows), dtype=bool), rows
        pos = self._pos[rows]
        in_patch = pos >= 0
        return in_patch, np.where(in_patch, pos, rows)

    def _norm_bufs(self) -> tuple[FieldBuffer, FieldBuffer | None]:
        if self._raw_buf is None:
            self._raw_buf = FieldBuffer.of(self.raw)
            if self.patch_norm is not None:
                self._patch_norm_buf = FieldBuffer.of(self.patch_norm)
        return self._raw_buf, self._patch_norm_buf

    def norm_text(self, row: int) -> str:
        """One row's normalised, case-preserved text."""
        raw_buf, patch_buf = self._norm_bufs()
        pos = -1 if self._pos is None else int(self._pos[row])
        return patch_buf.text(pos) if pos >= 0 else raw_buf.text(row)

    def norm_rows(self, rows: np.ndarray) -> pa.Array:
        """The normalised, case-preserved text of the given rows, in their order."""
        in_patch, local = self._split(rows)
        if not in_patch.any():
            return self.raw.take(pa.array(rows, pa.int64()))
        base = self.raw.take(pa.array(rows[~in_patch], pa.int64()))
        patch = self.patch_norm.take(pa.array(local[in_patch], pa.int64()))
        order = np.concatenate([np.flatnonzero(~in_patch), np.flatnonzero(in_patch)])
        return pa.concat_arrays([base, patch]).take(pa.array(np.argsort(order)))

    def regex_rows(self, pattern: str, ignore_case: bool, rows: np.ndarray | None = None,
                   keep_spans: bool = False) -> np.ndarray:
        """Bool per row of the batch: the regex matches the normalised, case-preserved text (only `rows` when given).

        With `keep_spans` (a rule's own regex, not a combination of them) the
        search also keeps each matching row's first match, byte start and end
        (`known_spans`): evidence then reads the spans of the rows this search
        covered instead of searching them again, which cost as much as this
        search (docs/scale.md, "Hits and prefilters"). One RE2 search a row
        either way (`extract_regex_span` with the wrapped pattern, `span_pattern`,
        in place of `match_substring_regex`: the same rows match).
        """
        out = np.zeros(self.n, dtype=bool)
        spans = None
        if keep_spans and _EXTRACT_SPAN is not None:
            spans = self._spans.get((pattern, ignore_case))
            if spans is None:
                spans = self._spans[(pattern, ignore_case)] = KnownSpans.empty(self.n)
        if rows is not None:
            if len(rows):
                # Raw rows and patch rows each from their own buffer: their order is not needed here,
                # and restoring it (as norm_rows does) copies every row twice more.
                in_patch, local = self._split(rows)
                base = rows[~in_patch]
                if len(base):
                    _search(self.raw.take(pa.array(base, pa.int64())), base, pattern, ignore_case, out, spans)
                if in_patch.any():
                    _search(self.patch_norm.take(pa.array(local[in_patch], pa.int64())), rows[in_patch], pattern,
                            ignore_case, out, spans)
            return out
        if self.n:
            _search(self.raw, np.arange(self.n), pattern, ignore_case, out, spans)
        if len(self.patch_rows):
            _search(self.patch_norm, self.patch_rows, pattern, ignore_case, out, spans)
        return out

    def known_spans(self, pattern: str, ignore_case: bool) -> KnownSpans | None:
        """What `regex_rows(..., keep_spans=True)` searches of this regex found in this batch, or None."""
        return self._spans.get((pattern, ignore_case))

    def word_end(self, rows: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Row-relative byte ends of hits moved on to the end of the word they are in (for `trial*`)."""
        in_patch, local = self._split(rows)
        out = np.array(end, dtype=np.int64)
        for mask, buf in ((~in_patch, self._base), (in_patch, self._patch)):
            if mask.any():
                r = local[mask]
                base = buf.offsets[r]
                out[mask] = word_end(buf, r, out[mask] + base) - base
        return out

    def char_offsets(self, rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Character offsets of row-relative byte offsets (one per row given)."""
        in_patch, local = self._split(rows)
        out = np.array(pos, dtype=np.int64)
        for k in range(len(rows)):
            buf = self._patch if in_patch[k] else self._base
            r = int(local[k])
            out[k] = buf.char_offset(r, int(buf.offsets[r] + pos[k]))
        return out

    def norm_slices(self, rows: np.ndarray, begin: np.ndarray, length: np.ndarray) -> pa.Array:
        """A string array of each row's normalised, case-preserved bytes [begin, begin + length) (row-relative)."""
        raw_buf, patch_buf = self._norm_bufs()
        in_patch, local = self._split(rows)
        length = np.asarray(length, dtype=np.int64)
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(length, out=offsets[1:])
        data = np.empty(int(offsets[-1]), dtype=np.uint8)
        sel = np.repeat(in_patch, length)
        for mask, buf, pick in ((~in_patch, raw_buf, ~sel), (in_patch, patch_buf, sel)):
            if mask.any():
                start = buf.offsets[local[mask]] + np.asarray(begin, dtype=np.int64)[mask]
                ln = length[mask]
                ends = np.cumsum(ln)
                idx = np.repeat(start - (ends - ln), ln) + np.arange(int(ends[-1]) if len(ends) else 0)
                data[pick] = buf.data[idx]
        return pa.StringArray.from_buffers(len(rows), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))

    # ---------------------------------------------------------------- whole columns (tests, diagnosis)

    @property
    def norm(self) -> pa.Array:
        """The whole field normalised, case preserved."""
        return self._whole(self.raw, self.patch_norm)

    @property
    def low(self) -> pa.Array:
        """The whole field normalised and lower-cased."""
        return self._whole(pc.ascii_lower(self.raw) if self._low is None else self._low, self.patch_low)

    def _whole(self, base: pa.Array, patch: pa.Array | None) -> pa.Array:
        if patch is None:
            return base
        mask = np.zeros(self.n, dtype=bool)
        mask[self.patch_rows] = True
        return _flat(pc.replace_with_mask(base, pa.array(mask), patch))


def _matches(arr: pa.Array, pattern: str, ignore_case: bool) -> np.ndarray:
    return pc.fill_null(pc.match_substring_regex(arr, pattern, ignore_case=ignore_case),
                        False).to_numpy(zero_copy_only=False)


_EXTRACT_SPAN = getattr(pc, "extract_regex_span", None)
"""pyarrow's one-search span of a regex's groups (newer pyarrow), or None: no spans are kept then."""
_wrapped = functools.lru_cache(maxsize=1024)(span_pattern)
"""span_pattern, worked out once per regex, not once per search of a batch."""


@dataclass
class KnownSpans:
    """One regex's first match per row of a batch, on the rows a search covered (byte offsets into the
    normalised, case-preserved row)."""

    covered: np.ndarray
    """Bool per row: searched."""
    found: np.ndarray
    """Bool per row: searched and matched."""
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def empty(cls, n: int) -> KnownSpans:
        return cls(np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64),
                   np.zeros(n, dtype=np.int64))


def _search(arr: pa.Array, rows: np.ndarray, pattern: str, ignore_case: bool, out: np.ndarray,
            spans: KnownSpans | None) -> None:
    """out[rows[i]]: whether the regex matches arr[i]; with `spans`, keep where each match is too."""
    if spans is None:
        out[rows] = _matches(arr, pattern, ignore_case)
        return
    got = _EXTRACT_SPAN(arr, _wrapped(pattern, not ignore_case))
    found = got.is_valid().to_numpy(zero_copy_only=False)
    out[rows] = found
    spans.covered[rows] = True
    spans.found[rows] = found
    hit = rows[found]
    if len(hit):
        pairs = got.filter(pa.array(found)).field("m").flatten().to_numpy(zero_copy_only=False).astype(np.int64)
        spans.start[hit] = pairs[0::2]
        spans.end[hit] = pairs[0::2] + pairs[1::2]


def _flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr
