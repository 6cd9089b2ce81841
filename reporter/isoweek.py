"""The ISO-week calendar: week names `YYYY-Www`, their Mondays, and arithmetic on them.

A leaf module (it imports only reporter.errors): the digest's archive and
flags, `reporter fetch --week`, the mail's edition and the site's pages all
name weeks, and all take them from here. How many weeks a digest week looks
back (its prior) is the digest's rule, not the calendar's: it stays in
reporter.digest.archive.
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import InputError

_WEEK = re.compile(r"([0-9]{4})-W([0-9]{2})")
"""ASCII digits only (`\\d` also matches Arabic-Indic ones), matched whole (`$` would let a trailing newline by)."""
FIRST_YEAR, LAST_YEAR = 2, 9998
"""The years a week may be in: the four weeks before the first and the week after the last can be computed."""


def parse_week(text: str, where: str = "--week") -> str:
    """Check an ISO week `YYYY-Www` (week 53 only in years that have one); InputError naming `where`.

    The one parser of week names: the digest's flags and archive folders, the
    papers folder's file names and `reporter fetch --week` all come through here.
    Exactly `YYYY-Www` in ASCII digits, nothing before or after (not even a
    newline), in the years FIRST_YEAR to LAST_YEAR.
    """
    m = _WEEK.fullmatch(text) if isinstance(text, str) else None
    if m and FIRST_YEAR <= int(m.group(1)) <= LAST_YEAR:
        try:
            dt.date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
            return text
        except ValueError:
            pass
    raise InputError(f"{where}: {text!r} is not an ISO week; write YYYY-Www in ASCII digits, e.g. 2026-W20 "
                     f"(weeks 01 to 52, or 53 in a year that has one; years {FIRST_YEAR:04d} to {LAST_YEAR})")


def is_week(name: str) -> bool:
    """Whether a name (a folder, a file's stem) is an ISO week `parse_week` accepts."""
    try:
        parse_week(name)
        return True
    except InputError:
        return False


def week_start(week: str) -> dt.date:
    """The Monday of an ISO week."""
    year, w = week.split("-W")
    return dt.date.fromisocalendar(int(year), int(w), 1)


def week_of(day: dt.date) -> str:
    """The ISO week a date falls in."""
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def shift_week(week: str, n: int) -> str:
    """The week n weeks after (n < 0: before) `week`."""
    return week_of(week_start(week) + dt.timedelta(weeks=n))


def week_range(first: str, last: str) -> list[str]:
    """Every week from `first` to `last`, both included, in order."""
    if week_start(last) < week_start(first):
        raise InputError(f"--from {first} is after --to {last}")
    weeks = [first]
    while weeks[-1] != last:
        weeks.append(shift_week(weeks[-1], 1))
    return weeks
