"""What the literal pass may assume of a regex's non-ASCII characters: how each is seen in the scanned
text (`seen_as`), and which classes and characters can only match non-ASCII text (`wide_class`, ...).

Used by the regex reader of reporter.routing.regexlit.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .normalise import FULL, char_flags, normalise_text


def byte_escape(pattern: str) -> bool:
    """Whether a regex holds RE2's `\\C` (any one byte) outside a `\\Q...\\E` quote (RE2 refuses it in a class).

    Rules match characters: a match that starts or ends inside a character
    has no character offsets, so the rule book refuses `\\C`.
    """
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return False
            i = end + 2
        elif pattern[i] == "\\":
            if pattern[i + 1:i + 2] == "C":
                return True
            i += 2
        else:
            i += 1
    return False


def non_ascii_atom(ch: str):
    """A non-ASCII character of a regex: a literal where the scanned text always shows it as itself
    (`seen_as`), else a wildcard (a wide one when no case folding takes it to ASCII)."""
    seen = seen_as(ch)
    if seen is not None:
        return ("lit", ch)
    return ("other", "wide") if wide_char(ch) else ("other",)


CASED_BELOW = 0x20000
"""Every code point with a case mapping lies below this (planes 0 and 1; tests/test_routing_normalise.py checks
it on this Python's Unicode tables): a character's case-folding orbit is looked for among them."""


@lru_cache(maxsize=1)
def cased_candidates() -> pa.Array:
    """Every code point below CASED_BELOW but the surrogates, one a string, encoded in numpy (a tenth of
    the time of 130,000 chr() calls)."""
    cp = np.arange(CASED_BELOW, dtype=np.int64)
    cp = cp[(cp < 0xD800) | (cp >= 0xE000)]
    size = np.where(cp < 0x80, 1, np.where(cp < 0x800, 2, np.where(cp < 0x10000, 3, 4)))
    offsets = np.zeros(len(cp) + 1, dtype=np.int32)
    np.cumsum(size, out=offsets[1:])
    data = np.zeros(int(offsets[-1]), dtype=np.uint8)
    start = offsets[:-1]
    lead = np.select([size == 1, size == 2, size == 3], [cp, 0xC0 | (cp >> 6), 0xE0 | (cp >> 12)], 0xF0 | (cp >> 18))
    data[start] = lead
    for k in (1, 2, 3):  # continuation bytes, most significant first
        has = size > k
        shift = 6 * (size[has] - 1 - k)
        data[start[has] + k] = 0x80 | ((cp[has] >> shift) & 0x3F)
    return pa.StringArray.from_buffers(len(cp), pa.py_buffer(offsets), pa.py_buffer(data))


@lru_cache(maxsize=None)
def seen_as(ch: str) -> str | None:
    """The one character a non-ASCII regex character is always seen as in the text the literal pass
    scans, or None when that is not certain.

    The regex runs on the normalised, case-preserved text and, case-insensitive,
    matches every character of `ch`'s case-folding orbit as RE2 knows it (β: β,
    Β, ϐ; ς: ς, σ, Σ). The literal pass scans the lower-cased text: a row that
    normalisation changes as `utf8_lower` of it, any other row as it is (its
    non-ASCII characters are then ones `char_flags` finds nothing to change
    in). So `ch` may stand in a required literal only when every member of the
    orbit that can be in normalised text (NFKC leaves it as it is) shows there
    as the same character: lower-cased, it is that character, and it is either
    that character already or one normalisation changes. `ϐ` never survives NFKC
    and `Β` lower-cases to β, so β is seen as β; `Σ` lower-cases to σ, so ς is
    unsafe (and σ too, as ς stays ς). Combining marks and composition partners
    (NFKC may join them to a neighbour) are never literals.
    """
    seen = normalise_text(ch)
    if len(seen) != 1 or seen.isspace() or char_flags(ord(seen)) & FULL or char_flags(ord(ch)) & FULL:
        return None
    pool = cased_candidates() if ord(ch) < CASED_BELOW else pa.concat_arrays([cased_candidates(), pa.array([ch])])
    orbit = pool.filter(pc.match_substring_regex(pool, f"^\\x{{{ord(ch):x}}}$", ignore_case=True))
    lowered = pc.utf8_lower(orbit).to_pylist()
    for y, low in zip(orbit.to_pylist(), lowered):
        if unicodedata.normalize("NFKC", y) != y:
            continue  # never in normalised text
        if low != seen:
            return None
        if y != seen and not y.isascii() and char_flags(ord(y)) == 0:
            return None  # would be scanned as itself in a row normalisation leaves alone
    return seen


NARROW_SCRIPTS = frozenset({"Latin", "Common", "Inherited", "Any"})
"""Unicode scripts that hold ASCII characters (or might: `Inherited`, `Any`); any other script holds none."""


def wide_char(ch: str) -> bool:
    """A non-ASCII character no case folding takes to ASCII (the Kelvin sign and long s fold to k and s)."""
    return not ch.isascii() and all(c.isascii() is False for form in (ch.lower(), ch.upper(), ch.casefold())
                                    for c in form)


def wide_name(name: str) -> bool:
    """`{Cyrillic}` after `\\p`: a script with no ASCII character (a category such as L or Nd has some)."""
    return name.startswith("{") and name.endswith("}") and len(name) > 4 and name[1:-1].isalpha() \
        and name[1:-1] not in NARROW_SCRIPTS


def wide_class(body: str) -> bool:
    """Whether a class body (between `[` and `]`) holds only non-ASCII characters: scripts and such letters."""
    if not body or body[0] == "^":
        return False
    i = 0
    while i < len(body):
        if body.startswith("\\p{", i):
            close = body.find("}", i)
            if close < 0 or not wide_name(body[i + 2:close + 1]):
                return False
            i = close + 1
        elif wide_char(body[i]) and body[i + 1:i + 2] != "-":
            i += 1
        else:
            return False  # ASCII, escapes, ranges, POSIX classes: may hold an ASCII character
    return True
