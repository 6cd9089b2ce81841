"""A pool of real records for the routing benchmark, and real title phrases for its extra rules.

The records are every title and abstract of the real data beside the
checkout (`../shared/data`): 23,631 arXiv listings, 7,234 SYNERGY works,
5,716 ASReview works and 6,201 LatteReview works, 42,782 rows. `real_pool`
writes them `copies` times over (default 25: 1,069,550 rows, the size of
the issue's real-data check) with distinct work ids, so that a benchmark
routes real text with real hit rates. `title_phrases` draws phrases from
the real titles: two- and three-word runs that occur in few titles, so a
rule built on one is as rare as a real rule's phrase.

    .venv/bin/python bench/realpool.py                  # writes bench/.cache/real-25.parquet
    .venv/bin/python bench/realpool.py --copies 5
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
CACHE = HERE / ".cache"
POOL_VERSION = 1
_WORD = re.compile(r"[a-z][a-z-]+")
_STOP = frozenset("a an and are as at be by for from in into is it its of on or that the this to with we "
                  "our via using based towards toward new study analysis".split())


def real_records() -> list[dict]:
    """Every real record's source, title, abstract and type, in a fixed order."""
    if not DATA.exists():
        raise SystemExit(f"real data not found at {DATA} (the shared data folder sits next to the checkout)")
    csv.field_size_limit(1 << 30)
    out: list[dict] = []
    with gzip.open(next((DATA / "arxiv_daily").glob("*.jsonl.gz")), "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.append({"source": "arxiv", "title": r.get("title"), "abstract": r.get("summary"),
                        "type": "preprint"})
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.append({"source": "openalex", "title": r.get("title"), "abstract": r.get("abstract"),
                        "type": r.get("type")})
    for folder, source in (("asreview_srd", "pubmed"), ("lattereview_llm_votes", "openalex")):
        for path in sorted((DATA / folder).glob("*.csv.gz")):
            with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
                for r in csv.DictReader(f):
                    out.append({"source": source, "title": r.get("title") or None,
                                "abstract": r.get("abstract") or None, "type": "article"})
    return out


def real_pool(copies: int = 25) -> Path:
    """bench/.cache/real-<copies>.parquet: the real records `copies` times, with distinct work ids (cached)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = CACHE / f"real-{copies}-v{POOL_VERSION}.parquet"
    if path.exists():
        return path
    recs = real_records()
    cols = {k: pa.array([r[k] for r in recs], pa.string()) for k in ("source", "title", "abstract", "type")}
    one = pa.table(cols)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, pa.schema([("work_id", pa.string())] + list(one.schema)),
                          compression="zstd") as w:
        for c in range(copies):
            ids = pa.array([f"real:{c}-{i}" for i in range(len(one))], pa.string())
            w.write_table(one.add_column(0, "work_id", ids), row_group_size=65_536)
    tmp.replace(path)
    return path


def title_phrases(n: int, seed: int = 0, max_share: float = 0.002, min_titles: int = 3) -> list[str]:
    """n distinct phrases from the real titles (2-3 words, no stop word at either end), each in few titles.

    A phrase is kept when it occurs in at least `min_titles` titles and in
    at most `max_share` of them, about what a real rule's phrase hits; the
    kept ones are sampled with a seed.
    """
    titles = {(r["title"] or "").lower() for r in real_records()}
    seen: Counter = Counter()
    for t in titles:
        words = _WORD.findall(t)
        grams = set()
        for k in (2, 3):
            for i in range(len(words) - k + 1):
                g = words[i:i + k]
                if g[0] in _STOP or g[-1] in _STOP:
                    continue
                grams.add(" ".join(g))
        seen.update(grams)
    cap = max_share * len(titles)
    pool = sorted(g for g, c in seen.items() if min_titles <= c <= cap)
    if n > len(pool):
        raise SystemExit(f"only {len(pool)} phrases qualify; ask for fewer")
    return random.Random(seed).sample(pool, n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the real-data routing pool.")
    parser.add_argument("--copies", type=int, default=25, help="times each real record is written (default 25)")
    args = parser.parse_args(argv)
    path = real_pool(args.copies)
    import pyarrow.parquet as pq
    print(f"{path}: {pq.read_metadata(path).num_rows:,} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
