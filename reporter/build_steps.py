"""The steps `reporter.build` runs, in its order: what each one reads, checks, decides and writes.

`reporter/build.py` is the table of contents (gather, page models, publish);
this module holds the plan a run follows (`Plan`: `BUILD`, `RENDER`), where
it reads and writes (`Sources`), and each step, typed: what a run checks and decides
before it routes (`Checked`), the releases and the screen as the pages read
them, what each stage adds to the site (`stage_pages`), and the writes of
the last step, in order (`publish_outputs`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .digest.archive import DECISIONS_FILE
from .digest.feedback import measure, read_marks
from .digest.publish import DigestRun, archive_snapshot, gather_digest
from .digest import weeks
from .digest.weeks import WeekResult
from .errors import InputError
from .files import make_dirs
from .locks import locked, remove_debris
from .novelty.candidate import parse_candidate
from .novelty.graph import Graph
from .novelty.resolvers import Resolver
from .novelty.results import load_novelty_results, result_row, write_novelty_results
from .novelty.verdict import check_candidate
from .novelty.workspace import check_novelty, graph_name, load_workspace_graph
from .routing import release as routing_release
from .routing.artifacts import LabelFindings, Published, ReleaseSet, load_published, load_release, load_releases
from .routing.labels import label_stats_for, load_labels
from .routing.published import PUBLISHED_FILE
from .routing.specs import load_rulebook
from .runs import RunStart, state_of
from .screening.lengths import LENGTHS_FILE, KeptLengths
from .screening.report import gather_screening, workspace_labels
from .site.digest_pages import DigestWeek, digest_week, load_digest_weeks
from .site.models.common import Link
from .site.render import StagePages, digest_stage, novelty_stage, screening_stage
from .site.status_page import NO_WORKSPACE, ScreeningStatus, screening_status
from .site.titles import PoolRef

if TYPE_CHECKING:
    from .config import Workspace

@dataclass(frozen=True)
class Plan:
    """What a run does beyond showing what is there: the one difference between a build and a render."""

    route: bool
    """Route the workspace's pool into a release (published with its label findings)."""
    decide: bool
    """Check the novelty candidates and decide the digest weeks not yet published (published with the site)."""
    keyword_fallback: bool = False
    """Decide digest papers the criteria judge has not answered by the keyword rule (`--keyword-fallback`,
    tagged judge-missing) instead of refusing the week."""


BUILD = Plan(route=True, decide=True)
"""`reporter build`: route, check, decide, then publish everything and the site."""
RENDER = Plan(route=False, decide=False)
"""`reporter render`: route and decide nothing; write only the site."""


@dataclass(frozen=True)
class Sources:
    """Where a run reads what it shows, and where the site goes."""

    out: Path
    """The site folder."""
    workspace: Workspace | None
    """The workspace (a build's always; a render's `--workspace`, else None)."""
    releases: Path | None = None
    """The releases folder (None: no release, a digest-only site)."""
    digests: Path | None = None
    """The digest archive whose weeks the site shows (None: no digest)."""
    novelty: Path | None = None
    """The novelty results file: written by a build, read by a render (None: no novelty page)."""
    pool: PoolRef | None = None
    """Without a workspace: the pool whose titles the diff and status pages show (a render's `--pool`)."""
    against: tuple[str, ...] = ()
    """Earlier releases to compare the newest with (a render's `--against`)."""
    base_url: str | None = None
    """Where the site is served (`[site] base_url`): the e-mail edition links under it."""
    record: RunStart | None = None
    """The command's run (a build's): the route's and each published week's record go to its state folder
    (docs/runs.md); None writes none."""


ResultLine = dict[str, Any]
"""One novelty results line (a JSON object, as `reporter novelty --batch` writes it)."""


@dataclass(frozen=True)
class NoveltyResults:
    """The novelty page's candidates: checked by this build (and written), or read from a results file (a render)."""

    rows: tuple[ResultLine, ...]
    """The results lines, in order."""
    path: Path
    """The results file: where a build writes them, or where a render read them."""


@dataclass(frozen=True)
class Checked:
    """What a build checks and decides before it routes: nothing is written yet."""

    novelty: NoveltyResults | None = None
    """The novelty candidates' results (checked, or read by a render); None: no novelty page."""
    digest: DigestRun | None = None
    """The digest weeks decided in memory (None: the plan decides none, or no [digest])."""
    evidence: tuple[tuple[ResultLine, ...] | None, ...] = ()
    """Per decided week: its KEEPs checked against the citation graph, or None when the workspace names no graph."""
    graph: Graph | None = None
    """The workspace's citation graph, read once."""


def check_inputs(plan: Plan, src: Sources, as_of: date | None, environ: Mapping[str, str]) -> Checked:
    """The novelty candidates checked and the digest weeks decided (a build), or the results file read (a render)."""
    ws = src.workspace
    if not plan.decide or ws is None:
        rows = load_novelty_results(src.novelty) if src.novelty is not None else None
        return Checked(novelty=NoveltyResults(tuple(rows), src.novelty) if rows is not None else None)
    assert src.novelty is not None and as_of is not None
    graph = load_workspace_graph(ws.graph, needed=ws.novelty.candidates is not None or ws.digest is not None)
    rows = check_novelty(ws.novelty, ws.graph, root=ws.root, file=ws.file, environ=environ, graph=graph)
    return decide_digest(Checked(novelty=NoveltyResults(tuple(rows), src.novelty) if rows is not None else None,
                                 graph=graph), ws, as_of, environ, plan.keyword_fallback)


def decide_digest(checked: Checked, ws: Workspace, as_of: date, environ: Mapping[str, str],
                  keyword_fallback: bool = False) -> Checked:
    """The digest weeks not yet published, decided in memory, each KEEP checked against the graph (when named)."""
    if ws.digest is None:
        return checked
    run = gather_digest(ws.digest, as_of, keyword_fallback=keyword_fallback)
    return dataclasses.replace(checked, digest=run, evidence=graph_evidence(checked, ws, run, environ))


def graph_evidence(checked: Checked, ws: Workspace, run: DigestRun,
                   environ: Mapping[str, str]) -> tuple[tuple[ResultLine, ...] | None, ...]:
    """Per decided week (of any topic): its KEEPs checked against the workspace's graph, or None without one."""
    resolvers = ws.novelty.make_resolvers(environ) if checked.graph is not None else ()
    named = graph_name(ws.graph, ws.root) if checked.graph is not None and ws.graph is not None else ""
    return tuple(tuple(check_keeps(r, checked.graph, named, resolvers)) if checked.graph is not None
                 else None for r in run.results)


def check_keeps(result: WeekResult, graph: Graph, graph_path: str,
                resolvers: Sequence[Resolver] = ()) -> list[ResultLine]:
    """A week's KEEPs checked against the citation graph: one novelty results line per KEEP with a key.

    The candidate is built from the paper's record as the week decided it: its
    id, its DOI and its related ids (every DOI, arXiv and OpenAlex id it has;
    the first of each scheme). A KEEP without one is not checked (the page says
    so). `line` is the KEEP's place in the week's KEEP list.
    """
    keeps = [d for d in result.outcome.decisions if d.decision == "KEEP"]
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


def still_current(checked: Checked, ws: Workspace | None, as_of: date | None, environ: Mapping[str, str],
                  plan: Plan) -> Checked:
    """The digest weeks decided again when another run published a week meanwhile (read under the archive's lock)."""
    if checked.digest is None or ws is None or ws.digest is None or as_of is None:
        return checked
    if checked.digest.published == archive_snapshot(ws.digest.archive):
        return checked
    return decide_digest(checked, ws, as_of, environ, plan.keyword_fallback)


def routing_labels(plan: Plan, ws: Workspace | None) -> Any:
    """The workspace's labels (a work_id,label frame) as the run reads them, or None.

    A build reads the labels file it names (a missing one refuses it: the
    example data was made first); a render reads them when they are there.
    """
    if ws is None:
        return None
    if plan.route:
        return load_labels(ws.labels) if ws.labels is not None else None
    return workspace_labels(ws)


@contextlib.contextmanager
def stage_release(plan: Plan, ws: Workspace | None, *, workers: int | None, progress: bool,
                  release_name: str | None, as_of: date | None,
                  engine: str | None = None) -> Iterator[routing_release.StagedRelease | None]:
    """Route the workspace's pool into a staged release; removed on the way out unless it was published.

    A render routes nothing, and a digest-only workspace has nothing to route: None.
    """
    if not plan.route or ws is None or not ws.has_routing:
        yield None
        return
    side = ws.routing("a build's release")
    staged = routing_release.stage_release(side.pool, side.specs, side.releases, overlay=ws.overlay,
                                           sample_seed=ws.sample_seed, workers=workers, progress=progress,
                                           release_name=release_name, as_of=as_of, engine=engine)
    try:
        yield staged
    finally:
        staged.discard()  # nothing happens once it was published


@contextlib.contextmanager
def locked_outputs(plan: Plan, src: Sources) -> Iterator[None]:
    """The releases folder's lock (when it is there), then the digest archive's (when the plan publishes into it).

    Builds and renders into one releases folder take turns from here (routing
    runs side by side before it): each renders the index as it is, so the
    last site written lists every published release. The digest archive
    likewise, taken after the releases folder: the one order every build takes
    them in. A render writes no archive, and makes no folder it reads.
    """
    with contextlib.ExitStack() as stack:
        if src.releases is not None and Path(src.releases).is_dir():
            stack.enter_context(locked(src.releases))
        if plan.decide and src.workspace is not None and src.digests is not None:
            stack.enter_context(locked(src.digests))
        yield


def gather_releases(ws: Workspace | None, releases: Path | None, staged: routing_release.StagedRelease | None,
                    labels: Any) -> tuple[dict[str, Any] | None, ReleaseSet]:
    """The releases the site shows: the published ones with the staged one as the newest (and its label findings)."""
    if staged is None:
        return None, load_releases(Path(releases)) if releases is not None else ReleaseSet(None, (), ())
    assert ws is not None
    side = ws.routing()
    found_labels = label_stats_for(staged.folder, labels, load_rulebook(side.specs)) if labels is not None else None
    release = dataclasses.replace(load_release(side.releases, staged.release_id, staged.folder),
                                  labels=LabelFindings.from_doc(found_labels) if found_labels is not None else None,
                                  published=shown_published(staged))
    return found_labels, load_releases(side.releases, staged=release)


def shown_published(staged: routing_release.StagedRelease) -> Published | None:
    """The staged release's name and date as its pages show them: what publishing will leave in place.

    The published.json of a release already published (never rewritten), else
    the one this run will write. Read under the releases folder's lock, so no
    other run publishes the same id in between.
    """
    final = staged.out / staged.release_id
    if final.exists():
        return load_published(final / PUBLISHED_FILE)
    doc = staged.published_doc()
    return Published(name=doc["label"], first_written=doc["first_written"])


def kept_lengths(plan: Plan, ws: Workspace | None) -> KeptLengths | None:
    """A build's kept prompt lengths (state/screen-lengths.json), written once it has published; None for a
    render (which writes nothing in the workspace) or a workspace that does not screen."""
    if not plan.route or ws is None or ws.screen is None:
        return None
    return KeptLengths(state_of(ws.root) / LENGTHS_FILE)


def screen_status(plan: Plan, src: Sources, staged: routing_release.StagedRelease | None, releases: ReleaseSet,
                  labels: Any, kept: KeptLengths | None = None) -> ScreeningStatus | None:
    """What the status pages show of the screen (its state read, never written), and the pool titles come from.

    A build shows what the screen has done and would do for the release it
    routed (strict: a bad [screen] input refuses it); a render, for the newest
    published release (not strict: the problem is shown on the page). Without
    a workspace a render's `--pool` gives the titles, and the pages say there
    is none. None: nothing to show (a digest-only build, a render without either). `kept`: a build's lengths
    file (`screening.lengths`), which the build writes once it has published.
    """
    ws = src.workspace
    if staged is not None and ws is not None:
        return screening_status(gather_screening(ws, staged.release_id, staged.folder, labels,
                                                 lengths_file=kept),
                                PoolRef(ws.routing().pool, ws.overlay))  # the pool: where pages read titles
    if plan.route:
        return None
    if ws is not None:
        latest = releases.releases[-1] if releases.releases else None
        screen = gather_screening(ws, latest.release_id if latest else None, latest.folder if latest else None,
                                  labels, strict=False)  # a render writes nothing in the workspace
        return screening_status(screen, PoolRef(ws.pool, ws.overlay) if ws.pool is not None else None)
    return ScreeningStatus(None, None, NO_WORKSPACE, src.pool) if src.pool is not None else None


def digest_weeks(checked: Checked, archive: Path | None) -> tuple[tuple[DigestWeek, ...], tuple[DigestWeek, ...]]:
    """The archive's published weeks, and the weeks decided in memory as their pages will read them once published."""
    if archive is None:
        return (), ()
    pending = () if checked.digest is None else tuple(
        digest_week(r.data, str(archive / r.week / DECISIONS_FILE), rows)
        for r, rows in zip(checked.digest.results, checked.evidence or (None,) * len(checked.digest.results)))
    return tuple(load_digest_weeks(archive)), pending


def stage_pages(novelty: NoveltyResults | None, digest: tuple[Path, Sequence[DigestWeek], Sequence[DigestWeek]] | None,
                base_url: str | None, screening: ScreeningStatus | None, state: Path | None = None,
                topics: Sequence[Link] = ()) -> list[StagePages]:
    """What each stage adds to the site, in one order: novelty, the digest, the screen. `state`: the workspace's
    state folder, whose reader's marks (`reporter feedback`) the digest's index measures the weeks by; `topics`:
    the named digest topics the home page lists."""
    stages = [novelty_stage(list(novelty.rows), novelty.path)] if novelty is not None else []
    if digest is not None:
        archive, published, pending = digest
        marks = read_marks(state) if state is not None else []
        quality = (lambda weeks: measure(weeks, marks)) if marks else None
        stages.append(digest_stage(archive, published=published, pending=pending, base_url=base_url,
                                   quality=quality, topics=tuple(topics)))
    return [*stages, *([screening_stage(screening)] if screening is not None else [])]


def publish_digest(ws: Workspace | None, checked: Checked, record: RunStart | None = None) -> tuple[WeekResult, ...]:
    """Each decided week into the archive, in order, through the one way a week is published (`publish_week`)."""
    if checked.digest is None or ws is None or ws.digest is None:
        return ()
    weeks.sweep_archive(ws.digest.archive)  # temporaries of killed runs (never a live one's)
    evidence = checked.evidence or (None,) * len(checked.digest.results)
    return tuple(weeks.publish_week(ws.digest, result, evidence=rows, record=record)
                 for result, rows in zip(checked.digest.results, evidence))


def write_build_route_run(record: RunStart, routed: routing_release.RouteResult, ws: Workspace) -> None:
    """The route's record of a build, as `reporter route` writes it (routing/release.py:write_route_run)."""
    routing_release.write_route_run(record, routed, pool=ws.pool, specs=ws.specs, overlay=ws.overlay, labels=ws.labels,
                    settings={"sample_seed": ws.sample_seed, "label": ws.release_name})


def write_novelty(results: NoveltyResults) -> None:
    """The novelty candidates' results, written whole (the temporaries of killed builds removed first)."""
    remove_debris(results.path.parent)
    write_novelty_results(results.path, results.rows)


@contextlib.contextmanager
def example_data(ws: Workspace | None, progress: bool = True) -> Iterator[None]:
    """The seeded example pool (and labels), generated when the workspace's [example] asks and they are absent.

    It is an input, made before routing; yet a build refused after making it
    (a missing rule book, an archived page that would change) removes it again,
    with any folder made for it: a refused build leaves the workspace as it was
    (issue 37). A build that publishes keeps it; one killed outright leaves a
    complete pool (written atomically, the same bytes the next build would make).
    """
    if ws is None or ws.pool is None or ws.pool.exists():
        yield  # a digest-only workspace has no pool to make
        return
    if ws.example is None:
        raise InputError(f"{ws.pool}: the pool does not exist ({ws.file} `pool`); add an [example] table "
                         f"to generate made-up works, or point `pool` at your data")
    load_rulebook(ws.routing().specs)  # a missing or broken rule book refuses before any work is made
    from .example.generate import generate_labels, generate_pool
    labels = ws.labels if ws.labels is not None and not ws.labels.exists() else None
    written = [ws.pool, *([labels] if labels is not None else [])]
    made = sorted({d for f in written for d in (f.parent, *f.parent.parents) if not d.exists()},
                  key=lambda d: len(d.parts), reverse=True)  # the folders this run makes, deepest first
    make_dirs(ws.pool.parent)
    # Half-written pools of killed builds (only ours: the folder may hold the user's files).
    remove_debris(ws.pool.parent, recursive=False,
                  targets=[ws.pool.name] + ([ws.labels.name] if ws.labels is not None else []))
    try:
        print(f"generating the example pool ({ws.example.rows:,} seeded, made-up works) -> {ws.pool}",
              file=sys.stderr)
        generate_pool(ws.pool, rows=ws.example.rows, seed=ws.example.seed, progress=progress)
        if labels is not None:
            make_dirs(labels.parent)
            generate_labels(ws.pool, labels, seed=ws.example.seed)
        yield
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        for folder in made:
            with contextlib.suppress(OSError):  # only when empty: never a file this run did not make
                folder.rmdir()
        raise
