"""One multi-pattern pass over a text field: every literal's hits with word-boundary flags.

The lower-cased, normalised field of a whole record batch is one contiguous
Arrow buffer; Aho-Corasick runs over it once (overlapping matches, so a
phrase inside a longer phrase is still seen), and numpy maps each hit to
its row and checks the characters either side. A hit that straddles two
rows is dropped. Only hits next to a non-ASCII byte need Python to decide
whether the neighbour is a word character. The field's bytes are read as
a FieldBuffer (fieldbuffer.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain

import ahocorasick_rs
import numpy as np

from ..errors import InputError
from .fieldbuffer import FieldBuffer
from .normalise import is_word_char

_ASCII_WORD = np.zeros(256, dtype=bool)
for _c in range(128):
    _ASCII_WORD[_c] = is_word_char(chr(_c))
_NON_ASCII = np.zeros(256, dtype=bool)
_NON_ASCII[128:] = True
VECTOR_STEPS = 32
"""Characters a prefix hit is extended by for all rows at once; longer words are finished row by row."""
_WORD_RUN = re.compile(r"\w*")


@dataclass
class Hits:
    """Valid (same-row) hits of every literal in one field."""

    row: np.ndarray
    """Row of each hit (int64)."""
    lit: np.ndarray
    """Literal index of each hit (indices >= Scanner.n are whitespace-trouble markers)."""
    start: np.ndarray
    """Byte start within the row."""
    end: np.ndarray
    """Byte end within the row (exclusive)."""
    left_ok: np.ndarray
    """No word character immediately before."""
    right_ok: np.ndarray
    """No word character immediately after."""

    @classmethod
    def empty(cls) -> "Hits":
        z = np.zeros(0, dtype=np.int64)
        b = np.zeros(0, dtype=bool)
        return cls(z, z, z, z, b, b)


# Byte sequences that normalisation would change in otherwise clean text:
# two spaces in a row and ASCII whitespace other than the space. Scanning
# for them in the same pass as the rules' literals costs nothing extra.
WHITESPACE_TROUBLE = ("  ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f")


class Scanner:
    """A compiled set of lower-cased literals (plus the whitespace-trouble markers).

    Every occurrence of every literal is reported, overlapping ones
    included, as (literal, byte start, byte end). Two engines give the same
    hits: Hyperscan (Intel's SIMD multi-literal matcher) where its wheel
    installs (Linux x86-64), and the `aho-corasick` crate's DFA everywhere
    else. On the real benchmark pool Hyperscan scans at about 0.9 ns per
    byte and the DFA at about 2.1 (docs/scale.md, "One core"); tests/test_routing_textscan.py
    checks that both give the same hits.

    `caseless`: Hyperscan folds ASCII case itself, so it scans the raw
    text and the caller lower-cases nothing; the DFA needs the text with its
    ASCII letters lower-cased first. Either way the hits are those of the
    literals in the ASCII-lower-cased text (a non-ASCII capital is left to
    normalisation, which lower-cases it).

    A routing plan scans each text field with only the literals its rules
    look for there (`ids` keeps the plan's numbering): a title-only literal
    such as `<` is not looked for in the abstracts, where it was a sixth of
    all the hits of the real benchmark pool.
    """

    def __init__(self, literals: list[str], engine: str | None = None, ids: list[int] | None = None,
                 n: int | None = None):
        self.literals = literals
        self.ids = list(range(len(literals))) if ids is None else list(ids)
        """The index each literal's hits report (a plan's index of it, when this scans a subset)."""
        self.n = len(literals) if n is None else n
        """Hits with `lit` >= n are whitespace-trouble markers."""
        if len(self.ids) != len(literals) or any(not 0 <= i < self.n for i in self.ids):
            raise ValueError("every literal needs an index below n")
        patterns = [lit.encode("utf-8") for lit in list(literals) + list(WHITESPACE_TROUBLE)]
        self._ids = np.array(self.ids + [self.n + k for k in range(len(WHITESPACE_TROUBLE))], dtype=np.int64)
        self._lengths = np.zeros(self.n + len(WHITESPACE_TROUBLE), dtype=np.int64)
        self._lengths[self._ids] = [len(p) for p in patterns]
        self.engine = engine or default_engine()
        self.caseless = self.engine == "hyperscan"
        self._local = threading.local()
        if self.engine == "hyperscan":
            self._database = _hyperscan_database(patterns, self._ids.tolist())
        elif self.engine == "aho-corasick":
            # A full DFA scans about 3x faster than the default NFA here (measured
            # on the 50-rule benchmark book); its size is small for rule books.
            self.automaton = ahocorasick_rs.BytesAhoCorasick(patterns, implementation=ahocorasick_rs.Implementation.DFA)
        else:
            raise ValueError(f"unknown scanning engine {self.engine!r} (hyperscan or aho-corasick)")

    def __getstate__(self) -> dict:
        # Compiled engines do not pickle; a copy (a Dask worker's) compiles its own.
        return {"literals": self.literals, "engine": self.engine, "ids": self.ids, "n": self.n}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["literals"], state["engine"], state["ids"], state["n"])

    def _raw_hits(self, data: memoryview) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(literal, start, end) of every occurrence in data, as int64 arrays."""
        if self.engine == "hyperscan":
            found: list[int] = []
            add = found.extend

            def on_match(pattern: int, _from: int, to: int, _flags: int, _context) -> None:
                add((pattern, to))

            self._database.scan(data, match_event_handler=on_match, scratch=self._scratch())
            pairs = np.array(found, dtype=np.int64).reshape(-1, 2)
            lit, end = pairs[:, 0], pairs[:, 1]
            return lit, end - self._lengths[lit], end
        raw = self.automaton.find_matches_as_indexes(data, overlapping=True)
        # Three times faster than np.array(raw): no per-tuple type inference.
        arr = np.fromiter(chain.from_iterable(raw), dtype=np.int64, count=3 * len(raw)).reshape(-1, 3)
        return self._ids[arr[:, 0]], arr[:, 1], arr[:, 2]

    def _scratch(self):
        """Hyperscan's scratch space: one per thread (a Dask worker routes pieces on several threads)."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            import hyperscan
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def scan(self, buf: FieldBuffer) -> Hits:
        """Every hit of every literal within a row, with boundary flags."""
        if len(buf.data) == 0:
            return Hits.empty()
        base = int(buf.offsets[0])
        lit, start, end = self._raw_hits(memoryview(buf.data[base:]))
        if not len(lit):
            return Hits.empty()
        start, end = start + base, end + base
        offsets = buf.offsets
        row = np.searchsorted(offsets, start, side="right") - 1
        keep = end <= offsets[row + 1]
        if not keep.all():
            lit, start, end, row = lit[keep], start[keep], end[keep], row[keep]
        data = buf.data
        n = len(data)
        row_start, row_end = offsets[row], offsets[row + 1]
        # Left neighbour.
        at_start = start == row_start
        prev_pos = np.where(at_start, 0, start - 1)
        prev = data[prev_pos] if n else np.zeros(len(start), np.uint8)
        left_word = _ASCII_WORD[prev] & ~at_start
        odd = np.flatnonzero(_NON_ASCII[prev] & ~at_start)
        for i in odd:
            left_word[i] = is_word_char(_char_before(data, int(start[i]), int(row_start[i])))
        # Right neighbour.
        at_end = end == row_end
        next_pos = np.where(at_end, 0, np.minimum(end, n - 1))
        nxt = data[next_pos] if n else np.zeros(len(end), np.uint8)
        right_word = _ASCII_WORD[nxt] & ~at_end
        odd = np.flatnonzero(_NON_ASCII[nxt] & ~at_end)
        for i in odd:
            right_word[i] = is_word_char(_char_at(data, int(end[i]), int(row_end[i])))
        return Hits(row, lit, start - row_start, end - row_start, ~left_word, ~right_word)

    def trouble_rows(self, hits: Hits) -> np.ndarray:
        """Rows holding a whitespace-trouble marker."""
        return np.unique(hits.row[hits.lit >= self.n])

    @staticmethod
    def select(hits: Hits, keep: np.ndarray, row_map: np.ndarray | None = None) -> Hits:
        """The hits where keep is true, rows renumbered through row_map."""
        row = hits.row[keep]
        return Hits(row if row_map is None else row_map[row], hits.lit[keep], hits.start[keep], hits.end[keep],
                    hits.left_ok[keep], hits.right_ok[keep])

    @staticmethod
    def concat(a: Hits, b: Hits) -> Hits:
        """Two hit sets as one."""
        return Hits(*(np.concatenate([getattr(a, f), getattr(b, f)])
                      for f in ("row", "lit", "start", "end", "left_ok", "right_ok")))


ENGINES = ("hyperscan", "aho-corasick")
ENGINE_ENV = "REPORTER_SCAN_ENGINE"
"""Names the literal scanner's engine (one of ENGINES); unset, Hyperscan where it is installed. Read by the
commands at their edge (scan_engine), never by the scanner."""


def scan_engine(environ: Mapping[str, str]) -> str | None:
    """The engine REPORTER_SCAN_ENGINE names in a command's environment (checked), or None when unset: each
    process then takes its default_engine()."""
    chosen = environ.get(ENGINE_ENV)
    if not chosen:
        return None
    if chosen not in ENGINES:
        raise InputError(f"{ENGINE_ENV}={chosen!r}: name one of {', '.join(ENGINES)} (or leave it unset)")
    return chosen


def default_engine() -> str:
    """Hyperscan where it is installed, else the aho-corasick DFA."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return "aho-corasick"
    return "hyperscan"


def _hyperscan_database(patterns: list[bytes], ids: list[int]):
    """A block-mode Hyperscan database reporting every end of every pattern (as its id), ASCII letters
    in either case."""
    import hyperscan
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    # Every byte escaped: the patterns are literals, whatever characters they hold.
    expressions = [b"".join(b"\\x%02x" % c for c in p) for p in patterns]
    # Without HS_FLAG_UTF8, HS_FLAG_CASELESS folds exactly the ASCII letters: Arrow's ascii_lower.
    database.compile(expressions=expressions, ids=ids, elements=len(patterns),
                     flags=[hyperscan.HS_FLAG_CASELESS] * len(patterns))
    return database


def _char_before(data: np.ndarray, pos: int, lo: int) -> str:
    """The character whose UTF-8 encoding ends just before byte pos."""
    begin = pos - 1
    while begin > lo and (data[begin] & 0xC0) == 0x80:
        begin -= 1
    return data[begin:pos].tobytes().decode("utf-8", "replace")[:1]


def _char_at(data: np.ndarray, pos: int, hi: int) -> str:
    """The character whose UTF-8 encoding starts at byte pos."""
    stop = min(pos + 4, hi)
    return data[pos:stop].tobytes().decode("utf-8", "ignore")[:1]


def word_end(buf: FieldBuffer, rows: np.ndarray, end: np.ndarray) -> np.ndarray:
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
