"""Titles of the works the rebuilt pages show: from the releases' samples, else read from the pool by id.

Archived pages show only their release's samples.json (which holds each
sampled work's title as routing saw it). The rebuilt pages (diff, status)
also show works no sample holds: a work that moved pile, a lost include.
Their titles are read once per render from the workspace's pool (and its
overlay) with the pool reader routing uses, filtered to exactly the ids the
pages show (`reporter.pool.overlay.pool_batches`): one pass over two
columns, never the whole table in memory. A title that cannot be found is
said to be missing, and why, never left blank.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..routing.artifacts import Release

TITLE_CHARS = 300


@dataclass(frozen=True)
class PoolRef:
    """Where the rebuilt pages read the titles that no sample holds: the workspace's pool and overlay."""

    pool: Path
    """The pool (Parquet file or folder, JSONL or CSV)."""
    overlay: Path | None
    """Its overlay, whose titles replace the pool's, or None."""


@dataclass(frozen=True)
class Titles:
    """Titles by work id, and why a work without one has none."""

    found: dict[str, str | None] = field(default_factory=dict)
    """Work id -> its title (None: the work has no title)."""
    missing: str = "title unknown: no release's samples hold this work and no pool was read"
    """What a work not in `found` shows instead of a title."""

    def lookup(self, work_id: str) -> tuple[str | None, str]:
        """(title shortened to TITLE_CHARS, "") or (None, why there is none)."""
        if work_id not in self.found:
            return None, self.missing
        title = self.found[work_id]
        if title is None or not title.strip():
            return None, "no title (the pool has none for this work)"
        return shorten(title), ""


def shorten(title: str) -> str:
    """A title as the pages show it: at most TITLE_CHARS characters, an ellipsis where it was cut."""
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def sample_titles(releases: Iterable[Release]) -> dict[str, str | None]:
    """Every title the releases' samples.json hold (the first seen for a work), None where the work has none."""
    found: dict[str, str | None] = {}
    for rel in releases:
        for w in rel.samples.works():
            if found.get(w.work_id) is None:
                found[w.work_id] = w.title
    return found


def gather_titles(releases: Iterable[Release], wanted: Iterable[str], pool: PoolRef | None) -> Titles:
    """The titles of `wanted`: from the samples, then (for the rest) from the pool, read once for those ids only."""
    from ..pool.overlay import pool_batches

    found = sample_titles(releases)
    rest = sorted({w for w in wanted if found.get(w) is None})
    if pool is None:
        return Titles(found, "title not shown: no release's samples hold this work; reporter build, reporter "
                             "render --workspace DIR or reporter render --pool PATH reads it from the pool")
    if not rest:
        return Titles(found, "not in the workspace's pool")
    try:
        for batch in pool_batches(pool.pool, pool.overlay, rest, ("title",)):
            for wid, title in zip(batch.column("work_id").to_pylist(), batch.column("title").to_pylist()):
                found[wid] = title
    except InputError as exc:
        return Titles(found, f"title not shown: the workspace's pool could not be read ({exc})")
    return Titles(found, "not in the workspace's pool (it left the pool since)")
