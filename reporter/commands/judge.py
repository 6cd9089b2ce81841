"""`reporter judge`: the dry run of the criteria judge over some weeks, or with --run the judging itself."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import database_passwords
from ..errors import InputError
from ..panel.run_report import RunReport, RunWords, format_run, interrupted_note, leased_note, run_exit_code
from ..isoweek import parse_week, week_range

JUDGE_EPILOG = """\
examples (in the repository: examples/judge/ is a workspace whose digest has a judge, examples/digest/'s two
real arXiv weeks; its judge is a local OpenAI-compatible server, which the dry run never contacts):
  reporter judge --workspace examples/judge --week 2026-W26
  reporter judge --workspace examples/judge --from 2026-W25 --to 2026-W26 --json

Without --run: the dry run. Per week, the papers of the week after the
merge that would be sent (those not judged yet in the judge's current
generation), their input-token lengths (counted offline) and the cost per
judge and in total. Nothing is claimed, sent or written; the state database
is not even created.

With --run (and perhaps --max-cost 2): each week's papers are claimed and
only the answers still missing are asked; each raw reply is on disk before
its row. Any number of runners may run at once (each claims its own
papers), and a runner killed at any point loses no paid reply: the next run
adopts it. A re-run on a judged week sends nothing. Ctrl-C (or SIGTERM) stops the
claiming; what was sent is answered and recorded (exit 130; 143 for SIGTERM).

`reporter digest` and `reporter build` then read the recorded answers and
never send; a week with papers not judged yet is refused there unless
--keyword-fallback.

--max-cost (this run) and [digest.judge] budget (the judge's current
generation over all runs, read from the state database) are kept as the
screen's are: each request's worst case is reserved before it is sent.

Exit status: 0 when done; 2 for bad input, or a judge failing request after
request (the message names it, its base_url and the cause); 3 when nothing
more was claimable here while other runners hold papers of the weeks
(docs/screening.md, "Exit status"); 4 when --max-cost or [digest.judge]
budget stopped the sending (the message names the spend, the limit and how
to raise it); 130 after Ctrl-C, 143 after SIGTERM (a second one aborts at
once, with the same code).
"""


def register(sub: Any) -> None:
    """Add `judge`."""
    p = sub.add_parser(
        "judge", help="plan (default) or run (--run) the digest's criteria judge over some weeks",
        description="Ask the [digest.judge] judges (OpenAI-compatible Chat Completions servers) to read each "
                    "paper of the weeks given against the criteria document. Without --run: the dry run "
                    "(papers, token lengths, cost). With --run: claim, ask, record (docs/digest.md).",
        epilog=JUDGE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="a folder with reporter.toml holding [digest] and [digest.judge] (default .)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--week", metavar="YYYY-Www", help="the ISO week whose papers to judge")
    which.add_argument("--from", dest="first", metavar="YYYY-Www", help="the first week to judge; with --to")
    p.add_argument("--to", dest="last", metavar="YYYY-Www", help="the last week, included")
    p.add_argument("--run", action="store_true", help="judge for real: claim papers, send requests, spend")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="with --run: stop sending before this run's spend could pass this many US dollars "
                        "(each request's worst case is reserved first; exit 4 when it stops the run)")
    p.add_argument("--json", action="store_true", help="print the plan or the run's report as JSON")
    p.set_defaults(func=run_judge_command)


def judge_weeks(args: argparse.Namespace) -> list[str]:
    """The weeks of --week, or of --from/--to."""
    if args.first is not None:
        if args.last is None:
            raise InputError("--from needs --to (the last week to judge, included)")
        return week_range(parse_week(args.first, "--from"), parse_week(args.last, "--to"))
    if args.last is not None:
        raise InputError("--to goes with --from; for one week give --week alone")
    return [parse_week(args.week)]


def run_judge_command(args: argparse.Namespace) -> int:
    """The dry run, or with --run the judging."""
    from ..digest.judge.run import judge_settings
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    judge_settings(ws.digest, ws.file)
    weeks = judge_weeks(args)
    if not args.run:
        if args.max_cost is not None:
            raise InputError("--max-cost goes with --run (a dry run spends nothing)")
        from ..digest.judge.plan import format_judge_plan, judge_plan_json, plan_judge
        plan = plan_judge(ws.digest, weeks)
        if args.json:
            print(json.dumps(judge_plan_json(plan), sort_keys=True, ensure_ascii=False))
        else:
            sys.stdout.write(format_judge_plan(plan))
        return 0
    from ..digest.judge.run import run_judge
    from ..runs import start_command_run, state_of
    keys = [os.environ.get(v.api_key_env) for v in ws.digest.judge.voters if v.api_key_env]
    report = run_judge(ws.digest, weeks, max_cost=args.max_cost, environ=os.environ,
                       progress=not args.json or sys.stderr.isatty(),
                       record=start_command_run(args, state_of(ws.root), os.environ, keys))
    if args.json:
        print(json.dumps(judge_run_json(report, weeks), sort_keys=True, ensure_ascii=False))
        if report.interrupted:
            print(interrupted_note(report, JUDGE_WORDS), file=sys.stderr)
        elif report.stopped:
            print(report.stop_message, file=sys.stderr)
        elif note := leased_note(report, JUDGE_WORDS):
            print(note, file=sys.stderr)
    else:
        print(format_run(report, JUDGE_WORDS, weeks))
    return run_exit_code(report)


def judge_run_json(report: RunReport, weeks: list[str]) -> dict[str, Any]:
    """The run's report as JSON: per week judged (in order; a run stopped early has fewer), the counts."""
    from ..panel.run_report import run_json
    doc = run_json(report)
    doc["weeks"] = [{"week": week, **tier} for week, tier in zip(weeks, doc.pop("tiers"))]
    return doc


JUDGE_WORDS = RunWords(subject="weeks", done="papers judged", votes="answers", scope="papers", claimed="papers")
"""How the judge's run report says what it did."""
