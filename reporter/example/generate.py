"""Seeded example pool: invented works that look like a replication campaign's keyword survivors.

Everything here is generated: authors, venues and cited studies are invented
names, DOIs use the test prefix 10.5555, and the Parquet schema carries a
`reporter.generated` marker. The same seed and row count give a
byte-identical file (for a given pyarrow version).

The rows are drawn a row group at a time (`rows.py`: the hidden truth per
row, the texts from `words.py` and `renderer.py`, ids, venues, authors);
this module writes them to the file with its marker, and the labels.
`generate_labels` recomputes each row's hidden truth (its `kind`: a
replication study, an OSF preregistration, an erratum, ...) from the seed
kept in the metadata and writes a seeded, slightly noisy `work_id,label`
file so that label statistics mean something.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..files import atomic_path
from ..progress import Progress
from .config import MAX_ROWS
from .rows import GROUP_ROWS, INCLUDE_KINDS, KINDS, SCHEMA, group_kinds, group_table

GENERATOR_VERSION = "2"
MARKER_KEY = b"reporter.generated"


def _marker(seed: int, rows: int, without: tuple[int, int] | None = None) -> dict[bytes, bytes]:
    # The text names the generator's first home, reporter.pool.generate: it is part of the
    # pool's bytes, so changing it would change every generated pool and the releases built on it.
    left_out = "" if without is None else f", without rows {without[0]}-{without[1] - 1}"
    marker = {MARKER_KEY: f"seeded example data (reporter.pool.generate, seed={seed}, rows={rows}{left_out}): "
                          f"not real works".encode(),
              b"reporter.generated.seed": str(seed).encode(),
              b"reporter.generated.rows": str(rows).encode(),
              b"reporter.generated.version": GENERATOR_VERSION.encode()}
    if without is not None:
        marker[b"reporter.generated.without"] = f"{without[0]}:{without[1]}".encode()
    return marker


def check_without(without: tuple[int, int] | None, rows: int) -> str | None:
    """A complaint about a left-out row range [start, end) of a pool of `rows`, or None when it is fine."""
    if without is None:
        return None
    start, end = without
    if not 0 <= start < end <= rows or end - start >= rows:
        return f"must be two row numbers [start, end) with 0 <= start < end <= rows ({rows:,}), leaving some rows, " \
               f"not [{start}, {end}]"
    return None


def generate_pool(path: Path, rows: int = 200_000, seed: int = 0, *, progress: bool = True,
                  labels: Path | None = None, without: tuple[int, int] | None = None) -> Path:
    """Write a seeded example pool of `rows` invented works to `path` (Parquet); optionally its labels.

    `without` = (start, end) leaves the rows start..end-1 out: every other row
    has the bytes it has in the whole pool, and the marker records the range
    (so `pool_truth` and the labels still line up). `make demo` makes its first
    week this way (docs/example-workspace.md): 202,000 rows without
    190,000..199,999 share their first 190,000 works with the 200,000-row pool
    (whole row groups, drawn alike), which has 10,000 new and lacks 2,000.
    """
    if not 0 < rows <= MAX_ROWS:
        raise ValueError(f"rows must be between 1 and {MAX_ROWS:,}, got {rows:,}")
    if (complaint := check_without(without, rows)) is not None:
        raise ValueError(f"without {complaint}")
    path = Path(path)
    schema = SCHEMA.with_metadata(_marker(seed, rows, without))
    bar = Progress("generate pool", total=rows, enabled=progress)
    counters: dict[int, int] = {}
    with atomic_path(path) as tmp, pq.ParquetWriter(
            tmp, schema, compression="zstd", compression_level=1,
            use_dictionary=["source", "type", "venue"], write_statistics=False) as writer:
        for group, start in enumerate(range(0, rows, GROUP_ROWS)):
            n = min(GROUP_ROWS, rows - start)
            table = group_table(seed, group, n, counters)
            if without is not None and start < without[1] and without[0] < start + n:
                kept = np.ones(n, bool)
                kept[max(without[0] - start, 0):min(without[1] - start, n)] = False
                table = table.filter(pa.array(kept))
            writer.write_table(table.replace_schema_metadata(schema.metadata), row_group_size=GROUP_ROWS)
            bar.advance(n)
    bar.close()
    if labels is not None:
        generate_labels(path, labels, seed)
    return path


def pool_truth(pool: Path) -> tuple[int, np.ndarray]:
    """The pool's generator seed and every row's hidden kind (indices into KINDS), recomputed."""
    meta = pq.read_schema(pool).metadata or {}
    if MARKER_KEY not in meta:
        raise ValueError(f"{pool}: not a generated example pool (no {MARKER_KEY.decode()} metadata)")
    seed, rows = int(meta[b"reporter.generated.seed"]), int(meta[b"reporter.generated.rows"])
    kinds = []
    for group, start in enumerate(range(0, rows, GROUP_ROWS)):
        n = min(GROUP_ROWS, rows - start)
        kinds.append(group_kinds(seed, group, n)[1].astype(np.int8))
    truth = np.concatenate(kinds)
    if b"reporter.generated.without" in meta:  # rows left out of the file (generate_pool's `without`)
        start, end = (int(x) for x in meta[b"reporter.generated.without"].split(b":"))
        truth = np.delete(truth, np.s_[start:end])
    return seed, truth


def generate_labels(pool: Path, out_csv: Path, seed: int = 0, *, include_share: float = 0.5,
                    exclude_share: float = 0.02, noise: float = 0.015) -> Path:
    """Write work_id,label for a seeded subset of a generated pool, from its hidden truth (with a little noise)."""
    _, kinds = pool_truth(pool)
    include = np.isin(kinds, [KINDS.index(k) for k in INCLUDE_KINDS])
    rng = np.random.default_rng([seed, 7_771])
    u = rng.random(len(kinds))
    chosen = np.where(include, u < include_share, u < exclude_share)
    flip = rng.random(len(kinds)) < noise
    label = include ^ flip
    out_csv = Path(out_csv)
    start = 0
    with atomic_path(out_csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["work_id", "label"])
        for batch in pq.ParquetFile(pool).iter_batches(batch_size=GROUP_ROWS, columns=["work_id"]):
            ids = batch.column(0).to_pylist()
            for i in np.flatnonzero(chosen[start:start + len(ids)]):
                w.writerow([ids[i], "include" if label[start + i] else "exclude"])
            start += len(ids)
    return out_csv


def main(argv: list[str] | None = None) -> int:
    """python -m reporter.example OUT --rows N --seed S [--labels CSV]."""
    parser = argparse.ArgumentParser(
        prog="python -m reporter.example",
        description="Write a seeded example pool of invented works (Parquet).",
        epilog="Example: python -m reporter.example data/pool.parquet --rows 200000 --seed 0 "
               "--labels data/labels.csv")
    parser.add_argument("out", type=Path, help="the Parquet file to write")
    parser.add_argument("--rows", type=int, default=200_000, help="number of works (default 200000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--labels", type=Path, default=None, help="also write work_id,label CSV here")
    parser.add_argument("--without", metavar="START:END", default=None,
                        help="leave out rows START..END-1 (a snapshot from which those works are missing)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        without = None
        if args.without is not None:
            start, sep, end = args.without.partition(":")
            if not (sep and start.isdigit() and end.isdigit()):
                raise ValueError(f"--without {args.without!r}: write START:END, e.g. 190000:200000")
            without = (int(start), int(end))
        generate_pool(args.out, args.rows, args.seed, progress=not args.quiet, labels=args.labels, without=without)
    except ValueError as exc:
        print(f"generate: error: {exc}", file=sys.stderr)
        return 2
    size = args.out.stat().st_size
    rows = pq.ParquetFile(args.out).metadata.num_rows
    print(f"wrote {args.out} ({rows:,} rows, {size / 1e6:,.1f} MB) in {time.perf_counter() - t0:.1f}s")
    return 0
