"""`reporter feedback`: record the reader's marks on published papers, and show what they measure and propose."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError

from ..digest.config import DEFAULT_TOPIC

FEEDBACK_EPILOG = """\
examples (in the example workspace, after `reporter build`):
  reporter feedback --workspace . --wanted 6fqeyl2z 2ceyoejz
  reporter feedback --workspace . --not-wanted arxiv:2606.21001
  reporter feedback --workspace . --proposals --json

A key is the eight characters each paper carries on its week's page and in
its e-mail (a paper's id works too). Marks are kept in the workspace's
state/feedback.json, every one in the order given: the latest mark of a
paper is the one that counts, and nothing is ever removed. A key that no
published week decided records nothing (exit 2).

--sheet FILE: CSV in UTF-8 with a `key` (or `id`) column and a `mark`
column: `wanted`, `not-wanted`, or empty for no mark; other columns are the
reader's and are not read.

--proposals: watchlist phrases and criteria concepts suggested by the marks,
each with its forecast over the published weeks (matched, wanted, not
wanted, would_keep), computed with the digest's own phrase matcher and
scoring formula. Surfaced, never applied: edit the watchlist or the criteria
to apply one.

Both print the measured quality: KEEP precision over the last 8 published
weeks (of the KEEPs marked, those wanted) with its 95% Wilson interval, and
each wanted paper that was not KEEP with the axis that missed it.

--topic NAME: a topic of the workspace ([digest.topics.NAME], docs/digest.md,
"Topics"): its archive's papers, its marks (state/topics/NAME/feedback.json),
its watchlist and criteria for the proposals. Default: the [digest] table's
own digest, `default` (its marks in state/feedback.json).
"""


def register(subparsers: Any) -> None:
    """Add the `feedback` command."""
    p = subparsers.add_parser(
        "feedback", help="mark published papers wanted or not wanted; measured precision and proposals",
        description="Record the reader's marks (wanted / not-wanted) on papers of published digest weeks, by "
                    "the key each page and e-mail shows; print the measured KEEP precision, and (--proposals) "
                    "watchlist and criteria proposals with their forecasts, never applied (docs/digest.md).",
        epilog=FEEDBACK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="folder with reporter.toml (default .): its [digest] archive and its state/")
    p.add_argument("--topic", metavar="NAME", default=DEFAULT_TOPIC,
                   help=f"the digest topic: a [digest.topics.NAME] of the workspace (default {DEFAULT_TOPIC!r}, "
                        f"the [digest] table's own)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--sheet", type=Path, metavar="FILE", help="a CSV with key (or id) and mark columns")
    what.add_argument("--wanted", nargs="+", metavar="KEY", help="mark these papers wanted")
    what.add_argument("--not-wanted", nargs="+", metavar="KEY", help="mark these papers not wanted")
    what.add_argument("--proposals", action="store_true",
                      help="print the proposals the marks suggest, each with its forecast (never applied)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run_feedback)


def run_feedback(args: argparse.Namespace) -> int:
    """Record marks, or print proposals; either way print the measured quality."""
    from ..config import load_workspace
    from ..digest.archive import archived_weeks
    from ..digest.criteria import load_criteria
    from ..digest.feedback import measure, papers, read_marks, read_sheet, record, resolve
    from ..digest.proposals import propose
    from ..digest.watchlist import load_watchlist
    from ..hashing import canonical_json
    from ..runs import state_of

    ws = load_workspace(args.workspace)
    if ws.digest is None:
        raise InputError(f"{ws.file}: no [digest] table, so there is no published paper to mark; add one "
                         f"(docs/digest.md)")
    settings = ws.digest.topic(args.topic)
    weeks = archived_weeks(settings.archive)
    if not weeks:
        raise InputError(f"{settings.archive}: no published digest week yet; marks are for papers of published "
                         f"weeks (reporter build, or reporter digest)")
    state = settings.state if settings.state is not None else state_of(ws.root)  # the topic's marks
    out: dict[str, Any] = {"topic": args.topic}
    if args.proposals:
        criteria = load_criteria(settings.criteria, need_terms=settings.judge is None)
        out.update(propose(weeks, read_marks(state), load_watchlist(settings.watchlist), criteria))
    else:
        known = papers(weeks)
        if args.sheet is not None:
            marked, source = read_sheet(args.sheet, known), f"sheet {args.sheet.name}"
        else:
            mark = "wanted" if args.wanted else "not-wanted"
            tokens = args.wanted or args.not_wanted
            marked, source = [(p, mark) for p in resolve(tokens, known, f"--{mark}")], f"--{mark}"
        import os

        from ..digest.feedback import FEEDBACK_FILE
        from ..runs import start_command_run
        if not marked:  # a sheet with every mark empty: nothing changes, nothing is written
            out["recorded"] = []
            out["quality"] = measure(weeks, read_marks(state))
            print(canonical_json(out) if args.json else _text(out))
            return 0
        run = start_command_run(args, state_of(ws.root), os.environ)  # the workspace's run records
        state.mkdir(parents=True, exist_ok=True)
        recorded = record(state, marked, source)
        run.write("feedback", "done", inputs=[run.ref("sheet", args.sheet)] if args.sheet is not None else [],
                  outputs=[run.ref("marks", state / FEEDBACK_FILE)],
                  counts={"marks": len(recorded), "wanted": sum(m.mark == "wanted" for m in recorded),
                          "not_wanted": sum(m.mark == "not-wanted" for m in recorded)})
        out["recorded"] = [m.to_json() for m in recorded]
    out["quality"] = measure(weeks, read_marks(state))
    print(canonical_json(out) if args.json else _text(out))
    return 0


def _text(out: dict[str, Any]) -> str:
    lines = []
    if "recorded" in out:
        lines.append(f"recorded {len(out['recorded'])} mark(s):")
        lines += [f"  {m['key']}  {m['mark']:<10}  {m['id']} ({m['week']})" for m in out["recorded"]]
    q = out["quality"]
    weeks = f"{q['weeks'][0]} to {q['weeks'][-1]}" if q["weeks"] else "no week"
    if q["precision"] is None:
        lines.append(f"KEEP precision, {weeks}: no KEEP marked yet")
    else:
        low, high = q["interval"]
        lines.append(f"KEEP precision, {weeks}: {q['keep_wanted']} of {q['keep_marked']} marked KEEPs wanted, "
                     f"{q['precision']:.0%} (95% Wilson interval {low:.0%} to {high:.0%})")
    for m in q["wanted_not_keep"]:
        lines.append(f"  wanted, not KEEP: {m['key']} {m['id']} ({m['week']}, {m['decision']} {m['score']}): "
                     f"missed by {m['missed_by']}")
    if "proposals" in out:
        lines.append(f"proposals ({out['note']}), forecast over {len(out['weeks'])} week(s):")
        lines.append(f"  {'kind':<9} {'matched':>7} {'wanted':>6} {'not_wanted':>10} {'would_keep':>10}  text")
        for p in out["proposals"]:
            keep = p["would_keep"] if p["kind"] == "watchlist" or not p["would_drop_keep"] \
                else f"-{p['would_drop_keep']}"
            lines.append(f"  {p['kind']:<9} {p['matched']:>7} {p['wanted']:>6} {p['not_wanted']:>10} {keep!s:>10}  "
                         f"{p['text']}")
        if not out["proposals"]:
            lines.append("  none: mark more papers wanted (or not wanted)")
    return "\n".join(lines)
