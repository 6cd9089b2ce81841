"""A string array's bytes and row offsets as numpy views (no copy), and what can be read from its bytes alone.

FieldBuffer is what the literal scanner (textscan.py) runs over, and what
routing's pieces read of a batch before it is routed: where the high
(non-ASCII) bytes are, which rows are plain ASCII, whether every row is
well-formed UTF-8, without decoding a row in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .normalise import rows_of

_HIGH_BITS = np.uint64(0x8080808080808080)
_ASCII_STEP = 1 << 16
"""Words (8 bytes) high_bytes tests at once: half a MiB, one scratch array reused."""


@dataclass
class FieldBuffer:
    """A string array's bytes and row offsets, as numpy views (no copy)."""

    data: np.ndarray
    """uint8 bytes of the whole array."""
    offsets: np.ndarray
    """int64 row offsets into data, length rows + 1."""

    @classmethod
    def of(cls, arr: pa.Array) -> "FieldBuffer":
        """View an Arrow string array's buffers."""
        n = len(arr)
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=np.int32, count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and offsets[-1] > 0 \
            else np.zeros(max(int(offsets[-1]), 1), dtype=np.uint8)
        return cls(data[: int(offsets[-1])] if offsets[-1] > 0 else data[:0], offsets)

    def high_bytes(self) -> np.ndarray:
        """Positions in `data` (ascending) of the bytes of the rows that are not ASCII (0x80 and up).

        Eight bytes at a time, a slice of the buffer at a time into one
        scratch array: with ascii_rows, about a third of the CPU of counting
        characters with Arrow's `utf8_length` on the real benchmark pool,
        where a new array the size of the column per test cost more in page
        faults than the test itself. Only the words holding a high byte are
        looked at byte by byte.
        """
        start = int(self.offsets[0])
        data = self.data[start: int(self.offsets[-1])]  # bytes before the first row belong to no row
        size = len(data)
        if not size:
            return np.zeros(0, dtype=np.int64)
        head = min(-data.ctypes.data % 8, size)
        words = (size - head) // 8
        tail = head + 8 * words
        found = [np.flatnonzero(data[:head] >= 128)]
        if words:
            w = data[head:tail].view(np.uint64)
            step = min(words, _ASCII_STEP)
            scratch, flags = np.empty(step, dtype=np.uint64), np.empty(step, dtype=bool)
            high = []
            for at in range(0, words, step):
                m = min(step, words - at)
                np.bitwise_and(w[at: at + m], _HIGH_BITS, out=scratch[:m])
                idx = np.flatnonzero(np.not_equal(scratch[:m], 0, out=flags[:m]))
                if len(idx):
                    high.append(idx + at)
            if high:
                hit = np.concatenate(high)
                if len(hit) * 4 > words:  # text mostly not ASCII (CJK): every byte at once is cheaper
                    found.append(head + np.flatnonzero(data[head:tail] >= 128))
                else:
                    word, byte = np.nonzero(data[head:tail].reshape(-1, 8)[hit] >= 128)
                    found.append(head + 8 * hit[word] + byte)
        found.append(tail + np.flatnonzero(data[tail:] >= 128))
        return np.concatenate(found) + start

    def utf8_valid(self, high: np.ndarray) -> bool:
        """Whether every row is well-formed UTF-8 (Unicode's table 3-7), read from the positions of its
        high bytes alone (`high_bytes`): the ASCII bytes around them are valid whatever they are.

        Each lead byte (C2-F4) must be followed, in the same row, by exactly
        the continuation bytes (80-BF) its length needs, with the second one in
        the narrower range after E0, ED, F0 and F4 (no overlong forms, no
        surrogates, nothing past U+10FFFF), and no continuation byte may stand
        alone. Bytes of null rows are read too: a True is never wrong, and a
        False sends the caller to Arrow's own check.
        """
        if not len(high):
            return True
        b = self.data[high]
        lead = b >= 0xC0
        li = np.flatnonzero(lead)
        lb = b[li]
        if ((lb < 0xC2) | (lb > 0xF4)).any():
            return False
        size = np.where(lb < 0xE0, 2, np.where(lb < 0xF0, 3, 4))
        if len(b) - len(li) != int((size - 1).sum()):
            return False  # a continuation byte no lead claims (the leads' claims are checked next)
        if len(li) and li[-1] + size[-1] - 1 >= len(b):
            return False
        for k in (1, 2, 3):
            m = size > k
            at = li[m] + k
            if lead[at].any() or (high[at] != high[li[m]] + k).any():
                return False
        second = b[li + 1]
        if (((lb == 0xE0) & (second < 0xA0)) | ((lb == 0xED) & (second > 0x9F))
                | ((lb == 0xF0) & (second < 0x90)) | ((lb == 0xF4) & (second > 0x8F))).any():
            return False
        start = high[li]
        return bool((start + size <= self.offsets[rows_of(self.offsets, start) + 1]).all())

    def ascii_rows(self, high: np.ndarray | None = None) -> np.ndarray:
        """Per row, whether it holds only ASCII bytes (null and empty rows do); `high` as high_bytes gives."""
        out = np.ones(len(self.offsets) - 1, dtype=bool)
        high = self.high_bytes() if high is None else high
        if len(high):
            out[np.diff(np.searchsorted(high, self.offsets)) > 0] = False
        return out

    def text(self, row: int) -> str:
        """One row's text."""
        return self.data[self.offsets[row]: self.offsets[row + 1]].tobytes().decode("utf-8")

    def char_offset(self, row: int, byte_pos: int) -> int:
        """The character offset within the row of an absolute byte position."""
        return len(self.data[self.offsets[row]: byte_pos].tobytes().decode("utf-8"))
