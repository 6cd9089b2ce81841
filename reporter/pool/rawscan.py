"""Scans of a JSONL or CSV file's raw bytes, read in pieces before (or beside) pyarrow's parser.

The longest row, so that the reader can pick a block that holds it; the
deepest nesting of arrays and objects on a JSONL line, refused naming the
line before pyarrow's recursive parser could overflow its stack; a CSV
header's column names, read on their own however long the rows after it
are. The table reader (reader.py) calls them; numpy reads each piece.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import InputError

MAX_JSON_DEPTH = 1000
"""The deepest nesting of arrays and objects a JSONL line may have (pyarrow's parser recurses and
would crash the process far deeper; the check runs before it)."""
PIECE = 1 << 24
"""Bytes read at a time by the scans for the longest row and the deepest nesting."""


def unreadable(path: Path, exc: OSError) -> str:
    """The message for a file the system could not read (a hint when a .gz file is not gzip)."""
    hint = "; is it really gzip-compressed? (rename it without .gz if it is plain text)" \
        if path.name.lower().endswith(".gz") else ""
    return f"{path}: cannot read the file ({exc}){hint}"


def longest_row(path: Path, quoted: bool) -> int:
    """Bytes of the file's longest line (decompressed); quoted (CSV): a line break inside double quotes goes on."""
    longest = start = pos = odd = 0
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            while chunk := stream.read(PIECE):
                data = np.frombuffer(chunk, dtype=np.uint8)
                ends = np.flatnonzero((data == 0x0A) | (data == 0x0D)) if quoted else np.flatnonzero(data == 0x0A)
                if quoted:
                    quotes = data == 0x22
                    if len(ends):  # a line break ends a row only outside quotes: an even count of quotes before it
                        ends = ends[((np.cumsum(quotes, dtype=np.uint8) + odd) & 1)[ends] == 0]
                    odd = (odd + int(np.count_nonzero(quotes))) & 1
                if len(ends):
                    ends = ends + pos
                    longest = max(longest, int(ends[0]) + 1 - start, int(np.diff(ends).max(initial=0)))
                    start = int(ends[-1]) + 1
                pos += len(data)
    except OSError as exc:
        raise InputError(unreadable(path, exc)) from None
    return max(longest, pos - start)


class _Nesting:
    """The nesting depth of one JSON line read in pieces: string and escape state carried between them."""

    def __init__(self) -> None:
        self.depth = self.deepest = self.in_string = self.backslashes = 0

    def feed(self, data: np.ndarray) -> None:
        """Read the next piece of the line (bytes, without its line break)."""
        for lo in range(0, len(data), 1 << 20):
            self._feed(data[lo: lo + (1 << 20)])

    def _feed(self, b: np.ndarray) -> None:
        n = len(b)
        if not n:
            return
        idx = np.arange(n)
        last_plain = np.maximum.accumulate(np.where(b == 0x5C, -1, idx))  # last non-backslash at or before i
        run = np.empty(n, dtype=np.int64)  # backslashes just before i
        run[0] = self.backslashes
        before = last_plain[:-1]
        run[1:] = np.where(before >= 0, idx[:-1] - before, idx[:-1] + 1 + self.backslashes)
        quote = (b == 0x22) & (run % 2 == 0)
        inside = ((np.cumsum(quote) + self.in_string) & 1).astype(bool)
        step = ((b == 0x5B) | (b == 0x7B)).astype(np.int64) - ((b == 0x5D) | (b == 0x7D))
        depth = np.cumsum(np.where(inside, 0, step)) + self.depth
        self.deepest = max(self.deepest, int(depth.max()))
        self.depth, self.in_string = int(depth[-1]), int(inside[-1])
        self.backslashes = n - 1 - int(last_plain[-1]) if last_plain[-1] >= 0 else n + self.backslashes


_NOT_OPENING = bytes(c for c in range(256) if c not in b"[{\n")
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"\n')


def _structure(raw: bytes) -> np.ndarray:
    """A piece of JSON cut down to its structure: escaped backslashes and quotes removed, then all but
    brackets, quotes and line breaks."""
    text = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    return np.frombuffer(text, dtype=np.uint8)


def check_json_depth(path: Path) -> None:
    """Refuse, naming the line, a JSONL line that nests arrays and objects deeper than MAX_JSON_DEPTH.

    A line can only be that deep when it holds more than MAX_JSON_DEPTH
    opening brackets, which one pass over the file's opening brackets and
    line breaks finds; only such lines, and the lines running across two
    pieces of the file, are read bracket by bracket, strings skipped.
    """
    line, tail, carry = 1, _Nesting(), b""

    def refuse(number: int, scan: _Nesting) -> None:
        if scan.deepest > MAX_JSON_DEPTH:
            raise InputError(f"{path}: line {number}: JSON nested {scan.deepest:,} levels deep; at most "
                             f"{MAX_JSON_DEPTH:,} levels of arrays and objects are read")

    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            while chunk := stream.read(PIECE):
                chunk = carry + chunk
                body = chunk.rstrip(b"\\")  # a run of backslashes is never cut between pieces
                carry = chunk[len(body):]
                first, last = body.find(b"\n"), body.rfind(b"\n")
                tail.feed(_structure(body if first < 0 else body[:first]))
                refuse(line, tail)
                if first < 0:
                    continue
                opening = body.translate(None, _NOT_OPENING).split(b"\n")[1:-1]  # the whole lines
                if opening and max(map(len, opening)) > MAX_JSON_DEPTH:
                    ends = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == 0x0A)
                    for k in (k for k, text in enumerate(opening) if len(text) > MAX_JSON_DEPTH):
                        scan = _Nesting()
                        scan.feed(_structure(body[ends[k] + 1: ends[k + 1]]))
                        refuse(line + 1 + k, scan)
                line += len(opening) + 1
                tail = _Nesting()
                tail.feed(_structure(body[last + 1:]))
                refuse(line, tail)
    except OSError as exc:
        raise InputError(unreadable(path, exc)) from None


def csv_names(path: Path, delimiter: str) -> list[str]:
    """The header row's column names, read on their own (however long the rows after it are)."""
    head, odd = b"", 0
    with pa.input_stream(str(path), compression="detect") as stream:
        while chunk := stream.read(1 << 16):
            data = np.frombuffer(chunk, dtype=np.uint8)
            ends = np.flatnonzero((data == 0x0A) | (data == 0x0D))
            ends = ends[((np.cumsum(data == 0x22, dtype=np.uint8) + odd) & 1)[ends] == 0] if len(ends) else ends
            if len(ends):
                head += chunk[: int(ends[0]) + 1]
                break
            head += chunk
            odd = (odd + int(np.count_nonzero(data == 0x22))) & 1
    table = pacsv.read_csv(pa.BufferReader(head), parse_options=pacsv.ParseOptions(delimiter=delimiter),
                           read_options=pacsv.ReadOptions(block_size=max(len(head) + 1, 1 << 16)))
    return table.schema.names
