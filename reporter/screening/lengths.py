"""The dry run's prompt lengths, kept between builds: an unchanged rebuild counts no tokens.

Counting the prompt tokens of every work the screen would send is the dry
run's whole cost: about 20,000 works on the example, plus a second or so
to load the tokenizer (bpe-openai). A work's prompt length depends only on
the release (whose id hashes the pool, the overlay and the routing that
gave each work its text and its title-only flag) and on the prompt (whose
hash covers every fragment, the criteria included). So the lengths a build
counts are kept in the workspace's state folder (`LENGTHS_FILE`, written
atomically, and only once the build has published: `KeptLengths.commit`, so
a refused build leaves the file as it was) under that key, with the tokenizer's name and version; a later
build of the same release and prompt takes them from there, and counts only
works it has no length for. Voters and prices are not part of the key:
the costs are computed from the lengths at every build, as are the
verdicts and votes the state database holds, so the estimate is never
staler than the database.

A file that cannot be read, is not one this module wrote, or holds another
key is a miss: the lengths are counted again and the file is replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import MiB, parse_json, read_capped, write_json

LENGTHS_FILE = "screen-lengths.json"
"""In the workspace's state folder."""
FORMAT = 1
"""Bumped when what a length counts changes (the chat format's overhead, the work's text)."""
MAX_BYTES = 64 * MiB
"""A larger file is not one this module wrote (20,000 works take about 0.6 MB): a miss."""


def cache_key(release_id: str, prompt_hash: str) -> dict[str, Any]:
    """What the lengths depend on: the release, the prompt, the tokenizer and this file's format."""
    from ..panel.tokens import ENCODING
    try:
        version = metadata.version("bpe-openai")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {"format": FORMAT, "release_id": release_id, "prompt_hash": prompt_hash,
            "tokenizer": f"{ENCODING} bpe-openai {version}"}


def _stored(path: Path, key: dict[str, Any]) -> dict[str, int]:
    """The lengths kept under `key` ({} when the file is absent, unreadable, foreign or of another key)."""
    try:
        doc = parse_json(read_capped(path, MAX_BYTES, "screen lengths"), str(path))
    except (FileNotFoundError, InputError):
        return {}
    if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("lengths"), dict):
        return {}
    return {w: n for w, n in doc["lengths"].items() if isinstance(n, int) and not isinstance(n, bool) and n > 0}


class KeptLengths:
    """A workspace's lengths file: read when the dry run needs it, written only by `commit` (after publishing)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.pending: dict[str, Any] | None = None
        """What `commit` writes: the file with the lengths counted since it was read (None: nothing new)."""

    def commit(self) -> None:
        """Write the lengths counted by this run (atomically); nothing when none were."""
        if self.pending is not None:
            write_json(self.path, self.pending)
            self.pending = None


def prompt_lengths_cached(kept: KeptLengths | None, key: dict[str, Any], work_ids: Iterable[str],
                          count: Callable[[list[str]], dict[str, int]]) -> dict[str, int]:
    """work id -> prompt length for every id in `work_ids`: from the kept file where it has them, the rest from
    `count` (which loads the works' text and counts), then all of them left for `kept.commit` to write (only when
    some were counted). `kept` None: no file, everything counted."""
    wanted = sorted(set(work_ids))
    if kept is None:
        return count(wanted) if wanted else {}
    stored = _stored(kept.path, key)
    missing = [w for w in wanted if w not in stored]
    if not missing:
        return {w: stored[w] for w in wanted}
    counted = count(missing)
    merged = {**stored, **counted}
    kept.pending = {"key": key, "lengths": dict(sorted(merged.items()))}
    return {w: merged[w] for w in wanted}
