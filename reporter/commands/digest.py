"""`reporter digest`: decide one week's papers (or several, in order) and publish ARCHIVE/YYYY-Www/decisions.json."""

from __future__ import annotations

import argparse
import os
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import database_passwords, find_workspace
from ..errors import InputError
from ..hashing import canonical_json
from ..isoweek import parse_week, week_range
from ..progress import Progress
from ..digest.config import DEFAULT_MAX_KEPT, DEFAULT_TOPIC, DigestSettings

if TYPE_CHECKING:
    from ..digest.weeks import WeekResult

EXAMPLES = "--watchlist examples/digest/watchlist.txt --criteria examples/digest/criteria.md"
DIGEST_EPILOG = f"""\
examples (in the example workspace, the repository; two real arXiv weeks, examples/digest/README.md):
  reporter digest --papers examples/digest/papers/2026-W25.jsonl {EXAMPLES} --archive state/digest-example --week 2026-W25 --max-kept 2
  reporter digest --papers examples/digest/papers {EXAMPLES} --archive state/digest-example --from 2026-W25 --to 2026-W26 --force --json
  reporter digest --papers examples/digest/papers {EXAMPLES} --archive state/digest-sanity --week 2026-W26 --no-prior --max-kept 100 --full-ranking --force

The first publishes one week, 2026-W25, with at most 2 KEEPs. The
second is a catch-up of several weeks: it runs 2026-W25, then 2026-W26 with
2026-W25's KEEPs as its prior. It re-publishes 2026-W25 (now with the
default 25 KEEPs), which without --force is refused; the old decisions.json
is kept beside the new one as decisions.superseded-<sha12>.json. The third,
a sanity check of the watchlist, decides 2026-W26 with no prior (no earlier
week's KEEPs to be new against), at most 100 KEEPs, and prints every paper
ranked.

--papers is a records file or a folder of them, of any dates (a whole arXiv
listing, several fetches, one YYYY-Www.jsonl per week): each paper is
decided in the ISO week it is first listed in (a file named YYYY-Www.jsonl
lists its week; any other record is listed on its `published` date). A paper
a prior week decided, listed again in the same version, is not decided
again: the week lists it under listed_again. With --workspace DIR the paths
and the thresholds come from the [digest] table of DIR/reporter.toml (flags
win), e.g. reporter digest --workspace . --week 2026-W26.

A week already published with the same inputs (papers, watchlist,
criteria, prior weeks, settings) is left as it is, so re-running a catch-up
that was killed finishes it; a week published with other inputs is refused
(the message names the week and what changed) unless --force.

With a criteria judge ([digest.judge], docs/digest.md) the criteria axis
comes from the answers `reporter judge --run` recorded; nothing is sent
here. A week with papers not judged yet is refused, naming the count and
the command to run, unless --keyword-fallback.

Exit status: 0 whatever the decisions; 2 for bad input (the message names
the file, the line and what to fix), a week already published with other
inputs (without --force), or a week with papers the judge has not answered
(without --keyword-fallback). Nothing is written unless every week given could
be decided.
"""


def register(subparsers: Any) -> None:
    """Add the `digest` command."""
    p = subparsers.add_parser(
        "digest", help="decide a week's papers (KEEP / REVIEW / DROP) and write decisions.json",
        description="Score every paper of an ISO week on three axes (watchlist match, criteria fit, "
                    "novelty against the four weeks before), decide KEEP / REVIEW / DROP with a "
                    "rationale each, and publish DIR/YYYY-Www/decisions.json (docs/digest.md).",
        epilog=DIGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--papers", type=Path, metavar="PATH",
                   help="a records file or a folder of them, of any dates (each paper decided in the week it "
                        "is first listed in)")
    p.add_argument("--watchlist", type=Path, metavar="PATH", help="watchlist: one phrase a line (TAB weight)")
    p.add_argument("--criteria", type=Path, metavar="PATH", help="the relevance-criteria Markdown document")
    p.add_argument("--archive", type=Path, metavar="DIR", help="the digest archive: a folder per ISO week")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="take these from [digest] of DIR/reporter.toml (default: this folder's, when it has one and "
                        "the four paths are not all given)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--week", metavar="YYYY-Www", help="the one ISO week to decide")
    which.add_argument("--from", dest="first", metavar="YYYY-Www",
                       help="catch-up of several weeks: the first week to decide; with --to")
    p.add_argument("--to", dest="last", metavar="YYYY-Www", help="catch-up: the last week, included")
    p.add_argument("--max-kept", type=int, metavar="N",
                   help=f"the most KEEPs a week may have (default {DEFAULT_MAX_KEPT}; the rest become REVIEW)")
    p.add_argument("--full-ranking", action="store_true",
                   help="print every paper ranked by score, not just the counts")
    p.add_argument("--no-prior", action="store_true",
                   help="judge novelty against nothing (no earlier week's KEEPs): a sanity check of the watchlist")
    p.add_argument("--force", action="store_true",
                   help="re-publish a week that exists, keeping the old decisions.json beside the new one")
    p.add_argument("--keyword-fallback", action="store_true",
                   help="with a criteria judge: decide papers it has not answered yet by the keyword rule (tagged "
                        "judge-missing) instead of refusing the week")
    p.add_argument("--topic", metavar="NAME", default=DEFAULT_TOPIC,
                   help=f"decide a topic of the workspace ([digest.topics.NAME]: its watchlist, criteria, cap and "
                        f"archive; default {DEFAULT_TOPIC!r}, the [digest] table's own)")
    p.add_argument("--json", action="store_true", help="print each week's path and calibration as a JSON line")
    p.set_defaults(func=run_digest)


def settings_from(args: argparse.Namespace) -> DigestSettings:
    """The [digest] table of --workspace (if any) with the flags on top; every path must be known.

    Without --workspace, the current folder's reporter.toml when it has one and the four paths are not all
    given as flags (`find_workspace`, as every command finds it); `args.workspace` is then that folder.
    """
    from ..config import START_HINT, load_workspace  # every stage's settings: loaded by a run, never by `--help`

    args.workspace = find_workspace(args.workspace, inputs_given=all(
        (args.papers, args.watchlist, args.criteria, args.archive)))
    base = None
    if args.workspace is not None:
        base = database_passwords(load_workspace(args.workspace), os.environ).digest
        if base is None and not all((args.papers, args.watchlist, args.criteria, args.archive)):
            raise InputError(f"{args.workspace}: reporter.toml has no [digest] table; add one (papers, watchlist, "
                             f"criteria, archive) or give --papers, --watchlist, --criteria and --archive")
        if base is not None:
            base = base.topic(args.topic)
    flags = {"papers": args.papers, "watchlist": args.watchlist, "criteria": args.criteria,
             "archive": args.archive, "max_kept": args.max_kept}
    if base is None and args.topic != DEFAULT_TOPIC:
        raise InputError(f"--topic {args.topic!r}: topics are tables of a workspace's [digest] ([digest.topics.NAME]); "
                         f"give --workspace DIR")
    if base is None:
        missing = [f"--{k}" for k in ("papers", "watchlist", "criteria", "archive") if flags[k] is None]
        if missing:
            raise InputError(f"give {', '.join(missing)} (or --workspace DIR with a [digest] table; none here): "
                             f"{START_HINT}")
        base = DigestSettings(papers=args.papers, watchlist=args.watchlist, criteria=args.criteria,
                              archive=args.archive)
    settings = replace(base, **{k: v for k, v in flags.items() if v is not None})
    if settings.max_kept < 1:
        raise InputError(f"--max-kept must be 1 or more, not {settings.max_kept}")
    return settings


def run_digest(args: argparse.Namespace) -> int:
    """Decide the week(s), publish them, print the counts (or JSON lines)."""
    from ..digest.weeks import run_weeks  # the digest (numpy, Arrow, the model): loaded by a run, not by `--help`
    from ..runs import start_command_run, state_of

    settings = settings_from(args)
    if args.first is not None:
        if args.last is None:
            raise InputError("--from needs --to (the last week of the catch-up, included)")
        weeks = week_range(parse_week(args.first, "--from"), parse_week(args.last, "--to"))
    else:
        if args.last is not None:
            raise InputError("--to goes with --from (a catch-up); for one week give --week alone")
        weeks = [parse_week(args.week)]
    progress = Progress("digest", total=len(weeks), unit="weeks", enabled=len(weeks) > 1)
    record = (start_command_run(args, state_of(args.workspace), os.environ)
              if args.workspace is not None else None)  # a run without a workspace has no state folder
    published = run_weeks(settings, weeks, prior_override=[] if args.no_prior else None, force=args.force,
                          keyword_fallback=args.keyword_fallback, on_published=lambda _: progress.advance(1),
                          record=record)
    progress.close()
    for result in published:
        print(canonical_json(_json_line(result, args.full_ranking)) if args.json else _summary(result))
        if args.full_ranking and not args.json:
            print(_ranking_table(result))
    return 0


def ranking(result: WeekResult) -> list[dict[str, Any]]:
    """Every paper by score (high first), then the order within a score (the blend of relevance and similarity;
    relevance without meaning), then id: the full ranked list of pattern C."""
    from ..digest.decide import rank_key

    ranked = sorted(result.outcome.decisions, key=rank_key)
    return [{"rank": k, "id": d.id, "decision": d.decision, "score": d.score, "relevance": d.relevance,
             "similarity": d.similarity, "title": d.title} for k, d in enumerate(ranked, 1)]


def _json_line(result: WeekResult, full: bool) -> dict[str, Any]:
    out = {"week": result.week, "path": str(result.path), "calibration": result.outcome.calibration.to_json(),
           "superseded": None if result.superseded is None else str(result.superseded),
           "unchanged": result.unchanged, "listed_again": len(result.listed_again)}
    if full:
        out["ranking"] = ranking(result)
    return out


def _summary(result: WeekResult) -> str:
    c = result.outcome.calibration
    extra = [f"{c.force_dropped_already_covered} already covered", f"{c.demoted_for_cap} demoted for the cap"]
    if c.stricter_pass_applied:
        extra.append("stricter pass applied")
    if result.listed_again:
        extra.append(f"{len(result.listed_again)} listed again")
    line = (f"{result.week}: {c.kept} kept, {c.review} review, {c.dropped} dropped ({', '.join(extra)}) "
            f"-> {result.path}")
    if result.superseded is not None:
        line += f" (old version kept as {result.superseded.name})"
    if result.unchanged:
        line += " (already published with the same inputs: left as it was)"
    return line


def _relevance(value: float | None) -> str:
    """A relevance for the ranking table, 4 decimals, right-aligned ("-" for a week of rules digest.1)."""
    return f"{'-' if value is None else f'{value:.4f}':>9}"


def _ranking_table(result: WeekResult) -> str:
    rows = [f"  {r['rank']:>4}  {r['score']:>3}  {_relevance(r['relevance'])}  {r['decision']:<6}  {r['id']}  "
            f"{_one_line(r['title'])}"
            for r in ranking(result)]
    return "\n".join(rows)


def _one_line(text: str) -> str:
    return json.dumps(" ".join(text.split()), ensure_ascii=False)[1:-1][:100]
