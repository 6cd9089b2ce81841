"""One joint sample of everything discarded against per-rule certificates of the same labels, and the plan.

The real pool (bench/realpool.py: the real records, `--copies` times over)
is routed with the example rule book (`specs/`). The review is SYNERGY's
van_der_Valk_2021 (`--review`): a work is relevant when it is one of that
review's included records (`label_included` in synergy_v1_works.jsonl.gz),
so every work of the pool has a label (the other records are not this
review's). Only the first copy's records can be relevant: the other copies
stand in for a larger pool, not for more relevant works (so the review keeps
its 89 includes while the pile grows). `found` is the review's includes that
routing did not discard (a perfect screen after routing).

1. `reporter certify --pile discarded --n N`: one seeded sample of the joint
   stratum, labelled, certified with `--found`: its bound and recall bound.
2. The same labels as per-rule certificates: for each rule that won works
   into the discard pile, `--pile discard --rule R --seed S` with n = the
   joint sample's works of that rule (bottom-k with one seed: the joint
   sample's works in a rule's wins are that stratum's bottom-m sample), each
   certified; then combined as the hand-off's gate does (Bonferroni,
   `reporter.certify.results.joint_statement`), beside the invalid naive sum
   at 95% each and its true joint confidence.
3. `reporter certify --plan --pile discarded --found F --json` with
   `[certify] min_recall = 0.95`.

    .venv/bin/python bench/certify_joint.py                 # 1 copy, n = 180
    .venv/bin/python bench/certify_joint.py --copies 25 --n 400
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import gzip
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from realpool import CACHE, DATA, real_pool, real_records  # noqa: E402

ROOT = HERE.parent


def relevant_indices(review: str) -> tuple[set[int], int]:
    """Record indices (within one copy) of the review's included works, and the review's record count."""
    with gzip.open(next((DATA / "arxiv_daily").glob("*.jsonl.gz")), "rt", encoding="utf-8") as f:
        first = sum(1 for _ in f)
    out, total = set(), 0
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            work = json.loads(line)
            if work["dataset"] == review:
                total += 1
                if work["label_included"] == 1:
                    out.add(first + i)
    return out, total


def reporter(*args) -> tuple[int, str]:
    from reporter.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def label_sheet(sheet: Path, relevant: set[int]) -> None:
    """Label every row: include when the work is one of the review's includes, else exclude."""
    from reporter.certify.sheet import fill_labels, read_sheet
    rows = read_sheet(sheet).rows
    fill_labels(sheet, {r.work_id: "include" if is_relevant(r.work_id, relevant) else "exclude" for r in rows})


def is_relevant(work_id: str, relevant: set[int]) -> bool:
    """`real:<copy>-<record>`: relevant when of the first copy and one of the review's includes."""
    copy, record = work_id.split(":", 1)[1].rsplit("-", 1)
    return copy == "0" and int(record) in relevant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--n", type=int, default=180)
    parser.add_argument("--review", default="van_der_Valk_2021")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)

    import polars as pl

    from reporter.certify.config import CertifySettings
    from reporter.certify.results import load_certificates, joint_statement, state_dir
    from reporter.routing.release import route_release

    relevant, review_size = relevant_indices(args.review)
    pool = real_pool(args.copies)
    CACHE.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="certify-joint-", dir=CACHE))
    try:
        shutil.copytree(ROOT / "specs", ws / "specs")
        (ws / "reporter.toml").write_text(f'pool = "{pool}"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n'
                                          f'[certify]\nmin_recall = 0.95\n')
        rel = route_release(pool, ws / "specs", ws / "releases", progress=False, as_of=dt.date(2026, 7, 6))
        routing = pl.read_parquet(rel.release_dir / "routing.parquet", columns=["work_id", "pile", "winner"])
        routing = routing.with_columns(relevant=pl.Series([is_relevant(w, relevant) for w in routing["work_id"]]))
        discard = routing.filter(pl.col("pile") == "discard")
        in_pile = int(discard["relevant"].sum())
        found = int(routing["relevant"].sum()) - in_pile
        print(f"pool {len(real_records()) * args.copies:,} rows ({args.copies} copies); review {args.review}: "
              f"{review_size} records, {len(relevant)} included (the first copy's)")
        print(f"discard pile N = {len(discard):,} ({in_pile} of the review's includes in it, the truth); "
              f"found (includes routing did not discard) = {found}")

        joint_sheet = ws / "discarded.csv"
        code, out = reporter("certify", "--workspace", ws, "--pile", "discarded", "--n", args.n, "--out", joint_sheet)
        assert code == 0, out
        label_sheet(joint_sheet, relevant)
        code, out = reporter("certify", "--workspace", ws, "--sheet", joint_sheet, "--found", found, "--json",
                             "--labeller", "bench (SYNERGY labels)")
        assert code == 0, out
        joint = json.loads(out)
        low = joint["recall_lower_bound"]
        print(f"joint sample: seed {joint['seed']}, n {joint['n_labelled']}, k {joint['k_relevant']}: at most "
              f"{joint['max_relevant']:,} relevant at {joint['confidence']:.0%}; recall lower bound "
              f"{low if low is None else round(low, 4)} (found {joint['found']})")

        ids = {r: w for r, w in zip(*(discard[c].to_list() for c in ("work_id", "winner")))}
        from reporter.certify.sheet import read_sheet
        sample = [r.work_id for r in read_sheet(joint_sheet).rows]
        per_rule: dict[str, int] = {}
        for w in sample:
            per_rule[ids[w]] = per_rule.get(ids[w], 0) + 1
        for rule in sorted({w for w in ids.values()}):
            m = per_rule.get(rule, 0)
            sheet = ws / f"rule-{rule}.csv"
            code, out = reporter("certify", "--workspace", ws, "--pile", "discard", "--rule", rule, "--n", max(m, 1),
                                 "--seed", joint["seed"], "--out", sheet)
            assert code == 0, out
            rows = {r.work_id for r in read_sheet(sheet).rows}
            assert m == 0 or rows <= set(sample), f"rule {rule}: not the joint sample's works"
            label_sheet(sheet, relevant)
            code, out = reporter("certify", "--workspace", ws, "--sheet", sheet, "--found", found)
            assert code == 0, out
        certs = tuple(c for c in load_certificates(state_dir(ws), rel.release_id) if c.kind == "wins")
        naive = sum(c.max_relevant for c in certs)
        said = joint_statement(certs, CertifySettings(min_recall=0.95), found)
        print(f"per-rule certificates of the same labels: {len(certs)} rules, n "
              f"{[c.n_labelled for c in certs]}, N {[c.N for c in certs]}")
        print(f"  each at 95%, summed: at most {naive:,} relevant, but jointly that holds at "
              f"{max(0.0, 1 - 0.05 * len(certs)):.0%} only (Bonferroni)")
        print(f"  combined validly (each at {said.each[0]:.4%}): at most {sum(said.bounds):,} relevant at "
              f"{said.confidence:.0%}; recall lower bound "
              f"{None if said.recall_lower_bound is None else round(said.recall_lower_bound, 4)}")
        code, out = reporter("certify", "--workspace", ws, "--plan", "--pile", "discarded", "--found", found, "--json")
        assert code == 0, out
        plan = json.loads(out)
        print(f"plan for {plan['min_recall']:.0%} recall at {plan['confidence']:.0%}: N {plan['N']:,}, found "
              f"{plan['found']}: n_for_k {plan['n_for_k']}")
        n0 = plan["n_for_k"]["0"]
        if n0:
            print(f"  {n0:,} labels ({n0 / plan['N']:.0%} of the pile) if none is relevant")
    finally:
        if args.keep:
            print(f"workspace kept: {ws}")
        else:
            shutil.rmtree(ws, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
