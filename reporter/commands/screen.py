"""`reporter screen` (the dry run, or with --run the screen itself) and `reporter export` (the hand-off)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..config import Workspace, load_workspace
from ..errors import InputError
from ..files import check_output_file

TIER_CHOICES = ("cheap", "expensive", "all")

SCREEN_EPILOG = """\
examples (in the example workspace, the repository, after `reporter build`):
  reporter screen --workspace .
  reporter screen --workspace . --tier expensive --json

The first prints the dry run of the newest release: per tier, the works that
would be sent, their input-token lengths (counted offline) and the cost per
voter and in total. Nothing is claimed, sent or written; the state database
is not even created. To spend, add --run, and perhaps --max-cost 5 (the
voters' servers must be reachable, their keys in the environment variables
the config names).

--tier all (the default) runs the cheap tier, then the expensive screen.
Several runners may run at once, on one machine or several (PostgreSQL): each
claims its own works, and a reply that was paid for is never asked again,
even after kill -9 (docs/screening.md).

Ctrl-C stops the claiming: the requests already sent are answered and
recorded, then the run prints what it recorded and spent and exits 130 (run
the same command again to resume; only the missing votes are asked). A
second Ctrl-C aborts at once. The dry run lists runs that ended with
requests sent and never answered (in flight at a kill: asked again).

Exit status: 0 when done (or stopped by --max-cost); 2 for bad input, or a
voter failing request after request (the message names it, its base_url and
the cause); 130 after Ctrl-C, 143 after SIGTERM (a second one aborts at once, with the same code);
nothing recorded is lost either way.
"""

EXPORT_EPILOG = """\
examples (in the example workspace, the repository, after `reporter build`):
  reporter export --workspace . --out state/handoff.csv
  reporter export --workspace . --out state/handoff.parquet

One row per work of the release that the expensive screen admitted in the
current generation, rebuilt from the pool (every pool column, the overlay
applied), with its pile, the winning rule, the outcome and each voter's
vote. Works screened by half are held back; verdicts follow a work across
releases. Same inputs, same bytes. With --require-certified nothing is
written while a discarding stratum of the release (a discard pile, what a
tier discarded) lacks a certificate that meets [certify] max_missed_fraction
(reporter certify, docs/certify.md).
"""


def register(sub: Any) -> None:
    """Add `screen` and `export`."""
    p = sub.add_parser(
        "screen", help="plan (default) or run (--run) the two-voter screen of a release",
        description="Screen the works a release routes to its screen piles with two voters per tier "
                    "(OpenAI-compatible Chat Completions servers). Without --run: the dry run (works, "
                    "token lengths, cost). With --run: claim, ask, record (docs/screening.md).",
        epilog=SCREEN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _where(p)
    p.add_argument("--tier", choices=TIER_CHOICES, default="all",
                   help="cheap, expensive, or all: cheap then expensive (default all)")
    p.add_argument("--run", action="store_true", help="screen for real: claim works, send requests, spend")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="with --run: stop claiming new works once this run has spent this many US dollars")
    p.add_argument("--json", action="store_true", help="print the plan or the run's report as JSON")
    p.set_defaults(func=run_screen_command)

    e = sub.add_parser(
        "export", help="write the hand-off: the works the screen admitted, as CSV or Parquet",
        description="Write one row per work of the release that the expensive screen admitted in the "
                    "current generation (a `work_id` column, the pool's columns, the screen's columns).",
        epilog=EXPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _where(e)
    e.add_argument("--out", type=Path, required=True, metavar="FILE", help="FILE.csv or FILE.parquet")
    e.add_argument("--require-certified", action="store_true",
                   help="refuse the hand-off while a discarding stratum of the release (a discard pile, what "
                        "a tier discarded) has no certificate meeting [certify] max_missed_fraction "
                        "(reporter certify; docs/certify.md)")
    e.set_defaults(func=run_export_command)


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="a folder with reporter.toml holding a [screen] table (default .)")
    p.add_argument("--release", metavar="ID",
                   help="a release: its folder, id, a unique prefix of 6 or more characters, or its label "
                        "(default: the newest in the workspace's releases folder)")


def release_dir_for(ws: Workspace, release: Path | str | None) -> Path:
    """The release `--release` names (a folder, an id, a unique prefix or a label), else the newest one."""
    from ..routing.published import find_release
    return find_release(ws.routing("the screen").releases, release)  # a digest-only workspace has none


def _tiers(choice: str) -> tuple[str, ...]:
    return ("cheap", "expensive") if choice == "all" else (choice,)


def run_screen_command(args: argparse.Namespace) -> int:
    """The dry run, or with --run the screen."""
    from ..screening.run import screen_settings
    ws = load_workspace(args.workspace)
    screen_settings(ws)
    release_dir = release_dir_for(ws, args.release)
    tiers = _tiers(args.tier)
    if not args.run:
        if args.max_cost is not None:
            raise InputError("--max-cost goes with --run (a dry run spends nothing)")
        from ..screening.plan import (format_plan, format_unanswered, plan_json, plan_screen, unanswered_json,
                                      unanswered_runs)
        plans = tuple(p for p in plan_screen(ws, release_dir) if p.tier in tiers)
        runs = unanswered_runs(ws)
        if args.json:
            print(json.dumps({**plan_json(plans), "in_flight": unanswered_json(runs)}, sort_keys=True,
                             ensure_ascii=False))
        else:
            sys.stdout.write(format_plan(plans) + format_unanswered(runs))
        return 0
    from ..panel.run_report import format_run, interrupted_note, run_exit_code, run_json
    from ..screening.run import SCREEN_WORDS, run_screen
    from ..runs import start_command_run, state_of
    settings = screen_settings(ws)
    keys = [os.environ.get(v.api_key_env) for t in (settings.cheap, settings.expensive) for v in t if v.api_key_env]
    report = run_screen(ws, release_dir, tiers=tiers, max_cost=args.max_cost, environ=os.environ,
                        progress=not args.json or sys.stderr.isatty(),
                        record=start_command_run(args, state_of(ws.root), os.environ, keys))
    if args.json:
        print(json.dumps(run_json(report), sort_keys=True, ensure_ascii=False))
        if report.interrupted:
            print(interrupted_note(report, SCREEN_WORDS), file=sys.stderr)
    else:
        print(format_run(report, SCREEN_WORDS))
    return run_exit_code(report)


def run_export_command(args: argparse.Namespace) -> int:
    """Write the hand-off file."""
    from ..screening.export import export_release
    from ..screening.run import screen_settings
    from ..screening.export import check_out
    check_output_file(check_out(args.out), "--out")
    ws = load_workspace(args.workspace)
    screen_settings(ws)
    release_dir = release_dir_for(ws, args.release)
    if args.require_certified:
        from ..certify.gate import require_certified
        require_certified(ws, release_dir)
    from ..certify.results import rescued_works, state_dir
    from ..routing.artifacts import read_manifest
    rescued = rescued_works(state_dir(ws.root), read_manifest(release_dir).release_id)
    n = export_release(ws, release_dir, args.out, rescued=rescued)
    print(f"{n - len(rescued):,} admitted works" + (f" and {len(rescued):,} rescued by certificates"
                                                   if rescued else "") + f" -> {args.out}")
    return 0
