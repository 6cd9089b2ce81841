"""Calibration of a screen tier against the workspace's labels: each voter and the gate, with Wilson intervals.

Part of the status page's screening report (`reporter.screening.report`,
the site's one door to screening, which builds a tier's `Calibration` with `tier_calibration`):
recall (labelled includes not discarded) and work saved (labelled works
discarded), each with its 95% Wilson interval, per voter (its answers, an
invalid reply, or no vote yet) and for the gate (the tier's outcomes), and
every labelled include the gate discarded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..routing.labels import wilson
from .answer import ANSWERS, TIER_OUTCOMES
from .config import ScreenWorkspace
from .scope import load_works

INVALID = "invalid"
"""The column of invalid replies beside the three answers."""
NOT_ASKED = "no vote"
"""A calibration column: labelled works in scope the voter has not answered (yet)."""
LOST_SHOWN = 1000
"""At most this many discarded labelled includes are listed per tier (the count is always given)."""


@dataclass(frozen=True)
class Confusion:
    """One voter's answers, or a gate's outcomes, against the labels (labelled works of the scope)."""

    name: str
    """The voter's name, or `gate`."""
    columns: tuple[str, ...]
    """The answers or outcomes counted (the answers, invalid and `no vote`; or the tier's outcomes and incomplete)."""
    rows: tuple[tuple[str, tuple[int, ...]], ...]
    """(label, counts per column) for include, then exclude."""
    includes: int
    """Labelled includes answered or decided (the recall's denominator)."""
    kept: int
    """Of those, not discarded (for a voter: not answered exclude)."""
    recall: tuple[float, float, float] | None
    """kept / includes with its Wilson 95% interval (None without includes)."""
    judged: int
    """Labelled works answered or decided (the work saved's denominator)."""
    discarded: int
    """Of those, discarded (for a voter: answered exclude)."""
    saved: tuple[float, float, float] | None
    """discarded / judged with its Wilson 95% interval (None without such works)."""


@dataclass(frozen=True)
class LostInclude:
    """A labelled include that a gate discarded."""

    work_id: str
    """The work."""
    title: str
    """Its title as the voters saw it."""


@dataclass(frozen=True)
class Calibration:
    """A tier's voters and gate against the workspace's labels."""

    labelled: int
    """Labelled works in the tier's scope."""
    includes: int
    """Of those, labelled include."""
    voters: tuple[Confusion, ...]
    """Each voter's answers against the labels."""
    gate: Confusion
    """The gate's outcomes against the labels."""
    lost: tuple[LostInclude, ...]
    """The labelled includes the gate discarded (at most LOST_SHOWN), by work id."""
    lost_total: int
    """How many there are in all."""


def vote_answer(row: Any) -> str:
    """A vote row's answer, or INVALID for an invalid reply (the column it is counted in)."""
    return row.vote.answer if row.vote.valid else INVALID


def rate(successes: int, n: int) -> tuple[float, float, float] | None:
    """(share, Wilson 95% low, high), or None when n is 0."""
    if not n:
        return None
    low, high = wilson(successes, n)
    return successes / n, low, high


def _confusion(name: str, columns: tuple[str, ...], answers: dict[str, str], known: dict[str, str],
               discard: str, undecided: str) -> Confusion:
    """Counts per (label, answer) over labelled works; `discard` is the answer that drops a work."""
    cells = Counter((known[w], answers.get(w, undecided)) for w in known)
    includes = [w for w, lab in known.items() if lab == "include" and answers.get(w, undecided) != undecided]
    judged = [w for w in known if answers.get(w, undecided) != undecided]
    kept = sum(answers[w] != discard for w in includes)
    discarded = sum(answers[w] == discard for w in judged)
    return Confusion(name=name, columns=columns,
                     rows=tuple((lab, tuple(cells.get((lab, c), 0) for c in columns)) for lab in ("include", "exclude")),
                     includes=len(includes), kept=kept, recall=rate(kept, len(includes)),
                     judged=len(judged), discarded=discarded, saved=rate(discarded, len(judged)))


def tier_calibration(ws: ScreenWorkspace, release_dir: Path, tier: str, ids: tuple[str, ...], voters: tuple,
                     votes: dict[str, dict[str, Any]], verdicts: dict[str, str], known: dict[str, str]) -> Calibration:
    """A tier's voters (`votes`: work -> voter -> row) and gate (`verdicts`) against `known` (work -> label)."""
    labelled = {w: known[w] for w in ids if w in known}
    confusions = []
    for v in voters:
        answers = {w: vote_answer(row[v.name]) for w, row in votes.items() if v.name in row}
        confusions.append(_confusion(v.name, (*ANSWERS, INVALID, NOT_ASKED), answers, labelled, "exclude", NOT_ASKED))
    gate = _confusion("gate", (*TIER_OUTCOMES[tier], "incomplete"), verdicts, labelled, "discard", "incomplete")
    lost_ids = sorted(w for w, lab in labelled.items() if lab == "include" and verdicts.get(w) == "discard")
    texts = load_works(ws, release_dir, lost_ids[:LOST_SHOWN], check=False)
    return Calibration(labelled=len(labelled), includes=sum(lab == "include" for lab in labelled.values()),
                       voters=tuple(confusions), gate=gate,
                       lost=tuple(LostInclude(w, texts[w].title) for w in lost_ids[:LOST_SHOWN]),
                       lost_total=len(lost_ids))
