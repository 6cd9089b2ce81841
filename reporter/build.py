"""`reporter build`: the whole pipeline for a workspace, read like a table of contents.

First gather everything: check every input, check the novelty candidates,
decide the digest weeks not yet published (in memory, each KEEP checked
against the citation graph when the workspace names one), route into a
staged release, read what the screen has done and would do for it (its state
opened read-only: a build never claims, sends, spends or creates screening
state), and build and render every page in memory. Then, only once
the site writer's checks have passed, publish: the release and its index,
the digest weeks, the label findings, the state files, and the site. A
refused build (bad input, or an archived page that would change) leaves the
releases folder, its index, the digest archive, the state files and the site
as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .clock import build_date
from .config import Workspace, load_workspace
from .errors import InputError
from .files import locked, remove_debris
from .plurals import count

# Where the build writes the novelty results, relative to the workspace folder. Not part
# of a release: rewritten at every build from the graph and the candidates (docs/novelty.md).
NOVELTY_RESULTS = Path("state") / "novelty.jsonl"


@dataclass(frozen=True)
class BuildReport:
    """What a build did."""

    release_id: str
    """The release routed from the workspace's pool and rule book."""
    created: bool
    """False when an identical release was already published."""
    rows: int
    """Pool rows routed."""
    novelty: dict[str, int] | None
    """Candidates per verdict, or None when the workspace names no candidates."""
    site: Any
    """The site's `RenderReport`."""
    as_of: date
    """The day the build took as today."""
    digest: tuple[str, ...] = ()
    """Digest weeks this build decided and published (empty without [digest] or a pending week)."""
    digest_later: tuple[str, ...] = ()
    """Weeks with papers that have not ended by `as_of`: left for a later build."""


def build(ws: Workspace, *, out: Path | None = None, as_of: date | None = None,
          environ: Mapping[str, str] | None = None, rerender_archive: bool = False,
          workers: int | None = None, progress: bool = True, label: str | None = None) -> BuildReport:
    """Route, check novelty, render; publish everything only after every check has passed.

    `label` (default: the workspace's `label`) names the release when this build is the first to publish it.
    """
    from .novelty.results import write_novelty_results
    from .routing.labels import label_stats_for, load_labels, write_label_stats
    from .routing.release import stage_release
    from .routing.specs import load_rulebook
    from .site import digest_stage, load_release, load_releases, novelty_stage, prepare_site
    from .site.render import gather_screening

    out = Path(out) if out is not None else ws.site
    environ = environ if environ is not None else os.environ
    as_of = as_of or build_date(environ)
    # 1. Gather: read and check every input before anything is written.
    labels = load_labels(ws.labels) if ws.labels is not None and ws.labels.exists() else None
    graph = load_workspace_graph(ws)
    novelty_rows = check_novelty(ws, environ, graph=graph)
    digest = gather_digest(ws, as_of, graph, environ)  # decided in memory; published in step 3
    ensure_example_data(ws, progress)  # makes an input (the example pool), never an output
    if ws.labels is not None and labels is None:
        labels = load_labels(ws.labels)
    staged = stage_release(ws.pool, ws.specs, ws.releases, overlay=ws.overlay, sample_seed=ws.sample_seed,
                           workers=workers, progress=progress, label=label or ws.label, as_of=as_of)
    try:  # what the screen has done and would do for this release: its state read, never written (a build never spends)
        screening = gather_screening(ws, staged.release_id, staged.folder, labels)
    except BaseException:
        staged.discard()
        raise
    # Builds into one releases folder take turns from here (routing above runs side by side): each
    # renders the index it publishes into, so the last site written lists every published release.
    # The digest archive likewise, taken after the releases folder (the one order every build takes them in).
    archive = locked(ws.digest.archive) if ws.digest is not None else contextlib.nullcontext()
    with locked(ws.releases), archive:
        try:
            if digest is not None and digest.published != archive_snapshot(ws.digest.archive):
                digest = gather_digest(ws, as_of, graph, environ)  # another run published a week meanwhile
            # 2. Page models: the staged release is shown as the newest, with its label findings.
            release = load_release(ws.releases, staged.release_id, staged.folder)
            found_labels = (label_stats_for(staged.folder, labels, load_rulebook(ws.specs))
                            if labels is not None else None)
            release = dataclasses.replace(release, labels=found_labels, published=shown_published(staged))
            stages = [novelty_stage(novelty_rows, ws.root / NOVELTY_RESULTS)] if novelty_rows is not None else []
            if digest is not None:
                stages.append(digest_stage(ws.digest.archive, pending=digest.weeks))
            site = prepare_site(load_releases(ws.releases, staged=release), out, stages=stages,
                                rerender_archive=rerender_archive, progress=progress, screening=screening)
            # 3. Publish, now that the writer's checks have passed.
            routed = staged.publish()
        finally:
            staged.discard()
        if digest is not None:
            publish_digest(ws.digest, digest)
        write_label_stats(routed.release_dir, found_labels)
        if novelty_rows is not None:
            remove_debris((ws.root / NOVELTY_RESULTS).parent)  # temporaries of killed builds
            write_novelty_results(ws.root / NOVELTY_RESULTS, novelty_rows)
        report = site.commit()
    verdicts = None
    if novelty_rows is not None:
        verdicts = dict(sorted(Counter(row["result"]["verdict"] for row in novelty_rows).items()))
    return BuildReport(release_id=routed.release_id, created=routed.created, rows=routed.rows,
                       novelty=verdicts, site=report, as_of=as_of,
                       digest=tuple(w.week for w in digest.weeks) if digest is not None else (),
                       digest_later=digest.later if digest is not None else ())


def shown_published(staged: Any) -> Any:
    """The staged release's label and date as its pages show them: what `publish` will leave in place.

    The published.json of a release already published (never rewritten), else
    the one this run will write. Read under the releases folder's lock, so no
    other run publishes the same id in between.
    """
    from .routing.published import PUBLISHED_FILE
    from .site.load import Published, load_published
    final = staged.out / staged.release_id
    if final.exists():
        return load_published(final / PUBLISHED_FILE)
    doc = staged.published_doc()
    return Published(label=doc["label"], first_written=doc["first_written"])


def check_novelty(ws: Workspace, environ: Mapping[str, str] | None = None, *,
                  graph: Any = None) -> list[dict[str, Any]] | None:
    """The results lines for the workspace's `[novelty] candidates` against its `graph`, or None without candidates.

    Every candidate is checked against the workspace's graph (a candidate's own
    `graph.events_jsonl` is not used here; `graph` is that graph already
    loaded, else it is read), with the resolvers `[novelty]` configures (none
    by default: no network call); an API key named there is read from
    `environ` (none when not given).
    """
    settings = ws.novelty
    if settings.candidates is None:
        return None
    if ws.graph is None:
        raise InputError(f"{ws.file}: [novelty] candidates is set but the workspace names no `graph` "
                         f"to check them against")
    from .novelty import check_candidate, load_graph, read_candidate_batch, result_row
    resolvers = settings.make_resolvers(environ or {})
    items = read_candidate_batch(settings.candidates)
    graph = graph if graph is not None else load_graph(ws.graph)
    return [result_row(line, item, graph, graph_name(ws), check_candidate(item.candidate, graph, resolvers))
            for line, item in items]


def graph_name(ws: Workspace) -> str:
    """The graph as results name it: relative to the workspace, so the files do not depend on the checkout."""
    assert ws.graph is not None
    return Path(os.path.relpath(ws.graph, ws.root) if ws.root in ws.graph.parents else str(ws.graph)).as_posix()


def load_workspace_graph(ws: Workspace) -> Any:
    """The workspace's citation graph when a check needs it ([novelty] candidates, or [digest]), else None."""
    if ws.graph is None or (ws.novelty.candidates is None and ws.digest is None):
        return None
    from .novelty import load_graph
    return load_graph(ws.graph)


# --- the digest: decided in memory while gathering, published after the writer's checks -----------

@dataclass(frozen=True)
class DigestRun:
    """The digest weeks a build decided and will publish, with the graph's verdicts on their KEEPs."""

    published: tuple[tuple[str, str | None], ...]
    """The archive's published weeks and their sha256 when the run was decided (a change means deciding again)."""
    results: tuple[Any, ...]
    """`reporter.digest.archive.WeekResult` per week, in order: decided, not yet written."""
    graph_rows: tuple[tuple[dict[str, Any], ...] | None, ...]
    """Per week: novelty results lines of its KEEPs, or None when the workspace names no graph."""
    weeks: tuple[Any, ...]
    """The same weeks as the pages see them (`reporter.site.digest_pages.DigestWeek`)."""
    later: tuple[str, ...]
    """Weeks with papers that have not ended by the build's day: left pending."""


def gather_digest(ws: Workspace, as_of: date, graph: Any,
                  environ: Mapping[str, str] | None = None) -> DigestRun | None:
    """Decide every pending week of [digest] that has ended (in order, each feeding the next one's prior).

    A week is due once its Sunday is before `as_of`: its page is archived, so a
    week still running (whose papers file may still grow) waits. Nothing is
    written. When the workspace names a `graph`, each KEEP is checked against it
    (the novelty check, evidence beside the paper; it never changes a score or a
    decision). None without [digest].
    """
    settings = ws.digest
    if settings is None:
        return None
    from .digest.archive import DECISIONS_FILE, pending_weeks, prepare_weeks, week_start
    from .site.digest_pages import digest_week
    published = archive_snapshot(settings.archive)
    pending = pending_weeks(settings)
    due = [w for w in pending if week_start(w) + timedelta(days=6) < as_of]
    results = prepare_weeks(settings, due, as_of=as_of) if due else []
    resolvers = ws.novelty.make_resolvers(environ or {}) if graph is not None else ()
    rows = tuple(tuple(check_keeps(settings, r, graph, graph_name(ws), resolvers)) if graph is not None else None
                 for r in results)
    weeks = tuple(digest_week(r.data, str(settings.archive / r.week / DECISIONS_FILE), g)
                  for r, g in zip(results, rows))
    return DigestRun(published=published, results=tuple(results), graph_rows=rows, weeks=weeks,
                     later=tuple(w for w in pending if w not in due))


def archive_snapshot(archive: Any) -> tuple[tuple[str, str | None], ...]:
    """The published weeks of a digest archive with the sha256 of each decisions.json."""
    from .digest.archive import archive_state, published_weeks
    return tuple(archive_state(archive, published_weeks(archive)).items())


def check_keeps(settings: Any, result: Any, graph: Any, graph_path: str,
                resolvers: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """A week's KEEPs checked against the citation graph: one novelty results line per KEEP with a key.

    The candidate is built from the paper's record: its id, its DOI and its
    related ids (every DOI, arXiv and OpenAlex id it has; the first of each
    scheme). A KEEP without one is not checked (the page says so). `line` is
    the KEEP's place in the week's KEEP list.
    """
    from .digest.archive import papers_file
    from .digest.merge import merge_records
    from .digest.read import read_papers
    from .novelty import check_candidate, parse_candidate, result_row
    keeps = [d for d in result.outcome.decisions if d.decision == "KEEP"]
    if not keeps:
        return []
    records = {r.id: r for r in merge_records(read_papers(papers_file(settings.papers, result.week)))[0]}
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


def publish_digest(settings: Any, run: DigestRun) -> None:
    """Write each decided week into the archive, in order: its graph verdicts first, then its decisions.json.

    A week counts as published once its decisions.json is in place, so a run
    killed in between leaves a week that the next build decides again.
    """
    from .digest.archive import publish, sweep_archive
    from .novelty.results import write_novelty_results
    from .site.digest_pages import GRAPH_FILE
    sweep_archive(settings.archive)  # temporaries of killed runs (never a live one's)
    for result, rows in zip(run.results, run.graph_rows):
        if rows is not None:
            write_novelty_results(settings.archive / result.week / GRAPH_FILE, rows)
        publish(settings, result)


def ensure_example_data(ws: Workspace, progress: bool = True) -> None:
    """Generate the seeded example pool (and labels) when the workspace's [example] asks and they are absent."""
    if ws.pool.exists():
        return
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


# --- the command ------------------------------------------------------------------------------

def register(sub: argparse._SubParsersAction) -> None:
    """Add the build command."""
    p = sub.add_parser(
        "build", help="route, check novelty and render the site, for a workspace",
        description="The whole pipeline for the workspace in --workspace (default: the current folder): "
                    "make the example pool when the workspace asks for it and it is absent, route the "
                    "pool into a release, check the novelty candidates of [novelty] candidates against the "
                    "workspace's graph (results in state/novelty.jsonl), decide the [digest] weeks not yet "
                    "published (each KEEP checked against the graph when there is one) and render the site "
                    "with their pages. Everything is checked before anything is written: a refused build "
                    "changes nothing.",
        epilog="Example (in the repository, the example workspace):\n  reporter build\n"
               "  reporter build --workspace . --label 2026-W27\n"
               "  reporter build --workspace . --out preview-site --rerender-archive",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), help="folder with reporter.toml (default .)")
    p.add_argument("--out", type=Path, help="site folder (default: the workspace's `site`)")
    p.add_argument("--rerender-archive", action="store_true",
                   help="render archived pages with the current templates, keeping the old files beside them")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes routing batches (default: one per core; 1: route in this process)")
    p.add_argument("--label", default=None,
                   help="name the release when this build first publishes it (e.g. 2026-W27; default: `label` in "
                        "reporter.toml); never changes its id, never renames a published release")
    p.set_defaults(func=run_build)


def run_build(args) -> int:
    """Parse, build, print."""
    from .routing.published import check_label
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be 1 or more, not {args.workers}")
    label = check_label(args.label, "--label")
    report = build(load_workspace(args.workspace), out=args.out, rerender_archive=args.rerender_archive,
                   workers=args.workers, progress=True, label=label)
    print(f"routed {report.rows:,} works: release {report.release_id[:12]} "
          f"({'new' if report.created else 'unchanged'})")
    if report.novelty is not None:
        print(f"novelty: checked {count(sum(report.novelty.values()), 'candidate')}: "
              + ", ".join(f"{v} {n}" for v, n in report.novelty.items()))
    if report.digest:
        print(f"digest: decided and published {', '.join(report.digest)}")
    if report.digest_later:
        print(f"digest: {', '.join(report.digest_later)} not over yet (today is {report.as_of}); "
              f"left for a later build", file=sys.stderr)
    site = report.site
    print(f"site: {site.out}/index.html  ({site.pages} pages for {count(len(site.releases), 'release')}"
          f"{'' if not site.digests else ', ' + count(site.digests, 'digest week')}"
          f"{'' if site.novelty is None else ' and the novelty page'}; "
          f"{count(site.written, 'file')} written, {site.unchanged} unchanged)")
    return 0
