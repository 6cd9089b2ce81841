"""The page model of a week's "Watchlist and criteria changes" (docs/digest.md, "The reader's feedback").

From the week's `lists_diff` only: None for a week that did not record it
(decided before it was, or without a prior week), so those pages are as
they were.
"""

from __future__ import annotations

from collections.abc import Callable

from ..digest.archive import ArchivedWeek, FileChange
from ..plurals import count
from .links import Href
from .models.common import Link
from .models.lists import ListChange, ListLine, ListsView

DIFF_SHOWN = 40
"""The most added (and removed) lines the page shows per file; the rest are counted."""


def lists_view(week: ArchivedWeek, link: Callable[[str], Href | None]) -> ListsView | None:
    """The section; `link`: a week's page from this one (None when it does not exist)."""
    diff = week.lists_diff
    if diff is None:
        return None
    return ListsView(Link(diff.since, link(diff.since)), tuple(_file(f) for f in diff.files))


def _file(f: FileChange) -> ListChange:
    if not f.changed:
        return ListChange(f.role, f.file, "unchanged", (), "")
    if not f.shown:
        return ListChange(f.role, f.file, "changed (its sha256 differs; the text of one of the two weeks was not "
                                          "recorded, so its lines are not shown)", (), "")
    lines = (*(ListLine("-", n, t) for n, t in f.removed[:DIFF_SHOWN]),
             *(ListLine("+", n, t) for n, t in f.added[:DIFF_SHOWN]))
    hidden = max(0, len(f.removed) - DIFF_SHOWN) + max(0, len(f.added) - DIFF_SHOWN)
    summary = f"{count(len(f.added), 'line')} added, {len(f.removed)} removed"
    if not f.added and not f.removed:
        summary = "changed in blank lines only"
    return ListChange(f.role, f.file, summary, lines, f"and {count(hidden, 'more line')} not shown" if hidden else "")
