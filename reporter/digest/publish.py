"""The digest as `reporter build` runs it: weeks decided in memory, their KEEPs checked against the graph,
then published once the site writer's checks have passed.

Deciding writes nothing (`gather_digest`); `publish_digest` writes each week's
graph verdicts (`novelty.jsonl`, beside its decisions.json) and then its
decisions.json, in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..isoweek import week_start
from ..novelty.candidate import parse_candidate
from ..novelty.graph import Graph
from ..novelty.resolvers import Resolver
from ..novelty.results import result_row, write_novelty_results
from ..novelty.verdict import check_candidate
from ..novelty.workspace import graph_name
from .archive import GRAPH_FILE, archive_state, published_weeks
from .config import DigestSettings
from .listings import load_papers
from .weeks import WeekResult, pending_weeks, prepare_weeks, publish, sweep_archive

if TYPE_CHECKING:
    from ..config import Workspace


@dataclass(frozen=True)
class DigestRun:
    """The digest weeks a build decided and will publish, with the graph's verdicts on their KEEPs."""

    published: tuple[tuple[str, str | None], ...]
    """The archive's published weeks and their sha256 when the run was decided (a change means deciding again)."""
    results: tuple[WeekResult, ...]
    """Per week, in order: decided, not yet written."""
    graph_rows: tuple[tuple[dict[str, Any], ...] | None, ...]
    """Per week: novelty results lines of its KEEPs, or None when the workspace names no graph."""
    later: tuple[str, ...]
    """Weeks with papers that have not ended by the build's day: left pending."""

    @property
    def weeks(self) -> tuple[str, ...]:
        """The weeks decided, in order."""
        return tuple(r.week for r in self.results)


def gather_digest(ws: Workspace, as_of: date, graph: Graph | None,
                  environ: Mapping[str, str] | None = None, *, keyword_fallback: bool = False) -> DigestRun | None:
    """Decide every pending week of [digest] that has ended (in order, each feeding the next one's prior).

    The pending weeks are the weeks the papers cover (a file or a folder of
    files of any dates) that are not published yet. A week is due once its
    Sunday is before `as_of`: its page is archived, so a week still running
    (whose papers may still grow) waits. Nothing is written. When the workspace
    names a `graph`, each KEEP is checked against it (the novelty check,
    evidence beside the paper; it never changes a score or a decision). None
    without [digest].
    """
    settings = ws.digest
    if settings is None:
        return None
    published = archive_snapshot(settings.archive)
    papers = load_papers(settings.papers) if Path(settings.papers).exists() else None
    pending = pending_weeks(settings, papers) if papers is not None else []
    due = [w for w in pending if week_start(w) + timedelta(days=6) < as_of]
    results = prepare_weeks(settings, due, as_of=as_of, papers=papers,
                            keyword_fallback=keyword_fallback) if due else []
    resolvers = ws.novelty.make_resolvers(environ or {}) if graph is not None else ()
    rows = tuple(tuple(check_keeps(r, graph, graph_name(ws), resolvers)) if graph is not None else None
                 for r in results)
    return DigestRun(published=published, results=tuple(results), graph_rows=rows,
                     later=tuple(w for w in pending if w not in due))


def archive_snapshot(archive: Path) -> tuple[tuple[str, str | None], ...]:
    """The published weeks of a digest archive with the sha256 of each decisions.json."""
    return tuple(archive_state(archive, published_weeks(archive)).items())


def check_keeps(result: WeekResult, graph: Graph, graph_path: str,
                resolvers: Sequence[Resolver] = ()) -> list[dict[str, Any]]:
    """A week's KEEPs checked against the citation graph: one novelty results line per KEEP with a key.

    The candidate is built from the paper's record as the week decided it: its
    id, its DOI and its related ids (every DOI, arXiv and OpenAlex id it has;
    the first of each scheme). A KEEP without one is not checked (the page says
    so). `line` is the KEEP's place in the week's KEEP list.
    """
    keeps = [d for d in result.outcome.decisions if d.decision == "KEEP"]
    if not keeps:
        return []
    records = {r.id: r for r in result.records}
    rows = []
    for line, d in enumerate(keeps, 1):
        record = records.get(d.id)
        ids = [d.id, *(() if record is None else ([f"doi:{record.doi}"] if record.doi else [])),
               *(() if record is None else record.related_ids), *d.merged_ids]
        keys: dict[str, str] = {}
        for paper_id in ids:
            scheme, _, value = paper_id.partition(":")
            if scheme in ("doi", "arxiv", "openalex") and value.strip():
                keys.setdefault(scheme, value)
        if not keys:
            continue
        item = parse_candidate({"id": d.id, "candidate": {"kind": "paper", "keys": keys}},
                               f"{result.week}: KEEP {d.id}")
        rows.append(result_row(line, item, graph, graph_path, check_candidate(item.candidate, graph, resolvers)))
    return rows


def publish_digest(settings: DigestSettings, run: DigestRun) -> None:
    """Write each decided week into the archive, in order: its graph verdicts first, then its decisions.json.

    A week counts as published once its decisions.json is in place, so a run
    killed in between leaves a week that the next build decides again.
    """
    sweep_archive(settings.archive)  # temporaries of killed runs (never a live one's)
    for result, rows in zip(run.results, run.graph_rows):
        if rows is not None:
            write_novelty_results(settings.archive / result.week / GRAPH_FILE, rows)
        publish(settings, result)
