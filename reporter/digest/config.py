"""[digest] of reporter.toml: the week's papers, the watchlist, the criteria, the archive, the thresholds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..settings import Table
from .judge.config import JudgeSettings, parse_judge

DEFAULT_MAX_KEPT = 25
DEFAULT_KEEP = 70
DEFAULT_REVIEW = 50


@dataclass(frozen=True)
class DigestSettings:
    """The [digest] table (digest.md)."""

    papers: Path
    """A records file or a folder of them, of any dates; each paper is decided in the week it is first listed in
    (a file named `YYYY-Www.jsonl` lists its week; reporter.digest.listings)."""
    watchlist: Path
    """The watchlist: one phrase a line with an optional tab and weight, or a JSON list."""
    criteria: Path
    """The relevance-criteria Markdown document."""
    archive: Path
    """The digest archive: one folder per published ISO week."""
    max_kept: int = DEFAULT_MAX_KEPT
    """The most KEEPs a week may have; the rest are demoted to REVIEW (never DROP)."""
    keep_threshold: int = DEFAULT_KEEP
    """The lowest score that is KEEP (default 70)."""
    review_threshold: int = DEFAULT_REVIEW
    """The lowest score that is REVIEW (default 50); below it, DROP."""
    semantic: bool = True
    """Read meaning with the embedded model (docs/digest.md, "Meaning"): the order within a score and the
    close-in-meaning list; `semantic = false` turns both off (relevance alone orders, no model is loaded)."""
    judge: JudgeSettings | None = None
    """`[digest.judge]`: Axis 2 read by one or two models from their recorded answers; None: the keyword rule."""
    state: Path | None = None
    """The workspace's state folder (not a key: set by the workspace), whose feedback record's wanted papers the
    close-in-meaning list reads (docs/digest.md, "Meaning"); None outside a workspace (no feedback)."""


def parse_digest(table: Table | None) -> DigestSettings | None:
    """Parse [digest]; None when the workspace publishes no digest."""
    if table is None:
        return None
    score = lambda v: None if 0 <= v <= 100 else f"must be a score from 0 to 100, not {v}"  # noqa: E731
    settings = DigestSettings(
        papers=table.path("papers"),
        watchlist=table.path("watchlist"),
        criteria=table.path("criteria"),
        archive=table.path("archive", "digests"),
        max_kept=table.get("max_kept", int, DEFAULT_MAX_KEPT,
                           check=lambda v: None if v >= 1 else f"must be 1 or more, not {v}"),
        keep_threshold=table.get("keep_threshold", int, DEFAULT_KEEP, check=score),
        review_threshold=table.get("review_threshold", int, DEFAULT_REVIEW, check=score),
        semantic=table.get("semantic", bool, True),
        judge=parse_judge(table.table("judge")),
    )
    if settings.review_threshold > settings.keep_threshold:
        raise table.error("review_threshold", f"({settings.review_threshold}) must not be above "
                                              f"keep_threshold ({settings.keep_threshold})")
    return settings
