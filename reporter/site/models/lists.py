"""The digest week's "Watchlist and criteria changes" section (docs/digest.md, "The reader's feedback")."""

from __future__ import annotations

from dataclasses import dataclass

from .common import Link


@dataclass(frozen=True)
class ListLine:
    """A line added or removed."""

    sign: str
    """`+` (added) or `-` (removed)."""
    line: int
    """Its line in the new file (added) or the old one (removed)."""
    text: str
    """The line as written (shown escaped)."""


@dataclass(frozen=True)
class ListChange:
    """One file (the watchlist or the criteria) against the week before."""

    role: str
    """`watchlist` or `criteria`."""
    file: str
    """The file's name as the week's decisions.json records it."""
    summary: str
    """In words: unchanged, N lines added and M removed, or changed without its lines (not recorded)."""
    lines: tuple[ListLine, ...]
    """The removed lines, then the added ones (at most DIFF_SHOWN of each)."""
    more: str
    """How many lines are not shown, in words; empty when all are."""


@dataclass(frozen=True)
class ListsView:
    """The section: since which week, and each file's change."""

    since: Link
    """The week compared with, linked to its page when it exists."""
    files: tuple[ListChange, ...]
    """The watchlist's change, then the criteria's."""
    note: str = ("What the reader changed in the watchlist and the criteria since the week before (blank lines are "
                 "not compared): a proposal applied shows here. Surfaced for the reader; the tool never edits them.")
    """What the section shows and why."""
    heading: str = "Watchlist and criteria changes"
    """The section's heading."""
