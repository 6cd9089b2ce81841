"""Small builders for routing tests: a rule book folder and a pool file from Python values."""

from __future__ import annotations

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
