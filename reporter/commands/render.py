"""`reporter render`: the command's flags and what it prints; the run itself is `reporter.build.render_site`,
a build with the render-only plan."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import InputError
from ..plurals import count
from . import database_passwords, find_workspace


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `reporter render`."""
    p = subparsers.add_parser(
        "render", help="render the site from existing release folders",
        description="Render every release folder under --releases (as written by `reporter route --out`) "
                    "into --out, without re-running anything. Archived release and rule pages are never "
                    "rewritten; a build that would change one stops with exit 2. Without --releases (and "
                    "without a workspace that has one) the site has no release: a digest-only site, whose home "
                    "page shows the digest of --digests. Without --releases, --digests, --novelty and --pool, the "
                    "workspace (--workspace, or this folder's reporter.toml) names them all: its releases, digest "
                    "archive and novelty results, rendered into its site folder.",
        epilog="Examples (in the example workspace, after `reporter build`; the first renders what the build did):\n"
               "  reporter render\n"
               "  reporter render --releases releases --out site\n"
               "  reporter render --releases releases --out site --novelty state/novelty.jsonl\n"
               "  reporter render --releases releases --digests digests --out site\n"
               "  reporter render --releases releases --out site --workspace .\n"
               "  reporter render --digests digests --out site",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--releases", type=Path, metavar="DIR",
                   help="the releases folder (index.json and one folder per release; default: the --workspace's, "
                        "else none: a digest-only site)")
    p.add_argument("--digests", type=Path, metavar="ARCHIVE",
                   help="a digest archive (`reporter digest --archive`): renders every published week's page "
                        "(digest/YYYY-Www.html, archived), the week index, digest/feed.xml and the home page's "
                        "latest week")
    p.add_argument("--novelty", type=Path, metavar="PATH",
                   help="a results JSONL of `reporter novelty --batch --out`: adds the novelty page "
                        "(novelty.html, rebuilt at every render, never archived) and links it from the home page")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="the workspace (reporter.toml; default: this folder's when it has one and none of --releases, "
                        "--digests, --novelty and --pool is given): its pool gives the titles of the works the diff and status "
                        "pages show that no sample holds (moved works, lost includes), and its [screen] state is what "
                        "the newest release's status page shows (read only, never written). Without it the status "
                        "pages show no screening, and those works show their ids only (see --pool)")
    p.add_argument("--pool", type=Path, metavar="PATH",
                   help="without --workspace: the pool (Parquet, JSONL or CSV) whose titles the diff and status pages "
                        "show for works no sample holds")
    p.add_argument("--overlay", type=Path, metavar="PATH", help="with --pool: its text overlay, whose titles win")
    p.add_argument("--against", action="append", default=[], metavar="ID",
                   help="also compare the newest release with this earlier one (a release id, a unique prefix of "
                        "6 or more characters, or a label): releases/<newest>/against/<id>.html; may be repeated. "
                        "Every render compares each release with its previous one, and the newest also with the "
                        "three before that")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: the workspace's site, else site)")
    p.add_argument("--rerender-archive", action="store_true",
                   help="re-render archived pages whose bytes would change, keeping each old file "
                        "beside the new one as NAME.superseded-<sha>.html")
    p.add_argument("--json", action="store_true", help="print the render report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run_render)


def run_render(args: argparse.Namespace) -> int:
    """reporter render."""
    from ..build import render_site  # the whole pipeline: imported only when it runs
    from ..site.titles import PoolRef
    workspace = pool = None
    found = find_workspace(args.workspace, inputs_given=any(
        flag is not None for flag in (args.releases, args.digests, args.novelty, args.pool)))
    if found is not None:
        if args.pool is not None:
            raise InputError("--pool goes without --workspace: the workspace names its own pool")
        from ..config import load_workspace
        workspace = database_passwords(load_workspace(found), os.environ)
    elif args.pool is not None:
        pool = PoolRef(args.pool, args.overlay)
    elif args.overlay is not None:
        raise InputError("--overlay goes with --pool")
    releases, digests, novelty, out = args.releases, args.digests, args.novelty, args.out
    if releases is None and workspace is not None and workspace.has_routing:
        releases = workspace.routing().releases
    if workspace is not None and not any((args.releases, args.digests, args.novelty)):
        # Named by nothing but the workspace: everything a build of it shows (its digest archive, its novelty
        # results), into its site folder.
        from ..novelty.workspace import NOVELTY_RESULTS
        if workspace.digest is not None and workspace.digest.archive.is_dir():
            digests = workspace.digest.archive
        if (workspace.root / NOVELTY_RESULTS).is_file():
            novelty = workspace.root / NOVELTY_RESULTS
    if out is None:
        out = workspace.site if workspace is not None else Path("site")
    if releases is None and digests is None and novelty is None:
        from ..config import START_HINT
        raise InputError(f"nothing to render: give --releases DIR (the releases folder), --digests ARCHIVE (a digest "
                         f"archive: a digest-only site) or --novelty PATH, or --workspace DIR with a releases folder "
                         f"(without flags, the reporter.toml of this folder); {START_HINT}")
    report = render_site(releases, out, digests_dir=digests,
                         rerender_archive=args.rerender_archive, progress=not (args.quiet or args.json),
                         novelty=novelty, workspace=workspace, against=args.against, pool=pool)
    if args.json:
        print(json.dumps({
            "out": str(report.out), "releases": list(report.releases), "unlisted": list(report.unlisted),
            "digests": report.digests, "novelty": report.novelty, "pages": report.pages, "written": report.written,
            "unchanged": report.unchanged, "superseded": list(report.superseded), "kept": list(report.kept),
            "largest_page": {"path": report.largest_page[0], "bytes": report.largest_page[1]},
        }, indent=2, sort_keys=True))
        return 0
    weeks = f" and {count(report.digests, 'digest week')}" if report.digests else ""
    print(f"rendered {count(len(report.releases), 'release')}{weeks} into {report.out}: {report.pages} pages "
          f"(HTML and Markdown each), {count(report.written, 'file')} written, {report.unchanged} unchanged; "
          f"largest page {report.largest_page[0]} ({report.largest_page[1] / 1024:.1f} KB)")
    if report.novelty is not None:
        print(f"novelty page: {count(report.novelty, 'checked candidate')} from {novelty}")
    if report.superseded:
        print(f"kept {count(len(report.superseded), 'superseded archived file')} beside their new versions")
    if report.kept:
        print(f"left {count(len(report.kept), 'archived file')} of an earlier site version as they were published "
              f"(--rerender-archive re-renders them in this version's layout)")
    for rid in report.unlisted:
        print(f"note: {releases / rid} is not listed in index.json and was not rendered", file=sys.stderr)
    return 0
