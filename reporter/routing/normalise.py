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
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..hashing import sha256_json
from .arrowtext import collapse_whitespace, flat, string_buffers

# Every character Python's str.isspace() accepts; "whitespace" means these. Listed for the Unicode
# versions it was checked on (walking every code point costs a tenth of a second at every start).
_WHITESPACE_KNOWN = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                     "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
WHITESPACE_CHARS = _WHITESPACE_KNOWN if unicodedata.unidata_version in ("14.0.0", "15.0.0", "15.1.0") else \
    "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
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
    return flat(arr), flat(lowered)


_COMPOSE_SECOND: set[int] | None = None


def _compose_second() -> set[int]:
    """Code points that can be the second of a canonical composition pair (NFKC may merge them)."""
    global _COMPOSE_SECOND
    if _COMPOSE_SECOND is None:
        out = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))  # Hangul vowels and trailing consonants
        for cp in range(0x80, 0x30000):
            dec = unicodedata.decomposition(chr(cp))
            if dec and not dec.startswith("<"):
                parts = dec.split()
                if len(parts) == 2:
                    out.add(int(parts[1], 16))
        _COMPOSE_SECOND = out
    return _COMPOSE_SECOND


def warm_tables() -> None:
    """Build the per-process tables normalisation reads, here: forked workers inherit them.

    Reading every code point's decomposition (`_compose_second`) costs about
    0.2 CPU-s, once per process that meets a non-ASCII character: on the real
    benchmark pool, once per worker, unless the parent did it before forking.
    """
    _compose_second()


# What normalisation does to a non-ASCII character, as bit flags.
SIMPLE = 1   # NFKC maps it, on its own, to characters that cannot combine with neighbours
FULL = 2     # NFKC must see the whole row (combining marks, composition partners)
DASHED = 4   # a dash (category Pd) other than '-'
SPACE = 8    # whitespace, or maps to whitespace
CASE = 16    # lower-casing changes it
WIDE_SPACE = 32  # whitespace beyond ASCII that NFKC leaves as it is (U+0085, U+2028): str.split collapses it
_FLAGS: dict[int, int] = {}


def char_flags(cp: int) -> int:
    """How normalisation treats one non-ASCII code point (cached per process)."""
    flags = _FLAGS.get(cp)
    if flags is None:
        c = chr(cp)
        second = _compose_second()
        mapped = unicodedata.normalize("NFKC", c)
        flags = 0
        if unicodedata.combining(c) or cp in second:
            flags |= FULL
        elif mapped != c:
            if any(unicodedata.combining(x) or ord(x) in second for x in mapped):
                flags |= FULL
            else:
                flags |= SIMPLE
        for x in (c, mapped):
            if any(unicodedata.category(y) == "Pd" and y != "-" for y in x):
                flags |= DASHED
            if any(y.isspace() for y in x):
                flags |= SPACE
            if x.lower() != x:
                flags |= CASE
        if any(y.isspace() and not y.isascii() for y in mapped):
            flags |= WIDE_SPACE
        _FLAGS[cp] = flags
    return flags


def rows_of(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The row of each byte position (ascending, each within a row's bytes) of a buffer with `offsets`.

    The row bounds are looked up among the positions, not each position among
    the row bounds: a batch has tens of thousands of rows and can have
    millions of high bytes (all of them in CJK text).
    """
    per_row = np.diff(np.searchsorted(positions, offsets))
    return np.repeat(np.arange(len(offsets) - 1), per_row)


@dataclass
class RowWork:
    """Which rows of a buffer normalisation changes, and the characters it must replace."""

    rows: np.ndarray
    """Rows with any non-ASCII character that normalisation changes."""
    full: np.ndarray
    """Rows that need NFKC over the whole row."""
    space: np.ndarray
    """Rows with Unicode whitespace (before or after NFKC)."""
    edit_pos: np.ndarray = None
    """Byte positions of characters replaced in place (SIMPLE or DASHED, outside `full` rows)."""
    edit_len: np.ndarray = None
    """Their UTF-8 lengths."""
    edit_cp: np.ndarray = None
    """Their code points."""
    edit_row: np.ndarray = None
    """Their rows."""
    case: bool = False
    """Whether lower-casing must be Unicode-aware (a cased non-ASCII character, or full NFKC rows)."""
    non_ascii: np.ndarray = None
    """Rows holding any non-ASCII character."""
    wide_space: np.ndarray = None
    """Rows whose whitespace is not all ASCII once each character has its own NFKC form (a subset of
    `space`: U+00A0 and most other spaces become ' ', and such rows collapse in numpy)."""

    def only(self, keep: np.ndarray, offsets: np.ndarray, kept_offsets: np.ndarray) -> RowWork:
        """The work of the rows `keep` (ascending, holding every row in `rows`) of the buffer with `offsets`,
        renumbered for the buffer of those rows alone, whose offsets are `kept_offsets`.

        Spares normalising the rows that need nothing: `case` stays as it
        was, which at worst does a little more work than these rows need, never less.
        """
        rank = np.full(len(offsets) - 1, -1, dtype=np.int64)
        rank[keep] = np.arange(len(keep))
        row = rank[self.edit_row]
        non_ascii = rank[self.non_ascii]
        return replace(self, rows=rank[self.rows], full=rank[self.full], space=rank[self.space],
                       wide_space=rank[self.wide_space],
                       edit_pos=self.edit_pos - offsets[self.edit_row] + kept_offsets[row], edit_row=row,
                       non_ascii=non_ascii[non_ascii >= 0])


_FLAG_TABLE = np.full(0x110000, -1, dtype=np.int8)
"""char_flags of every code point met so far in this process, -1 for the others."""


def _flags_of(cp: np.ndarray) -> np.ndarray:
    """char_flags of each code point, by table: only code points not met before are classified."""
    flags = _FLAG_TABLE[cp]
    unknown = flags < 0
    if unknown.any():
        for c in np.unique(cp[unknown]).tolist():
            _FLAG_TABLE[c] = char_flags(c)
        flags = _FLAG_TABLE[cp]
    return flags


def unicode_work(data: np.ndarray, offsets: np.ndarray, lead: np.ndarray | None = None) -> RowWork:
    """Find, in numpy, the rows whose non-ASCII characters normalisation would change.

    Only multi-byte characters are decoded; each distinct code point is
    classified once per process. `lead`, when the caller knows them: the
    positions of the rows' bytes from 0xC0 up (each character's first byte).
    """
    empty = np.zeros(0, dtype=np.int64)
    lead = np.flatnonzero(data >= 0xC0) if lead is None else lead
    if len(lead) == 0:
        return RowWork(empty, empty, empty, empty, empty, empty, empty, False, empty, empty)
    lead_row = rows_of(offsets, lead)  # ascending, as lead is
    non_ascii = lead_row[np.concatenate([[True], lead_row[1:] != lead_row[:-1]])]
    n = len(data)
    b0 = data[lead].astype(np.int64)
    b1 = data[np.minimum(lead + 1, n - 1)].astype(np.int64) & 0x3F
    b2 = data[np.minimum(lead + 2, n - 1)].astype(np.int64) & 0x3F
    b3 = data[np.minimum(lead + 3, n - 1)].astype(np.int64) & 0x3F
    cp = np.where(b0 < 0xE0, ((b0 & 0x1F) << 6) | b1,
                  np.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
                           ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3))
    pos_flags = _flags_of(cp)
    hit = pos_flags != 0
    if not hit.any():
        return RowWork(empty, empty, empty, empty, empty, empty, empty, False, non_ascii, empty)
    row = lead_row[hit]
    f = pos_flags[hit].astype(np.int64)
    full = np.unique(row[(f & FULL) != 0])
    # Only what the case-preserved text needs is edited: the lower-cased text is utf8_lower of it.
    edit = ((f & (SIMPLE | DASHED)) != 0) & ~np.isin(row, full)
    pos = lead[hit][edit]
    b = b0[hit][edit]
    length = np.where(b < 0xE0, 2, np.where(b < 0xF0, 3, 4))
    return RowWork(np.unique(row), full, np.unique(row[(f & SPACE) != 0]), pos, length, cp[hit][edit],
                   row[edit], bool(len(full)) or bool((f & CASE).any()), non_ascii,
                   np.unique(row[(f & WIDE_SPACE) != 0]))


_REPLACEMENT: dict[int, bytes] = {}


def _replacement(cp: int) -> bytes:
    """One character normalised on its own (NFKC, then the dash rule), as UTF-8."""
    out = _REPLACEMENT.get(cp)
    if out is None:
        text = unicodedata.normalize("NFKC", chr(cp))
        out = _REPLACEMENT[cp] = "".join("-" if unicodedata.category(c) == "Pd" else c for c in text).encode("utf-8")
    return out


def apply_edits(arr: pa.Array, offsets: np.ndarray, work: RowWork,
                overrides: pa.Array | None = None, override_rows: np.ndarray | None = None) -> pa.Array:
    """Replace single characters in place and whole rows, in one pass over the bytes.

    The SIMPLE and DASHED characters (the normalised, case-preserved text;
    it is lower-cased whole afterwards, as normalise_array does). The positions
    refer to the buffer with `offsets` (`arr`'s own, or its ASCII-lower-cased
    twin, whose non-ASCII bytes are the same). Rows in `override_rows` take
    their bytes from `overrides` instead. Rows and nulls keep their places.
    The bookkeeping is in numpy; Python only slices the bytes between edits
    and joins them once.
    """
    n = len(arr)
    override_rows = np.zeros(0, dtype=np.int64) if override_rows is None else override_rows
    has_edits = work.edit_pos is not None and len(work.edit_pos) > 0
    if not has_edits and not len(override_rows):
        return arr
    src, src_off = string_buffers(arr)
    shift = int(src_off[0]) - int(offsets[0])
    lengths = np.diff(src_off)
    starts, spans, replacements = [], [], []
    if has_edits:
        keep = ~np.isin(work.edit_row, override_rows)
        length = work.edit_len[keep]
        distinct, inverse = np.unique(work.edit_cp[keep], return_inverse=True)
        table = [_replacement(cp) for cp in distinct.tolist()]
        new_length = np.array([len(r) for r in table], dtype=np.int64)[inverse]
        lengths = lengths + np.bincount(work.edit_row[keep], weights=new_length - length, minlength=n).astype(np.int64)
        starts.append(work.edit_pos[keep] + shift)
        spans.append(length)
        replacements += [table[i] for i in inverse.tolist()]
    if len(override_rows):
        ov, ov_off = string_buffers(overrides)
        starts.append(src_off[override_rows])
        spans.append(src_off[override_rows + 1] - src_off[override_rows])
        lengths[override_rows] = np.diff(ov_off)
        ovm = memoryview(ov)
        replacements += [ovm[a:b] for a, b in zip(ov_off[:-1].tolist(), ov_off[1:].tolist())]
    start = np.concatenate(starts)
    span = np.concatenate(spans)
    order = np.argsort(start, kind="stable")
    start, end = start[order], start[order] + span[order]
    gap_from = np.concatenate([[src_off[0]], end]).tolist()
    gap_to = np.concatenate([start, [src_off[-1]]]).tolist()
    mv = memoryview(src)
    pieces: list = [None] * (2 * len(start) + 1)
    pieces[0::2] = [mv[a:b] for a, b in zip(gap_from, gap_to)]
    pieces[1::2] = [replacements[i] for i in order.tolist()]
    blob = b"".join(pieces)
    new_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_off[1:])
    validity = None
    if arr.null_count:
        validity = pa.array(arr.is_valid().to_numpy(zero_copy_only=False)).buffers()[1]
    return pa.StringArray.from_buffers(n, pa.py_buffer(new_off.astype(np.int32)), pa.py_buffer(blob),
                                       validity, arr.null_count)


def normalise_batch(raw: pa.Array, offsets: np.ndarray, work: RowWork,
                    whitespace: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """Normalise a whole field, doing only what its characters need: (case-preserved, lower-cased).

    `offsets` are those of the buffer `work`'s positions refer to (raw's
    own, or its ASCII-lower-cased twin's). Single characters are edited in
    place (NFKC on its own, the dash rule); rows that need NFKC over the
    whole row are normalised with normalise_array and spliced in, in the
    same pass; then the rows with whitespace to collapse (flagged in
    `whitespace`, or holding a character that is or becomes whitespace) are
    collapsed, in numpy or, where whitespace beyond ASCII is left, with
    str.split, which splits on exactly the isspace() set. Equal, row for
    row, to normalise_array(raw).
    """
    full = work.full
    sub_norm = None
    if len(full):
        sub_norm, _ = normalise_array(raw.take(pa.array(full)))
    norm = apply_edits(raw, offsets, work, sub_norm, full)
    collapse = whitespace.copy()
    collapse[work.space] = True
    collapse[full] = False
    rows = np.flatnonzero(collapse)
    norm = collapse_whitespace(norm, rows, work.wide_space)
    if not work.case:
        # No character of this batch changes under Unicode lower-casing (and no
        # row needed full NFKC), so lower-casing the ASCII letters is all of it.
        return norm, pc.ascii_lower(norm)
    # normalise_array lower-cases its normalised text with Arrow's utf8_lower: so does this, in one pass
    # over the few rows of the batch that are here (editing and collapsing a lower-cased twin of them
    # in step with the normalised text cost twice as much).
    return norm, flat(pc.utf8_lower(norm))


def normalise_text(text: str, lower: bool = True) -> str:
    """Normalise one string exactly as the engine normalises a field."""
    norm, low = normalise_array(pa.array([text], pa.string()))
    return (low if lower else norm)[0].as_py()


def is_word_char(ch: str) -> bool:
    """A word character: a Unicode letter, digit or underscore (Python's \\w)."""
    return ch == "_" or ch.isalnum()


MAX_PHRASE_CHARS = 1_000
"""The longest phrase (normalised) the rule language accepts: 4,000 UTF-8 bytes at most, which both scanning
engines compile (Hyperscan refuses a literal of more than 4,000 bytes: "Pattern length exceeds limit")."""


def phrase_literal(phrase: object) -> tuple[str, bool]:
    """A phrase of the rule language as the engine looks for it: (normalised lower-cased literal, prefix).

    `prefix` is a trailing `*` (the last word may go on). Raises TypeError
    (not a string) or ValueError saying what is wrong with the phrase.
    """
    if not isinstance(phrase, str):
        raise TypeError("a phrase must be a string")
    prefix = phrase.rstrip().endswith("*")
    body = phrase.rstrip()[:-1] if prefix else phrase
    if "*" in body:
        raise ValueError("'*' is allowed only at the end of a phrase (it lets the last word go on)")
    literal = normalise_text(body)
    if not literal:
        raise ValueError("the phrase is empty after normalisation")
    if len(literal) > MAX_PHRASE_CHARS:
        raise ValueError(f"the phrase is {len(literal):,} characters long after normalisation; a phrase holds "
                         f"at most {MAX_PHRASE_CHARS:,} (split it into shorter phrases)")
    return literal, prefix
