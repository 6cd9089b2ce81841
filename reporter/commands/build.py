"""`reporter build`: the command's flags and what it prints; the pipeline itself is `reporter.build.build`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import database_passwords
from ..errors import InputError
from ..plurals import count


def register(sub: argparse._SubParsersAction) -> None:
    """Add the build command."""
    p = sub.add_parser(
        "build", help="route, check novelty, decide the digest weeks and render the site, for a workspace",
        description="The whole pipeline for the workspace in --workspace (default: the current folder): "
                    "make the example pool when the workspace asks for it and it is absent, route the "
                    "pool into a release, check the novelty candidates of [novelty] candidates against the "
                    "workspace's graph (results in state/novelty.jsonl), decide the [digest] weeks not yet "
                    "published (each KEEP checked against the graph when there is one) and render the site "
                    "with their pages. Everything is checked before anything is written: a refused build "
                    "changes nothing. A digest-only workspace (site and [digest], no pool) routes nothing and "
                    "publishes its digest weeks.",
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
    p.add_argument("--keyword-fallback", action="store_true",
                   help="with a digest criteria judge: decide papers it has not answered yet by the keyword rule "
                        "(tagged judge-missing) instead of refusing the week")
    p.set_defaults(func=run_build)


def run_build(args) -> int:
    """Parse, build, print."""
    from ..build import build  # the whole pipeline: imported only when it runs, so `reporter build --help` is quick
    from ..config import load_workspace
    from ..routing.published import check_release_name
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be 1 or more, not {args.workers}")
    release_name = check_release_name(args.label, "--label")
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    from ..runs import start_command_run, state_of
    report = build(ws, out=args.out, rerender_archive=args.rerender_archive, workers=args.workers, progress=True,
                   release_name=release_name, keyword_fallback=args.keyword_fallback, environ=os.environ,
                   record=start_command_run(args, state_of(ws.root), os.environ))
    site = report.site
    if report.digest_later:
        print(f"digest: {', '.join(report.digest_later)} not over yet (today is {report.as_of}); "
              f"left for a later build", file=sys.stderr)
    if report.release_id is not None and not report.created and not report.digest and not site.written:
        # Nothing new: the inputs' digests name a published release (so nothing was routed) and every page is
        # as it was. One line says so (issue 37).
        print(f"unchanged: release {report.release_id[:12]} ({report.rows:,} works) is already published for "
              f"these inputs, nothing routed; site {site.out}/index.html up to date ({site.unchanged} files, "
              f"none written)")
        return 0
    if report.release_id is not None and report.created:
        print(f"routed {report.rows:,} works: release {report.release_id[:12]} (new)")
    elif report.release_id is not None:
        print(f"release {report.release_id[:12]} (unchanged): {report.rows:,} works, already published for these "
              f"inputs, not routed again")
    else:
        print("routed nothing: a digest-only workspace (no pool, specs or releases)")
    if report.novelty is not None:
        print(f"novelty: checked {count(sum(report.novelty.values()), 'candidate')}: "
              + ", ".join(f"{v} {n}" for v, n in report.novelty.items()))
    if report.digest:
        print(f"digest: decided and published {', '.join(report.digest)}")
    if report.topic_weeks:
        print(f"digest topics: decided and published {', '.join(report.topic_weeks)}")
    print(f"site: {site.out}/index.html  ({site.pages} pages for {count(len(site.releases), 'release')}"
          f"{'' if not site.digests else ', ' + count(site.digests, 'digest week')}"
          f"{'' if site.novelty is None else ' and the novelty page'}; "
          f"{count(site.written, 'file')} written, {site.unchanged} unchanged)")
    return 0
