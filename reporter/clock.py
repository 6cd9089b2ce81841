"""The date a command runs on, read once at the command's edge and passed down as `as_of`.

A leaf module: `reporter build`, `reporter route` and `reporter fetch` take
today from here, never from `date.today()` deep inside a stage; every command
that writes a run record (reporter/runs.py) takes its clock from `run_clock`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime, timezone

from .errors import InputError


def build_date(environ: Mapping[str, str]) -> date:
    """Today for a build: SOURCE_DATE_EPOCH when set (reproducible builds), else the clock."""
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return date.today()
    try:
        return date.fromtimestamp(int(epoch))
    except (ValueError, OverflowError, OSError):
        raise InputError(f"SOURCE_DATE_EPOCH={epoch!r}: must be whole seconds since 1970") from None


Clock = Callable[[], datetime]
"""What a run reads its start and end times from (UTC): `run_clock` at a command's edge, a fixed one in tests."""


def run_clock(environ: Mapping[str, str]) -> Clock:
    """The clock of a run's record: SOURCE_DATE_EPOCH's instant on every read when set (a reproducible build
    writes the same record), else the time now, in UTC."""
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return lambda: datetime.now(timezone.utc)
    try:
        fixed = datetime.fromtimestamp(int(epoch), timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise InputError(f"SOURCE_DATE_EPOCH={epoch!r}: must be whole seconds since 1970") from None
    return lambda: fixed
