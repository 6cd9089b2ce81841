"""The workspace: a folder with a reporter.toml naming its inputs and settings.

The top-level keys name the routing inputs. Each later stage owns one table
(`[novelty]`, `[screen]`, `[digest]`, `[fetch]`, `[example]`) and parses it
once, in its own `config.py`, into a frozen settings object through
`Table`, so every error names the file, the table and the key.
"""

from __future__ import annotations

import math
import tomllib
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from .errors import InputError

WORKSPACE_FILE = "reporter.toml"

# Top-level path keys and whether routing needs them.
PATH_KEYS = {"pool": True, "specs": True, "releases": True, "site": True,
             "overlay": False, "labels": False, "graph": False}
OTHER_KEYS = {"schema_version": int, "sample_seed": int, "label": str}
TABLES = ("novelty", "screen", "digest", "fetch", "example", "route")

T = TypeVar("T")
_MISSING: Any = object()
_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
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
                raise self.error(key, f"is missing ({_KINDS.get(kind, kind.__name__)})")
            return default
        value = self.data[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise self.error(key, f"must be {_KINDS.get(kind, kind.__name__)}, not {value!r}")
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
    """A check for `Table.get`: an http:// or https:// URL with a host that parses (ports and IPv6 brackets too)."""
    import httpx2  # the transport of both the fetch client and the screening voters' client

    if not value.startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 (raises for a port that is not a number from 0 to 65535)
        httpx2.URL(value)
    except (ValueError, httpx2.InvalidURL) as exc:
        return f"is not a URL that parses ({exc}): {value!r:.200}"
    if not parts.hostname or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return f"must be an http:// or https:// URL naming a host, without spaces or control characters: {value!r:.200}"
    return None


@dataclass(frozen=True)
class Workspace:
    """A loaded reporter.toml; every path is absolute (resolved against the file's folder)."""

    root: Path
    """The folder holding reporter.toml."""
    pool: Path
    """The pool of works: a Parquet file or folder, JSONL or CSV."""
    specs: Path
    """The rule book folder: rules/*.json and piles.json."""
    releases: Path
    """Where release folders are written (with index.json)."""
    site: Path
    """Where the site is rendered."""
    overlay: Path | None = None
    """Optional text overlay (work_id, abstract[, title])."""
    labels: Path | None = None
    """Optional labels file (work_id,label with include/exclude)."""
    graph: Path | None = None
    """Optional citation-graph events (JSONL) for novelty."""
    sample_seed: int = 0
    """Seed of every sample the release shows (default 0)."""
    label: str | None = None
    """The label a release routed from this workspace is first published under (`2026-W27`), or None.
    Not a release input: it never changes a release id (docs/release-format.md, published.json)."""
    novelty: Any = None
    """[novelty] as `reporter.novelty.config.NoveltySettings` (defaults when the table is absent)."""
    screen: Any = None
    """[screen] as `reporter.screening.config.ScreenSettings`, or None when absent."""
    digest: Any = None
    """[digest] as `reporter.digest.config.DigestSettings`, or None when absent."""
    fetch: Any = None
    """[fetch] as `reporter.fetch.config.FetchSettings`, or None when absent."""
    example: Any = None
    """[example] as `reporter.example.config.ExampleSettings`, or None when absent."""
    route: Any = None
    """[route] as `reporter.routing.config.RouteSettings`, or None when absent."""

    @property
    def file(self) -> Path:
        """The reporter.toml itself."""
        return self.root / WORKSPACE_FILE


def load_workspace(path: Path) -> Workspace:
    """Read DIR/reporter.toml (or the file itself), resolve its paths and parse every stage's table."""
    path = Path(path)
    file = path / WORKSPACE_FILE if path.is_dir() else path
    if not file.is_file():
        raise InputError(f"{file}: no workspace file here; create {WORKSPACE_FILE} "
                         f"naming at least pool, specs, releases and site")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: not valid TOML: {exc}") from None
    root = file.parent.resolve()
    known = set(PATH_KEYS) | set(TABLES) | set(OTHER_KEYS)
    for key in sorted(data):
        if key not in known:
            raise InputError(f"{file}: unknown key {key!r}; allowed: {', '.join(sorted(known))}")
    values: dict[str, Any] = {}
    for key, required in PATH_KEYS.items():
        if key not in data:
            if required:
                raise InputError(f"{file}: missing key {key!r} (a path relative to the file)")
            continue
        if not isinstance(data[key], str) or not data[key]:
            raise InputError(f"{file}: key {key!r} must be a non-empty path string")
        values[key] = (root / data[key]).resolve()
    for key, kind in OTHER_KEYS.items():
        if key in data and (not isinstance(data[key], kind) or isinstance(data[key], bool)):
            raise InputError(f"{file}: key {key!r} must be {_KINDS[kind]}")
    from .digest.config import parse_digest
    from .example.config import parse_example
    from .fetch.config import parse_fetch
    from .novelty.config import parse_novelty
    from .routing.config import parse_route
    from .screening.config import parse_screen
    parsers = {"novelty": parse_novelty, "screen": parse_screen, "digest": parse_digest,
               "fetch": parse_fetch, "example": parse_example, "route": parse_route}
    stages = {}
    for name, parse in parsers.items():
        table = Table(file, name, data[name], root) if name in data else None
        stages[name] = parse(table)
        if table is not None:
            table.done()
    from .routing.published import check_label
    label = check_label(data.get("label"), f"{file}: key 'label'")
    return Workspace(root=root, sample_seed=data.get("sample_seed", 0), label=label, **values, **stages)
