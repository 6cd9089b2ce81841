"""Routing benchmark: `reporter route` as a whole process against the floor, in CPU seconds.

Each phase runs as its own process, the way a user runs it, and is measured
in CPU seconds (user + system of every thread and every process it starts),
so that more cores cannot hide a slower path:

- floor: read the pool's `title` and `abstract` with pyarrow in record
  batches and lower-case each once (`pyarrow.compute.utf8_lower`), in a
  fresh interpreter (`bench/route.py --phase floor`);
- route: `reporter route --pool P --specs S --out D --json --workers N`
  into a temporary releases folder (pool digest, routing table, statistics
  and samples included).

The two alternate `--repeat` times in one run and the ratio of each pair is
reported with their median, so a busy machine slows both sides of a pair.
Wall time, rows/s and the peak resident memory of the route's whole process
tree (sampled from /proc) are printed too.

Pools:

    .venv/bin/python bench/route.py                         # 200,000 generated rows, bench/rules50
    .venv/bin/python bench/route.py --rows 5000000          # the 5M-row target (54 rules)
    .venv/bin/python bench/route.py --real                  # 1,069,550 real rows (bench/realpool.py)
    .venv/bin/python bench/route.py --real --rules specs    # the 20-rule example book on real rows
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
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULES = HERE / "rules50"
CACHE = HERE / ".cache"
sys.path.insert(0, str(HERE))


def phase_floor(pool: Path, batch_rows: int) -> dict:
    """The floor: read title and abstract in record batches and lower-case them once."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows = text_bytes = 0
    for batch in pq.ParquetFile(pool).iter_batches(batch_size=batch_rows, columns=["title", "abstract"]):
        rows += batch.num_rows
        for column in batch.columns:
            text_bytes += pc.sum(pc.binary_length(pc.utf8_lower(column))).as_py() or 0
    return {"rows": rows, "text_bytes": text_bytes}


class TreeRSS:
    """Samples the resident memory of a process and all its descendants (Linux /proc), keeping the peak."""

    def __init__(self, pid: int, every: float = 0.05):
        self.pid, self.every, self.peak = pid, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                    children.setdefault(int(fields[1]), []).append(int(entry))
                except (OSError, IndexError, ValueError):
                    continue
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, []))
        return out

    def _run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            total = 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/statm", "rb") as f:
                        total += int(f.read().split()[1]) * page
                except (OSError, IndexError, ValueError):
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def measured(cmd: list[str], env: dict | None = None) -> dict:
    """Run a command to completion: its CPU seconds (with all its descendants), wall seconds, peak tree RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    sampler = TreeRSS(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    peak = sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(err)
        raise SystemExit(f"bench: {' '.join(cmd[:3])} ... failed (exit {proc.returncode})")
    return {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "user_s": after.ru_utime - before.ru_utime, "system_s": after.ru_stime - before.ru_stime,
            "wall_s": wall, "peak_rss_mb": peak / 1e6, "stdout": out}


def run_floor(pool: Path) -> dict:
    m = measured([sys.executable, str(Path(__file__).resolve()), "--phase", "floor", "--pool", str(pool)])
    m.update(json.loads(m.pop("stdout").strip().splitlines()[-1]))
    return m


def run_route(pool: Path, rules: Path, workers: int | None, extra: list[str]) -> dict:
    reporter = Path(sys.executable).with_name("reporter")
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as out:
        cmd = [str(reporter), "route", "--pool", str(pool), "--specs", str(rules), "--out", out, "--json", *extra]
        if workers is not None:
            cmd += ["--workers", str(workers)]
        m = measured(cmd)
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
    parser.add_argument("--workers", type=int, help="reporter route --workers (default: its own default)")
    parser.add_argument("--extra-rules", type=int, default=0,
                        help="add N rules, each on a rare phrase of real titles, to a temporary copy of the book")
    parser.add_argument("--repeat", type=int, default=1, help="floor/route pairs to run (default 1; the median "
                                                              "ratio is reported)")
    parser.add_argument("--route-arg", action="append", default=[], help="an extra argument for reporter route")
    parser.add_argument("--json", action="store_true", help="print the machine-readable result only")
    parser.add_argument("--phase", choices=["floor"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.phase == "floor":
        print(json.dumps(phase_floor(args.pool, 32_768)))
        return 0

    if args.pool:
        pool = args.pool
    elif args.real:
        from realpool import real_pool
        pool = real_pool(args.real)
    else:
        pool = ensure_pool(args.rows, args.seed)
    from reporter.routing.specs import load_rulebook
    rules = args.rules
    if args.extra_rules:
        rules = with_extra_rules(rules, args.extra_rules, Path(tempfile.mkdtemp(prefix="rules-")))
    book = load_rulebook(rules)
    warm(pool)
    floors, routes = [], []
    for _ in range(args.repeat):
        floors.append(run_floor(pool))
        routes.append(run_route(pool, rules, args.workers, args.route_arg))
    ratios = [r["cpu_s"] / f["cpu_s"] for f, r in zip(floors, routes)]
    text_mb = floors[0]["text_bytes"] / 1e6
    rows = routes[0]["rows"]
    result = {
        "pool": str(pool), "pool_mb": pool.stat().st_size / 1e6, "rows": rows, "text_mb": text_mb,
        "rules": len(book.rules), "shadow_rules": sum(r.shadow for r in book.rules), "workers": args.workers,
        "cpus": os.cpu_count(), "python": platform.python_version(), "load_average": os.getloadavg(),
        "floor": floors, "route": routes, "cpu_ratios": ratios, "cpu_ratio_median": statistics.median(ratios),
    }
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return 0
    print(f"routing benchmark: {rows:,} rows, {result['rules']} rules ({result['shadow_rules']} shadow), "
          f"workers {args.workers or 'default'}, {result['cpus']} CPUs")
    print(f"pool: {pool} ({result['pool_mb']:,.1f} MB on disk, {text_mb:,.1f} MB of title+abstract text)")
    for i, (f, r) in enumerate(zip(floors, routes)):
        for label, m in (("floor (read + utf8_lower)", f), ("reporter route", r)):
            print(f"  {label:<26} CPU {m['cpu_s']:7.2f} s (user {m['user_s']:.2f}, sys {m['system_s']:.2f})  "
                  f"wall {m['wall_s']:7.2f} s  {rows / m['wall_s']:>10,.0f} rows/s  "
                  f"peak RSS {m['peak_rss_mb']:,.0f} MB")
        print(f"  CPU ratio route / floor    {ratios[i]:.2f}")
    print(f"median CPU ratio of {len(ratios)} pair(s): {result['cpu_ratio_median']:.2f}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in result['load_average'])}")
    r = routes[-1]
    print("piles: " + ", ".join(f"{k} {v:,}" for k, v in r["piles"].items())
          + " (pending: " + ", ".join(f"{k} {v:,}" for k, v in r["pending"].items()) + ")"
          + f"; routing.parquet {r['routing_parquet_mb']:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
