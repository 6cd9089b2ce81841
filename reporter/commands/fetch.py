"""`reporter fetch`: a window (or an ISO week) of papers from the public APIs into normalized JSONL."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..files import check_output_file
from ..hashing import canonical_json
from ..fetch.config import SOURCES, default_fetch

if TYPE_CHECKING:
    from ..config import Workspace
    from ..fetch.run import FetchResult

FETCH_EPILOG = f"""\
example (in the example workspace, the repository; sends nothing, prints what a fetch would ask):
  reporter fetch --workspace . --week 2026-W20 --source arxiv,pubmed --dry-run

with the network, in a workspace of your own (the first writes YYYY-Www.jsonl into its [digest] papers
folder from every source that has a [fetch.<source>] table; the second two sources into one file):
  $ reporter fetch --week 2026-W21
  $ reporter fetch --source biorxiv,pubmed --since 2026-05-11 --until 2026-05-17 --out week.jsonl --json

Sources: {', '.join(SOURCES)}. Each is asked with its documented etiquette
(arXiv one request every 3 s, NCBI 3 a second or 10 with a key, ...), pages
are followed to the API's own total or cursor, and every answered page is
stored in the raw-answer cache ([fetch] cache_dir, default state/fetch-cache)
before it is read: a re-run sends no request, and a fetch that was stopped
(even by kill -9) resumes without asking an answered page again. A window
that has not ended is cached for the day it was asked. Settings: [fetch] and
[fetch.<source>] of reporter.toml (docs/fetch.md).

Exit status: 0 when every source was fetched; 2 for bad input, or a source
that still failed after its retries (the message names the source, the URL
without keys and what happened). Nothing is written unless every source was
fetched.
"""


def register(subparsers: Any) -> None:
    """Add the `fetch` command."""
    p = subparsers.add_parser(
        "fetch", help="fetch a week (or a window) of papers from arXiv, bioRxiv, medRxiv, PubMed and OpenAlex",
        description="Fetch the papers of a date window from the sources' public APIs, normalize them into the "
                    "digest's records (one JSON object a line, each paper once, versions folded) and write "
                    "them to --out, or, with --week, to YYYY-Www.jsonl in the workspace's [digest] papers "
                    "folder, where `reporter build` publishes the week (docs/fetch.md).",
        epilog=FETCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="folder with reporter.toml (default .)")
    p.add_argument("--source", action="append", metavar="NAME",
                   help=f"a source to fetch ({', '.join(SOURCES)}); repeat it or separate with commas "
                        f"(default: the sources with a [fetch.<source>] table)")
    p.add_argument("--week", metavar="YYYY-Www", help="Monday to Sunday of this ISO week, into the papers folder")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="the first day of the window (with --until)")
    p.add_argument("--until", metavar="YYYY-MM-DD", help="the last day of the window, included")
    p.add_argument("--out", type=Path, metavar="FILE.jsonl", help="where to write the records (with --week: "
                   "instead of the papers folder)")
    p.add_argument("--refresh", action="store_true", help="ask every page again, replacing the cached answers")
    p.add_argument("--dry-run", action="store_true",
                   help="send nothing: say, per source, how far the cache answers and the first request to send")
    p.add_argument("--force", action="store_true",
                   help="with --week: replace the papers of a week the digest archive has already published")
    p.add_argument("--as-of", metavar="YYYY-MM-DD",
                   help="the day taken as today (default today, or SOURCE_DATE_EPOCH): a window not ended by "
                        "then is cached for that day only")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=run_fetch)


def _date(value: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InputError(f"{flag} {value!r}: not a date; write YYYY-MM-DD, e.g. 2026-05-11") from None


def run_fetch(args: argparse.Namespace, environ: dict[str, str] | None = None) -> int:
    """Fetch, write, print the summary (or, with --dry-run, the plan)."""
    # The stage (its HTTP client) and every stage's settings: loaded by a run, never by `reporter fetch --help`.
    from ..config import load_workspace
    from ..fetch.pages import make_window
    from ..fetch.run import Runtime, fetch_sources, records_jsonl, source_names, week_window, write_records
    environ = dict(os.environ if environ is None else environ)
    ws = load_workspace(args.workspace)
    settings = ws.fetch or default_fetch(ws.root)
    if args.as_of is not None:
        as_of = _date(args.as_of, "--as-of")
    else:
        from ..clock import build_date
        as_of = build_date(environ)
    if args.week is not None:
        if args.since is not None or args.until is not None:
            raise InputError("--week is Monday to Sunday of the week; give --week or --since/--until, not both")
        window = week_window(args.week, as_of)
    elif args.since is None or args.until is None:
        raise InputError("give --week YYYY-Www, or --since YYYY-MM-DD and --until YYYY-MM-DD")
    else:
        window = make_window(_date(args.since, "--since"), _date(args.until, "--until"), as_of)
    if args.out is not None and not args.dry_run:
        check_output_file(args.out, "--out")
    out = None if args.dry_run else args.out if args.out is not None else _week_file(ws, args.week)
    names = source_names(args.source, settings)
    result = fetch_sources(settings, names, window, Runtime(environ), refresh=args.refresh, dry_run=args.dry_run,
                           progress=not args.dry_run)
    if args.dry_run:
        _print_plan(result, args.json)
        return 0
    _check_published(ws, args.week, out, records_jsonl(result.records), args.force)
    from ..runs import settings_json, start_run, state_of
    from ..clock import run_clock
    run = start_run(state_of(ws.root), getattr(args, "argv", ()), run_clock(environ))
    write_records(out, result.records)
    counts = {"records": len(result.records)}
    for r in result.reports:
        counts.update({f"{r.source}.records": r.records, f"{r.source}.pages": r.pages, f"{r.source}.sent": r.sent,
                       f"{r.source}.cached": r.cached})
    run.write("fetch", "done", outputs=[run.ref("records", out)], counts=counts,
              settings={**settings_json(settings), "sources": list(names), "since": str(window.since),
                        "until": str(window.until), "refresh": bool(args.refresh)})
    _print_summary(result, out, window, args.json)
    return 0


def _week_file(ws: Workspace, week: str | None) -> Path:
    """YYYY-Www.jsonl in the [digest] papers folder (made when missing)."""
    if week is None:
        raise InputError("give --out FILE.jsonl (or --week YYYY-Www, which writes into the [digest] papers folder)")
    if ws.digest is None:
        raise InputError(f"{ws.file}: --week writes into the [digest] papers folder, and there is no [digest] "
                         f"table; add one, or give --out FILE.jsonl")
    papers = Path(ws.digest.papers)
    if papers.exists() and not papers.is_dir():
        raise InputError(f"{ws.file}: [digest] papers is the file {papers}; --week writes YYYY-Www.jsonl into a "
                         f"folder: make papers a folder, or give --out FILE.jsonl")
    return papers / f"{week}.jsonl"


def _check_published(ws: Workspace, week: str | None, out: Path, data: bytes, force: bool) -> None:
    """Refuse to change the papers of a week the digest archive has published (unless --force)."""
    if week is None or ws.digest is None or force or not out.is_file() or out.read_bytes() == data:
        return
    from ..digest.archive import published_weeks
    if week in published_weeks(ws.digest.archive):
        raise InputError(f"{out}: {week} is already published in {ws.digest.archive}, and the fetch found other "
                         f"papers; nothing was written. Give --force to replace the file (the published week "
                         f"stays as it is until `reporter digest --force` decides it again)")


def _print_summary(result: FetchResult, out: Path, window: Any, as_json: bool) -> None:
    if as_json:
        print(canonical_json({"out": str(out), "since": window.since.isoformat(), "until": window.until.isoformat(),
                              "records": len(result.records), "sources": [r.to_json() for r in result.reports]}))
        return
    for r in result.reports:
        folded = f" ({r.versions_folded} version{'s' * (r.versions_folded != 1)} folded)"
        print(f"{r.source}: {r.records:,} records{folded} from {r.pages} pages: {r.sent} requests sent, "
              f"{r.cached} answered from cache, {r.retried} retried")
        for why in r.skipped:
            print(f"  skipped: {why}")
    print(f"{len(result.records):,} records from {len(result.reports)} source"
          f"{'s' * (len(result.reports) != 1)} ({window.since} to {window.until}) -> {out}")


def _print_plan(result: FetchResult, as_json: bool) -> None:
    if as_json:
        print(canonical_json({"dry_run": True, "sources": [r.to_json() for r in result.reports]}))
        return
    for r in result.reports:
        if r.would_send is None:
            print(f"{r.source}: every page is in the cache ({r.cached} pages, {r.records:,} records): "
                  f"a fetch sends no request")
        else:
            print(f"{r.source}: {r.cached} pages answered from the cache; the next request: GET {r.would_send}")
