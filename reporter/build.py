"""`reporter build`: the whole pipeline for a workspace, read like a table of contents.

First gather everything: check every input, route into a staged release,
check the novelty candidates, and build and render every page in memory.
Then, only once the site writer's checks have passed, publish: the release
and its index, the label findings, the state files, and the site. A refused
build (bad input, or an archived page that would change) leaves the
releases folder, its index, the state files and the site as they were.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .config import Workspace, load_workspace
from .errors import InputError
from .files import locked, remove_debris

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


def build(ws: Workspace, *, out: Path | None = None, as_of: date | None = None,
          environ: Mapping[str, str] | None = None, rerender_archive: bool = False,
          workers: int = 2, progress: bool = True) -> BuildReport:
    """Route, check novelty, render; publish everything only after every check has passed."""
    from .novelty.results import write_novelty_results
    from .routing.labels import label_stats_for, load_labels, write_label_stats
    from .routing.release import stage_release
    from .routing.specs import load_rulebook
    from .site import load_release, load_releases, novelty_stage, prepare_site

    out = Path(out) if out is not None else ws.site
    as_of = as_of or build_date(environ if environ is not None else os.environ)
    # 1. Gather: read and check every input before anything is written.
    labels = load_labels(ws.labels) if ws.labels is not None and ws.labels.exists() else None
    novelty_rows = check_novelty(ws, environ if environ is not None else os.environ)
    ensure_example_data(ws, progress)  # makes an input (the example pool), never an output
    if ws.labels is not None and labels is None:
        labels = load_labels(ws.labels)
    staged = stage_release(ws.pool, ws.specs, ws.releases, overlay=ws.overlay, sample_seed=ws.sample_seed,
                           workers=workers, progress=progress)
    # Builds into one releases folder take turns from here (routing above runs side by side): each
    # renders the index it publishes into, so the last site written lists every published release.
    with locked(ws.releases):
        try:
            # 2. Page models: the staged release is shown as the newest, with its label findings.
            release = load_release(ws.releases, staged.release_id, staged.folder)
            found_labels = (label_stats_for(staged.folder, labels, load_rulebook(ws.specs))
                            if labels is not None else None)
            release = dataclasses.replace(release, labels=found_labels)
            stages = [novelty_stage(novelty_rows, ws.root / NOVELTY_RESULTS)] if novelty_rows is not None else []
            site = prepare_site(load_releases(ws.releases, staged=release), out, stages=stages,
                                rerender_archive=rerender_archive, progress=progress)
            # 3. Publish, now that the writer's checks have passed.
            routed = staged.publish()
        finally:
            staged.discard()
        write_label_stats(routed.release_dir, found_labels)
        if novelty_rows is not None:
            remove_debris((ws.root / NOVELTY_RESULTS).parent)  # temporaries of killed builds
            write_novelty_results(ws.root / NOVELTY_RESULTS, novelty_rows)
        report = site.commit()
    verdicts = None
    if novelty_rows is not None:
        verdicts = dict(sorted(Counter(row["result"]["verdict"] for row in novelty_rows).items()))
    return BuildReport(release_id=routed.release_id, created=routed.created, rows=routed.rows,
                       novelty=verdicts, site=report, as_of=as_of)


def build_date(environ: Mapping[str, str]) -> date:
    """Today for a build: SOURCE_DATE_EPOCH when set (reproducible builds), else the clock."""
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return date.today()
    try:
        return date.fromtimestamp(int(epoch))
    except (ValueError, OverflowError, OSError):
        raise InputError(f"SOURCE_DATE_EPOCH={epoch!r}: must be whole seconds since 1970") from None


def check_novelty(ws: Workspace, environ: Mapping[str, str] | None = None) -> list[dict[str, Any]] | None:
    """The results lines for the workspace's `[novelty] candidates` against its `graph`, or None without candidates.

    Every candidate is checked against the workspace's graph (a candidate's own
    `graph.events_jsonl` is not used here), with the resolvers `[novelty]`
    configures (none by default: no network call); an API key named there is
    read from `environ` (none when not given).
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
    graph = load_graph(ws.graph)
    # The graph as the results name it: relative to the workspace, so the file does not depend on the checkout.
    given = os.path.relpath(ws.graph, ws.root) if ws.root in ws.graph.parents else str(ws.graph)
    return [result_row(line, item, graph, Path(given).as_posix(),
                       check_candidate(item.candidate, graph, resolvers)) for line, item in items]


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
                    "workspace's graph (results in state/novelty.jsonl), and render the site. Everything "
                    "is checked before anything is written: a refused build changes nothing.",
        epilog="Example (in the repository, the example workspace):\n  reporter build\n"
               "  reporter build --workspace . --out preview-site --rerender-archive",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), help="folder with reporter.toml (default .)")
    p.add_argument("--out", type=Path, help="site folder (default: the workspace's `site`)")
    p.add_argument("--rerender-archive", action="store_true",
                   help="render archived pages with the current templates, keeping the old files beside them")
    p.add_argument("--workers", type=int, default=2, help="routing worker threads (default 2)")
    p.set_defaults(func=run_build)


def run_build(args) -> int:
    """Parse, build, print."""
    if args.workers < 1:
        raise InputError(f"--workers must be 1 or more, not {args.workers}")
    report = build(load_workspace(args.workspace), out=args.out, rerender_archive=args.rerender_archive,
                   workers=args.workers, progress=True)
    print(f"routed {report.rows:,} works: release {report.release_id[:12]} "
          f"({'new' if report.created else 'unchanged'})")
    if report.novelty is not None:
        print(f"novelty: checked {sum(report.novelty.values())} candidate(s): "
              + ", ".join(f"{v} {n}" for v, n in report.novelty.items()))
    site = report.site
    print(f"site: {site.out}/index.html  ({site.pages} pages for {len(site.releases)} release(s)"
          f"{'' if site.novelty is None else ' and the novelty page'}; "
          f"{site.written} files written, {site.unchanged} unchanged)")
    return 0
