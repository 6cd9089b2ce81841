"""The rule language's `phrase` predicate over any text column: `match_phrases(texts, phrases)`.

For callers outside routing (the digest's watchlist and criteria terms)
that must match exactly as a rule would. It runs the engine's own code:
the field is normalised and scanned by `FieldText` (ASCII fast path, one
Aho-Corasick pass over the whole column, boundary flags from `textscan`),
a phrase's hits are the boundary-checked hits the `phrase` predicate reads
(`FieldText.good_hits`), and the first hit's span is measured as evidence
is (`evidence.phrase_spans`). Phrases are parsed as the rule book parses
them (`normalise.phrase_literal`). So for any phrase P, a row matches here
if and only if a rule `{"field": F, "phrase": P}` matches it on field F.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..errors import InputError
from ..text import replace_surrogates
from .evidence import phrase_spans, span_texts
from .fieldtext import FieldText
from .normalise import phrase_literal
from .textscan import Scanner

CHUNK_ROWS = 65_536
"""Rows normalised and scanned at a time (bounds memory, as the engine's record batches do)."""


class Span(NamedTuple):
    """One phrase matched in one row: where it first occurs and how often it does."""

    phrase: str
    """The phrase as given."""
    index: int
    """Its position in the phrases given."""
    start: int
    """Character offset of the first occurrence in the row's normalised text."""
    end: int
    """Its end (exclusive); for `trial*` the end of the word it starts."""
    text: str
    """The first occurrence as written (normalised, case preserved): what a rationale quotes."""
    count: int
    """Occurrences in the row (every start position, overlapping ones included)."""


@dataclass(frozen=True, eq=False)
class PhraseMatches:
    """Which phrases matched which rows of a text column: one entry per matching (row, phrase) pair.

    The entries are sorted by row, then phrase index; a pair that did not
    match has no entry. Offsets are character (code point) offsets into the
    row's normalised, case-preserved text (NFKC, dashes, whitespace; the
    same convention as routing evidence), which equals the original text
    wherever normalisation changed nothing (most rows: plain ASCII).
    """

    phrases: tuple[str, ...]
    """The phrases, as given (the columns of `matrix()`)."""
    n_rows: int
    """Rows of the text column (the rows of `matrix()`)."""
    row: np.ndarray
    """int64: the entry's row."""
    phrase: np.ndarray
    """int64: the entry's phrase index."""
    count: np.ndarray
    """int64: occurrences of the phrase in the row (at least 1)."""
    start: np.ndarray
    """int64: character start of the first occurrence."""
    end: np.ndarray
    """int64: its character end (exclusive)."""
    text: pa.Array
    """string: the first occurrence's text (normalised, case preserved)."""

    def __len__(self) -> int:
        return len(self.row)

    def __repr__(self) -> str:
        return f"PhraseMatches({len(self.phrases)} phrases, {self.n_rows} rows, {len(self.row)} matches)"

    def index(self, phrase: int | str) -> int:
        """A phrase's index (a phrase given twice: its first position)."""
        if isinstance(phrase, str):
            try:
                return self.phrases.index(phrase)
            except ValueError:
                raise KeyError(f"{phrase!r} is not one of the phrases matched") from None
        if not 0 <= phrase < len(self.phrases):
            raise IndexError(f"phrase index {phrase} out of range (0..{len(self.phrases) - 1})")
        return int(phrase)

    def matched(self, phrase: int | str | None = None) -> np.ndarray:
        """Bool per row: the phrase matched it (None: any of the phrases did)."""
        out = np.zeros(self.n_rows, dtype=bool)
        out[self.row if phrase is None else self.row[self.phrase == self.index(phrase)]] = True
        return out

    def matrix(self) -> np.ndarray:
        """Bool (rows, phrases): which phrases matched which rows."""
        out = np.zeros((self.n_rows, len(self.phrases)), dtype=bool)
        out[self.row, self.phrase] = True
        return out

    def counts(self) -> np.ndarray:
        """int64 (rows, phrases): occurrences of each phrase in each row (0 where none)."""
        out = np.zeros((self.n_rows, len(self.phrases)), dtype=np.int64)
        out[self.row, self.phrase] = self.count
        return out

    def spans(self, row: int) -> list[Span]:
        """The phrases one row matched, in phrase order, each with its first occurrence."""
        lo, hi = np.searchsorted(self.row, [row, row + 1])
        texts = self.text.slice(lo, hi - lo).to_pylist()
        return [Span(self.phrases[int(self.phrase[i])], int(self.phrase[i]), int(self.start[i]),
                     int(self.end[i]), texts[k], int(self.count[i])) for k, i in enumerate(range(lo, hi))]

    def to_arrow(self) -> pa.Table:
        """The entries as a table: row, phrase_index, phrase, count, start, end, text."""
        names = pa.array(list(self.phrases), pa.string()).take(pa.array(self.phrase, pa.int64()))
        return pa.table({"row": self.row, "phrase_index": self.phrase, "phrase": names, "count": self.count,
                         "start": self.start, "end": self.end, "text": self.text})


def match_phrases(texts: Any, phrases: Sequence[str]) -> PhraseMatches:
    """Match phrases of the rule language against every row of a text column, as the engine does.

    `texts`: a pyarrow string array or chunked array (string, large_string,
    string_view), a polars Series, or any sequence of `str` or None (None
    and blank rows match nothing). Any str is matched: a lone surrogate
    (which UTF-8 cannot hold) is read as U+FFFD, one character for one. `phrases`: phrase strings as in a rule's
    `phrase` (normalised like the text, word boundaries either side, a
    trailing `*` lets the last word go on). A phrase the rule book would
    refuse is refused here (InputError naming it). One call per field: a
    phrase never matches across two fields, nor across rows.

        m = match_phrases(df["title"], ["protein language model", "ESM*"])
        m.matched()          # bool per row: any phrase in the title
        m.counts()           # (rows, phrases) occurrences
        m.spans(3)           # [Span(phrase, index, start, end, text, count), ...] of row 3
    """
    if isinstance(phrases, (str, bytes)):
        raise TypeError("phrases must be a sequence of phrase strings, not one string")
    phrases = tuple(phrases)
    parsed = []
    for i, p in enumerate(phrases):
        try:
            parsed.append(phrase_literal(p))
        except (TypeError, ValueError) as exc:
            shown = repr(p) if len(repr(p)) <= 80 else repr(p)[:77] + "..."
            error = InputError(f"phrases[{i}] {shown}: {exc}")
            error.index, error.reason = i, str(exc)  # for a caller that names where phrase i was written
            raise error from None
    column = _string_column(texts)
    literals = list(dict.fromkeys(lit for lit, _ in parsed))
    lit_index = {lit: k for k, lit in enumerate(literals)}
    scanner = Scanner(literals)
    parts: list[tuple] = []
    base = 0
    for piece in _pieces(column):
        ft = FieldText(piece, scanner)
        valid = piece.is_valid().to_numpy(zero_copy_only=False) if piece.null_count else None
        found: dict[tuple[str, bool], tuple] = {}
        for j, key in enumerate(parsed):
            if key not in found:
                rows, start, end, count = phrase_spans(ft, lit_index[key[0]], key[1])
                if valid is not None:
                    keep = valid[rows]
                    rows, start, end, count = rows[keep], start[keep], end[keep], count[keep]
                found[key] = (rows, start, end, count, span_texts(ft, rows, start, end))
            rows, start, end, count, text = found[key]
            parts.append((rows + base, np.full(len(rows), j, dtype=np.int64), count, start, end, text))
        base += len(piece)
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return _frozen(PhraseMatches(phrases, base, z, z, z, z, z, pa.array([], pa.string())))
    row, phrase, count, start, end = (np.concatenate([p[k] for p in parts]).astype(np.int64) for k in range(5))
    order = np.lexsort((phrase, row))
    text = pa.concat_arrays([p[5] for p in parts]).take(pa.array(order))
    return _frozen(PhraseMatches(phrases, base, row[order], phrase[order], count[order], start[order],
                                 end[order], text))


def _frozen(m: PhraseMatches) -> PhraseMatches:
    for name in ("row", "phrase", "count", "start", "end"):
        getattr(m, name).flags.writeable = False
    return m


def _string_column(texts: Any) -> pa.Array | pa.ChunkedArray:
    """The texts as an Arrow column of strings."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a column of texts (a sequence, Arrow array or polars Series), not one string")
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        if hasattr(texts, "to_arrow"):  # a polars Series
            texts = texts.to_arrow()
        else:
            rows = texts if isinstance(texts, np.ndarray) else list(texts)
            try:
                try:
                    texts = pa.array(rows, pa.string())
                except UnicodeEncodeError:  # a lone surrogate: U+FFFD in its place, offsets unchanged
                    texts = pa.array([replace_surrogates(t) if isinstance(t, str) else t for t in rows], pa.string())
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise TypeError(f"texts must hold strings or None: {exc}") from None
    t = texts.type
    if not (pa.types.is_null(t) or _is_text(t.value_type if pa.types.is_dictionary(t) else t)):
        raise TypeError(f"texts must be a column of strings, got Arrow type {t}")
    return texts


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view",
                                                                            lambda _: False)(t)


def _pieces(column: pa.Array | pa.ChunkedArray):
    """The column as plain `string` arrays of at most CHUNK_ROWS rows, in order."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        for at in range(0, len(chunk), CHUNK_ROWS):
            piece = chunk.slice(at, CHUNK_ROWS)
            yield piece if piece.type == pa.string() else piece.cast(pa.string())
