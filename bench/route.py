"""Routing benchmark: the 50-rule book over a seeded pool, against the cost of reading the text once.

Measured in one run, each phase in its own child process (so each peak RSS
is that phase's alone):

- baseline: read the pool's `title` and `abstract` with pyarrow in record
  batches and lower-case each once with `pyarrow.compute.utf8_lower`;
- routing: `reporter.routing.release.route_release` with the rule book in
  `bench/rules50/` into a temporary releases folder (pool digest, routing
  table, statistics and samples included: the whole `reporter route`).

Before the phases the pool file is read once so that both find it in the
page cache. Printed: seconds, rows/s, MB of title+abstract text per second,
peak RSS of each phase, and the ratio routing / baseline.

Run it (from the repository root):

    .venv/bin/python bench/route.py                      # 200,000 rows, seed 0
    .venv/bin/python bench/route.py --rows 5000000       # the 5M-row target (~6 GB of text)
    .venv/bin/python bench/route.py --pool data/pool.parquet --workers 2 --json
    .venv/bin/python bench/route.py --repeat 3           # fastest of 3 runs per phase (busy machine)

Without `--pool` the pool is generated with `reporter.example` into
`bench/.cache/pool-<rows>-<seed>-v<generator version>.parquet` and reused
on later runs. At 5,000,000 rows the pool takes about a minute to generate
and 0.7 GB of disk (delete `bench/.cache/` to reclaim it), the routing
table written to a temporary folder is ~65 MB, and a run takes a few
minutes on 2 cores (baseline ~20 s, routing ~2.5 min, routing peak RSS
~1.5 GB, measured on a shared, busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules50"
CACHE = HERE / ".cache"


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_baseline(pool: Path, batch_rows: int) -> dict:
    """Read title and abstract in record batches and lower-case them once."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    start = time.perf_counter()
    rows = text_bytes = 0
    for batch in pq.ParquetFile(pool).iter_batches(batch_size=batch_rows, columns=["title", "abstract"]):
        rows += batch.num_rows
        for column in batch.columns:
            lowered = pc.utf8_lower(column)
            text_bytes += pc.sum(pc.binary_length(lowered)).as_py() or 0
    return {"seconds": time.perf_counter() - start, "rows": rows, "text_bytes": text_bytes,
            "peak_rss_mb": peak_rss_mb()}


def phase_route(pool: Path, rules: Path, workers: int) -> dict:
    """Route the pool with route_release into a temporary releases folder."""
    from reporter.routing.release import route_release

    with tempfile.TemporaryDirectory(prefix="bench-releases-") as out:
        start = time.perf_counter()
        result = route_release(pool, rules, Path(out), workers=workers, progress=False)
        seconds = time.perf_counter() - start
        routing_mb = (result.release_dir / "routing.parquet").stat().st_size / 1e6
    return {"seconds": seconds, "rows": result.rows, "piles": result.piles, "pending": result.pending,
            "release_id": result.release_id, "routing_parquet_mb": routing_mb, "peak_rss_mb": peak_rss_mb()}


def run_child(args: list[str]) -> dict:
    """Run one phase in a fresh interpreter and return its JSON result."""
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"bench: phase {args[1]} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fastest(runs: list[dict]) -> dict:
    """The fastest of several runs of a phase, with the highest peak RSS of them all."""
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "runs": len(runs), "all_seconds": [r["seconds"] for r in runs],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


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


def with_extra_rules(rules: Path, n: int, into: Path) -> Path:
    """A copy of the rule book with n more phrase rules, each on a distinct phrase of the generator's banks."""
    import shutil
    from reporter.example import BANKS
    phrases = sorted({p for bank in ("construct", "outcome") for field in BANKS[bank].values() for p in field})
    if n > len(phrases):
        raise SystemExit(f"--extra-rules: at most {len(phrases)} distinct phrases are available")
    shutil.copytree(rules, into, dirs_exist_ok=True)
    piles = ["hold", "screen", "discard"]
    extra = [{"id": f"x-extra-{i:03d}", "pile": piles[i % 3], "precedence": 10_000 + i,
              "description": f"extra rule {i} for the scaling run", "shadow": i % 5 == 4,
              "match": {"field": "text", "phrase": phrases[i]}} for i in range(n)]
    (into / "rules" / "99-extra.json").write_text(json.dumps(extra, indent=1), encoding="utf-8")
    return into


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run both phases, print the comparison."""
    parser = argparse.ArgumentParser(description="Benchmark routing against reading the text once.",
                                     epilog="Example: .venv/bin/python bench/route.py --rows 5000000")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the generated pool (default 200000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated pool (default 0)")
    parser.add_argument("--pool", type=Path, help="route this pool instead of a generated one")
    parser.add_argument("--rules", type=Path, default=RULES, help="rule book folder (default bench/rules50)")
    parser.add_argument("--workers", type=int, default=2, help="routing worker threads (default 2)")
    parser.add_argument("--extra-rules", type=int, default=0,
                        help="add N phrase rules (the generator's constructs and outcomes) to a temporary copy "
                             "of the rule book, to see how the cost grows with the rule count")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each phase N times and keep the fastest (default 1; use 3 on a busy machine)")
    parser.add_argument("--json", action="store_true", help="print the machine-readable result only")
    parser.add_argument("--phase", choices=["baseline", "route"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.phase == "baseline":
        from reporter.routing.release import BATCH_ROWS
        print(json.dumps(phase_baseline(args.pool, BATCH_ROWS)))
        return 0
    if args.phase == "route":
        print(json.dumps(phase_route(args.pool, args.rules, args.workers)))
        return 0

    pool = args.pool if args.pool else ensure_pool(args.rows, args.seed)
    from reporter.routing.specs import load_rulebook
    if args.extra_rules:
        args.rules = with_extra_rules(args.rules, args.extra_rules, Path(tempfile.mkdtemp(prefix="rules-")))
    book = load_rulebook(args.rules)
    warm(pool)
    base = fastest([run_child(["--phase", "baseline", "--pool", str(pool)]) for _ in range(args.repeat)])
    route = fastest([run_child(["--phase", "route", "--pool", str(pool), "--rules", str(args.rules),
                                "--workers", str(args.workers)]) for _ in range(args.repeat)])
    text_mb = base["text_bytes"] / 1e6
    result = {
        "pool": str(pool), "pool_mb": pool.stat().st_size / 1e6, "rows": base["rows"], "text_mb": text_mb,
        "rules": len(book.rules), "shadow_rules": sum(r.shadow for r in book.rules), "workers": args.workers,
        "cpus": os.cpu_count(), "python": platform.python_version(), "load_average": os.getloadavg(),
        "baseline": {**base, "rows_per_s": base["rows"] / base["seconds"], "mb_per_s": text_mb / base["seconds"]},
        "routing": {**route, "rows_per_s": route["rows"] / route["seconds"], "mb_per_s": text_mb / route["seconds"]},
        "ratio": route["seconds"] / base["seconds"],
    }
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return 0
    b, r = result["baseline"], result["routing"]
    print(f"routing benchmark: {result['rows']:,} rows, {result['rules']} rules "
          f"({result['shadow_rules']} shadow), {args.workers} workers, {result['cpus']} CPUs")
    print(f"pool: {pool} ({result['pool_mb']:,.1f} MB on disk, {text_mb:,.1f} MB of title+abstract text)")
    for label, m in (("baseline (read + utf8_lower)", b), ("routing (route_release)", r)):
        print(f"{label:<30} {m['seconds']:8.2f} s {m['rows_per_s']:>12,.0f} rows/s "
              f"{m['mb_per_s']:>8,.1f} MB/s   peak RSS {m['peak_rss_mb']:,.0f} MB")
    print(f"{'ratio routing / baseline':<30} {result['ratio']:8.2f}"
          + (f"   (fastest of {args.repeat} runs each)" if args.repeat > 1 else ""))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in result['load_average'])} "
          f"(other work on the machine inflates both phases)")
    print("piles: " + ", ".join(f"{k} {v:,}" for k, v in r["piles"].items())
          + " (pending: " + ", ".join(f"{k} {v:,}" for k, v in r["pending"].items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
