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
   watchlist and criteria of tests/fixtures/digest/lm-evaluation, as a user
   runs it: `reporter digest --workspace W --from FIRST --to LAST` and
   `reporter build --keyword-fallback` in a digest-only workspace (a fresh
   archive each run), each a whole process, against its floor measured the
   same way (bench/measure.py): a process on one core that reads the same
   listing files and json-parses every line once. CPU and wall seconds, the
   ratios, and the peak memory of each process tree; floor and commands
   alternate `--repeat` times. `--tree DIR` runs the commands of another
   checkout (a before/after comparison in one run).

Titles are real: arXiv, SYNERGY and ASReview titles from ../shared/data; the
prior is made 100,000 long by seeded word swaps of them (realistic lengths and
vocabulary), and 1% of the week's titles are near-copies of prior titles so
the matching path is exercised.

    .venv/bin/python bench/digest.py [--week 10000] [--prior 100000] [--loop-titles 20]
    .venv/bin/python bench/digest.py --skip-fuzzy --repeat 2 [--tree /tmp/old-checkout] [--no-semantic]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import json
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from reporter.isoweek import week_of, week_start

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import floor_env, floor_process, line, machine, measured, medians, phase_result, ratio  # noqa: E402,I001

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
    from rapidfuzz.distance import Levenshtein

    from reporter.digest.axes import _similar, _title_matches
    from reporter.digest.merge import normalize_title
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


def catch_up_workspace(root: Path, semantic: bool = True) -> list[str]:
    """A digest-only workspace in `root` over the real arXiv listing, one papers file per ISO week; its weeks.
    `semantic`: the embedded model reads every paper (the default of `[digest] semantic`), or not."""
    weeks: dict[str, list[str]] = {}
    for file in sorted((DATA / "arxiv_daily").glob("*.jsonl.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as f:
            for line in f:
                weeks.setdefault(week_of(dt.date.fromisoformat(json.loads(line)["crawl_date"])), []).append(line)
    (root / "papers").mkdir(parents=True)
    for week, lines in weeks.items():
        (root / "papers" / f"{week}.jsonl").write_text("".join(lines), encoding="utf-8")
    (root / "reporter.toml").write_text(
        f'site = "site"\n\n[digest]\npapers = "papers"\nwatchlist = "{FIXTURES / "watchlist.txt"}"\n'
        f'criteria = "{FIXTURES / "criteria.md"}"\narchive = "digests"\n'
        + ("" if semantic else "semantic = false\n"), encoding="utf-8")
    return sorted(weeks, key=week_start)


def phase_floor(papers: Path) -> dict:
    """The floor: read every listing file of the workspace and json-parse each line once, on one core."""
    floor_process()
    rows = 0
    for file in sorted(papers.glob("*.jsonl")):
        with open(file, encoding="utf-8") as f:
            for line in f:
                json.loads(line)
                rows += 1
    return {"rows": rows}


def bench_catch_up(repeat: int, tree: Path, semantic: bool = True) -> None:
    if not sorted((DATA / "arxiv_daily").glob("*.jsonl.gz")):
        print("[catch-up] skipped: ../shared/data/arxiv_daily not found")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "workspace"
        order = catch_up_workspace(root, semantic)
        commands = {"reporter digest": ["digest", "--workspace", str(root), "--from", order[0], "--to", order[-1]],
                    "reporter build --keyword-fallback": ["build", "--workspace", str(root), "--keyword-fallback"]}
        runs: list[dict] = []
        for _ in range(repeat):
            floor = measured([sys.executable, str(Path(__file__).resolve()), "--phase", "floor",
                              "--papers", str(root / "papers")], env=floor_env())
            floor.update(json.loads(floor.pop("stdout").strip().splitlines()[-1]))
            run = {"floor": floor}
            for label, argv in commands.items():
                for stale in ("digests", "site", "state"):
                    shutil.rmtree(root / stale, ignore_errors=True)
                run[label] = measured([sys.executable, "-m", "reporter.cli", *argv], cwd=tree)  # tree's reporter
            runs.append(run)
    print(f"[catch-up] {len(order)} weeks ({order[0]} .. {order[-1]}), {runs[0]['floor']['rows']:,} listing rows, "
          f"digest-only workspace{'' if semantic else ' with semantic = false'}; commands of {tree}")
    print(f"[catch-up] machine: {machine()}")
    for run in runs:
        print(line("floor (1 core, read + parse)", run["floor"]))
        for label in commands:
            x = ratio(run["floor"], run[label])
            print(line(label, run[label]) + f"  ratio CPU {x['cpu']:.1f}, wall {x['wall']:.1f}")
    for label in commands:
        pairs = medians([ratio(r["floor"], r[label]) for r in runs])
        print(f"[catch-up] {label}: median ratio to the floor CPU {pairs['cpu']:.1f}, wall {pairs['wall']:.1f} "
              f"({len(runs)} pair(s))")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--week", type=int, default=10_000)
    p.add_argument("--prior", type=int, default=100_000)
    p.add_argument("--loop-titles", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-catch-up", action="store_true")
    p.add_argument("--skip-fuzzy", action="store_true")
    p.add_argument("--repeat", type=int, default=1, help="floor/command rounds of the catch-up (default 1)")
    p.add_argument("--no-semantic", action="store_true",
                   help="the catch-up's workspace sets [digest] semantic = false (no embedding model)")
    p.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose commands run (default: this one)")
    p.add_argument("--phase", choices=["floor"], help=argparse.SUPPRESS)
    p.add_argument("--papers", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase == "floor":
        phase_result(**phase_floor(args.papers))
        return 0
    if not (DATA / "arxiv_daily").is_dir():
        print(f"{DATA}: the shared data is needed for real titles", file=sys.stderr)
        return 2
    if not args.skip_fuzzy:
        bench_fuzzy(args.week, args.prior, args.loop_titles, args.seed)
    if not args.skip_catch_up:
        bench_catch_up(args.repeat, args.tree.resolve(), semantic=not args.no_semantic)
    return 0


if __name__ == "__main__":
    sys.exit(main())
