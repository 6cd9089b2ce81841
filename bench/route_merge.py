"""What the client of a distributed route does, at the size of a 250M-row pool, simulated.

The workers route the pieces; the client sums each piece's counts
(`stats.add_counts`), keeps the smallest sample keys (`release._keep_smallest`),
writes routing.parquet (`parquet_parts.RoutingWriter`) and checks every work_id is
unique (`release._check_ids`, over the hashes the workers computed). This measures each of them on made-up
piece results of the real shapes, as CPU seconds of this process:

- the count merge over all 3,815 pieces of a 250M-row pool (65,536 rows a
  piece), for a 54-rule and a 500-rule book;
- the sample heaps over the same pieces;
- the routing.parquet writer and the work_id check on `--rows` rows (default
  20M), extrapolated linearly to 250M.

    .venv/bin/python bench/route_merge.py
    .venv/bin/python bench/route_merge.py --rows 5000000 --rules 54
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

TARGET = 250_000_000
PIECE = 65_536


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Plan:
    """Just the sizes stats.compile_empty_totals reads."""

    def __init__(self, rules: int):
        self.rule_ids = tuple(f"r{i}" for i in range(rules))
        self.pile_names = ("discard", "hold", "screen_cheap", "screen", "pending")


def merge_counts(rules: int, pieces: int, rng) -> dict:
    from reporter.routing.stats import add_counts, compile_empty_totals
    plan = _Plan(rules)
    totals = compile_empty_totals(plan)
    piece = compile_empty_totals(plan)
    for name, arr in piece.items():
        arr[...] = rng.integers(0, 50, size=arr.shape)
    start = cpu()
    for _ in range(pieces):
        add_counts(totals, piece)
    seconds = cpu() - start
    size = sum(a.nbytes for a in piece.values())
    return {"rules": rules, "pieces": pieces, "cpu_s": seconds, "bytes_per_piece": size,
            "bytes_total": size * pieces}


def merge_samples(rules: int, pieces: int, rng) -> dict:
    from reporter.routing.release import RULE_SAMPLE_K, SAMPLE_K, _keep_smallest
    groups = [f"pile:p{i}" for i in range(5)] + [f"wins:r{i}" for i in range(rules)]
    heaps: dict[str, list] = {}
    payload = {"work_id": "x", "title": "t" * 100}
    start = cpu()
    for p in range(pieces):
        for g in groups:
            k = SAMPLE_K if g.startswith("pile:") else RULE_SAMPLE_K
            heap = heaps.setdefault(g, [])
            for key in rng.random(k):
                _keep_smallest(heap, (float(key), f"w{p}", 0, payload), k)
    return {"groups": len(groups), "pieces": pieces, "cpu_s": cpu() - start}


def writer_and_ids(rows: int, rules: int, rng) -> dict:
    from reporter.routing.routing_table import ROUTING_SCHEMA
    from reporter.routing.pieces import IdTally
    from reporter.routing.parquet_parts import RoutingWriter
    from reporter.routing.release import ROW_GROUP_ROWS, _check_ids
    from reporter.routing.samples import id_hashes
    piles = pa.array(["pending", "screen", "hold"], pa.string())
    names = pa.array([f"rule-{i}" for i in range(rules)] + [None], pa.string())
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        writer = RoutingWriter(Path(tmp) / "routing.parquet", ROW_GROUP_ROWS)
        ids = []
        write_cpu = hash_cpu = 0.0
        work_bytes = 0
        for at in range(0, rows, PIECE):
            n = min(PIECE, rows - at)
            work = pa.array([f"openalex:W{at + i}" for i in range(n)], pa.string())
            work_bytes += work.nbytes
            win = rng.integers(0, rules + 1, n)
            offsets = np.arange(n + 1, dtype=np.int32)
            table = pa.Table.from_arrays([
                work, piles.take(pa.array(rng.integers(0, 3, n))), pa.nulls(n, pa.string()),
                names.take(pa.array(win)), pa.ListArray.from_arrays(pa.array(offsets), names.take(pa.array(win))),
                pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], pa.string())),
                pa.nulls(n, ROUTING_SCHEMA.field("evidence").type), pa.array(np.zeros(n, bool)),
                pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)),
                                         pa.array([], ROUTING_SCHEMA.field("evidence").type))],
                schema=ROUTING_SCHEMA)
            start = cpu()
            writer.write(table)
            write_cpu += cpu() - start
            start = cpu()  # a worker's share: each piece hashes and tallies its own ids
            ids.append(IdTally.of(work, id_hashes(work, 0)))
            hash_cpu += cpu() - start
        start = cpu()
        writer.close()
        write_cpu += cpu() - start
        size = (Path(tmp) / "routing.parquet").stat().st_size
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = cpu()
        _check_ids(ids, Path(tmp) / "routing.parquet", Path("pool"))
        out["check_unique_cpu_s"] = cpu() - start
        out["worker_hash_cpu_s"] = hash_cpu
        # The check's own memory: how far it raised the peak above everything before it.
        out["check_unique_peak_rise_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out.update(rows=rows, write_cpu_s=write_cpu, routing_parquet_bytes=size,
               work_id_bytes=work_bytes, id_hash_bytes=sum(t.hashes.nbytes for t in ids))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure the client's merge of a distributed route, simulated.")
    parser.add_argument("--rows", type=int, default=20_000_000, help="rows for the writer and id check (default 20M)")
    parser.add_argument("--rules", type=int, default=54, help="rules of the writer's table (default 54)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    pieces = -(-TARGET // PIECE)
    result = {"target_rows": TARGET, "pieces": pieces,
              "counts": [merge_counts(r, pieces, rng) for r in (54, 500)],
              "samples": merge_samples(54, pieces, rng),
              "writer": writer_and_ids(args.rows, args.rules, rng),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    w = result["writer"]
    scale = TARGET / w["rows"]
    result["at_250M"] = {"write_cpu_s": w["write_cpu_s"] * scale, "check_unique_cpu_s": w["check_unique_cpu_s"] * scale,
                         "check_unique_peak_rise_gb": w["check_unique_peak_rise_mb"] * scale / 1024,
                         "worker_hash_cpu_s": w["worker_hash_cpu_s"] * scale,
                         "id_hashes_gb": w["id_hash_bytes"] * scale / 1e9,
                         "routing_parquet_gb": w["routing_parquet_bytes"] * scale / 1e9,
                         "work_ids_gb": w["work_id_bytes"] * scale / 1e9}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
