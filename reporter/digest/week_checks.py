"""The checks of a week read back from the archive: what its page shows must follow from its decisions.

`reporter.digest.archive` reads a decisions.json and refuses, naming the
file, a calibration that disagrees with the decisions listed
(`check_counts`), a paper listed twice or a score or cause that does not fit
its decision (`check_decisions`), a paper listed again that the week also
decides or from a week not among its prior (`check_listed_again`), and
settings that are not whole numbers or scores (`whole_setting`,
`score_setting`). Every refusal says to restore the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from .records import Decision, WeekDecisions


def check_counts(decisions: WeekDecisions, source: str) -> None:
    """Refuse a calibration that disagrees with the decisions listed."""
    cal, ds = decisions.calibration, decisions.decisions
    histogram = [0] * 10
    for d in ds:
        histogram[min(max(d.score, 0) // 10, 9)] += 1
    counted = (sum(d.decision == "KEEP" for d in ds), sum(d.decision == "REVIEW" for d in ds),
               sum(d.decision == "DROP" for d in ds))
    if (cal.kept, cal.review, cal.dropped) != counted or list(cal.histogram) != histogram:
        raise InputError(f"{source}: the calibration (kept {cal.kept}, review {cal.review}, dropped {cal.dropped}, "
                         f"histogram {list(cal.histogram)}) disagrees with the decisions listed (kept {counted[0]}, "
                         f"review {counted[1]}, dropped {counted[2]}, histogram {histogram}); restore the file")


def check_decisions(ds: tuple[Decision, ...], source: str) -> None:
    """Refuse a paper listed twice, and a score or cause that does not fit its decision."""
    if len({d.id for d in ds}) != len(ds):
        raise InputError(f"{source}: a paper is listed twice; restore the file")
    for d in ds:
        if not 0 <= d.score <= 100 or (d.decision == "DROP") != (d.cause is not None):
            raise InputError(f"{source}: {d.id}: score {d.score} or cause {d.cause!r} does not fit "
                             f"decision {d.decision}; restore the file")


def check_listed_again(decisions: WeekDecisions, prior: Iterable[str], source: str) -> None:
    """Refuse a paper listed again that the week also decides, or listed again from a week not among its `prior`."""
    ids = {d.id for d in decisions.decisions}
    before = set(prior)
    for again in decisions.listed_again:
        if again.id in ids or again.week not in before:
            raise InputError(f"{source}: listed_again {again.id}: decided this week too, or week {again.week!r} is "
                             f"not one of the four before {decisions.week}; restore the file")


def whole_setting(settings: dict[str, Any], name: str, default: int | None, source: str) -> int | None:
    """`settings[name]` (else `default`): a whole number or None, anything else refused naming `source`."""
    value = settings.get(name, default)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise InputError(f"{source}: settings.{name} {value!r} is not a whole number; restore the file")
    return value


def score_setting(settings: dict[str, Any], name: str, default: int, source: str) -> int:
    """`settings[name]` (else `default`): a score from 0 to 100, anything else refused naming `source`."""
    value = settings.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise InputError(f"{source}: settings.{name} {value!r} is not a score from 0 to 100; restore the file")
    return value
