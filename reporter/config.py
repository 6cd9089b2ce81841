"""The workspace: a folder with a reporter.toml naming its inputs and settings.

The top-level keys name the routing inputs: `pool`, `specs` and `releases`
are the routing side, needed unless the workspace has `[digest]` (a
digest-only workspace has none of them; `Workspace.routing()` is the one
place a command asks for them). Each later stage owns one table
(`[novelty]`, `[screen]`, `[digest]`, `[fetch]`, `[example]`, `[mail]`,
`[certify]`) and
parses it once, in its own `config.py`, into a frozen settings object through
`Table`, so every error names the file, the table and the key. `site` is the
site's folder, or a `[site]` table with its `path` and the `base_url` it is
published under.
"""

from __future__ import annotations

import tomllib
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .certify.config import CertifySettings, parse_certify
from .digest.config import DigestSettings, parse_digest
from .errors import InputError
from .example.config import ExampleSettings, parse_example
from .fetch.config import FetchSettings, parse_fetch
from .mail.config import MailSettings, check_recipients, parse_mail
from .novelty.config import NoveltySettings, parse_novelty
from .routing.config import RouteSettings, parse_route
from .routing.published import check_release_name
from .runs import state_of
from .screening.config import ScreenSettings, parse_screen
from .settings import KINDS, Table, http_url

WORKSPACE_FILE = "reporter.toml"
START_HINT = ("`reporter init` writes a workspace to start from (`reporter init --digest-only`: a digest alone); "
              "every key is in docs/workspace.md (`reporter help workspace`)")
"""What every "no workspace here" error ends with: how to make one, and where its format is written down."""

# Top-level path keys and whether every workspace needs them (the routing side: see ROUTING_KEYS).
PATH_KEYS = {"pool": False, "specs": False, "releases": False, "site": True,
             "overlay": False, "labels": False, "graph": False}
ROUTING_KEYS = ("pool", "specs", "releases")
"""The routing side: all three, or (in a workspace with [digest]) none of them."""
ROUTING_ONLY = ("overlay", "labels", "example", "route")
"""Keys and tables only the routing side reads: refused in a digest-only workspace, where they would do nothing."""
OTHER_KEYS = {"schema_version": int, "sample_seed": int, "label": str}
TABLES = ("novelty", "screen", "digest", "fetch", "example", "route", "mail", "certify")


@dataclass(frozen=True)
class Routing:
    """The routing side of a workspace: what `reporter route`, the screen and a build's release read and write."""

    pool: Path
    """The pool of works: a Parquet file or folder, JSONL or CSV."""
    specs: Path
    """The rule book folder: rules/*.json and piles.json."""
    releases: Path
    """Where release folders are written (with index.json)."""


@dataclass(frozen=True)
class Workspace:
    """A loaded reporter.toml; every path is absolute (resolved against the file's folder)."""

    root: Path
    """The folder holding reporter.toml."""
    pool: Path | None
    """The pool of works: a Parquet file or folder, JSONL or CSV (None in a digest-only workspace)."""
    specs: Path | None
    """The rule book folder: rules/*.json and piles.json (None in a digest-only workspace)."""
    releases: Path | None
    """Where release folders are written, with index.json (None in a digest-only workspace)."""
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
    release_name: str | None = None
    """The name (key `label`) a release routed from this workspace is first published under (`2026-W27`), or None.
    Not a release input: it never changes a release id (docs/release-format.md, published.json)."""
    novelty: NoveltySettings = NoveltySettings()
    """[novelty] (defaults when the table is absent)."""
    screen: ScreenSettings | None = None
    """[screen], or None when absent."""
    digest: DigestSettings | None = None
    """[digest], or None when absent."""
    fetch: FetchSettings | None = None
    """[fetch], or None when absent."""
    example: ExampleSettings | None = None
    """[example], or None when absent."""
    route: RouteSettings | None = None
    """[route], or None when absent."""
    certify: CertifySettings = CertifySettings()
    """[certify] (defaults when the table is absent: no target)."""
    mail: MailSettings | None = None
    """[mail], or None when absent (the e-mail edition is built either way; `reporter mail --send` needs it)."""
    base_url: str | None = None
    """`[site] base_url`: where the site is published (`https://example.org/digest-site`, no trailing `/`), for the
    absolute links of the e-mail edition; None: its links are relative."""

    @property
    def file(self) -> Path:
        """The reporter.toml itself."""
        return self.root / WORKSPACE_FILE

    @property
    def has_routing(self) -> bool:
        """Whether the workspace has a routing side (pool, specs, releases); False: digest-only."""
        return self.pool is not None and self.specs is not None and self.releases is not None

    def routing(self, needed_by: str = "this command") -> Routing:
        """The routing side; for a digest-only workspace, the one InputError naming the keys and what to add."""
        if self.pool is None or self.specs is None or self.releases is None:
            raise InputError(f"{self.file}: missing key 'pool' (and 'specs', 'releases'): {needed_by} needs the "
                             f"routing side, and this workspace is digest-only; add pool = \"PATH\" (the works to "
                             f"route), specs = \"DIR\" (the rule book) and releases = \"DIR\" (where releases go)")
        return Routing(self.pool, self.specs, self.releases)


def load_workspace(path: Path) -> Workspace:
    """Read DIR/reporter.toml (or the file itself), resolve its paths and parse every stage's table."""
    path = Path(path)
    file = path / WORKSPACE_FILE if path.is_dir() else path
    if not file.is_file():
        raise InputError(f"{file}: no workspace file here; create {WORKSPACE_FILE} naming at least pool, specs, "
                         f"releases and site (or site and a [digest] table): {START_HINT}")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: not valid TOML: {exc}") from None
    root = file.parent.resolve()
    known = set(PATH_KEYS) | set(TABLES) | set(OTHER_KEYS)
    for key in sorted(data):
        if key not in known:
            raise InputError(f"{file}: unknown key {key!r}; allowed: {', '.join(sorted(known))}")
    values: dict[str, Any] = dict.fromkeys(ROUTING_KEYS)  # None until given: a digest-only workspace has none
    data, values["base_url"] = _site_table(data, file, root)
    _check_routing_side(data, file)
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
            raise InputError(f"{file}: key {key!r} must be {KINDS[kind]}")
    parsers = {"novelty": parse_novelty, "screen": parse_screen, "digest": parse_digest,
               "fetch": parse_fetch, "example": parse_example, "route": parse_route, "mail": parse_mail,
               "certify": parse_certify}
    stages: dict[str, Any] = {}
    for name, parse in parsers.items():
        table = Table(file, name, data[name], root) if name in data else None
        stages[name] = parse(table)
        if table is not None:
            table.done()
    if stages["digest"] is not None:  # the reader's marks live in the workspace's state (close in meaning)
        stages["digest"] = replace(stages["digest"], state=state_of(root))
        for topic in stages["digest"].topics:
            if topic.recipients and (complaint := check_recipients(list(topic.recipients))):
                raise InputError(f"{file}: [digest.topics.{topic.name}]: key 'recipients' {complaint}")
    release_name = check_release_name(data.get("label"), f"{file}: key 'label'")
    return Workspace(root=root, sample_seed=data.get("sample_seed", 0), release_name=release_name, **values, **stages)


def _check_routing_side(data: dict[str, Any], file: Path) -> None:
    """The routing side is all of ROUTING_KEYS, or none of them in a workspace with [digest] (digest-only)."""
    missing = [k for k in ROUTING_KEYS if k not in data]
    if not missing:
        return
    if "digest" not in data:
        raise InputError(f"{file}: missing key {missing[0]!r} (a path relative to the file); a workspace routes a "
                         f"pool (pool, specs, releases), or publishes a digest ([digest]), or both")
    if len(missing) < len(ROUTING_KEYS):
        given = [k for k in ROUTING_KEYS if k in data]
        raise InputError(f"{file}: missing key {missing[0]!r}: {', '.join(ROUTING_KEYS)} go together (the routing "
                         f"side); add {' and '.join(map(repr, missing))}, or leave out {' and '.join(map(repr, given))} "
                         f"for a digest-only workspace")
    for key in ROUTING_ONLY:
        if key in data:
            raise InputError(f"{file}: key {key!r} is for the routing side (pool, specs, releases), which this "
                             f"digest-only workspace does not have; remove it, or add pool, specs and releases")


def _site_table(data: dict[str, Any], file: Path, root: Path) -> tuple[dict[str, Any], str | None]:
    """`site` as a `[site]` table (`path`, default "site", and `base_url`) turned into the path key; the base URL.

    `site = "DIR"` stays as it is, with no base URL.
    """
    if not isinstance(data.get("site"), dict):
        return data, None
    table = Table(file, "site", data["site"], root)
    path = table.get("path", str, "site", check=lambda v: None if v else "must be a non-empty path")
    base_url = table.get("base_url", str, None, check=_base_url)
    table.done()
    return {**data, "site": path}, base_url.rstrip("/") if base_url else None


def _base_url(value: str) -> str | None:
    if complaint := http_url(value):
        return complaint
    parts = urllib.parse.urlsplit(value)
    if parts.query or parts.fragment:
        return f"must be the URL the site folder is published at, without a query or fragment: {value!r:.200}"
    host = parts.hostname or ""
    if not host.isascii():
        # The host is the domain of every e-mail edition's Message-ID, a header that must be ASCII.
        try:
            spelt = value.replace(parts.netloc, parts.netloc.encode("idna").decode("ascii"), 1)
            hint = f"write it as {spelt!r:.200}"
        except UnicodeError:
            hint = "write its host in the ASCII (xn--) form its registrar gives"
        return f"names a host that is not ASCII, which the e-mail edition's Message-ID cannot hold: {hint}"
    return None
