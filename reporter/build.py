"""`reporter build`: the whole pipeline for a workspace, read like a table of contents.

First gather everything (load the workspace, check the novelty candidates
when it names some, make the example data if the workspace asks for it,
route), then write the novelty results and render the site in one go.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .config import WORKSPACE_FILE, Workspace, load_workspace
from .errors import InputError

# Where the build writes the novelty results, relative to the workspace folder. Not part
# of a release: rewritten at every build from the graph and the candidates (docs/novelty.md).
NOVELTY_RESULTS = Path("state") / "novelty.jsonl"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the build command."""
    p = sub.add_parser(
        "build", help="route, then render the site, for a workspace",
        description="The whole pipeline for the workspace in --workspace (default: the current folder): "
                    "make the example pool when the workspace asks for it and it is absent, route the "
                    "pool into a release, check the novelty candidates of [novelty] candidates against the "
                    "workspace's graph (results in state/novelty.jsonl), and render the site. Screening "
                    "and the digest join this pipeline as they are built.",
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
    novelty_rows = check_novelty(ws)  # before anything is written: a bad candidate or graph stops the build
    ensure_example_data(ws, show)
    from .routing.release import route_release
    from .routing.labels import load_labels, write_label_stats
    from .routing.specs import load_rulebook
    result = route_release(ws.pool, ws.specs, ws.releases, overlay=ws.overlay,
                           sample_seed=ws.sample_seed, workers=args.workers, progress=show)
    write_label_stats(result.release_dir, load_labels(ws.labels) if ws.labels else None, load_rulebook(ws.specs))
    print(f"routed {result.rows:,} works: release {result.release_id[:12]} "
          f"({'new' if result.created else 'unchanged'})")
    novelty = None
    if novelty_rows is not None:
        from .novelty import write_novelty_results
        from .novelty.verdict import VERDICTS
        novelty = ws.root / NOVELTY_RESULTS
        write_novelty_results(novelty, novelty_rows)
        counts = Counter(row["result"]["verdict"] for row in novelty_rows)
        print(f"novelty: checked {len(novelty_rows)} candidate(s): "
              + ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICTS)
              + f" -> {novelty}")
    from .site import render_site
    report = render_site(ws.releases, out, rerender_archive=args.rerender_archive, progress=show,
                         novelty=novelty)
    print(f"site: {out}/index.html  ({report.pages} pages for {len(report.releases)} release(s)"
          f"{'' if report.novelty is None else ' and the novelty page'}; "
          f"{report.written} files written, {report.unchanged} unchanged)")
    return 0


def check_novelty(ws: Workspace) -> list[dict[str, Any]] | None:
    """The results lines for the workspace's `[novelty] candidates` against its `graph`, or None without candidates.

    Every candidate is checked against the workspace's graph (a candidate's own
    `graph.events_jsonl` is not used here), with the resolvers `[novelty]`
    configures (none by default: no network call).
    """
    section = ws.sections.get("novelty", {})
    if "candidates" not in section:
        return None
    where = f"{ws.root / WORKSPACE_FILE}: [novelty]"
    if not isinstance(section["candidates"], str) or not section["candidates"]:
        raise InputError(f"{where}: candidates must be a non-empty path string (relative to the file)")
    if ws.graph is None:
        raise InputError(f"{where}: candidates is set but the workspace names no `graph` to check them against")
    from .novelty import check_candidate, load_graph, read_candidate_batch, result_row
    resolvers = _novelty_resolvers(section, where)
    items = read_candidate_batch(ws.root / section["candidates"])
    graph = load_graph(ws.graph)
    # The graph as the results name it: relative to the workspace, so the file does not depend on the checkout.
    given = os.path.relpath(ws.graph, ws.root) if ws.root in ws.graph.parents else str(ws.graph)
    return [result_row(line, item, graph, Path(given).as_posix(),
                       check_candidate(item.candidate, graph, resolvers)) for line, item in items]


def _novelty_resolvers(section: dict[str, Any], where: str) -> tuple:
    """The resolvers of the [novelty] table, checked as `reporter novelty --workspace` checks them."""
    from .novelty import make_resolvers
    from .novelty.commands import RESOLVER_NAMES, SECTION_KEYS
    from .novelty.resolvers import DEFAULT_TIMEOUT
    allowed = {**SECTION_KEYS, "candidates": str}
    for key, value in section.items():
        if key not in allowed:
            raise InputError(f"{where}: unknown key {key!r}; allowed: {', '.join(sorted(allowed))}")
        if isinstance(value, bool) or not isinstance(value, allowed[key]):
            raise InputError(f"{where}: key {key!r} has the wrong type")
    names = list(section.get("resolvers", []))
    bad = [n for n in names if n not in RESOLVER_NAMES]
    if bad:
        raise InputError(f"{where}: resolvers: unknown {bad!r}; allowed: {', '.join(RESOLVER_NAMES)}")
    timeout = section.get("timeout_seconds", DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise InputError(f"{where}: timeout_seconds must be positive, got {timeout}")
    key_env = section.get("s2_api_key_env")
    return make_resolvers(names, openalex_url=section.get("openalex_url"), s2_url=section.get("s2_url"),
                          timeout=float(timeout), mailto=section.get("mailto"),
                          s2_api_key=os.environ.get(key_env) if key_env else None)


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
