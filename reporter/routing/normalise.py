"""Text normalisation shared by every rule, every pattern and every row.

NFKC, every Unicode dash (category Pd) to `-`, Unicode lower-casing, every
run of whitespace collapsed to one space and the ends trimmed. The same
Arrow kernels normalise the pool's text and the rules' patterns, so a
pattern and the text it should match can never disagree on a character.
Rows that are pure ASCII (most of a real pool) skip the Unicode steps,
which are the identity on them.
"""

from __future__ import annotations

import sys
import unicodedata

import pyarrow as pa
import pyarrow.compute as pc

from ..hashing import sha256_json

# Every character Python's str.isspace() accepts; "whitespace" means these.
WHITESPACE_CHARS = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
_WS_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in WHITESPACE_CHARS) + "]"
_WS_OTHER = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in WHITESPACE_CHARS if c != " ") + "]"
# A row needs whitespace work when it holds a non-space whitespace
# character, two spaces in a row, or a space at either end.
WS_NEEDS_WORK = f"{_WS_OTHER}|  |^ | $"
WS_RUN = _WS_CLASS + "+"
DASH = r"\p{Pd}"

SETTINGS = {
    "version": 1,
    "unicode_form": "NFKC",
    "dashes": "Unicode category Pd -> '-'",
    "case": "Unicode simple lower-casing (Arrow utf8_lower); regexes see the text before lower-casing",
    "whitespace": "runs of str.isspace() characters -> one space; ends trimmed",
    "word_characters": "Unicode letters, digits and underscore (Python's \\w)",
    "unicode_version": unicodedata.unidata_version,
    "arrow_version": pa.__version__,
}


def settings_digest() -> str:
    """The release input digest of the normalisation settings."""
    return sha256_json(SETTINGS)


def normalise_array(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Normalise a string array; returns (case-preserved, lower-cased), nulls kept.

    Both arrays have the same characters at the same character offsets
    (Arrow's lower-casing maps one code point to one code point).
    """
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    if len(arr) == 0:
        return arr, arr
    ascii_mask = pc.fill_null(pc.string_is_ascii(arr), True)
    non_ascii = pc.invert(ascii_mask)
    n_non_ascii = pc.sum(non_ascii).as_py() or 0
    if n_non_ascii:
        sub = pc.filter(arr, non_ascii)
        sub = pc.utf8_normalize(sub, form="NFKC")
        sub = pc.replace_substring_regex(sub, DASH, "-")
        arr = pc.replace_with_mask(arr, non_ascii, sub)
    needs_ws = pc.fill_null(pc.match_substring_regex(arr, WS_NEEDS_WORK), False)
    if pc.any(needs_ws).as_py():
        sub = pc.filter(arr, needs_ws)
        sub = pc.utf8_trim(pc.replace_substring_regex(sub, WS_RUN, " "), " ")
        arr = pc.replace_with_mask(arr, needs_ws, sub)
    if n_non_ascii:
        lowered = pc.utf8_lower(arr)
    else:
        lowered = pc.ascii_lower(arr)
    return _flat(arr), _flat(lowered)


def _flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def normalise_text(text: str, lower: bool = True) -> str:
    """Normalise one string exactly as the engine normalises a field."""
    norm, low = normalise_array(pa.array([text], pa.string()))
    return (low if lower else norm)[0].as_py()


def is_word_char(ch: str) -> bool:
    """A word character: a Unicode letter, digit or underscore (Python's \\w)."""
    return ch == "_" or ch.isalnum()
