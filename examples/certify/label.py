"""Label a sheet of the example workspace from the example generator's hidden truth (examples/certify/README.md).

    .venv/bin/python examples/certify/label.py SHEET.csv [--pool data/pool.parquet] [--labels data/labels.csv]

Every empty label becomes the truth the generator drew the work from:
`include` for a replication, reproduction or reanalysis study or the OSF
registration of one, `exclude` for everything else (docs/example-workspace.md,
"Labels: a hidden truth"). data/labels.csv is a noisy subset of the same
truth (half the includes, 2% of the rest); it is printed how the sheet's
rows it labels agree. The sheet is rewritten in place with
`reporter.certify.sheet.fill_labels`: every other cell as it was.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from reporter.certify.sheet import fill_labels, read_sheet
from reporter.example.generate import pool_truth
from reporter.example.rows import INCLUDE_KINDS, KINDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sheet", type=Path)
    parser.add_argument("--pool", type=Path, default=Path("data/pool.parquet"))
    parser.add_argument("--labels", type=Path, default=Path("data/labels.csv"))
    args = parser.parse_args(argv)
    _, kinds = pool_truth(args.pool)
    include = np.isin(kinds, [KINDS.index(k) for k in INCLUDE_KINDS])
    ids = pq.read_table(args.pool, columns=["work_id"]).column(0).to_pylist()
    truth = {w: "include" if inc else "exclude" for w, inc in zip(ids, include.tolist())}
    filled = fill_labels(args.sheet, truth)
    labels = read_sheet(args.sheet).labels()
    given = {}
    if args.labels.exists():
        with open(args.labels, newline="", encoding="utf-8") as f:
            given = {r["work_id"]: r["label"] for r in csv.DictReader(f)}
    shared = [w for w in labels if w in given]
    agree = sum(given[w] == labels[w] for w in shared)
    print(f"{args.sheet}: {filled} rows labelled, {sum(v == 'include' for v in labels.values())} include; "
          f"{args.labels} labels {len(shared)} of them and agrees on {agree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
