"""The state database opened read-only: for dry runs, reports, certificates and exports, which never write.

The one read-only opener of a panel's store (the screen's `[screen] database`,
the judge's `[digest.judge] database`): nothing is created when the database
does not exist, and nothing is written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def open_readonly(database: str, where: str, store: Any = None) -> Iterator[Any]:
    """`store` when given, else the store at `database` (named `where` in messages) opened read-only: None when it does not exist (nothing is
    created, nothing is written)."""
    if store is not None:
        yield store
        return
    from .store import open_store
    opened = open_store(database, readonly=True, where=where)
    try:
        yield opened
    finally:
        if opened is not None:
            opened.close()


