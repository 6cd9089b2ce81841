"""`reporter novelty` (check candidates against the graph) and `reporter novelty-ingest`."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..hashing import canonical_json
from ..novelty.config import RESOLVER_NAMES
from ..novelty.resolvers import DEFAULT_TIMEOUT
from ..progress import Progress

if TYPE_CHECKING:
    from ..novelty.candidate import CandidateInput
    from ..novelty.resolvers import Resolver
    from ..novelty.verdict import NoveltyResult

NOVELTY_EPILOG = """\
examples:
  reporter novelty --candidate examples/novelty/candidate.json --json
  reporter novelty --candidate examples/novelty/candidate.json --workspace .
  reporter novelty --batch examples/novelty/candidates.jsonl --graph examples/novelty/events.jsonl --out state/checked.jsonl

(in the example workspace: the repository). `--resolver openalex --resolver s2`
asks those APIs for keys a candidate lacks; without it no network call is made.

The candidate file is the input object of docs/novelty.md:
  {"candidate": {"kind": "paper", "keys": {"doi": null, "arxiv": "2608.13940",
                 "openalex": "W7203633772", "s2_paperId": null},
                 "statement": null, "holdout_lom_ids": ["arxiv:2408.06292"]},
   "graph": {"events_jsonl": "graph/events.jsonl"}}
A relative events_jsonl is read from the candidate file's folder (else from
the working folder); --graph wins over it, and it wins over the workspace's
`graph` key.

Exit status: 0 whatever the verdict (duplicate, neighborhood, novel, unknown);
2 for unreadable input (candidate, batch or graph file). No network call is
made unless a resolver is configured, and then only for keys the candidate
lacks and the graph could match on. The verdict is evidence, never a score.
"""

INGEST_EPILOG = """\
example:
  reporter novelty-ingest --works examples/novelty/openalex-works.json --out state/ingested.jsonl --checked-ts 2026-09-03T00:00:00Z

--works holds OpenAlex work objects (a JSON list, an API page with `results`,
or JSONL, optionally .gz). A work with `referenced_works` becomes a read paper
with its citation edges and a references_checked row (n_refs may be 0: a
checked zero); a work without it becomes an unread paper row.
"""


def register(subparsers: Any) -> None:
    """Add the `novelty` and `novelty-ingest` commands."""
    p = subparsers.add_parser(
        "novelty", help="check candidates for novelty against the ingested graph",
        description="Check one candidate paper or claim (JSON in, JSON out), or a batch "
                    "(JSONL in, JSONL out), against the citation graph: rules 1-4 of novelty.md, "
                    "failing closed on lookups.",
        epilog=NOVELTY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--candidate", type=Path, metavar="PATH", help="one candidate JSON file")
    which.add_argument("--batch", type=Path, metavar="PATH", help="a JSONL of candidates, one per line")
    p.add_argument("--graph", type=Path, metavar="PATH", help="the graph events JSONL")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="read `graph` and the [novelty] table from DIR/reporter.toml")
    p.add_argument("--out", type=Path, metavar="PATH", help="write the results JSONL here")
    p.add_argument("--json", action="store_true",
                   help="print the output object (a results line per candidate with --batch)")
    p.add_argument("--resolver", action="append", choices=RESOLVER_NAMES, metavar="NAME",
                   help="enable a resolver for missing keys: openalex, s2 (repeatable; asked "
                        "in the order OpenAlex, then Semantic Scholar)")
    p.add_argument("--openalex-url", metavar="URL", help="OpenAlex API root (default api.openalex.org)")
    p.add_argument("--s2-url", metavar="URL", help="Semantic Scholar Graph API root, ending in /graph/v1")
    p.add_argument("--lookup-timeout", type=float, metavar="SECONDS",
                   help=f"timeout per lookup (default {DEFAULT_TIMEOUT:g}); no retries")
    p.add_argument("--mailto", metavar="EMAIL", help="e-mail for OpenAlex's polite pool")
    p.add_argument("--s2-api-key-env", metavar="NAME", help="environment variable holding an S2 API key")
    p.set_defaults(func=run_novelty)

    q = subparsers.add_parser(
        "novelty-ingest", help="turn OpenAlex works into graph events",
        description="Write graph events (papers, citation edges, references_checked) from OpenAlex works.",
        epilog=INGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("--works", type=Path, required=True, metavar="PATH", help="OpenAlex works file")
    q.add_argument("--out", type=Path, required=True, metavar="PATH", help="the events JSONL to write")
    q.add_argument("--checked-ts", required=True, metavar="TIMESTAMP",
                   help="when the references were read (ISO 8601), recorded on each references_checked row")
    q.add_argument("--source", default="openalex", help="the references_checked source (default openalex)")
    q.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    q.set_defaults(func=run_ingest)


@dataclass(frozen=True)
class NoveltyRun:
    """What a `reporter novelty` run checks against: the workspace's graph and the resolvers."""

    graph: Path | None
    """The workspace's graph (the flag and the candidate's entry come first)."""
    resolvers: tuple[Resolver, ...]
    """The configured resolvers, OpenAlex first; empty means no network call."""


def settings_from(args: argparse.Namespace) -> NoveltyRun:
    """Merge the workspace's `graph` and [novelty] table with the flags (flags win)."""
    from ..config import load_workspace  # the stages' imports: loaded by a run, never by `--help`
    from ..novelty.config import NoveltySettings

    settings, ws_graph = NoveltySettings(), None
    if args.workspace is not None:
        ws = load_workspace(args.workspace)
        settings, ws_graph = ws.novelty, ws.graph
    flags = {"resolvers": tuple(args.resolver) if args.resolver else None,
             "timeout_seconds": args.lookup_timeout, "openalex_url": args.openalex_url,
             "s2_url": args.s2_url, "mailto": args.mailto, "s2_api_key_env": args.s2_api_key_env}
    settings = replace(settings, **{k: v for k, v in flags.items() if v is not None})
    if settings.timeout_seconds <= 0:
        raise InputError(f"--lookup-timeout must be positive, got {settings.timeout_seconds:g}")
    return NoveltyRun(graph=ws_graph, resolvers=settings.make_resolvers(os.environ))


def graph_path_for(item: CandidateInput, base: Path, flag: Path | None,
                   workspace_graph: Path | None) -> tuple[Path, str]:
    """(path to read, path as given) for one input: --graph, then the input's entry, then the workspace."""
    if flag is not None:
        return flag, str(flag)
    if item.graph_path is not None:
        given = Path(item.graph_path)
        if given.is_absolute() or (base / given).exists() or not given.exists():
            return (given if given.is_absolute() else base / given), item.graph_path
        return given, item.graph_path  # not beside the input file, but relative to the working folder
    if workspace_graph is not None:
        return workspace_graph, str(workspace_graph)
    raise InputError("no graph to check against: give --graph PATH, a graph.events_jsonl entry "
                     "in the candidate, or --workspace DIR whose reporter.toml names `graph`")


def run_novelty(args: argparse.Namespace) -> int:
    """Check one candidate or a batch; print the verdicts; exit 0 whatever they are."""
    from ..novelty.candidate import read_candidate_batch, read_candidate_file
    from ..novelty.graph import Graph, load_graph
    from ..novelty.results import result_row, write_novelty_results
    from ..novelty.verdict import check_candidate

    settings = settings_from(args)
    if args.candidate is not None:
        items = [(1, read_candidate_file(args.candidate))]
        base = args.candidate.parent
    else:
        if args.out is None and not args.json:
            raise InputError("--batch needs --out PATH for the results (or --json to print them)")
        items = read_candidate_batch(args.batch)
        base = args.batch.parent
    # Gather everything before writing anything: every graph is read whole first.
    graphs: dict[Path, tuple[Graph, str]] = {}
    where: list[Path] = []
    for _, item in items:
        path, given = graph_path_for(item, base, args.graph, settings.graph)
        if path not in graphs:
            graphs[path] = (load_graph(path), given)
        where.append(path)
    progress = Progress("novelty", total=len(items), unit="candidates", enabled=args.batch is not None)
    rows, results = [], []
    for (line, item), path in zip(items, where):
        graph, given = graphs[path]
        result = check_candidate(item.candidate, graph, settings.resolvers)
        results.append(result)
        rows.append(result_row(line, item, graph, given, result))
        progress.advance(1)
    progress.close()
    if args.out is not None:
        write_novelty_results(args.out, rows)
    if args.candidate is not None:
        print(canonical_json(results[0].to_json()) if args.json else summary(results[0]))
    elif args.json:
        sys.stdout.write("".join(canonical_json(row) + "\n" for row in rows))
    else:
        print(batch_summary(results, args.out))
    return 0


def summary(result: NoveltyResult) -> str:
    """A short human reading of one result."""
    def ids(values: tuple[str, ...]) -> str:
        return f" ({', '.join(values)})" if values else ""
    lines = [f"{result.lom_id}: {result.verdict} (status {result.status})",
             f"  exact key match: {result.matched_lom_id or 'none'}",
             f"  shared read or claim-bearing references: in-sample {len(result.shared)}{ids(result.shared)}; "
             f"holdout {len(result.holdout_shared)}{ids(result.holdout_shared)}",
             f"  holdout applied: {'yes' if result.holdout_applied else 'no (in-sample only)'}",
             f"  coverage gap: {len(result.coverage_gap) or 'none'}{ids(result.coverage_gap[:10])}",
             "  blocking lookups: " + (", ".join(f"{e['scheme']} {e['lookup']} -> {e['http_status']}"
                                                 for e in result.ingest_errors_blocking) or "none"),
             "The verdict is evidence against the graph as read, not a score."]
    return "\n".join(lines)


def batch_summary(results: list[NoveltyResult], out: Path | None) -> str:
    """Counts per verdict and status for a batch."""
    from ..novelty.verdict import VERDICTS

    verdicts = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    statuses = {s: sum(r.status == s for r in results) for s in ("lookup_failed", "insufficient_edges")}
    text = (f"checked {len(results)} candidates: " + ", ".join(f"{v} {n}" for v, n in verdicts.items())
            + f" (lookup_failed {statuses['lookup_failed']}, insufficient_edges {statuses['insufficient_edges']})")
    return text + (f"\nresults: {out}" if out else "")


def run_ingest(args: argparse.Namespace) -> int:
    """Write graph events for OpenAlex works."""
    from ..novelty.ingest import openalex_events, read_openalex_works, write_events

    try:
        datetime.fromisoformat(args.checked_ts)
    except ValueError:
        raise InputError(f"--checked-ts {args.checked_ts!r} is not an ISO 8601 timestamp") from None
    if args.out.is_dir():
        raise InputError(f"--out {args.out}: is a folder; name the events file to write, "
                         f"e.g. --out {args.out / 'events.jsonl'}")
    above = next((p for p in args.out.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InputError(f"--out {args.out}: {above} is a file, not a folder")
    events = openalex_events(read_openalex_works(args.works), args.checked_ts, source=args.source,
                             origin=str(args.works))
    try:
        n = write_events(args.out, events, append=args.append)
    except (IsADirectoryError, NotADirectoryError, FileExistsError) as exc:
        raise InputError(f"--out {args.out}: cannot write the events file there ({exc.strerror}); "
                         "name a file in a folder") from None
    tables: dict[str, int] = {}
    for event in events:
        tables[event["table"]] = tables.get(event["table"], 0) + 1
    print(f"wrote {n} events to {args.out}: " + ", ".join(f"{t} {c}" for t, c in sorted(tables.items())))
    return 0
