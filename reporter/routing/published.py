"""published.json beside a release: its name and the date it was first written (docs/release-format.md).

A release's name (`2026-W27`) is what `--label` and reporter.toml's `label` give, and
published.json stores it under `label`: those words are the contract. In the code it
is the release name, so that "label" means one thing there, a review label
(labels.csv: include or exclude).

Not one of the release's inputs or files. Kept apart from release.py so that reading a
workspace (the `label` key) and the release reader (artifacts.py) need not load the routing engine.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..files import MiB, parse_json, read_capped
from .index import read_index
from .routing_table import ROUTING_FILE, holds_routing

PUBLISHED_FILE = "published.json"
"""Beside the release's files, not one of them: its name and the date it was first written
(docs/release-format.md). It is read with `reporter.routing.artifacts.load_published`."""
PREFIX_CHARS = 6
"""The shortest prefix of a release id that names a release (`--release 3f2a9c`)."""
NAME_CHARS = 100
"""The longest release name: it is a name for a list and a page title, not a description."""
RELEASE_JSON_CAP = 128 * MiB
"""The largest JSON file of a release folder read (published.json and those artifact_checks reads): rule_stats.json
of 2,000 rules (the rule book's limit) with every overlap count 7 digits long is 64 MB, real ones far less
(docs/limits.md)."""


def check_release_name(name: str | None, where: str) -> str | None:
    """A release name as published.json stores it: None, or one printable line of at most NAME_CHARS.

    Leading and trailing spaces are dropped (the reader strips them too);
    `where` names the flag or key it came from (`--label`), so the message says what to fix.
    """
    if name is None:
        return None
    text = name.strip()
    if not text or len(text) > NAME_CHARS or not text.isprintable():
        raise InputError(f"{where}: a release label must be one line of printable text of 1 to {NAME_CHARS} "
                         f"characters (e.g. 2026-W27), not {name!r}")
    return text


def read_published(folder: Path) -> dict | None:
    """A published release's published.json as written (None for a release published without one)."""
    path = Path(folder) / PUBLISHED_FILE
    try:
        data = read_capped(path, RELEASE_JSON_CAP, "release file")
    except FileNotFoundError:
        return None
    return parse_json(data, str(path))


def find_release(releases: Path, name: str | Path | None, flag: str = "--release") -> Path:
    """The release folder a command names: the newest of index.json when `name` is None, else a release folder
    (a path holding routing.parquet), or a release of index.json by its id, a unique prefix of PREFIX_CHARS or
    more characters, or its label (published.json). Anything else is an InputError naming `flag`."""
    releases = Path(releases)
    ids = read_index(releases)
    if name is None:
        if not ids:
            raise InputError(f"{releases}: no releases yet; run `reporter build` (or `reporter route`) first")
        return releases / ids[-1]
    text = str(name)
    if holds_routing(Path(name)):
        return Path(name)  # a release folder, perhaps outside the releases folder (a copy, a test's)
    hits = [rid for rid in ids if rid == text or (len(text) >= PREFIX_CHARS and rid.startswith(text))]
    if not hits:
        hits = [rid for rid in ids if ((read_published(releases / rid) or {}).get("label") or "").strip() == text]
    if len(hits) == 1:
        if not holds_routing(releases / hits[0]):
            raise InputError(f"{releases / hits[0]}: index.json lists release {hits[0][:12]} but its folder holds "
                             f"no {ROUTING_FILE}; restore the folder")
        return releases / hits[0]
    newest = ", ".join(rid[:12] for rid in ids[-3:]) or "none yet"
    why = "names more than one release" if hits else "names no release"
    raise InputError(f"{flag} {text!r}: not a release folder, and {why} of {releases / 'index.json'}; give a "
                     f"release folder, a release id, a unique prefix of {PREFIX_CHARS} or more characters, or a "
                     f"label (the newest: {newest}), or leave {flag} out for the newest")
