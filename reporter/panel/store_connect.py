"""Opening the state database: a SQLite file in WAL mode or a PostgreSQL server, errors without passwords."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ..errors import InputError, InternalError
from ..files import make_dirs
from ..masking import mask_secret


BUSY_TIMEOUT_MS = 120_000
"""How long a SQLite writer waits for another process's write transaction (writes are short)."""

CONNECT_TIMEOUT_S = 15
"""How long to wait for a PostgreSQL server to answer before reporting it unreachable."""

_PASSWORDS: dict[str, tuple[str, str, str | None]] = {}
"""database URL -> (the setting naming the variable, the variable, its value or None when unset): filled by the
command line's edge from `password_env` (`give_password`), for this process only, so the password is in no
setting, no message and no file."""


def give_password(url: str, setting: str, variable: str, password: str | None) -> None:
    """The password of the PostgreSQL database at `url`, read by the command's edge from the environment variable
    `setting` (`[screen] password_env`) names (None: the variable is not set; a failed connection then says so)."""
    _PASSWORDS[url] = (setting, variable, password or None)


def is_postgres(database: str) -> bool:
    """True when `database` names a PostgreSQL server rather than a SQLite file."""
    return database.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """`url` without its password (in the authority or as a `password=` parameter), for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{hostport}"
    query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(parts.query)],
                      safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(message: str, url: str) -> str:
    """A driver's error message with any password of `url` blanked out, whatever the driver put in it."""
    parts = urlsplit(url)
    secrets = [parts.password, *(v for k, v in parse_qsl(parts.query) if k.lower() == "password")]
    for secret in filter(None, secrets):
        for form in {secret, unquote(secret)}:
            message = mask_secret(message, form, "***")
    return message


def connect_sqlite(path: str, readonly: bool, setting: str = "[screen] database") -> sqlite3.Connection:
    try:
        if readonly:
            conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                                   isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
        else:
            make_dirs(Path(path).parent)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            # WAL: readers never wait for the writer. NORMAL: a committed transaction survives a killed
            # process (only a power cut may lose the last ones, and the raw log holds their replies).
            _journal_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as exc:
        raise InputError(f"{setting} {path}: cannot open it as SQLite ({exc}); "
                         f"name a SQLite file or a postgresql:// URL") from None
    return conn


def _journal_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode (it stays so), waiting for other processes as a write would.

    Switching the journal mode needs the file to itself for a moment, and
    SQLite answers "database is locked" at once instead of calling the busy
    handler when another process holds it: several runners starting on a
    new file at the same moment hit that (tests/test_screen_store.py). So
    the switch is retried, backing off, for as long as a write would wait.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(2 * delay, 0.25)


def connect_postgres(url: str, readonly: bool, setting: str = "[screen] database") -> Any:
    import psycopg

    named, variable, password = _PASSWORDS.get(url, ("", "", None))
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                               **({"password": password} if password else {}))
        if readonly:
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    except psycopg.Error as exc:
        cause = scrub(str(exc).strip(), url)
        if password:
            cause = mask_secret(cause, password, "***")
        hint = ""
        if named and password is None:
            hint = f"; {named} names ${variable}, which is not set: export it with the password"
        raise InputError(f"{setting} {redact_url(url)}: cannot connect ({cause}); check the URL and that the "
                         f"server runs{hint}") from None
    return conn


class Closed:
    """Stands for the connection of a closed store: using it is a bug, reported as one."""

    def __getattr__(self, name: str) -> Any:
        raise InternalError("the screening state store was used after close()")


def is_transient(exc: BaseException) -> bool:
    """A PostgreSQL deadlock or serialisation failure: the transaction may simply run again."""
    return getattr(exc, "sqlstate", None) in ("40P01", "40001")
