"""The date a command runs on, read once at the command's edge and passed down as `as_of`.

A leaf module: `reporter build`, `reporter route` and `reporter fetch` take
today from here, never from `date.today()` deep inside a stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

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
