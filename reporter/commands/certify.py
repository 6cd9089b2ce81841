"""`reporter certify`: draw a stratum's sample as a sheet (`--out`), or make a labelled sheet a certificate (`--sheet`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..config import load_workspace
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
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_certify_command)


DRAW_FLAGS = ("pile", "rule", "n", "seed", "out", "release", "old")
SHEET_FLAGS = ("confidence",)


def run_certify_command(args: argparse.Namespace) -> int:
    """Draw a sheet, or certify one."""
    def given(names: tuple[str, ...]) -> list[str]:
        return [f"--{'from' if n == 'old' else n}" for n in names if getattr(args, n) is not None]

    if args.sheet is not None:
        if given(DRAW_FLAGS):
            raise InputError(f"{', '.join(given(DRAW_FLAGS))}: the sheet says its release, stratum, seed and n; "
                             f"give --sheet alone (with --confidence, --json)")
        return _certify(args)
    if given(SHEET_FLAGS):
        raise InputError("--confidence goes with --sheet (a sheet is drawn unlabelled)")
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
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    ws.routing("reporter certify")  # a digest-only workspace has no release to certify
    if args.seed is None and not 0 <= ws.sample_seed <= MAX_SEED:
        raise InputError(f"{ws.file}: sample_seed {ws.sample_seed} must be a whole number from 0 to {MAX_SEED} "
                         f"(or give --seed)")
    stratum = stratum_named(args.pile, args.rule)
    old = read_sheet(args.old, "--from") if args.old is not None else None
    release_dir = find_release(ws.releases, args.release)
    works = stratum_works(ws, release_dir, stratum)
    if not works.work_ids:
        raise InputError(f"{stratum.name}: release {works.release_id[:12]} holds no work in it, so there is nothing "
                         f"to sample or certify")
    seed = ws.sample_seed if args.seed is None else args.seed
    bar = Progress("certify: the sample's text from the pool", total=open_table(ws.pool, "pool").num_rows,
                   enabled=not args.json or sys.stderr.isatty())
    try:
        drawn = draw_sheet(ws, release_dir, works, n=args.n, seed=seed, out=args.out, old=old, progress=bar)
    finally:
        bar.close()
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


def _certify(args: argparse.Namespace) -> int:
    from ..certify.certificate import certify, state_dir
    from ..certify.results import percent, write_certificate
    from ..certify.sheet import read_sheet
    ws = database_passwords(load_workspace(args.workspace), os.environ)
    ws.routing("reporter certify")
    sheet = read_sheet(args.sheet)
    cert = certify(ws, sheet, ws.certify.confidence if args.confidence is None else args.confidence)
    path = write_certificate(state_dir(ws.root), cert)
    from ..runs import settings_json, start_command_run, state_of
    run = start_command_run(args, state_of(ws.root), os.environ)
    run.write("certify", "done", inputs=[run.ref("sheet", args.sheet)], outputs=[run.ref("certificate", path)],
              settings={**settings_json(ws.certify), "confidence": args.confidence, "release": cert.release,
                        "stratum": cert.stratum},
              counts={"drawn": cert.n_drawn, "labelled": cert.n_labelled, "admitted_relevant": cert.admitted_relevant})
    meets, words = cert.standing(ws.certify)
    if args.json:
        print(json.dumps({**cert.to_json(), "meets_target": meets, "standing": words, "state_file": str(path)},
                         sort_keys=True, ensure_ascii=False))
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
    print(f"  certificate -> {path}")
    return 0
