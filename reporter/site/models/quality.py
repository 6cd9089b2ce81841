"""The digest's measured quality from the reader's marks, as the week index shows it (reporter feedback)."""

from __future__ import annotations

from dataclasses import dataclass

from ..links import Href


@dataclass(frozen=True)
class MissedView:
    """A paper the reader marked wanted that was not KEEP, with the axis that missed it."""

    key: str
    """The paper's short key (what the reader typed to mark it)."""
    id: str
    """The surviving id."""
    title: str
    """The title on one line."""
    href: Href
    """Its entry on its week's page."""
    week: str
    """The week it was decided in (`2026-W23`)."""
    decision: str
    """REVIEW or DROP, as published."""
    score: int
    """Its score that week."""
    missed_by: str
    """The axis or rule that kept it from KEEP (`match: no watchlist phrase`)."""


@dataclass(frozen=True)
class QualityView:
    """The digest's measured quality from the reader's marks (`reporter feedback`)."""

    weeks: str
    """The weeks measured (`2026-W19 to 2026-W26`)."""
    marked: int
    """KEEPs the reader marked."""
    wanted: int
    """Of them, marked wanted."""
    precision: str
    """`88%`, or `none marked` when no KEEP is marked."""
    interval: str
    """The 95% Wilson interval (`53% to 98%`), or empty."""
    counts: str
    """`7 of 8 marked KEEPs wanted; 95% interval 53% to 98%`, or empty when no KEEP is marked."""
    missed: tuple[MissedView, ...]
    """Wanted papers that were not KEEP."""
    note: str = ("KEEP precision is the share of the KEEPs the reader marked that were marked wanted, over the "
                 "last 8 published weeks; the interval is the 95% Wilson interval. Marks are recorded with "
                 "reporter feedback, by the key each paper carries.")
    """What the numbers are."""
    missed_note: str = "Papers marked wanted that the digest did not keep, each with what kept it out:"
    """The missed list's lead."""
