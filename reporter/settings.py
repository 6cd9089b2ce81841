"""The one settings parser: `Table` (a table of reporter.toml, read key by key) and the value checks.

A leaf module every stage's `config.py` imports: it imports no stage and
nothing of the workspace. `reporter.config` reads the file and hands each
stage its table as a `Table`, so every error names the file, the table and
the key.
"""

from __future__ import annotations

import math
import urllib.parse
from pathlib import Path
from typing import Any, Callable, TypeVar

from .errors import InputError

T = TypeVar("T")
_MISSING: Any = object()
KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
          list: "a list", dict: "a table"}


class Table:
    """One table of reporter.toml being read: typed look-ups whose errors name file, table and key.

    Read every key with `get` / `path` / `table`, then call `done()`: a key
    nobody asked for is an unknown key, listed with the ones allowed.
    """

    def __init__(self, file: Path, name: str, data: Any, root: Path):
        self.file, self.name, self.root = file, name, root
        if not isinstance(data, dict):
            raise InputError(f"{file}: [{name}] must be a table")
        self.data: dict[str, Any] = data
        self.asked: list[str] = []

    @property
    def where(self) -> str:
        """`FILE: [table]`, the start of every message about this table."""
        return f"{self.file}: [{self.name}]"

    def error(self, key: str, message: str) -> InputError:
        """An InputError naming this table's key."""
        return InputError(f"{self.where}: key {key!r} {message}")

    def get(self, key: str, kind: type[T], default: Any = _MISSING,
            check: Callable[[Any], str | None] | None = None) -> T:
        """The key's value, of `kind` (an int is accepted for a float); `check` returns a complaint or None."""
        self.asked.append(key)
        if key not in self.data:
            if default is _MISSING:
                raise self.error(key, f"is missing ({KINDS.get(kind, kind.__name__)})")
            return default
        value = self.data[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise self.error(key, f"must be {KINDS.get(kind, kind.__name__)}, not {value!r}")
        if kind is float and not math.isfinite(value):  # TOML's inf and nan: no setting means them
            raise self.error(key, f"must be a finite number, not {value!r}")
        if check is not None and (complaint := check(value)):
            raise self.error(key, complaint)
        return value

    def path(self, key: str, default: Any = _MISSING) -> Path:
        """A non-empty path string resolved against the workspace folder (a str default is resolved too)."""
        value = self.get(key, str, default, check=lambda v: None if v else "must be a non-empty path")
        return None if value is None else (self.root / value).resolve()

    def table(self, key: str) -> Table | None:
        """A sub-table ([name.key]) as its own Table, or None when absent."""
        self.asked.append(key)
        if key not in self.data:
            return None
        return Table(self.file, f"{self.name}.{key}", self.data[key], self.root)

    def tables(self, key: str) -> list[Table]:
        """An array of tables ([[name.key]]), each as its own Table ([] when absent)."""
        self.asked.append(key)
        items = self.data.get(key, [])
        if not isinstance(items, list):
            raise self.error(key, "must be an array of tables ([[...]] entries)")
        return [Table(self.file, f"{self.name}.{key}[{i}]", item, self.root) for i, item in enumerate(items)]

    def done(self) -> None:
        """Refuse keys that were never asked for."""
        for key in sorted(self.data):
            if key not in self.asked:
                raise InputError(f"{self.where}: unknown key {key!r}; allowed: {', '.join(sorted(self.asked))}")


def positive(value: float) -> str | None:
    """A check for `Table.get`: the value must be above zero."""
    return None if value > 0 else f"must be positive, not {value}"


def non_negative(value: float) -> str | None:
    """A check for `Table.get`: the value must be zero or more."""
    return None if value >= 0 else f"must be zero or more, not {value}"


MAX_SECONDS = 7 * 86_400.0
"""The longest duration a setting may name (a week): beyond it a timeout or a wait is a mistake, and values
such as 1e300 overflow the clocks and sockets they are handed to."""


def seconds(value: float) -> str | None:
    """A check for `Table.get`: a duration of zero or more seconds, at most MAX_SECONDS."""
    return non_negative(value) or _at_most_a_week(value)


def positive_seconds(value: float) -> str | None:
    """A check for `Table.get`: a duration above zero seconds, at most MAX_SECONDS."""
    return positive(value) or _at_most_a_week(value)


def _at_most_a_week(value: float) -> str | None:
    return None if value <= MAX_SECONDS else f"must be at most {MAX_SECONDS:,.0f} seconds (a week), not {value:g}"


def http_url(value: str) -> str | None:
    """A check for `Table.get`: an http:// or https:// URL with a host that parses (ports and IPv6 brackets too).

    The one URL check of reporter.toml. A URL holding a user name or a password
    (`https://user:password@host/`) is refused before anything else, and its
    text is never repeated: it would go into messages, databases and the
    published site. Credentials come from the environment (`api_key_env`,
    `password_env`), never from a URL.
    """
    import httpx2  # the transport of both the fetch client and the screening voters' client

    if not value.startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    if "@" in _authority(value):
        scheme = value.split(":", 1)[0]
        return (f"must not hold a user name or a password ({scheme}://USER:PASSWORD@HOST/...): the URL is written "
                f"into messages, databases and pages; remove them (the URL is not repeated here) and give the key "
                f"through the environment variable the table names")
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 (raises for a port that is not a number from 0 to 65535)
        httpx2.URL(value)
    except (ValueError, httpx2.InvalidURL) as exc:
        return f"is not a URL that parses ({exc}): {value!r:.200}"
    if not parts.hostname or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be an http:// or https:// URL naming a host, without spaces or control characters: {value!r:.200}"
    unsafe = sorted(set(value) & set(_NOT_IN_URLS))
    if unsafe:
        # RFC 3986 has no place for them: a browser, a mail reader or a feed reader would each read such a URL its
        # own way, and it goes into every link of the e-mail edition and the feed
        return (f"holds {' '.join(unsafe)}, which a URL cannot hold (RFC 3986); percent-encode them "
                f"(e.g. %22 for a double quote): {value!r:.200}")
    if parts.port == 0:
        return f"names port 0, which no server listens on: {value!r:.200}"
    return None


_NOT_IN_URLS = '"<>\\^`{|}'
"""Characters RFC 3986 allows nowhere in a URL (outside percent-encoding)."""


def _authority(url: str) -> str:
    """What stands between `scheme://` and the first `/`, `?` or `#` (an `@` in it is a user name or password)."""
    rest = url.split("://", 1)[1] if "://" in url else ""
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return rest[:end]
