"""Benchmark the digest: the fuzzy novelty step at size, and the real eight-week catch-up.

1. A week of 10,000 titles against 100,000 prior titles, the way Axis 3 does
   it (`reporter.digest.axes._title_matches`: rapidfuzz `process.cdist` with a
   score cutoff on every core, each candidate then decided exactly), beside a
   baseline measured in the same run: the plain loop over
   `Levenshtein.normalized_similarity` that the design describes. The loop is
   timed on `--loop-titles` week titles (a full loop would take hours) and its
   total is extrapolated linearly, which the output says.
2. The catch-up over the arXiv listings of ../shared/data/arxiv_daily (every
   ISO week in order, each week's KEEPs feeding the next one's prior), with the
   watchlist and criteria of tests/fixtures/digest/lm-evaluation: seconds and
   peak memory, beside a baseline of reading and json-parsing the same file.

Titles are real: arXiv, SYNERGY and ASReview titles from ../shared/data; the
prior is made 100,000 long by seeded word swaps of them (realistic lengths and
vocabulary), and 1% of the week's titles are near-copies of prior titles so
the matching path is exercised.

    .venv/bin/python bench/digest.py [--week 10000] [--prior 100000] [--loop-titles 20]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from reporter.digest.axes import _similar, _title_matches
from reporter.digest.config import DigestSettings
from reporter.digest.merge import normalize_title
from reporter.digest.weeks import run_weeks
from reporter.isoweek import week_of, week_start

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
FIXTURES = ROOT / "tests" / "fixtures" / "digest" / "lm-evaluation"


def real_titles() -> list[str]:
    """Every distinct real title in ../shared/data (arXiv listings, SYNERGY works, ASReview sets)."""
    titles: set[str] = set()
    for file in sorted((DATA / "arxiv_daily").glob("*.jsonl.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as f:
            titles.update(json.loads(line)["title"] for line in f)
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        titles.update(t for t in (json.loads(line).get("title") for line in f) if t)
    csv.field_size_limit(sys.maxsize)
    for file in sorted((DATA / "asreview_srd").glob("*.csv.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as f:
            titles.update(r["title"] for r in csv.DictReader(f) if r.get("title"))
    return sorted(t for t in titles if t.strip())


def variant(title: str, rng: random.Random) -> str:
    """Another plausible title: two of its words swapped and one dropped."""
    words = title.split()
    if len(words) > 3:
        i, j = rng.sample(range(len(words)), 2)
        words[i], words[j] = words[j], words[i]
        del words[rng.randrange(len(words))]
    return " ".join(words)


def near_copy(title: str, rng: random.Random) -> str:
    """The same title with one character changed (a matching near-duplicate)."""
    k = rng.randrange(len(title))
    return title[:k] + ("x" if title[k] != "x" else "y") + title[k + 1:]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_fuzzy(week_n: int, prior_n: int, loop_titles: int, seed: int) -> None:
    rng = random.Random(seed)
    pool = real_titles()
    rng.shuffle(pool)
    # The week's titles and the prior's come from disjoint halves of the real titles, as new papers would.
    week_source, prior_source = pool[: len(pool) // 2], pool[len(pool) // 2:]
    prior = [t if i < len(prior_source) else variant(t, rng)
             for i, t in ((i, prior_source[i % len(prior_source)]) for i in range(prior_n))]
    week = [rng.choice(week_source) for _ in range(week_n)]
    for i in rng.sample(range(week_n), week_n // 100):
        week[i] = near_copy(rng.choice(prior), rng)
    print(f"titles: {len(pool):,} real; week {week_n:,}, prior {prior_n:,}")

    start = time.perf_counter()
    found = _title_matches(week, prior)
    ours = time.perf_counter() - start
    matched = sum(x is not None for x in found)
    print(f"[fuzzy] cdist (workers=-1, score cutoff): {ours:.2f} s, {matched:,} of {week_n:,} titles match a prior "
          f"title; peak RSS {peak_mb():,.0f} MB")

    a = [normalize_title(t) for t in week[:loop_titles]]
    b = [normalize_title(t) for t in prior]
    start = time.perf_counter()
    loop_found = []
    for x in a:
        loop_found.append(next((j for j, y in enumerate(b) if Levenshtein.normalized_similarity(x, y) >= 0.89
                                and _similar(x, y)), None))
    loop = time.perf_counter() - start
    assert loop_found == found[:loop_titles], "the loop and cdist disagree"
    total = loop / loop_titles * week_n
    print(f"[fuzzy] baseline plain loop over normalized_similarity: {loop:.2f} s for {loop_titles} titles "
          f"-> {total:,.0f} s extrapolated for {week_n:,} (ratio loop / cdist {total / ours:,.0f}x)")


def bench_catch_up() -> None:
    files = sorted((DATA / "arxiv_daily").glob("*.jsonl.gz"))
    if not files:
        print("[catch-up] skipped: ../shared/data/arxiv_daily not found")
        return
    start = time.perf_counter()
    rows = []
    for file in files:
        with gzip.open(file, "rt", encoding="utf-8") as f:
            rows += [(line, json.loads(line)) for line in f]
    baseline = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        weeks: dict[str, list[str]] = {}
        for line, row in rows:
            weeks.setdefault(week_of(dt.date.fromisoformat(row["crawl_date"])), []).append(line)
        (root / "papers").mkdir()
        for week, lines in weeks.items():
            (root / "papers" / f"{week}.jsonl").write_text("".join(lines), encoding="utf-8")
        settings = DigestSettings(papers=root / "papers", watchlist=FIXTURES / "watchlist.txt",
                                  criteria=FIXTURES / "criteria.md", archive=root / "archive")
        order = sorted(weeks, key=week_start)
        start = time.perf_counter()
        results = run_weeks(settings, order)
        took = time.perf_counter() - start
    print(f"[catch-up] baseline: read and json-parse {len(rows):,} listing rows: {baseline:.2f} s")
    print(f"[catch-up] {len(order)} weeks ({order[0]} .. {order[-1]}), {len(rows):,} rows: {took:.2f} s "
          f"(ratio {took / baseline:.1f}x the baseline); peak RSS {peak_mb():,.0f} MB")
    for r in results:
        c = r.document["calibration"]
        print(f"  {r.week}: kept {c['kept']}, review {c['review']}, dropped {c['dropped']}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--week", type=int, default=10_000)
    p.add_argument("--prior", type=int, default=100_000)
    p.add_argument("--loop-titles", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-catch-up", action="store_true")
    args = p.parse_args()
    if not (DATA / "arxiv_daily").is_dir():
        print(f"{DATA}: the shared data is needed for real titles", file=sys.stderr)
        return 2
    bench_fuzzy(args.week, args.prior, args.loop_titles, args.seed)
    if not args.skip_catch_up:
        bench_catch_up()
    return 0


if __name__ == "__main__":
    sys.exit(main())
