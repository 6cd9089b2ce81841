"""The site's half of a build or a render: every page model built from what was gathered, rendered, checked.

The one orchestrator (`reporter.build`: `build` and `render_site`, a build
with a render-only plan) gathers the inputs and each stage's `StagePages`,
then hands them to `prepare_site`; nothing here reads a stage's state or
re-runs anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..isoweek import week_start
from ..progress import Progress
from ..routing.artifacts import Release, ReleaseSet
from .certificate_page import build_certificate_page
from .disclosure_page import KeptDisclosure, build_kept_page
from .certified import Certified, hand_off
from .diff import compute_diff
from .diff_page import (AGAINST_RECENT, Pair, build_diff_page, change_line, diff_files, pairs_to_render,
                        resolve_against, shown_ids)
from .digest_pages import FEED, DigestWeek, build_index_page, build_week_page, digest_summary, load_digest_weeks
from .digest_views import DIGEST, topic_root
from .email_edition import email_archive
from .env import render_html, render_md
from .feed import atom_feed, entry_id, feed_id
from .glossary import build_glossary
from .home_page import build_home
from .links import href
from .models import Comparison, DigestSummary, Link, NoveltySummary
from .next_step import screen_next_step
from .novelty_page import build_novelty_page, novelty_summary
from .page_parts import release_name
from .release_page import build_release_page, build_rule_pages, release_files
from .status_page import NO_WORKSPACE, ScreeningStatus, build_status_page, lost_works
from .titles import PoolRef, Titles, gather_titles
from .writer import SiteWriter

@dataclass(frozen=True)
class RenderReport:
    """What a render produced."""

    out: Path
    """The output folder."""
    releases: tuple[str, ...]
    """Release ids rendered, oldest first."""
    unlisted: tuple[str, ...]
    """Release folders found but not in index.json (not rendered)."""
    pages: int
    """Pages rendered (each HTML page and its Markdown twin count as one)."""
    written: int
    """Files written because they were new or changed."""
    unchanged: int
    """Files already on disk with the same bytes."""
    superseded: tuple[str, ...]
    """Old archived files kept beside re-rendered ones."""
    kept: tuple[str, ...]
    """Archived files of an earlier site version left as they were (this version would render them otherwise)."""
    largest_page: tuple[str, int]
    """The largest file and its size in bytes."""
    digests: int = 0
    """Digest weeks rendered (0 without a digest archive)."""
    novelty: int | None = None
    """Candidates on the novelty page, or None when no novelty results were given (no page)."""


@dataclass(frozen=True)
class StagePages:
    """What one stage adds to the site: the one way a stage contributes pages.

    Every stage (novelty, the digest, screening) hands one of these to the one
    writer through `prepare_site`'s `stages`; the site never asks for a stage
    by name. Each part is optional: a stage fills the parts it has, and two
    stages never fill the same home-page part or count.
    """

    pages: tuple[tuple[Any, bool], ...] = ()
    """(page model, archived) pairs; an archived page is never rewritten once published."""
    files: tuple[tuple[str, bytes], ...] = ()
    """Files that are not pages (the digest's Atom feed): (site path, bytes), rebuilt at every build."""
    archived_files: tuple[tuple[str, bytes], ...] = ()
    """Files that are not pages but are archived like one (the digest's e-mail edition): written once, never
    rewritten."""
    digest: DigestSummary | None = None
    """The home page's digest part (the latest week), filled by the digest's stage."""
    novelty: NoveltySummary | None = None
    """The home page's novelty part (the checked candidates), filled by the novelty stage."""
    status: ScreeningStatus | None = None
    """What the release status pages show of this stage, and the pool their titles are read from (screening)."""
    digests: int = 0
    """Digest weeks this stage shows (`RenderReport.digests`)."""
    candidates: int | None = None
    """Candidates on the novelty page this stage renders (`RenderReport.novelty`); None: no novelty page."""


_PARTS = {"status": "what the status pages show", "digest": "the home page's digest part",
          "novelty": "the home page's novelty part", "candidates": "the novelty page's count"}


def _one(stages: Sequence[StagePages], part: str) -> Any:
    """The one stage's value of a part (None when no stage fills it); two stages filling it is a programming error."""
    values = [getattr(stage, part) for stage in stages if getattr(stage, part) is not None]
    if len(values) > 1:
        raise ValueError(f"two stages say {_PARTS[part]}; one stage does")
    return values[0] if values else None


@dataclass(frozen=True)
class SiteInputs:
    """What the rebuilt pages read beyond the releases: the comparisons and the titles they show."""

    pairs: Mapping[str, tuple[Pair, ...]]
    """Release id -> the comparisons rendered for it (each read from the two releases' routing tables)."""
    titles: Titles
    """The titles of the works the diff and status pages show, read once (samples first, then the pool)."""
    certified: Certified | None = None
    """The releases' certificates the status pages show, read once (`read_certified`); None: no workspace."""
    disclosures: Mapping[str, tuple[KeptDisclosure, ...]] | None = None
    """Release id -> the methods disclosures kept at its hand-offs (`read_disclosures`), oldest first; each gets its
    archived page and a line on the status page. None: no workspace (the status pages say so)."""


def read_site_inputs(found: ReleaseSet, pool: PoolRef | None = None, against: Sequence[str] = (),
                     certified: Certified | None = None,
                     disclosures: Mapping[str, tuple[KeptDisclosure, ...]] | None = None) -> SiteInputs:
    """The comparisons first (they read the routing tables), then one read of the titles every rebuilt page shows.

    `pool` is where titles no sample holds are read (the workspace's pool;
    None: no workspace). `against`: earlier releases to compare the newest
    with (`reporter render --against`). `certified`: the workspace's
    certificates (`read_certified`), passed on to the status pages; `disclosures`: the methods
    disclosures kept at the hand-offs (`read_disclosures`).
    """
    releases = found.releases
    pairs: dict[str, list[Pair]] = {}
    for i, j in pairs_to_render(releases, resolve_against(releases, against)):
        rel, base = releases[i], releases[j]
        pair = Pair(rel, base, j == i - 1, compute_diff(base, rel, seed=rel.samples.seed))
        pairs.setdefault(rel.release_id, []).append(pair)
    wanted = {w for group in pairs.values() for p in group for w in shown_ids(p.data)}
    wanted |= {w.work_id for rel in releases for w in lost_works(rel)}
    return SiteInputs({rid: tuple(group) for rid, group in pairs.items()}, gather_titles(releases, wanted, pool),
                      certified, disclosures)


@dataclass(frozen=True)
class PreparedSite:
    """Every page of a build rendered in memory and checked against the archive; nothing written yet."""

    writer: SiteWriter
    """The writer holding every file."""
    releases: ReleaseSet
    """The releases rendered."""
    stages: tuple[StagePages, ...]
    """The stages' pages rendered beside them."""
    pages: int
    """Pages rendered (each HTML page and its Markdown twin count as one)."""

    def commit(self) -> RenderReport:
        """Write the site (all or nothing) and report."""
        done = self.writer.commit()
        return RenderReport(out=self.writer.root, releases=tuple(r.release_id for r in self.releases.releases),
                            unlisted=self.releases.unlisted,
                            pages=self.pages, written=len(done.written), unchanged=len(done.unchanged),
                            superseded=done.superseded, kept=done.kept, largest_page=done.largest,
                            digests=sum(stage.digests for stage in self.stages),
                            novelty=_one(self.stages, "candidates"))


def prepare_site(found: ReleaseSet, out: Path, *, stages: Sequence[StagePages] = (),
                 rerender_archive: bool = False, progress: bool = True,
                 against: Sequence[str] = (), inputs: SiteInputs | None = None) -> PreparedSite:
    """Build every page model, render them in memory and run the writer's checks; write nothing.

    `stages` add their pages, files and home-page parts; the one with a `status`
    (`screening_stage`) says what the status pages show of the screen and gives
    the workspace's pool for titles. Without one the site is rendered without a
    workspace, and the status pages say so. `inputs` are the comparisons and
    titles already read (`read_site_inputs`, as a build gathers them); None:
    read them here, with `against` (earlier releases to compare the newest with,
    `reporter render --against`).
    """
    screening = _one(stages, "status") or ScreeningStatus(None, None, NO_WORKSPACE)
    releases = found.releases
    writer = SiteWriter(Path(out), rerender_archive=rerender_archive)
    bar = Progress("render", total=len(releases), unit="releases", enabled=progress)
    pages = 0

    def add(page, archived: bool) -> None:
        nonlocal pages
        writer.add(page.meta.path + ".html", render_html(page), archived=archived)
        writer.add(page.meta.path + ".md", render_md(page), archived=archived)
        pages += 1

    inputs = inputs if inputs is not None else read_site_inputs(found, screening.pool, against)
    pairs, titles = inputs.pairs, inputs.titles
    changes = {}
    for i, rel in enumerate(releases):
        release_page = build_release_page(rel)
        add(release_page, True)
        for path, data in release_files(release_page):
            writer.add(path, data, archived=True)
        for page in build_rule_pages(rel):
            add(page, True)
        report, note = screening.for_release(rel.release_id)
        kept = inputs.disclosures.get(rel.release_id, ()) if inputs.disclosures is not None else None
        add(build_status_page(rel, report, note, titles, inputs.certified, kept), False)
        for cert in inputs.certified.ever(rel.release_id) if inputs.certified is not None else ():
            add(build_certificate_page(rel, cert), True)
        for k in kept or ():
            add(build_kept_page(rel, k), True)
        mine = list(pairs.get(rel.release_id, ()))
        if not mine:
            add(build_diff_page(rel, None, titles), False)
            changes[rel.release_id] = change_line(rel, None, None)
        for pair in mine:
            comparisons, compare_note = _comparisons(releases[:i], pair, mine, newest=i == len(releases) - 1)
            page = build_diff_page(rel, pair, titles, comparisons, compare_note)
            add(page, False)
            for path, data in diff_files(page, pair.data):
                writer.add(path, data, archived=False)
            if pair.previous:
                changes[rel.release_id] = change_line(rel, pair.base, pair.data)
        bar.advance(1)
    for stage in stages:
        for page, archived in stage.pages:
            add(page, archived)
        for path, data in stage.files:
            writer.add(path, data, archived=False)
        for path, data in stage.archived_files:
            writer.add(path, data, archived=True)
    add(build_home(releases, digest=_one(stages, "digest"), novelty=_one(stages, "novelty"), changes=changes,
                   certification=_certification(releases, screening, inputs.certified),
                   next_step=screen_next_step(screening.for_release(releases[-1].release_id)[0]) if releases else None),
        False)
    add(build_glossary(releases), False)
    writer.check()
    bar.close()
    return PreparedSite(writer=writer, releases=found, stages=tuple(stages), pages=pages)


def _certification(releases: Sequence[Release], screening: ScreeningStatus,
                   certified: Certified | None) -> tuple[str, str]:
    """The latest release's hand-off certification for the home page: (words, tone); empty without a workspace."""
    if not releases or certified is None:
        return "", "neutral"
    rel = releases[-1]
    gate = hand_off(rel, certified.of(rel.release_id), certified.settings, screening.for_release(rel.release_id)[0])
    return f"The hand-off's certification: {gate.words}.", gate.tone


def _comparisons(earlier: Sequence[Release], pair: Pair, mine: list[Pair],
                 newest: bool) -> tuple[tuple[Comparison, ...], str]:
    """The earlier releases a comparison page lists, newest first: linked where this render wrote the page.

    The newest release's pages list every earlier release (those not compared
    yet name the command that compares them); the others list the
    comparisons written for them.
    """
    written = {p.base.release_id: p.path for p in mine}
    out = []
    for rel in reversed(earlier):
        if rel.release_id not in written and not newest:
            continue
        name = release_name(pair.path, rel)
        target = written.get(rel.release_id)
        out.append(Comparison(name.name, name.written, href(pair.path, target) if target else None,
                              rel.release_id == pair.base.release_id))
    note = ("Each release is compared with the one before it at every render, and the newest release also with "
            f"up to {AGAINST_RECENT} releases before that. To compare the newest with any other earlier release: "
            "reporter render --against ID (a release id, a unique prefix of it, or its label).")
    return tuple(out), note


def novelty_stage(rows: list[dict[str, Any]], source: Path | str) -> StagePages:
    """The novelty page and its home-page summary, from the lines of a results file."""
    page = build_novelty_page(rows, source)
    return StagePages(pages=((page, False),), novelty=novelty_summary(page), candidates=len(page.candidates))


def digest_stage(archive: Path | None, *, pending: Sequence[DigestWeek] = (),
                 published: Sequence[DigestWeek] | None = None, base_url: str | None = None,
                 quality: Callable[[Sequence[Any]], dict | None] | None = None,
                 topic: tuple[str, str] | None = None, topics: tuple[Link, ...] = ()) -> StagePages:
    """Every published week of a digest archive (and the weeks a build is about to publish), as one stage.

    Each week's page is archived; the week index (`digest/index`), the Atom feed
    (`digest/feed.xml`) and the home page's summary are rebuilt. `pending` are
    weeks decided in memory by a build, shown as if published (the build
    publishes them only once the writer's checks have passed). `published` are
    the archive's weeks already read (`load_digest_weeks`; None: read them
    here). Each week's e-mail edition (`digest/YYYY-Www.email.html`, `.email.txt`
    and `.eml`) is archived beside its page, linking to it absolutely under
    `base_url` (`[site] base_url`), else relatively. `quality` measures the
    weeks by the reader's marks (the build hands it over: `reporter feedback`),
    shown on the index when there are marks. Without a week the stage
    adds nothing and the home page says that none is published. `topic`:
    (name, title) of a named topic (docs/digest.md, "Topics"): its pages,
    index, feed and e-mail editions under `digest/topics/NAME/`, and no part
    of the home page (the default digest's summary lists the topics).
    """
    root = DIGEST if topic is None else topic_root(topic[0])
    if published is None:
        published = load_digest_weeks(archive, root) if archive is not None else []
    weeks = sorted([*published, *pending],
                   key=lambda w: week_start(w.week))
    if len({w.week for w in weeks}) != len(weeks):
        raise InputError(f"{archive}: a week to publish is already published; nothing was written")
    if not weeks:
        return StagePages()
    names = [w.week for w in weeks]
    pages = [build_week_page(w, names) for w in weeks]
    papers = weeks[0].archived.head.papers
    first = papers.sha256 if papers is not None else None  # the first week's papers file
    feed = atom_feed([(page, entry_id(w.week, w.archived.sha256)) for w, page in zip(weeks, pages)],
                     feed_id(weeks[0].week, first or weeks[0].archived.sha256, topic[0] if topic else ""), base_url, root)
    measured = quality([w.archived for w in weeks]) if quality is not None else None
    index = build_index_page(weeks, measured, root, topic[1] if topic is not None else "")
    return StagePages(pages=(*((p, True) for p in pages), (index, False)),
                      files=((FEED if topic is None else f"{root}/feed.xml", feed),),
                      archived_files=email_archive(weeks, base_url),
                      digest=digest_summary(weeks, topics=topics) if topic is None else None, digests=len(weeks))


def screening_stage(status: ScreeningStatus) -> StagePages:
    """What the screen adds to the site: its part of the release status pages (`gather_screening`)."""
    return StagePages(status=status)
