"""The workspace: a folder with a reporter.toml naming its inputs and settings."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

WORKSPACE_FILE = "reporter.toml"

# Top-level path keys and whether routing needs them.
PATH_KEYS = {"pool": True, "specs": True, "releases": True, "site": True,
             "overlay": False, "labels": False, "graph": False}
# Sections later stages own; read as tables and handed to them untouched.
SECTION_KEYS = ("screen", "digest", "novelty", "example")
OTHER_KEYS = {"schema_version": int, "sample_seed": int}


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
    sections: dict[str, Any] = field(default_factory=dict)
    """The [screen], [digest], [novelty] and [example] tables, untouched."""


def load_workspace(path: Path) -> Workspace:
    """Read DIR/reporter.toml (or the file itself) and resolve its paths."""
    path = Path(path)
    file = path / WORKSPACE_FILE if path.is_dir() else path
    if not file.exists():
        raise InputError(f"{file}: no workspace file here; create {WORKSPACE_FILE} "
                         f"naming at least pool, specs, releases and site")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{file}: not valid TOML: {exc}") from None
    root = file.parent.resolve()
    known = set(PATH_KEYS) | set(SECTION_KEYS) | set(OTHER_KEYS)
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
        if key in data and not isinstance(data[key], kind):
            raise InputError(f"{file}: key {key!r} must be {kind.__name__}")
    sections = {}
    for key in SECTION_KEYS:
        if key in data:
            if not isinstance(data[key], dict):
                raise InputError(f"{file}: [{key}] must be a table")
            sections[key] = data[key]
    return Workspace(root=root, sample_seed=data.get("sample_seed", 0), sections=sections, **values)
