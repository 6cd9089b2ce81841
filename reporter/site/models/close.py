"""The digest week's "Close in meaning, missed by the watchlist" section (docs/digest.md, "Meaning")."""

from __future__ import annotations

from dataclasses import dataclass

from .common import Link


@dataclass(frozen=True)
class CloseRow:
    """A paper not KEEP whose meaning is close to the In scope concepts: surfaced, never applied."""

    paper: Link
    """Its title, linked to its entry on the page (a REVIEW) or to its own page (a DROP, listed without an entry)."""
    id: str
    """The surviving id (scheme-prefixed)."""
    decision: str
    """REVIEW or DROP: what the seed's rules decided, unchanged."""
    similarity: str
    """Its similarity to the In scope concepts, 4 decimals."""
    concept: str
    """The nearest In scope concept, quoted as a rationale cites it (`criteria.md:12 "prose"`)."""
    phrase: str
    """The watchlist phrase it suggests, or empty when none is new to the watchlist."""
    wanted: str = ""
    """The paper the reader wanted that it is nearest to, with the similarity (`doi:… 0.8123`); empty without."""


@dataclass(frozen=True)
class CloseView:
    """The section: what it is, and its papers (most similar first)."""

    note: str
    """What the list is and is not (surfaced, never applied; the rule that chose how many)."""
    rows: tuple[CloseRow, ...]
    """The papers, most similar first."""
    heading: str = "Close in meaning, missed by the watchlist"
    """The section's heading (the count follows it)."""
    empty: str = "No paper outside the KEEPs came close enough in meaning this week."
    """The line when the list is empty."""
