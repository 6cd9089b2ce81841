"""A digest paper's own text as every view of a week shows it: its authors line and its abstract's snippet.

One definition for the week page, its Markdown twin, the feed entry and the
e-mail edition, so "the first three authors and et al." and "the start of the
abstract" read the same wherever a subscriber meets the paper. Each value is
plain data; each view escapes it its own way.
"""

from __future__ import annotations

from collections.abc import Sequence

AUTHORS_SHOWN = 3
"""Authors named before "et al."."""
AUTHOR_CHARS = 60
"""An author's name is shortened to this many characters (a record can hold a whole collaboration in one)."""
SNIPPET_CHARS = 280
"""The start of an abstract shown before the reader asks for the rest."""


def authors_line(authors: Sequence[str]) -> str:
    """The first AUTHORS_SHOWN authors, then "et al." when there are more ("" without any)."""
    names = [cut(flat(a), AUTHOR_CHARS) for a in authors[:AUTHORS_SHOWN]]
    return ", ".join(names) + (" et al." if len(authors) > AUTHORS_SHOWN else "")


def snippet(abstract: str | None) -> str:
    """The start of an abstract, white space made single, cut at a word with an ellipsis ("" without one)."""
    return cut(flat(abstract or ""), SNIPPET_CHARS)


def flat(text: str) -> str:
    """Data as one line: every run of white space (line breaks too) one space."""
    return " ".join(text.split())


def cut(text: str, most: int) -> str:
    """`text` at most `most` characters: cut at the last space of the second half, an ellipsis where it was cut."""
    if len(text) <= most:
        return text
    head = text[: most - 1]
    space = head.rfind(" ")
    if space >= most // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


__all__ = ["AUTHORS_SHOWN", "SNIPPET_CHARS", "authors_line", "cut", "flat", "snippet"]
