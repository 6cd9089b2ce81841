"""Arrow string arrays at the byte level, for normalisation: one contiguous array, its buffers, and the
collapse of whitespace runs (numpy over the bytes where the whitespace is ASCII, str.split elsewhere)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array of an array or a chunked one."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's data bytes and its row offsets (int64, into those bytes)."""
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=arr.offset + len(arr) + 1)[arr.offset:]
    return data, offsets.astype(np.int64)


_ASCII_SPACE = np.array([c < 128 and chr(c).isspace() for c in range(256)], dtype=bool)


def collapse_whitespace(arr: pa.Array, rows: np.ndarray, unicode_rows: np.ndarray | None = None) -> pa.Array:
    """The array with each given row's whitespace runs made one space and its ends trimmed.

    Rows that may hold a non-ASCII whitespace character (`unicode_rows`)
    are collapsed with str.split, which splits on exactly the isspace()
    set; the rest, whose whitespace is all ASCII, in numpy over their bytes.
    When most rows are to be collapsed, the numpy pass runs over the whole
    array (it leaves a row with no whitespace to collapse as it is), which
    saves taking the rows out and putting them back.
    """
    if not len(rows):
        return arr
    if unicode_rows is not None and len(unicode_rows):
        wide = np.isin(rows, unicode_rows)
        slow, rows = rows[wide], rows[~wide]
    else:
        slow = rows[:0]
    if len(rows) * 2 > len(arr):
        arr = _collapse_ascii(arr) if not len(slow) else \
            pc.replace_with_mask(_collapse_ascii(arr), _mask(len(arr), slow), _collapse_split(arr, slow))
        return flat(arr)
    mask = np.zeros(len(arr), dtype=bool)
    parts, order = [], []
    if len(rows):
        parts.append(_collapse_ascii(arr.take(pa.array(rows))))
        order.append(rows)
    if len(slow):
        parts.append(_collapse_split(arr, slow))
        order.append(slow)
    every = np.concatenate(order)
    mask[every] = True
    # replace_with_mask fills the masked rows in row order.
    merged = pa.concat_arrays(parts).take(pa.array(np.argsort(every, kind="stable")))
    return flat(pc.replace_with_mask(arr, pa.array(mask), merged))


def _mask(n: int, rows: np.ndarray) -> pa.Array:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return pa.array(mask)


def _collapse_split(arr: pa.Array, rows: np.ndarray) -> pa.Array:
    """The given rows (ascending) collapsed with str.split, which knows every isspace() character."""
    texts = [None if t is None else " ".join(t.split()) for t in arr.take(pa.array(rows)).to_pylist()]
    return pa.array(texts, pa.string())


def _collapse_ascii(sub: pa.Array) -> pa.Array:
    """Every row of a string array whose whitespace is all ASCII, runs made one space, ends trimmed.

    Only the runs that change are touched: a run of two or more whitespace
    characters, one that is not a space, or one at either end of its row.
    They are found from sparse positions (bytes below 32, whitespace after
    whitespace, row ends), and the text between them is copied once, so the
    dense work is three comparisons over the bytes.
    """
    n = len(sub)
    data, offsets = string_buffers(sub)
    data = data[offsets[0]:offsets[-1]]
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    ws = data <= 32
    low = np.flatnonzero(data < 32)
    low_ws = _ASCII_SPACE[data[low]]
    ws[low[~low_ws]] = False  # control characters that are not whitespace stay as they are
    nonempty = np.flatnonzero(lengths > 0)
    first, last = offsets[nonempty], offsets[nonempty + 1] - 1
    # Every byte of a run after its first is whitespace after whitespace; a run that needs no
    # seed is a single space inside its row, which stays.
    seeds = np.unique(np.concatenate([np.flatnonzero(ws[1:] & ws[:-1]) + 1, low[low_ws],
                                      first[ws[first]], last[ws[last]]]))
    if not len(seeds):
        return sub
    row = np.searchsorted(offsets, seeds, side="right") - 1
    row_start, row_end = offsets[row], offsets[row + 1]
    # Consecutive seeds of one row are one run; a run's first byte may be a plain space before them.
    head = np.ones(len(seeds), dtype=bool)
    head[1:] = (np.diff(seeds) != 1) | (seeds[1:] == row_start[1:])
    tail = np.ones(len(seeds), dtype=bool)
    tail[:-1] = head[1:]
    lo, hi = seeds[head], seeds[tail] + 1
    run_row, lo_start, hi_end = row[head], row_start[head], row_end[tail]
    before = lo > lo_start
    before[before] = ws[lo[before] - 1]
    lo = lo - before
    # A run inside its row becomes one space, a run at either end of it nothing.
    inner = (lo > lo_start) & (hi < hi_end)
    new_len = lengths - np.bincount(run_row, weights=hi - lo - inner, minlength=n).astype(np.int64)
    mv = memoryview(data)
    cut_from = np.concatenate([[0], hi]).tolist()
    cut_to = np.concatenate([lo, [len(data)]]).tolist()
    pieces: list = [None] * (2 * len(lo) + 1)
    pieces[0::2] = [mv[a:b] for a, b in zip(cut_from, cut_to)]
    pieces[1::2] = [b" " if k else b"" for k in inner.tolist()]
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_len, out=new_offsets[1:])
    validity = sub.buffers()[0] if sub.null_count else None
    if validity is not None and sub.offset:
        validity = pa.array(sub.is_valid().to_numpy(zero_copy_only=False)).buffers()[1]
    return pa.StringArray.from_buffers(n, pa.py_buffer(new_offsets.astype(np.int32)),
                                       pa.py_buffer(b"".join(pieces)), validity, sub.null_count)
