"""decisions.json's `close_in_meaning` read back, typed and checked (docs/digest.md, "Meaning").

Each entry names a paper of the week that is not KEEP, its similarity to the
In scope concepts (a finite number), its nearest concept line (`file:line`)
and the watchlist phrase it suggests (or null). None for a week decided
without meaning (`[digest] semantic = false`, or rules before `digest.4`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .records import Decision

CLOSE_SHOWN = 5
"""The most papers a week's list holds (`reporter.digest.meaning` writes at most this many; more is refused)."""


@dataclass(frozen=True)
class CloseEntry:
    """A paper not KEEP whose meaning is close to the In scope concepts: surfaced, never applied."""

    id: str
    """The paper (a decision of the week, not KEEP)."""
    similarity: float
    """Its similarity to the In scope concepts, 4 decimals."""
    nearest_concept: str
    """The nearest In scope concept line, `criteria.md:12`."""
    suggested_phrase: str | None
    """The phrase of its title or abstract nearest the concept that the watchlist lacks, or None."""
    concept: str = ""
    """The nearest concept quoted as a rationale cites it (`criteria.md:12 "prose"`); empty when not recorded."""
    nearest_wanted: str | None = None
    """The paper the reader marked wanted in an earlier week that it is nearest to; None in a week without one."""
    wanted_similarity: float | None = None
    """Its similarity to that paper, 4 decimals."""


def read_close(value: Any, decisions: Sequence[Decision]) -> tuple[CloseEntry, ...] | None:
    """The document's `close_in_meaning` (ValueError or TypeError when it is not as the digest writes it)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise TypeError("close_in_meaning is not a list")
    if len(value) > CLOSE_SHOWN:
        raise ValueError(f"close_in_meaning lists {len(value)} papers; the digest lists at most {CLOSE_SHOWN}")
    decided = {d.id: d.decision for d in decisions}
    out = []
    for e in value:
        pid, sim, near, phrase = e["id"], e["similarity"], e["nearest_concept"], e["suggested_phrase"]
        if not isinstance(pid, str) or decided.get(pid) in (None, "KEEP"):
            raise ValueError(f"close_in_meaning lists {str(pid)[:60]!r}, which is not a paper of the week that is "
                             f"not KEEP")
        if isinstance(sim, bool) or not isinstance(sim, (int, float)) or not math.isfinite(sim):
            raise ValueError(f"close_in_meaning: similarity of {pid} is not a number")
        if not isinstance(near, str) or not (phrase is None or isinstance(phrase, str)):
            raise TypeError(f"close_in_meaning: nearest_concept or suggested_phrase of {pid} is not text")
        quoted = e.get("concept", "")
        if not isinstance(quoted, str):
            raise TypeError(f"close_in_meaning: concept of {pid} is not text")
        liked, liked_sim = e.get("nearest_wanted"), e.get("wanted_similarity")
        if (liked is None) != (liked_sim is None) or not (liked is None or isinstance(liked, str)) or not (
                liked_sim is None or (not isinstance(liked_sim, bool) and isinstance(liked_sim, (int, float))
                                      and math.isfinite(liked_sim))):
            raise TypeError(f"close_in_meaning: nearest_wanted and wanted_similarity of {pid} are not an id and a "
                            f"number")
        out.append(CloseEntry(pid, float(sim), near, phrase, quoted, liked,
                              None if liked_sim is None else float(liked_sim)))
    if len({e.id for e in out}) != len(out):
        raise ValueError("close_in_meaning lists a paper twice")
    return tuple(out)
