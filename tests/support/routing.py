"""Small builders for routing tests: a rule book folder and a pool file from Python values."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_PILES = {"piles": [
    {"name": "discard", "kind": "discard"},
    {"name": "hold", "kind": "hold"},
    {"name": "screen_cheap", "kind": "screen", "tier": "cheap"},
    {"name": "screen", "kind": "screen", "tier": "expensive"},
    {"name": "pending", "kind": "pending"},
], "title_only_sources": ["osf"]}

TODAY = dt.date.today()
"""The date the tests' routes run on, passed as `as_of` as a command passes its edge's date."""


def write_specs(root: Path, rules: list[dict] | dict[str, list[dict]], piles: dict | None = None) -> Path:
    """specs/ with piles.json and rules (one file, or {filename: rules})."""
    specs = root / "specs"
    (specs / "rules").mkdir(parents=True, exist_ok=True)
    (specs / "piles.json").write_text(json.dumps(piles or DEFAULT_PILES), encoding="utf-8")
    files = rules if isinstance(rules, dict) else {"rules.json": rules}
    for name, items in files.items():
        (specs / "rules" / name).write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return specs


def write_pool(path: Path, rows: list[dict]) -> Path:
    """A Parquet pool of rows with at least work_id, source, title, abstract."""
    cols = {k: [r.get(k) for r in rows] for k in dict.fromkeys(k for r in rows for k in r)}
    for k in ("work_id", "source", "title", "abstract"):
        cols.setdefault(k, [None] * len(rows))
    schema = pa.schema([(k, pa.string()) for k in cols])
    pq.write_table(pa.table(cols, schema=schema), path)
    return path


SYNERGY_WORKS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "synergy_v1" / "synergy_v1_works.jsonl.gz"


def synergy_works() -> list[dict]:
    """The real SYNERGY works beside the checkout as pool rows (one row per work); skips the test when absent."""
    import pytest
    if not SYNERGY_WORKS.exists():
        pytest.skip(f"real data not present: {SYNERGY_WORKS} (the shared data folder sits next to the checkout)")
    rows, seen = [], set()
    with gzip.open(SYNERGY_WORKS, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            work_id = "openalex:" + rec["openalex_id"].rsplit("/", 1)[-1]
            if work_id in seen:  # one work sits in two reviews
                continue
            seen.add(work_id)
            rows.append({"work_id": work_id, "source": "openalex", "title": rec["title"],
                         "abstract": rec["abstract"], "type": rec["type"]})
    return rows
