"""`reporter build`: the whole pipeline for a workspace, read like a table of contents.

First gather everything (load the workspace, make the example data if the
workspace asks for it, route), then render the site in one go.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import load_workspace
from .errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the build command."""
    p = sub.add_parser(
        "build", help="route, then render the site, for a workspace",
        description="The whole pipeline for the workspace in --workspace (default: the current folder): "
                    "make the example pool when the workspace asks for it and it is absent, route the "
                    "pool into a release, and render the site. Screening, the digest and novelty join "
                    "this pipeline as they are built.",
        epilog="Example (in the repository, the example workspace):\n  reporter build\n"
               "  reporter build --workspace path/to/ws --out /tmp/site",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), help="folder with reporter.toml (default .)")
    p.add_argument("--out", type=Path, help="site folder (default: the workspace's `site`)")
    p.add_argument("--rerender-archive", action="store_true",
                   help="render archived pages with the current templates, keeping the old files beside them")
    p.add_argument("--workers", type=int, default=2, help="routing worker threads (default 2)")
    p.set_defaults(func=run_build)


def run_build(args) -> int:
    """Build the workspace's site."""
    ws = load_workspace(args.workspace)
    out = args.out or ws.site
    show = True
    ensure_example_data(ws, show)
    from .routing.release import route_release
    result = route_release(ws.pool, ws.specs, ws.releases, overlay=ws.overlay, labels=ws.labels,
                           sample_seed=ws.sample_seed, workers=args.workers, progress=show)
    print(f"routed {result.rows:,} works: release {result.release_id[:12]} "
          f"({'new' if result.created else 'unchanged'})")
    from .site import render_site
    report = render_site(ws.releases, out, rerender_archive=args.rerender_archive, progress=show)
    print(f"site: {out}/index.html  ({report.pages} pages for {len(report.releases)} release(s); "
          f"{report.written} files written, {report.unchanged} unchanged)")
    return 0


def ensure_example_data(ws, show: bool = True) -> None:
    """Generate the seeded example pool (and labels) when the workspace's [example] asks and they are absent."""
    example = ws.sections.get("example")
    if ws.pool.exists():
        return
    if not example:
        raise InputError(f"{ws.pool}: the pool does not exist (reporter.toml `pool`)")
    from .pool.generate import generate_labels, generate_pool
    rows, seed = int(example.get("rows", 200_000)), int(example.get("seed", 0))
    ws.pool.parent.mkdir(parents=True, exist_ok=True)
    print(f"generating the example pool ({rows:,} seeded, made-up works) -> {ws.pool}", file=sys.stderr)
    generate_pool(ws.pool, rows=rows, seed=seed, progress=show)
    if ws.labels is not None and not ws.labels.exists():
        generate_labels(ws.pool, ws.labels, seed=seed)
