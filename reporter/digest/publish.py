"""The digest as `reporter build` runs it: the weeks not yet published, decided in memory.

Deciding writes nothing (`gather_digest`). The build orchestrates the rest:
it checks each week's KEEPs against the citation graph when the workspace
names one, and publishes each week through `weeks.publish_week` (the one way
a week is published, `reporter digest`'s too) once the site writer's checks
have passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from ..isoweek import week_start
from .archive import archive_state, published_weeks
from .config import DigestSettings
from .listings import load_papers
from .weeks import WeekResult, pending_weeks, prepare_weeks


@dataclass(frozen=True)
class DigestRun:
    """The digest weeks a build decided and will publish."""

    published: tuple[tuple[str, str | None], ...]
    """The archive's published weeks and their sha256 when the run was decided (a change means deciding again)."""
    results: tuple[WeekResult, ...]
    """Per week, in order: decided, not yet written."""
    later: tuple[str, ...]
    """Weeks with papers that have not ended by the build's day: left pending."""

    @property
    def weeks(self) -> tuple[str, ...]:
        """The weeks decided, in order."""
        return tuple(r.week for r in self.results)


def gather_digest(settings: DigestSettings, as_of: date, *, keyword_fallback: bool = False) -> DigestRun:
    """Decide every pending week of [digest] that has ended (in order, each feeding the next one's prior).

    The pending weeks are the weeks the papers cover (a file or a folder of
    files of any dates) that are not published yet. A week is due once its
    Sunday is before `as_of`: its page is archived, so a week still running
    (whose papers may still grow) waits. Nothing is written.
    """
    published = archive_snapshot(settings.archive)
    papers = load_papers(settings.papers) if Path(settings.papers).exists() else None
    pending = pending_weeks(settings, papers) if papers is not None else []
    due = [w for w in pending if week_start(w) + timedelta(days=6) < as_of]
    results = prepare_weeks(settings, due, as_of=as_of, papers=papers,
                            keyword_fallback=keyword_fallback) if due else []
    return DigestRun(published=published, results=tuple(results), later=tuple(w for w in pending if w not in due))


def archive_snapshot(archive: Path) -> tuple[tuple[str, str | None], ...]:
    """The published weeks of a digest archive with the sha256 of each decisions.json."""
    return tuple(archive_state(archive, published_weeks(archive)).items())
