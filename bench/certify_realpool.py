"""A certificate of the real pool's discard pile, labelled from SYNERGY's labels, and its carry-over.

The real pool (bench/realpool.py: 42,782 real records 25 times over,
1,069,550 rows) is routed with the example rule book (`specs/`) into a
release; `reporter certify` draws a seeded sample of its `discard` pile;
each sampled work that is a SYNERGY work is labelled from
`synergy_v1_labels_all.csv.gz` (`label_included`, matched on the review and
the OpenAlex id), the arXiv, ASReview and LatteReview records stay
unlabelled; the sheet is certified (a partial certificate: only SYNERGY's
rows have labels). Then the book changes by one rule (`editorial` also
takes a title that says "editorial" or "commentary" anywhere, so works enter
the pile, and some rank below sampled ones) and a second release is routed;
its sheet is drawn with `--from` the first, and the labels carried over are
counted.

    .venv/bin/python bench/certify_realpool.py              # n = 400, seed 0
    .venv/bin/python bench/certify_realpool.py --n 2000 --copies 5

Everything goes into a fresh folder under bench/.cache/ (removed at the end
unless --keep).
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from realpool import CACHE, DATA, real_pool  # noqa: E402

ROOT = HERE.parent
AS_OF = dt.date(2026, 7, 6)


def record_labels(copies: int) -> tuple[int, dict[int, str]]:
    """(records per copy, record index -> include/exclude) for the SYNERGY works of the real pool.

    The pool holds real_records() in order: the arXiv rows, then SYNERGY's works file line by line, then
    ASReview and LatteReview; row i of copy c is `real:c-i`.
    """
    from realpool import real_records
    records = len(real_records())
    with gzip.open(next((DATA / "arxiv_daily").glob("*.jsonl.gz")), "rt", encoding="utf-8") as f:
        first = sum(1 for _ in f)
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_labels_all.csv.gz", "rt", encoding="utf-8", newline="") as f:
        given = {(r["dataset"], r["openalex_id"]): r["label_included"] for r in csv.DictReader(f)}
    out = {}
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            work = json.loads(line)
            found = given.get((work["dataset"], work["openalex_id"]))
            if found is not None:
                out[first + i] = "include" if found == "1" else "exclude"
    return records, out


def labels_for(ids, per_copy: int, labels: dict[int, str]) -> dict[str, str]:
    """work_id -> label for the pool's works that are labelled SYNERGY works."""
    out = {}
    for work_id in ids:
        index = int(work_id.rsplit("-", 1)[1])
        if index in labels:
            out[work_id] = labels[index]
    return out


def reporter(*args) -> tuple[int, str, float]:
    """`reporter ARGS` in this process: (exit code, stdout, seconds)."""
    from reporter.cli import main
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main([str(a) for a in args])
    return code, out.getvalue(), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Certify the real pool's discard pile from SYNERGY's labels.")
    parser.add_argument("--copies", type=int, default=25, help="copies of the real records (default 25)")
    parser.add_argument("--n", type=int, default=400, help="sample size (default 400)")
    parser.add_argument("--seed", type=int, default=0, help="sample seed (default 0)")
    parser.add_argument("--keep", action="store_true", help="keep the workspace under bench/.cache/")
    args = parser.parse_args(argv)

    from reporter.certify.sheet import fill_labels, read_sheet
    from reporter.routing.release import route_release

    pool = real_pool(args.copies)
    CACHE.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="certify-", dir=CACHE))
    try:
        shutil.copytree(ROOT / "specs", ws / "specs")
        (ws / "reporter.toml").write_text(f'pool = "{pool}"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n')
        per_copy, synergy = record_labels(args.copies)
        print(f"pool {pool.name}: {per_copy * args.copies:,} rows; {len(synergy):,} SYNERGY records labelled "
              f"({sum(v == 'include' for v in synergy.values()):,} included), {args.copies} copies each")

        start = time.perf_counter()
        first = route_release(pool, ws / "specs", ws / "releases", progress=False, as_of=AS_OF)
        print(f"release 1 {first.release_id[:12]}: routed in {time.perf_counter() - start:.1f} s; "
              f"discard {first.piles['discard']:,}")

        sheet1 = ws / "discard-1.csv"
        code, out, took = reporter("certify", "--workspace", ws, "--pile", "discard", "--n", args.n,
                                   "--seed", args.seed, "--out", sheet1)
        assert code == 0, out
        print(f"drew the sheet in {took:.1f} s: {out.strip()}")
        drawn = [r.work_id for r in read_sheet(sheet1).rows]
        filled = fill_labels(sheet1, labels_for(drawn, per_copy, synergy))
        code, out, took = reporter("certify", "--workspace", ws, "--sheet", sheet1, "--json")
        assert code == 0, out
        one = json.loads(out)
        print(f"certified in {took:.1f} s ({filled} SYNERGY rows labelled):")
        show(one)

        import polars as pl
        routing = pl.read_parquet(first.release_dir / "routing.parquet", columns=["work_id", "pile"])
        pile = routing.filter(pl.col("pile") == "discard")["work_id"].to_list()
        known = labels_for(pile, per_copy, synergy)
        print(f"  the truth of the pile's labelled part: {len(known):,} of its {len(pile):,} works are labelled "
              f"SYNERGY works, {sum(v == 'include' for v in known.values()):,} of them included")

        change_one_rule(ws / "specs" / "rules" / "20-notices.json")
        start = time.perf_counter()
        second = route_release(pool, ws / "specs", ws / "releases", progress=False, as_of=AS_OF)
        print(f"release 2 {second.release_id[:12]} (editorial also takes 'editorial', 'commentary' anywhere): routed in "
              f"{time.perf_counter() - start:.1f} s; discard {second.piles['discard']:,} "
              f"({second.piles['discard'] - first.piles['discard']:+,})")
        sheet2 = ws / "discard-2.csv"
        code, out, took = reporter("certify", "--workspace", ws, "--pile", "discard", "--n", args.n,
                                   "--seed", args.seed, "--out", sheet2, "--from", sheet1)
        assert code == 0, out
        print(f"drew the second sheet in {took:.1f} s: {' '.join(out.split())}")
        rows2 = read_sheet(sheet2).rows
        kept = len({r.work_id for r in rows2} & set(drawn))
        print(f"  {kept} of the {len(drawn)} sampled works are in the second sample too; "
              f"{len(rows2) - kept} are new to it")
        filled = fill_labels(sheet2, labels_for([r.work_id for r in rows2], per_copy, synergy))
        code, out, _ = reporter("certify", "--workspace", ws, "--sheet", sheet2, "--json")
        assert code == 0, out
        print(f"  {filled} new SYNERGY rows labelled; the second certificate:")
        show(json.loads(out))
    finally:
        if args.keep:
            print(f"workspace kept: {ws}")
        else:
            shutil.rmtree(ws, ignore_errors=True)
    return 0


def change_one_rule(path: Path) -> None:
    """`editorial` also takes a title saying "editorial" or "commentary" anywhere (not only at its start)."""
    rules = json.loads(path.read_text())
    rule = next(r for r in rules if r["id"] == "editorial")
    rule["match"]["any"].append({"field": "title", "any_phrase": ["editorial", "commentary"]})
    path.write_text(json.dumps(rules, indent=2, ensure_ascii=False))


def show(cert: dict) -> None:
    print(f"  N {cert['N']:,}, n_drawn {cert['n_drawn']}, n_labelled {cert['n_labelled']}, "
          f"k_relevant {cert['k_relevant']}, confidence {cert['confidence']}: max_relevant {cert['max_relevant']:,} "
          f"(max_missed_fraction {cert['max_missed_fraction']:.4f}), partial {cert['partial']}, "
          f"labelled_prefix {cert['labelled_prefix']}")


if __name__ == "__main__":
    sys.exit(main())
