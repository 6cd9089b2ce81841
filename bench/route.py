"""Routing benchmark: `reporter route` as a whole process against the fair floor, in CPU seconds.

Each phase runs as its own process, the way a user runs it, and is measured
in CPU seconds (user + system of every thread and every process it starts),
so that more cores cannot hide a slower path (bench/measure.py, the one way
every bench measures):

- floor: read the pool's `title` and `abstract` with pyarrow in record
  batches and lower-case each once (`pyarrow.compute.utf8_lower`), in a
  fresh interpreter on ONE core, with the settings `reporter route` gives its
  own process (transparent huge pages off, freed memory kept, its
  environment: `measure.floor_process("route")`), so the floor's system time
  no longer swings with the kernel's huge pages (`bench/route.py --phase floor`);
- route: `reporter route --pool P --specs S --out D --json --workers N`
  into a temporary releases folder (pool digest, routing table, statistics
  and samples included), run so that its parent process reports its own CPU:
  the parent's serial share of all the work, which caps what more workers
  gain (Amdahl: 1 / (s + (1 - s) / n), printed for 16 workers).

The two alternate `--repeat` times in one run and the ratio of each pair is
reported with their median, so a busy machine slows both sides of a pair.
`--workers 1,2,4` routes at each count in every repeat (one floor a repeat).
Wall time, rows/s and the peak resident memory of the route's whole process
tree (sampled from /proc) are printed too, as RSS and as PSS: RSS counts the
shared libraries and the pages a forked worker shares with its parent once
per process (about 100 MB a worker before it routes a row), PSS splits them
among the processes, and is the figure for a memory budget at N workers;
the largest PSS any one worker reached is printed beside it.
`--base DIR` routes with a second checkout too (its `reporter` package,
imported from DIR), in the same repeats beside this one: before and after
a change measured in one run against the same floors:

    git archive --prefix=base/ $(git merge-base HEAD main) | tar -x -C /tmp
    .venv/bin/python bench/route.py --real --workers 1,2,4 --repeat 2 --base /tmp/base

Pools:

    .venv/bin/python bench/route.py                         # 200,000 generated rows, bench/rules50
    .venv/bin/python bench/route.py --rows 5000000          # the 5M-row target (54 rules)
    .venv/bin/python bench/route.py --real                  # 1,069,550 real rows (bench/realpool.py)
    .venv/bin/python bench/route.py --real --rules specs --workers 1,2,4 --repeat 2
    .venv/bin/python bench/route.py --pool data/pool.parquet --workers 2 --json

Rule-count scaling: `--extra-rules N` adds N phrase rules to a temporary
copy of the book, each on a phrase drawn from real titles that occurs in at
most 0.2% of them (bench/realpool.py), so an extra rule is as rare as a
real rule's phrase:

    .venv/bin/python bench/route.py --rows 1000000 --rules bench/rules-real --extra-rules 22
    .venv/bin/python bench/route.py --rows 1000000 --rules bench/rules-real --extra-rules 72

(28 + 22 = 50 rules against 28 + 72 = 100.) Without `--pool` the generated
pool is written with `reporter.example` into `bench/.cache/` and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULES = HERE / "rules50"
CACHE = HERE / ".cache"
sys.path.insert(0, str(HERE))

from measure import floor_env, floor_process, line, machine, measured, parent_argv, phase_result, ratio  # noqa: E402


def phase_floor(pool: Path, batch_rows: int) -> dict:
    """The floor: read title and abstract in record batches and lower-case them once, on one core, with the
    process settings `reporter route` gives itself."""
    floor_process("route")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows = text_bytes = 0
    for batch in pq.ParquetFile(pool).iter_batches(batch_size=batch_rows, columns=["title", "abstract"]):
        rows += batch.num_rows
        for column in batch.columns:
            text_bytes += pc.sum(pc.binary_length(pc.utf8_lower(column))).as_py() or 0
    return {"rows": rows, "text_bytes": text_bytes}


def run_floor(pool: Path) -> dict:
    m = measured([sys.executable, str(Path(__file__).resolve()), "--phase", "floor", "--pool", str(pool)],
                 env=floor_env("route"))
    m.update(json.loads(m.pop("stdout").strip().splitlines()[-1]))
    return m


def run_route(pool: Path, rules: Path, workers: int | None, extra: list[str], tree: Path = ROOT) -> dict:
    """`reporter route` of the checkout `tree` (its reporter package is imported from there)."""
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as out:
        argv = ["route", "--pool", str(pool), "--specs", str(rules), "--out", out, "--json", *extra]
        if workers is not None:
            argv += ["--workers", str(workers)]
        m = measured(parent_argv(argv), cwd=tree)
        result = json.loads(m.pop("stdout").strip().splitlines()[-1])
        routing = Path(result["release_dir"]) / "routing.parquet"
        m.update(rows=result["rows"], piles=result["piles"], pending=result["pending"],
                 release_id=result["release_id"], routing_parquet_mb=routing.stat().st_size / 1e6)
    return m


def warm(path: Path) -> None:
    """Read the file once so both phases find it in the page cache."""
    with open(path, "rb") as f:
        while f.read(16 * 1024 * 1024):
            pass


def ensure_pool(rows: int, seed: int) -> Path:
    """The cached generated pool for (rows, seed), generated when absent."""
    from reporter.example import GENERATOR_VERSION, generate_pool

    path = CACHE / f"pool-{rows}-{seed}-v{GENERATOR_VERSION}.parquet"
    if not path.exists():
        print(f"generating {path} ({rows:,} rows, seed {seed}) ...", file=sys.stderr)
        generate_pool(path, rows, seed, progress=True)
    return path


def with_extra_rules(rules: Path, n: int, into: Path, seed: int = 0) -> Path:
    """A copy of the rule book with n more phrase rules, each on a rare phrase drawn from real titles.

    The generator's own phrases (its constructs and outcomes) are what it
    writes into nearly every abstract, so rules built on them match most
    rows: a measure of hit volume, not of rule count. Real titles' 2-3 word
    runs found in at most 0.2% of titles are as rare as a real rule's phrase.
    """
    import shutil

    from realpool import title_phrases
    phrases = title_phrases(n, seed)
    shutil.copytree(rules, into, dirs_exist_ok=True)
    piles = ["hold", "screen", "discard"]
    extra = [{"id": f"x-extra-{i:03d}", "pile": piles[i % 3], "precedence": 10_000 + i,
              "description": f"extra rule {i} for the scaling run", "shadow": i % 5 == 4,
              "match": {"field": "text", "phrase": phrases[i]}} for i in range(n)]
    (into / "rules" / "99-extra.json").write_text(json.dumps(extra, indent=1), encoding="utf-8")
    return into


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the phases, print the comparison."""
    parser = argparse.ArgumentParser(description="Benchmark `reporter route` against reading and lower-casing "
                                                 "the text once, in CPU seconds.",
                                     epilog="Example: .venv/bin/python bench/route.py --rows 5000000")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the generated pool (default 200000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated pool (default 0)")
    parser.add_argument("--pool", type=Path, help="route this pool instead of a generated one")
    parser.add_argument("--real", type=int, nargs="?", const=25, metavar="COPIES",
                        help="route the real records of ../shared/data, COPIES times over (default 25: 1,069,550 rows)")
    parser.add_argument("--rules", type=Path, default=RULES, help="rule book folder (default bench/rules50)")
    parser.add_argument("--workers", type=lambda v: [int(x) for x in v.split(",")],
                        help="reporter route --workers, or a comma-separated list of counts to route at in each "
                             "repeat (default: its own default)")
    parser.add_argument("--extra-rules", type=int, default=0,
                        help="add N rules, each on a rare phrase of real titles, to a temporary copy of the book")
    parser.add_argument("--repeat", type=int, default=1, help="floor/route pairs to run (default 1; the median "
                                                              "ratio is reported)")
    parser.add_argument("--route-arg", action="append", default=[], help="an extra argument for reporter route")
    parser.add_argument("--base", type=Path, metavar="DIR",
                        help="also route with the checkout DIR (e.g. `git archive` of an older commit) in every "
                             "repeat, beside this one: a before/after in one run")
    parser.add_argument("--json", action="store_true", help="print the machine-readable result only")
    parser.add_argument("--phase", choices=["floor"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.phase == "floor":
        phase_result(**phase_floor(args.pool, 32_768))
        return 0

    if args.pool:
        pool = args.pool
    elif args.real:
        from realpool import real_pool
        pool = real_pool(args.real)
    else:
        pool = ensure_pool(args.rows, args.seed)
    from reporter.routing.specs import load_rulebook
    rules = args.rules.resolve()
    if args.extra_rules:
        rules = with_extra_rules(rules, args.extra_rules, Path(tempfile.mkdtemp(prefix="rules-")))
    book = load_rulebook(rules)
    warm(pool)
    counts = args.workers or [None]
    trees = [("", ROOT)] + ([("base ", args.base.resolve())] if args.base else [])
    runs = [(label, tree, n) for label, tree in trees for n in counts]
    floors, routes = [], []  # routes[i][k]: repeat i, run k (runs[k]: tree and worker count)
    for _ in range(args.repeat):
        floors.append(run_floor(pool))
        routes.append([run_route(pool, rules, n, args.route_arg, tree) for _label, tree, n in runs])
    text_mb = floors[0]["text_bytes"] / 1e6
    rows = routes[0][0]["rows"]
    per_count = []
    for k, (label, tree, n) in enumerate(runs):
        pairs = [ratio(f, r[k]) for f, r in zip(floors, routes)]
        shares = [r[k]["serial_share"] for r in routes if "serial_share" in r[k]]
        share = statistics.median(shares) if shares else None
        per_count.append({"tree": str(tree), "label": label, "workers": n, "cpu_ratios": [x["cpu"] for x in pairs],
                          "wall_ratios": [x["wall"] for x in pairs],
                          "cpu_ratio_median": statistics.median(x["cpu"] for x in pairs),
                          "wall_ratio_median": statistics.median(x["wall"] for x in pairs),
                          "serial_share_median": share,
                          "amdahl_16": None if share is None or n == 1 else 1 / (share + (1 - share) / 16),
                          "wall_median_s": statistics.median(r[k]["wall_s"] for r in routes),
                          "peak_rss_mb_max": max(r[k]["peak_rss_mb"] for r in routes),
                          "peak_pss_mb_max": max(r[k].get("peak_pss_mb", 0) for r in routes),
                          "worker_pss_mb_max": max(r[k].get("peak_child_pss_mb", 0) for r in routes)})
    if len(counts) > 1 and counts[0] == 1:
        for k, c in enumerate(per_count):
            c["speedup_vs_1"] = per_count[k - k % len(counts)]["wall_median_s"] / c["wall_median_s"]
    result = {
        "pool": str(pool), "pool_mb": pool.stat().st_size / 1e6, "rows": rows, "text_mb": text_mb,
        "rules": len(book.rules), "shadow_rules": sum(r.shadow for r in book.rules), "workers": counts,
        "cpus": os.cpu_count(), "machine": machine(), "python": platform.python_version(),
        "floor": floors, "route": routes, "by_workers": per_count,
    }
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return 0
    print(f"routing benchmark: {rows:,} rows, {result['rules']} rules ({result['shadow_rules']} shadow), "
          f"workers {', '.join(str(n or 'default') for n in counts)}")
    print(f"machine: {result['machine']}")
    print(f"pool: {pool} ({result['pool_mb']:,.1f} MB on disk, {text_mb:,.1f} MB of title+abstract text)")
    for i, f in enumerate(floors):
        print(line("floor (1 core, read + lower)", f, rows))
        for k, (label, _tree, n) in enumerate(runs):
            r = routes[i][k]
            x = ratio(f, r)
            print(line(f"{label}route, workers {n or 'default'}", r, rows))
            print(f"  {'':<30} ratio to the floor: CPU {x['cpu']:.2f}, wall {x['wall']:.2f}")
    for c in per_count:
        share = c["serial_share_median"]
        print(f"{c['label']}workers {c['workers'] or 'default'}: median CPU ratio {c['cpu_ratio_median']:.2f}, wall ratio "
              f"{c['wall_ratio_median']:.2f} ({len(floors)} pair(s)); peak RSS {c['peak_rss_mb_max']:,.0f} MB"
              + (f" (PSS {c['peak_pss_mb_max']:,.0f} MB)" if c["peak_pss_mb_max"] else "")
              + (f", largest worker PSS {c['worker_pss_mb_max']:,.0f} MB" if c["worker_pss_mb_max"] and n != 1 else "")
              + (f"; parent's share {share:.1%}" if share is not None else "")
              + (f" (serial: Amdahl caps 16 workers at {c['amdahl_16']:.1f}x)" if c["amdahl_16"] else "")
              + (" (1 worker: the parent routes)" if c["workers"] == 1 else "")
              + (f"; {c['speedup_vs_1']:.2f}x faster than 1 worker" if "speedup_vs_1" in c else ""))
    if args.base:
        print(f"base: {args.base.resolve()}")
    r = routes[-1][0]
    print("piles: " + ", ".join(f"{k} {v:,}" for k, v in r["piles"].items())
          + " (pending: " + ", ".join(f"{k} {v:,}" for k, v in r["pending"].items()) + ")"
          + f"; routing.parquet {r['routing_parquet_mb']:.1f} MB")
    print(f"machine at the end: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
