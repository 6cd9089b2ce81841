"""`reporter build` and `reporter render`: one pipeline, read like a table of contents.

A run follows a `Plan`: a build (`BUILD`) routes, decides and publishes; a
render (`RENDER`) shows what is already there and writes only the site. Both
take one path (`run`):

1. Gather everything into one `Gathered`: check every input; a build checks
   the novelty candidates, decides the digest weeks not yet published (in
   memory, each KEEP checked against the citation graph when the workspace
   names one) and routes into a staged release, where a render reads a
   novelty results file; then the releases, the digest archive's weeks and
   what the screen has done (its state opened read-only: a run never
   claims, sends, spends or creates screening state).
2. Page models: build and render every page from what was gathered alone, in
   memory, and run the site writer's checks.
3. Publish, only once those checks have passed: the release and its index,
   the digest weeks, the label findings and the state files (a build), then
   the site.

A refused run (bad input, or an archived page that would change) leaves the
releases folder, its index, the digest archive, the state files and the site
as they were. A digest-only workspace (no pool, specs or releases) has no
routing side: nothing is routed or screened, and the site shows the digest.
The steps themselves are in `reporter/build_steps.py`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from . import build_steps as step
from .build_steps import BUILD, RENDER, Plan, Sources
from .build_topics import (TopicRun, cross_topics, decide_topics, locked_topics, publish_topics, topic_links, topic_stages,
                           topics_current)
from .clock import build_date
from .config import Workspace
from .novelty.workspace import NOVELTY_RESULTS
from .routing.artifacts import ReleaseSet
from .routing.labels import write_label_stats
from .routing.release import StagedRelease
from .routing.textscan import scan_engine
from .runs import RunStart, state_of
from .screening.lengths import KeptLengths
from .site.certified import read_certified
from .site.disclosure_page import read_disclosures
from .site.digest_pages import DigestWeek
from .site.models.common import Link
from .site.render import PreparedSite, RenderReport, SiteInputs, StagePages, prepare_site, read_site_inputs
from .site.status_page import ScreeningStatus
from .site.titles import PoolRef


@dataclass(frozen=True)
class BuildReport:
    """What a run did."""

    release_id: str | None
    """The release routed from the workspace's pool and rule book (None: a render, or a digest-only workspace)."""
    created: bool
    """False when an identical release was already published."""
    rows: int
    """Pool rows routed."""
    novelty: dict[str, int] | None
    """Candidates per verdict, or None when the run checked no candidates."""
    site: RenderReport
    """What the site's render wrote."""
    as_of: date | None
    """The day the build took as today (None: a render, which takes none)."""
    digest: tuple[str, ...] = ()
    """Digest weeks this build decided and published (empty without [digest] or a pending week)."""
    topic_weeks: tuple[str, ...] = ()
    """The named digest topics' weeks this build published (`NAME YYYY-Www`)."""
    digest_later: tuple[str, ...] = ()
    """Weeks with papers that have not ended by `as_of`: left for a later build."""


@dataclass(frozen=True)
class Gathered:
    """Everything a run shows and publishes, read and checked before anything is written."""

    plan: Plan
    """What the run routes and decides."""
    src: Sources
    """Where it reads and writes."""
    as_of: date | None
    """The day a build takes as today (None: a render)."""
    checked: step.Checked
    """The novelty results and the digest weeks decided in memory, with their KEEPs' graph verdicts."""
    staged: StagedRelease | None
    """The release routed into a temporary folder, published only in the last step (None without routing)."""
    releases: ReleaseSet
    """The published releases (with the staged one as the newest), their label findings and published.json."""
    labels: dict[str, Any] | None
    """The staged release's label findings (labels.json), or None when there are none to write."""
    digest_weeks: tuple[DigestWeek, ...]
    """The digest archive's published weeks as their pages read them."""
    digest_pending: tuple[DigestWeek, ...]
    """The weeks decided in memory as their pages will read them once published."""
    screening: ScreeningStatus | None
    """What the status pages show of the screen (its state read, never written); None: nothing to show."""
    site: SiteInputs
    """The comparisons the rebuilt pages show (read from the routing tables) and the titles they need."""
    kept: KeptLengths | None = None
    """The dry run's prompt lengths file, written once the build has published (None: a render)."""


def build(ws: Workspace, *, out: Path | None = None, as_of: date | None = None,
          environ: Mapping[str, str] | None = None, rerender_archive: bool = False,
          workers: int | None = None, progress: bool = True, release_name: str | None = None,
          record: RunStart | None = None, keyword_fallback: bool = False) -> BuildReport:
    """Route, check novelty, decide the digest, render; publish everything only after every check has passed.

    `release_name` (`--label`; default: the workspace's) names the release when this build is the first to publish it.
    `record`: the command's run, whose records (the route's, each published week's) go to its state folder.
    `keyword_fallback` (`--keyword-fallback`): digest papers the judge has not answered are decided by the keyword rule.
    """
    src = Sources(out=Path(out) if out is not None else ws.site, workspace=ws, releases=ws.releases,
                  digests=ws.digest.archive if ws.digest is not None else None, novelty=ws.root / NOVELTY_RESULTS,
                  base_url=ws.base_url, record=record)
    plan = dataclasses.replace(BUILD, keyword_fallback=keyword_fallback)
    return run(plan, src, as_of=as_of, environ=environ, rerender_archive=rerender_archive, workers=workers,
               progress=progress, release_name=release_name or ws.release_name)


def render_site(releases_dir: Path | None, out: Path, *, digests_dir: Path | None = None,
                rerender_archive: bool = False, progress: bool = True, novelty: Path | None = None,
                workspace: Workspace | None = None, against: Sequence[str] = (),
                pool: PoolRef | None = None) -> RenderReport:
    """`reporter render`: a build with the render-only plan, over folders already there (docs/site.md).

    `releases_dir` None: no release (a digest-only site). `digests_dir`: a digest
    archive whose published weeks are shown; `novelty`: a results JSONL of
    `reporter novelty --batch` (the novelty page, rebuilt at every render);
    `workspace`: its screen's state on the newest release's status page (read
    only) and its pool for titles no sample holds (else `pool`); `against`:
    earlier releases to compare the newest with.
    """
    src = Sources(out=Path(out), workspace=workspace, releases=Path(releases_dir) if releases_dir is not None else None,
                  digests=Path(digests_dir) if digests_dir is not None else None,
                  novelty=Path(novelty) if novelty is not None else None, pool=pool, against=tuple(against),
                  base_url=workspace.base_url if workspace is not None else None)
    return run(RENDER, src, rerender_archive=rerender_archive, progress=progress).site


def run(plan: Plan, src: Sources, *, as_of: date | None = None, environ: Mapping[str, str] | None = None,
        rerender_archive: bool = False, workers: int | None = None, progress: bool = True,
        release_name: str | None = None) -> BuildReport:
    """The one pipeline: gather, page models, publish, as `plan` says."""
    environ = environ if environ is not None else os.environ
    ws = src.workspace
    if plan.route or plan.decide:
        as_of = as_of or build_date(environ)
    # 1. Gather: read and check every input before anything is written.
    checked = step.check_inputs(plan, src, as_of, environ)  # decided in memory; published in step 3
    topics = decide_topics(ws, as_of, plan.decide, checked, environ)  # the named digest topics, decided alike
    engine = scan_engine(environ) if plan.route else None  # REPORTER_SCAN_ENGINE, read at the edge as `route` does
    # The example pool is an input, made when [example] asks for it; removed again if the run is refused.
    with contextlib.ExitStack() as stack:
        stack.enter_context(step.example_data(ws if plan.route else None, progress))
        labels = step.routing_labels(plan, ws)
        staged = stack.enter_context(step.stage_release(  # None for a render or a digest-only workspace
            plan, ws, workers=workers, progress=progress, release_name=release_name, as_of=as_of, engine=engine))
        with step.locked_outputs(plan, src), locked_topics(topics):
            checked = step.still_current(checked, ws, as_of, environ, plan)  # another run published a week meanwhile?
            topics = topics_current(topics, ws, as_of, checked, environ)
            cross, topics = cross_topics(ws.digest if ws is not None else None, checked.digest, topics)
            checked = dataclasses.replace(checked, digest=cross)  # each week names the topics that also kept a paper
            gathered = gather(plan, src, as_of, checked, staged, labels)
            # 2. Page models, from what was gathered alone; rendered and checked in memory.
            stages = [*stage_pages(gathered, topic_links(topics)), *topic_stages(topics, src.base_url)]
            site = prepare_site(gathered.releases, src.out, inputs=gathered.site, stages=stages,
                                rerender_archive=rerender_archive, progress=progress)
            # 3. Publish, now that the writer's checks have passed.
            return publish(gathered, site, topics)


def gather(plan: Plan, src: Sources, as_of: date | None, checked: step.Checked, staged: StagedRelease | None,
           labels: Any) -> Gathered:
    """The rest of what the pages show, read under the releases folder's lock (and the archive's)."""
    found_labels, releases = step.gather_releases(src.workspace, src.releases, staged, labels)
    kept = step.kept_lengths(plan, src.workspace)
    screening = step.screen_status(plan, src, staged, releases, labels, kept)
    published, pending = step.digest_weeks(checked, src.digests)
    certified = (read_certified(src.workspace.root, src.workspace.certify, releases.releases)
                 if src.workspace is not None else None)
    disclosures = (read_disclosures(src.workspace.root, releases.releases) if src.workspace is not None else None)
    return Gathered(plan=plan, src=src, as_of=as_of, checked=checked, staged=staged, releases=releases,
                    labels=found_labels, digest_weeks=published, digest_pending=pending, screening=screening,
                    kept=kept,
                    site=read_site_inputs(releases, screening.pool if screening is not None else None, src.against,
                                          certified=certified, disclosures=disclosures))


def stage_pages(g: Gathered, topics: Sequence[Link] = ()) -> list[StagePages]:
    """What each stage adds to the site, from what was gathered (`topics`: the named topics the home page lists)."""
    digest = (g.src.digests, g.digest_weeks, g.digest_pending) if g.src.digests is not None else None
    state = state_of(g.src.workspace.root) if g.src.workspace is not None else None
    return step.stage_pages(g.checked.novelty, digest, g.src.base_url, g.screening, state, topics)


def publish(g: Gathered, site: PreparedSite, topics: Sequence[TopicRun] = ()) -> BuildReport:
    """Publish what the plan made, in order: the release, the digest weeks, the label findings, the novelty
    results; then the site."""
    routed = g.staged.publish() if g.staged is not None else None
    weeks = step.publish_digest(g.src.workspace, g.checked, g.src.record)
    topic_weeks = publish_topics(topics, g.src.record)
    if routed is not None:
        write_label_stats(routed.release_dir, g.labels)
        if g.src.record is not None and g.src.workspace is not None:
            step.write_build_route_run(g.src.record, routed, g.src.workspace)
    novelty = g.checked.novelty if g.plan.decide else None
    if novelty is not None:
        step.write_novelty(novelty)
    report = site.commit()
    if g.kept is not None:
        g.kept.commit()  # the dry run's prompt lengths, for the next build (a refused build wrote none)
    verdicts = None if novelty is None else dict(sorted(Counter(row["result"]["verdict"] for row in novelty.rows).items()))
    digest = g.checked.digest
    return BuildReport(release_id=routed.release_id if routed else None, created=bool(routed and routed.created),
                       rows=routed.rows if routed else 0, novelty=verdicts, site=report, as_of=g.as_of,
                       digest=tuple(w.week for w in weeks),
                       topic_weeks=tuple(f"{name} {w.week}" for name, w in topic_weeks),
                       digest_later=digest.later if digest is not None else ())
