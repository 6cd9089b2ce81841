"""One connection to the state database, under a lock: statements, write transactions, the schema.

`StoreSession` is the plumbing beneath `reporter.panel.store.Store`: every
string parameter goes in through `store_text` and comes out through
`stored_text` (`StoredCursor`), a write runs in one transaction and is
retried when PostgreSQL picked it as a deadlock victim, the statistics of
the vote and verdict tables are refreshed as they grow, and the schema is
made when absent or its version checked (a database holding another version
is refused, never altered). The store's operations (scope, claims, votes,
verdicts, failures) are written once on top of it; the two dialects differ
only in `Dialect`'s SQL pieces.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Self, TypeVar

from ..errors import InputError
from .store_connect import Closed, is_transient
from .store_sql import REQUESTS_TABLE, SCHEMA, VOTE_DETAILS_TABLE, Dialect, StoredCursor, store_param, store_text

SCHEMA_VERSION = 1
"""The schema this code writes; a database holding another version is refused, never altered."""

_RETRIES = 8
"""Attempts of a write transaction that PostgreSQL aborted as a deadlock victim."""

_FIRST_REFRESH = 500
"""Vote and verdict rows this store writes before it first refreshes PostgreSQL's statistics of them
(then at each doubling: a handful of ANALYZEs however long the run)."""

T = TypeVar("T")


class StoreSession:
    """One connection and its lock: each call is one statement or one transaction, safe from any thread."""

    def __init__(self, conn: Any, dialect: Dialect, where: str, setting: str) -> None:
        self._conn = conn
        self._d = dialect
        self._lock = threading.RLock()
        self._written = 0
        self._refresh_at = _FIRST_REFRESH
        self._details: bool | None = None  # whether the database has the vote_details table (known once seen)
        self.where = where
        """The database, as messages name it (a path, or the URL without its password)."""
        self.setting = setting
        """The setting that names it (`[screen] database`, `[digest.judge] database`)."""

    # -- plumbing

    def _run(self, sql: str, params: Sequence[Any] = ()) -> StoredCursor:
        """Execute one statement; text goes in through `store_text` and comes out through `stored_text`."""
        return StoredCursor(self._conn.execute(self._d.sql(sql), tuple(map(store_param, params))))

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """executemany (text through `store_text`); the rows it changed (both drivers sum them)."""
        if not rows:
            return 0
        cur = self._conn.cursor()
        cur.executemany(self._d.sql(sql), [tuple(map(store_param, row)) for row in rows])
        return max(cur.rowcount, 0)

    def _ids(self, ids: Sequence[str]) -> Any:
        return self._d.pack_ids([store_text(i) for i in ids])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute(self._d.begin)
        try:
            yield
        except BaseException:
            with suppress(Exception):  # the connection may be gone; the first error is the one to report
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _write(self, work: Callable[[], T]) -> T:
        """`work` in one write transaction; retried when PostgreSQL picked it as a deadlock victim."""
        with self._lock:
            for attempt in range(_RETRIES):
                try:
                    with self._transaction():
                        return work()
                except Exception as exc:
                    if attempt + 1 == _RETRIES or not is_transient(exc):
                        raise
        raise AssertionError("unreachable")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return [tuple(r) for r in self._run(sql, params).fetchall()]

    def _analyze(self, tables: str) -> None:
        if self._d.analyze:
            with self._lock:
                self._run(self._d.analyze.format(tables=tables))

    def _grew(self, rows: int) -> None:
        """Count the vote and verdict rows written; refresh their statistics each time the count doubles."""
        self._written += rows
        if self._written >= self._refresh_at:
            self._analyze("votes, verdicts, jobs")
            self._refresh_at = 2 * self._written

    def _has_schema(self) -> bool:
        return bool(self._read(self._d.has_table, ("meta",))[0][0])

    def _check_version(self) -> None:
        rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
        found = rows[0][0] if rows else None
        if found != str(SCHEMA_VERSION):
            raise InputError(f"{self.setting} {self.where}: holds screening schema version {found}, "
                             f"this reporter knows version {SCHEMA_VERSION}; use a matching reporter "
                             f"or another database")

    def _create_schema(self) -> None:
        def work() -> None:
            if self._d.schema_lock:
                self._run(self._d.schema_lock)
            if not self._run(self._d.has_table, ("meta",)).fetchone()[0]:
                for statement in filter(str.strip, SCHEMA.split(";")):
                    self._run(statement)
                self._run("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            if not self._run(self._d.has_table, ("requests",)).fetchone()[0]:
                self._run(REQUESTS_TABLE)
            if not self._run(self._d.has_table, ("vote_details",)).fetchone()[0]:
                self._run(VOTE_DETAILS_TABLE)

        self._write(work)
        self._check_version()

    # -- closing

    def close(self) -> None:
        """Close the connection (idempotent); any later call raises `InternalError`."""
        with self._lock:
            if not isinstance(self._conn, Closed):
                try:
                    self._conn.close()
                finally:
                    self._conn = Closed()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
