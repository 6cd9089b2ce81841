"""`reporter build`: the whole pipeline for a workspace, read like a table of contents.

First gather everything into one `Gathered`: check every input, check the
novelty candidates, decide the digest weeks not yet published (in memory,
each KEEP checked against the citation graph when the workspace names one),
route into a staged release, and read what the screen has done and would do
for it (its state opened read-only: a build never claims, sends, spends or
creates screening state). Then build and render every page from what was
gathered alone, in memory. Then, only once the site writer's checks have
passed, publish: the release and its index, the digest weeks, the label
findings, the state files, and the site. A refused build (bad input, or an
archived page that would change) leaves the releases folder, its index, the
digest archive, the state files and the site as they were. A digest-only
workspace (no pool, specs or releases) has no routing side: nothing is
routed or screened, and the site shows the digest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .clock import build_date
from .config import Workspace
from .digest.archive import DECISIONS_FILE
from .digest.publish import DigestRun, archive_snapshot, gather_digest, publish_digest
from .errors import InputError
from .files import locked, remove_debris
from .novelty.results import write_novelty_results
from .novelty.workspace import NOVELTY_RESULTS, check_novelty, load_workspace_graph
from .routing import release as routing_release
from .routing.artifacts import LabelFindings, Published, ReleaseSet, load_published, load_release, load_releases
from .routing.labels import label_stats_for, load_labels, write_label_stats
from .routing.published import PUBLISHED_FILE
from .routing.specs import load_rulebook
from .routing.textscan import scan_engine
from .screening.report import gather_screening
from .site.certified import read_certified
from .site.digest_pages import DigestWeek, digest_week, load_digest_weeks
from .site.status_page import ScreeningStatus, screening_status
from .site.render import (PreparedSite, RenderReport, SiteInputs, StagePages, digest_stage, novelty_stage,
                          prepare_site, read_site_inputs, screening_stage)
from .site.titles import PoolRef


@dataclass(frozen=True)
class BuildReport:
    """What a build did."""

    release_id: str | None
    """The release routed from the workspace's pool and rule book (None: a digest-only workspace routes none)."""
    created: bool
    """False when an identical release was already published."""
    rows: int
    """Pool rows routed."""
    novelty: dict[str, int] | None
    """Candidates per verdict, or None when the workspace names no candidates."""
    site: RenderReport
    """What the site's render wrote."""
    as_of: date
    """The day the build took as today."""
    digest: tuple[str, ...] = ()
    """Digest weeks this build decided and published (empty without [digest] or a pending week)."""
    digest_later: tuple[str, ...] = ()
    """Weeks with papers that have not ended by `as_of`: left for a later build."""


@dataclass(frozen=True)
class Gathered:
    """Everything a build shows and publishes, read and checked before anything is written."""

    ws: Workspace
    """The workspace's settings."""
    as_of: date
    """The day the build takes as today."""
    staged: routing_release.StagedRelease | None
    """The release routed into a temporary folder, published only in the last step (None without a routing side)."""
    releases: ReleaseSet
    """The published releases with the staged one as the newest, its label findings and published.json."""
    labels: dict | None
    """The staged release's label findings (labels.json), or None when the workspace names no labels."""
    novelty: list[dict[str, Any]] | None
    """The novelty results lines of [novelty] candidates, or None without candidates."""
    digest: DigestRun | None
    """The digest weeks decided in memory, or None without [digest]."""
    digest_weeks: tuple[DigestWeek, ...]
    """The digest archive's published weeks as their pages read them."""
    digest_pending: tuple[DigestWeek, ...]
    """The weeks of `digest` as their pages will read them once published."""
    screening: ScreeningStatus | None
    """What the screen has done and would do for the staged release (its state read, never written); None
    without a release."""
    site: SiteInputs
    """The comparisons the rebuilt pages show (read from the routing tables) and the titles they need."""


def build(ws: Workspace, *, out: Path | None = None, as_of: date | None = None,
          environ: Mapping[str, str] | None = None, rerender_archive: bool = False,
          workers: int | None = None, progress: bool = True, release_name: str | None = None,
          keyword_fallback: bool = False) -> BuildReport:
    """Route, check novelty, render; publish everything only after every check has passed.

    `release_name` (`--label`; default: the workspace's) names the release when this build is the first to publish it.
    `keyword_fallback` (`--keyword-fallback`): digest papers the judge has not answered are decided by the keyword rule.
    """
    environ = environ if environ is not None else os.environ
    as_of = as_of or build_date(environ)
    # 1. Gather: read and check every input before anything is written.
    graph = load_workspace_graph(ws)
    novelty = check_novelty(ws, environ, graph=graph)
    digest = gather_digest(ws, as_of, graph, environ, keyword_fallback=keyword_fallback)  # published in step 3
    ensure_example_data(ws, progress)  # makes an input (the example pool), never an output
    labels = load_labels(ws.labels) if ws.labels is not None else None
    engine = scan_engine(environ)  # REPORTER_SCAN_ENGINE, read here at the edge as `reporter route` reads it
    with stage_release(ws, workers=workers, progress=progress, release_name=release_name or ws.release_name,
                       as_of=as_of, engine=engine) as staged:  # None in a digest-only workspace
        screening = screen_status(ws, staged, labels)
        with locked_outputs(ws):
            if digest is not None and digest.published != archive_snapshot(ws.digest.archive):
                digest = gather_digest(ws, as_of, graph, environ,  # another run published a week meanwhile
                                       keyword_fallback=keyword_fallback)
            gathered = gather(ws, as_of, staged, labels, novelty, digest, screening)
            # 2. Page models, from what was gathered alone; rendered and checked in memory.
            site = prepare_site(gathered.releases, Path(out) if out is not None else ws.site, inputs=gathered.site,
                                stages=stage_pages(gathered), rerender_archive=rerender_archive, progress=progress)
            # 3. Publish, now that the writer's checks have passed.
            return publish(gathered, site)


@contextlib.contextmanager
def stage_release(ws: Workspace, *, workers: int | None, progress: bool, release_name: str | None,
                  as_of: date, engine: str | None = None) -> Iterator[routing_release.StagedRelease | None]:
    """Route the workspace's pool into a staged release; removed on the way out unless it was published.

    A digest-only workspace has nothing to route: None.
    """
    if not ws.has_routing:
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


def screen_status(ws: Workspace, staged: routing_release.StagedRelease | None, labels: Any) -> ScreeningStatus | None:
    """What the screen has done and would do for the staged release (None without one)."""
    if staged is None:
        return None
    return screening_status(gather_screening(ws, staged.release_id, staged.folder, labels),
                            PoolRef(ws.routing().pool, ws.overlay))  # the pool: where pages read titles


@contextlib.contextmanager
def locked_outputs(ws: Workspace) -> Iterator[None]:
    """The releases folder's lock, then the digest archive's (each one the workspace has).

    Builds into one releases folder take turns from here (routing runs side by
    side before it): each renders the index it publishes into, so the last
    site written lists every published release. The digest archive likewise,
    taken after the releases folder: the one order every build takes them in.
    """
    with contextlib.ExitStack() as stack:
        for folder in (ws.releases, ws.digest.archive if ws.digest is not None else None):
            if folder is not None:
                stack.enter_context(locked(folder))
        yield


def gather(ws: Workspace, as_of: date, staged: routing_release.StagedRelease | None, labels: Any,
           novelty: list[dict[str, Any]] | None, digest: DigestRun | None,
           screening: ScreeningStatus | None) -> Gathered:
    """The rest of what the pages show, read under the releases folder's lock (and the archive's)."""
    found_labels, releases = gather_releases(ws, staged, labels)
    archive = ws.digest.archive if ws.digest is not None else None
    pending = () if digest is None or archive is None else tuple(
        digest_week(r.data, str(archive / r.week / DECISIONS_FILE), g)
        for r, g in zip(digest.results, digest.graph_rows))
    return Gathered(ws=ws, as_of=as_of, staged=staged, releases=releases, labels=found_labels, novelty=novelty,
                    digest=digest, digest_weeks=tuple(load_digest_weeks(archive)) if archive is not None else (),
                    digest_pending=pending, screening=screening,
                    site=read_site_inputs(releases, screening.pool if screening is not None else None,
                                         certified=read_certified(ws, releases.releases)))


def gather_releases(ws: Workspace, staged: routing_release.StagedRelease | None,
                    labels: Any) -> tuple[dict | None, ReleaseSet]:
    """The staged release's label findings, and the published releases with it as the newest (none without it)."""
    if staged is None:
        return None, ReleaseSet(folder=None, releases=(), unlisted=())
    side = ws.routing()
    found_labels = label_stats_for(staged.folder, labels, load_rulebook(side.specs)) if labels is not None else None
    release = dataclasses.replace(load_release(side.releases, staged.release_id, staged.folder),
                                  labels=LabelFindings.from_doc(found_labels) if found_labels is not None else None,
                                  published=shown_published(staged))
    return found_labels, load_releases(side.releases, staged=release)


def stage_pages(g: Gathered) -> list[StagePages]:
    """What each stage adds to the site, from what was gathered."""
    stages = [novelty_stage(g.novelty, g.ws.root / NOVELTY_RESULTS)] if g.novelty is not None else []
    if g.ws.digest is not None:
        stages.append(digest_stage(g.ws.digest.archive, published=g.digest_weeks, pending=g.digest_pending,
                                   base_url=g.ws.base_url))
    return [*stages, *([screening_stage(g.screening)] if g.screening is not None else [])]


def publish(g: Gathered, site: PreparedSite) -> BuildReport:
    """Publish the release, the digest weeks, the label findings, the novelty results and the site, in order."""
    routed = g.staged.publish() if g.staged is not None else None
    if g.digest is not None and g.ws.digest is not None:
        publish_digest(g.ws.digest, g.digest)
    if routed is not None:
        write_label_stats(routed.release_dir, g.labels)
    if g.novelty is not None:
        remove_debris((g.ws.root / NOVELTY_RESULTS).parent)  # temporaries of killed builds
        write_novelty_results(g.ws.root / NOVELTY_RESULTS, g.novelty)
    report = site.commit()
    verdicts = None
    if g.novelty is not None:
        verdicts = dict(sorted(Counter(row["result"]["verdict"] for row in g.novelty).items()))
    return BuildReport(release_id=routed.release_id if routed else None, created=bool(routed and routed.created),
                       rows=routed.rows if routed else 0, novelty=verdicts, site=report, as_of=g.as_of,
                       digest=g.digest.weeks if g.digest is not None else (),
                       digest_later=g.digest.later if g.digest is not None else ())


def shown_published(staged: routing_release.StagedRelease) -> Published | None:
    """The staged release's name and date as its pages show them: what `publish` will leave in place.

    The published.json of a release already published (never rewritten), else
    the one this run will write. Read under the releases folder's lock, so no
    other run publishes the same id in between.
    """
    final = staged.out / staged.release_id
    if final.exists():
        return load_published(final / PUBLISHED_FILE)
    doc = staged.published_doc()
    return Published(name=doc["label"], first_written=doc["first_written"])


def ensure_example_data(ws: Workspace, progress: bool = True) -> None:
    """Generate the seeded example pool (and labels) when the workspace's [example] asks and they are absent."""
    if ws.pool is None or ws.pool.exists():
        return  # a digest-only workspace has no pool to make
    if ws.example is None:
        raise InputError(f"{ws.pool}: the pool does not exist ({ws.file} `pool`); add an [example] table "
                         f"to generate made-up works, or point `pool` at your data")
    from .example.generate import generate_labels, generate_pool
    ws.pool.parent.mkdir(parents=True, exist_ok=True)
    # Half-written pools of killed builds (only ours: the folder may hold the user's files).
    remove_debris(ws.pool.parent, recursive=False,
                  targets=[ws.pool.name] + ([ws.labels.name] if ws.labels is not None else []))
    print(f"generating the example pool ({ws.example.rows:,} seeded, made-up works) -> {ws.pool}",
          file=sys.stderr)
    generate_pool(ws.pool, rows=ws.example.rows, seed=ws.example.seed, progress=progress)
    if ws.labels is not None and not ws.labels.exists():
        generate_labels(ws.pool, ws.labels, seed=ws.example.seed)
