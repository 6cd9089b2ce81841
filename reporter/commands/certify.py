"""`reporter certify`: draw a stratum's sample as a sheet (`--out`), or make a labelled sheet a certificate (`--sheet`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import database_passwords
from ..errors import InputError
from ..files import check_output_file
from ..plurals import count

EPILOG = """\
examples (in the example workspace, the repository, after `reporter build`):
  reporter certify --workspace . --pile discard --n 40 --out state/discard-sheet.csv
  reporter certify --workspace . --sheet state/discard-sheet.csv --json

The first draws a uniform sample of 40 works of the newest release's discard
pile (the 40 with the smallest seeded hash of their id) into a sheet to label
in a spreadsheet: the label column takes include, exclude or unsure. The
second checks the sheet is exactly that sample and writes the certificate
(state/certify/<release>/discard.json): at most how many of the pile's works
are relevant, at 95% confidence, exactly (hypergeometric). A sheet not yet
fully labelled gives a partial certificate.

Strata: a pile (--pile discard), a rule's wins in it (--pile discard --rule
ID), a rule's domain misses (--pile domain-misses --rule ID), or what the
screen discarded in its current generation (--pile screen:discarded,
--pile screen_cheap:discarded). For the next release, --from OLD.csv copies
the labels of every work both samples share. docs/certify.md says what the
bound means and what it does not.
"""


def register(sub: Any) -> None:
    """Add `certify`."""
    p = sub.add_parser(
        "certify", help="sample a discard pile into a sheet to label, and bound how many relevant works it holds",
        description="Draw a seeded uniform sample of a stratum of a release into a sheet (--pile, --n, --out), "
                    "or read a labelled sheet back and certify, exactly, at most how many relevant works the "
                    "stratum holds (--sheet).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="a folder with reporter.toml (default .)")
    p.add_argument("--pile", metavar="NAME",
                   help="the stratum: a pile of the release, domain-misses (with --rule), screen:discarded or "
                        "screen_cheap:discarded")
    p.add_argument("--rule", metavar="ID", help="with a pile: the rule's wins in it; with domain-misses: its misses")
    p.add_argument("--n", type=int, metavar="N", help="the sample size (all the stratum's works when it holds fewer)")
    p.add_argument("--seed", type=int, metavar="S", help="the sample's seed (default: sample_seed in reporter.toml, 0)")
    p.add_argument("--out", type=Path, metavar="SHEET.csv", help="the sheet to write")
    p.add_argument("--release", metavar="ID",
                   help="a release: its folder, id, a unique prefix of 6 or more characters, or its label "
                        "(default: the newest)")
    p.add_argument("--from", dest="old", type=Path, metavar="OLD.csv",
                   help="copy the labels of every work this sample shares with an older sheet")
    p.add_argument("--sheet", type=Path, metavar="SHEET.csv", help="certify this labelled sheet")
    p.add_argument("--confidence", metavar="C", default=None,
                   help="with --sheet: the confidence of the bound (default: [certify] confidence, 0.95)")
    p.add_argument("--found", type=int, metavar="N",
                   help="with --sheet or --plan: the relevant works the screen found (handed on), for the recall "
                        "bound (default: the workspace's labels of the admitted works)")
    p.add_argument("--plan", action="store_true",
                   help="with --pile: the smallest sample that would meet [certify]'s target if it holds 0, 1 or 2 "
                        "relevant works")
    p.add_argument("--labeller", metavar="NAME", help="with --sheet: who labelled the sheet (on the certificate)")
    p.add_argument("--reseed", metavar="REASON",
                   help="draw the stratum with a new seed (derived, or --seed S), for this reason, shown on the "
                        "certificate")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_certify_command)


DRAW_FLAGS = ("pile", "rule", "n", "seed", "out", "release", "old", "reseed")
SHEET_FLAGS = ("confidence", "labeller")


def run_certify_command(args: argparse.Namespace) -> int:
    """Draw a sheet, or certify one."""
    def given(names: tuple[str, ...]) -> list[str]:
        return [f"--{'from' if n == 'old' else n}" for n in names if getattr(args, n) is not None]

    if args.plan:
        extra = given(("n", "seed", "out", "old", "reseed", "sheet", "confidence", "labeller"))
        if extra or args.pile is None:
            raise InputError(f"--plan goes with --pile (and --rule, --release, --found, --json) alone"
                             f"{', not ' + ', '.join(extra) if extra else ''}")
        return _plan(args)
    if args.sheet is not None:
        if given(DRAW_FLAGS):
            raise InputError(f"{', '.join(given(DRAW_FLAGS))}: the sheet says its release, stratum, seed and n; "
                             f"give --sheet alone (with --confidence, --json)")
        return _certify(args)
    if given(SHEET_FLAGS) or args.found is not None:
        raise InputError(f"{', '.join(given(SHEET_FLAGS + ('found',)))} goes with --sheet (a sheet is drawn "
                         f"unlabelled)")
    missing = [f"--{n}" for n in ("pile", "n", "out") if getattr(args, n) is None]
    if missing:
        raise InputError(f"give {', '.join(missing)} to draw a sheet (reporter certify --pile discard --n 400 "
                         f"--out sheet.csv), or --sheet SHEET.csv to certify one")
    return _draw(args)


def _draw(args: argparse.Namespace) -> int:
    from ..pool.reader import open_table
    from ..progress import Progress
    from ..routing.published import find_release
    from ..certify.sample import draw_sheet
    from ..certify.sheet import read_sheet
    from ..certify.strata import stratum_named, stratum_works
    from ..certify.results import MAX_COUNT, MAX_SEED
    if not 1 <= args.n <= MAX_COUNT:
        raise InputError(f"--n {args.n}: the sample size must be a whole number from 1 to {MAX_COUNT}")
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        raise InputError(f"--seed {args.seed}: must be a whole number from 0 to {MAX_SEED} (the sample's hash is "
                         f"64-bit: a larger seed, or a negative one, would draw the sample of another)")
    check_output_file(args.out, "--out")
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    ws.routing("reporter certify")  # a digest-only workspace has no release to certify
    stratum = stratum_named(args.pile, args.rule)
    old = read_sheet(args.old, "--from") if args.old is not None else None
    release_dir = find_release(ws.releases, args.release)
    works = stratum_works(ws, release_dir, stratum)
    if not works.work_ids:
        raise InputError(f"{stratum.name}: release {works.release_id[:12]} holds no work in it, so there is nothing "
                         f"to sample or certify")
    from ..certify.certificate import state_dir
    from ..certify.registry import Draw, check_seed, read_draws, record_draw, seed_for
    state = state_dir(ws.root)
    draws = read_draws(state, works.release_id)
    seed = seed_for(draws, works.release_id, stratum.name, args.reseed) if args.seed is None else args.seed
    check_seed(draws, stratum.name, seed, args.reseed)
    bar = Progress("certify: the sample's text from the pool", total=open_table(ws.pool, "pool").num_rows,
                   enabled=not args.json or sys.stderr.isatty())
    try:
        drawn = draw_sheet(ws, release_dir, works, n=args.n, seed=seed, out=args.out, old=old, progress=bar)
    finally:
        bar.close()
    record_draw(state, works.release_id, Draw(
        stratum=stratum.name, seed=seed, n=args.n, drawn_by=who(os.environ), drawn_at=now(), out=str(args.out),
        seed_from="derived" if args.seed is None else "--seed", reseed=args.reseed))
    result = {"release": works.release_id, "stratum": stratum.name, "N": len(works.work_ids),
              "n": args.n, "n_drawn": len(drawn.sample), "seed": seed, "out": str(args.out),
              "carried_over": drawn.carried if old is not None else None}
    if args.json:
        print(json.dumps(result, sort_keys=True, ensure_ascii=False))
        return 0
    print(f"release {works.release_id[:12]}, stratum {stratum.name}: {count(len(works.work_ids), 'work')}; "
          f"sampled {len(drawn.sample):,} (seed {seed}) -> {args.out}")
    if old is not None:
        print(f"carried over {count(drawn.carried, 'label')} from {args.old} (it labels {len(old.labels()):,} of "
              f"its {count(len(old.rows), 'row')}); {count(len(drawn.sample) - drawn.carried, 'row')} left to label")
    return 0


def who(environ: Any) -> str:
    """Who runs the command: the login name the environment gives, else `unknown`."""
    return environ.get("USER") or environ.get("LOGNAME") or environ.get("USERNAME") or "unknown"


def now() -> str:
    """The time now (UTC, seconds; SOURCE_DATE_EPOCH's when set), as a certificate and the registry record it."""
    from ..clock import run_clock
    return run_clock(os.environ)().replace(microsecond=0).isoformat()


def _plan(args: argparse.Namespace) -> int:
    from ..certify.plan import found_now, make_plan
    from ..certify.strata import stratum_named, stratum_works
    from ..routing.published import find_release
    if args.found is not None and args.found < 0:
        raise InputError(f"--found {args.found}: the relevant works found must be a whole number, 0 or more")
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = load_workspace(args.workspace)
    ws.routing("reporter certify")
    release_dir = find_release(ws.releases, args.release)
    works = stratum_works(ws, release_dir, stratum_named(args.pile, args.rule))
    plan = make_plan(ws, works, found_now(ws, release_dir, args.found))
    if args.json:
        print(json.dumps(plan.to_json(), sort_keys=True, ensure_ascii=False))
        return 0
    target = " and ".join(t for t in (
        f"recall at least {plan.min_recall} ({plan.found:,} found)" if plan.min_recall is not None else "",
        f"at most {plan.max_missed_fraction} of the stratum relevant" if plan.max_missed_fraction is not None else "")
        if t)
    print(f"release {works.release_id[:12]}, stratum {works.stratum.name}: {count(plan.N, 'work')}; target: "
          f"{target}, at {plan.confidence}")
    for k, n in plan.n_for_k.items():
        print(f"  {k} relevant in the sample: " + ("no sample size meets it" if n is None else f"n = {n:,}"))
    return 0


def _certify(args: argparse.Namespace) -> int:
    from ..certify.certificate import certify, state_dir
    from ..certify.results import floor_percent, percent, write_certificate
    from ..certify.sheet import read_sheet
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    ws.routing("reporter certify")
    sheet = read_sheet(args.sheet)
    if args.labeller is not None and not args.labeller.strip():
        raise InputError("--labeller: give the name of who labelled the sheet")
    made = certify(ws, sheet, ws.certify.confidence if args.confidence is None else args.confidence,
                   found=args.found, labeller=args.labeller, now=now())
    written = write_certificate(state_dir(ws.root), made)
    cert, path = written.certificate, written.path
    from ..runs import settings_json, start_command_run, state_of
    run = start_command_run(args, state_of(ws.root), os.environ)
    run.write("certify", "done", inputs=[run.ref("sheet", args.sheet)], outputs=[run.ref("certificate", path)],
              settings={**settings_json(ws.certify), "confidence": args.confidence, "release": cert.release,
                        "stratum": cert.stratum, "strata": cert.strata, "found": args.found,
                        "labeller": cert.labeller, "seed": cert.seed, "reseed": cert.reseed,
                        "certificate": cert.id, "supersedes": cert.supersedes},
              counts={"drawn": cert.n_drawn, "labelled": cert.n_labelled, "admitted_relevant": cert.admitted_relevant,
                      "relevant": cert.k_relevant, "max_relevant": cert.max_relevant, "found": cert.found,
                      "rescued": len(cert.rescued)})
    meets, words = cert.standing(ws.certify)
    if args.json:
        print(json.dumps({**cert.to_json(), "meets_target": meets, "standing": words, "state_file": str(path),
                          "current": written.current}, sort_keys=True, ensure_ascii=False))
        return 0
    print(f"release {cert.release[:12]}, stratum {cert.stratum}")
    print(f"  {cert.summary}")
    if cert.partial:
        how = ("the first rows, in sheet order: as valid as a sample of that size" if cert.labelled_prefix else
               "not the first rows: valid only if which rows were labelled has nothing to do with relevance")
        print(f"  partial: {cert.n_labelled:,} of {count(cert.n_drawn, 'row')} labelled ({how})")
    print(f"  {words}")
    if cert.recall_low is not None:
        print(f"  recall against this stratum's losses: at least {percent(cert.recall_low)} "
              f"({cert.admitted_relevant:,} labelled includes admitted by the screen)")
    if cert.recall_lower_bound is not None:
        print(f"  recall: at least {floor_percent(cert.recall_lower_bound)} ({cert.found:,} relevant works found, "
              f"{cert.k_relevant:,} of them rescued from this sample; at most "
              f"{cert.max_relevant - cert.k_relevant:,} missed)")
    if cert.min_recall is not None:
        print(f"  {cert.recall_standing()[1]}")
    if cert.rescued:
        print(f"  {count(len(cert.rescued), 'relevant work')} of the sample join the hand-off (reporter export, "
              f"rescued_by_certificate {cert.id[:12]})")
    print(f"  certificate {cert.id[:12]} -> {path}")
    if written.beside is not None:
        print(f"  partial: kept beside the complete certificate {written.beside.id[:12]}, which stays the "
              f"stratum's certificate (a partial one never supersedes a complete one)")
    elif cert.supersedes is not None:
        print(f"  supersedes certificate {cert.supersedes[:12]} (kept, readable)")
    return 0
