"""`reporter screen` (the dry run, or with --run the screen itself) and `reporter export` (the hand-off)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import database_passwords
from ..errors import InputError
from ..files import check_output_file

if TYPE_CHECKING:
    from ..config import Workspace

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
second Ctrl-C aborts at once. The dry run lists runs killed with requests
sent and never answered (in flight at the kill: asked again).

Spending: before each request the runner reserves its worst case (its
prompt plus max_tokens at the voter's prices) and stops sending when the
next reservation would pass --max-cost (this run) or [screen] budget (what
both tiers' current generations spent over all runs, read from the state
database); what was in flight is answered and recorded.

--status prints where the screen of the release stands across every runner
(per tier: done, admitted, discarded, failed, leased by which runner on which
host until when, unclaimed; spend per voter against [screen] budget; each
runner's requests; time left at the current pace), read-only; --json for the
JSON (docs/screening.md).

Exit status (docs/screening.md, "Exit status"):
  0    done; the dry run and --status always
  1    internal error
  2    bad input, or a voter failing request after request (the message names
       it, its base_url and the cause)
  3    not done: nothing more was claimable here while works of the scope are
       leased by other runners (--status shows them; a dead runner's leases run
       out and the next --run takes them over)
  4    stopped by --max-cost or [screen] budget (the message names the spend,
       the limit and how to raise it)
  130  Ctrl-C; 143 SIGTERM (a second one aborts at once, with the same code)
Nothing recorded is lost either way.
"""

EXPORT_EPILOG = """\
examples (in the example workspace, the repository, after `reporter build`;
--partial because nothing is screened there yet):
  reporter export --workspace . --out state/handoff.csv --partial
  reporter export --workspace . --out state/handoff.parquet --partial

One row per work of the release that the expensive screen admitted in the
current generation, rebuilt from the pool (every pool column, the overlay
applied), with its pile, the winning rule, the outcome and each voter's
vote. Works screened by half are held back; verdicts follow a work across
releases. Same inputs, same bytes. Refused (exit 2, nothing written) while
works of the release are leased by a runner or not claimed yet, unless
--partial. Beside FILE, FILE.provenance.json says where it came from (release,
generation, voters' models and hosts, prompt hash, tool version, the
certificates that gated it, counts, spend, partial or not, and the methods
disclosure kept with the hand-off in state/disclosure/<release id>/handoffs/,
which the site publishes as an archived page: docs/disclosure.md); a Parquet
file carries the same in its metadata (docs/screening.md). With --require-certified nothing is
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
                   help="with --run: stop sending before this run's spend could pass this many US dollars "
                        "(each request's worst case is reserved first; exit 4 when it stops the run)")
    p.add_argument("--status", action="store_true",
                   help="where the screen stands across every runner: counts, leases, spend, pace (read-only)")
    p.add_argument("--json", action="store_true", help="print the plan, the status or the run's report as JSON")
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
    e.add_argument("--partial", action="store_true",
                   help="write the hand-off even while works of the release are leased by a runner or not claimed "
                        "yet (otherwise refused); its provenance sidecar, and a Parquet file's metadata, say "
                        "partial and what is missing")
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
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    screen_settings(ws)
    release_dir = release_dir_for(ws, args.release)
    tiers = _tiers(args.tier)
    if args.status:
        if args.run or args.max_cost is not None:
            raise InputError("--status only reads; leave out --run and --max-cost")
        from ..screening.status import format_status, screen_status, status_json
        status = screen_status(ws, release_dir)
        if args.json:
            print(json.dumps(status_json(status), sort_keys=True, ensure_ascii=False))
        else:
            sys.stdout.write(format_status(status))
        return 0
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
    from ..panel.run_report import format_run, interrupted_note, leased_note, run_exit_code, run_json
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
        elif report.stopped:
            print(report.stop_message, file=sys.stderr)
        elif note := leased_note(report, SCREEN_WORDS):
            print(note, file=sys.stderr)
    else:
        print(format_run(report, SCREEN_WORDS))
    return run_exit_code(report)


def run_export_command(args: argparse.Namespace) -> int:
    """Write the hand-off file."""
    from ..screening.export import export_release
    from ..screening.run import screen_settings
    from ..screening.export import check_out
    check_output_file(check_out(args.out), "--out")
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    screen_settings(ws)
    release_dir = release_dir_for(ws, args.release)
    certificates: list[dict[str, Any]] = []
    if args.require_certified:  # refuses (exit 2, naming the plan's n) while the discards are not certified
        certificates = gating_certificates(ws, release_dir)
    from ..screening.provenance import provenance, provenance_path, write_provenance
    from ..screening.status import export_blockers, screen_status
    status = screen_status(ws, release_dir)
    blockers = export_blockers(status)
    if blockers and not args.partial:
        raise InputError(f"release {status.release_id[:12]}: the screen is not complete ({'; '.join(blockers)}), "
                         f"so a hand-off now would miss works. Nothing was written. Finish it with reporter screen "
                         f"--run (reporter screen --status shows which runner holds what, and until when), or "
                         f"write a hand-off marked partial with --partial")

    from ..certify.results import rescued_works, state_dir
    rescued = rescued_works(state_dir(ws.root), status.release_id)

    # The methods disclosure as the records stand now (docs/disclosure.md), drafted before anything is written so
    # that a record it cannot read refuses the export whole; kept with the hand-off, named in its provenance.
    from ..disclose.snapshot import keep, provenance_entry
    from ..hashing import sha256_file
    from ..runs import state_of
    from .certify import now
    from .disclose import draft_of
    disclosure = draft_of(ws, release_dir)
    kept = provenance_entry(disclosure, ws.root, state_of(ws.root))

    def document(rows: int) -> dict[str, Any]:
        return provenance(ws, status, rows=rows, partial=args.partial, certificates=certificates,
                          require_certified=args.require_certified, disclosure=kept)

    n = export_release(ws, release_dir, args.out, rescued=rescued, provenance=document)
    keep(disclosure, state_of(ws.root), taken_at=now(),
         handoff={"file": Path(args.out).name, "rows": n, "sha256": sha256_file(args.out)})
    write_provenance(args.out, document(n))
    print(f"{n - len(rescued):,} admitted works" + (f" and {len(rescued):,} rescued by certificates"
                                                   if rescued else "")
          + f" -> {args.out} (provenance: {provenance_path(args.out).name}"
          + (f"; partial: {'; '.join(blockers)}" if blockers else "; partial" if args.partial else "")
          + f"; methods disclosure kept: {kept['file']})")
    return 0


def gating_certificates(ws: Workspace, release_dir: Path) -> list[dict[str, Any]]:
    """The certificates that let the hand-off through (`reporter.certify.gate.gating_certificates`: their ids, the
    joint one or one per discarding stratum), as the provenance names them: id, stratum, file (relative to the
    workspace) and sha256 of the certificate's own archived file. The one place the export asks which
    certificates gated it."""
    from ..certify.gate import gating_certificates as gating_ids
    from ..certify.results import all_certificates, archive_path, state_dir
    from ..hashing import sha256_file
    from ..routing.artifacts import read_manifest
    ids = gating_ids(ws, release_dir)
    if not ids:
        return []
    release_id = read_manifest(release_dir).release_id
    by_id = {c.id: c for c in all_certificates(state_dir(ws.root), release_id)}
    out = []
    for cert_id in ids:
        cert = by_id[cert_id]
        path = archive_path(state_dir(ws.root), release_id, cert.stratum, cert_id)
        name = path.relative_to(ws.root).as_posix() if ws.root in path.parents else str(path)
        out.append({"id": cert_id, "stratum": cert.stratum, "file": name, "sha256": sha256_file(path)})
    return out
