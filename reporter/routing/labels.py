"""Labels from a finished review (work_id,label): how each rule treats known includes.

Labels are not a routing input: these findings live in labels.json beside
the release and go on its status page, never on the archived release page.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from ..errors import InputError
from ..files import write_json
from ..hashing import sha256_file
from ..pool.reader import open_table, read_whole, require_columns
from .specs import RuleBook

LABELS = ("include", "exclude")
LOST_LIST_MAX = 1000
LABELS_FILE = "labels.json"


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) for a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def load_labels(path: Path) -> pl.DataFrame:
    """Read work_id,label (include/exclude); unknown labels and duplicates are bad input."""
    source = open_table(path, "labels file")
    require_columns(source, ("work_id", "label"), "labels file")
    df = pl.from_arrow(read_whole(source, ["work_id", "label"]))
    df = df.with_columns(pl.col("work_id").cast(pl.Utf8), pl.col("label").cast(pl.Utf8).str.strip_chars().str.to_lowercase())
    bad = df.filter(~pl.col("label").is_in(LABELS) | pl.col("label").is_null())
    if len(bad):
        row = bad.row(0, named=True)
        raise InputError(f"{path}: {len(bad)} row(s) with a label other than include/exclude, "
                         f"e.g. work_id {row['work_id']!r} label {row['label']!r}")
    dup = df.filter(pl.col("work_id").is_duplicated())
    if len(dup):
        raise InputError(f"{path}: work_id {dup['work_id'][0]!r} is labelled more than once")
    return df.with_columns(pl.lit(sha256_file(Path(path))).alias("_digest"))


def label_stats(routing: pl.LazyFrame, labels: pl.DataFrame, book: RuleBook) -> dict:
    """Per rule: labelled includes matched, won, sent to discard or hold; precision of wins."""
    kinds = {p.name: p.kind for p in book.piles}
    joined = (routing.select("work_id", "pile", "winner", "matched", "shadow_matched")
              .join(labels.lazy().select("work_id", "label"), on="work_id", how="inner")
              .with_columns(pl.col("pile").replace_strict(kinds, default=None).alias("kind"))
              .collect())
    inc = joined.filter(pl.col("label") == "include")
    rules = []
    for rule in book.rules:
        col = "shadow_matched" if rule.shadow else "matched"
        matched = inc.filter(pl.col(col).list.contains(rule.id))
        won = joined.filter((pl.col("winner") == rule.id) & (pl.col("pile") == rule.pile))
        won_inc = won.filter(pl.col("label") == "include")
        judged = won.filter(pl.col("kind").is_in(["screen", "discard"]))
        correct = judged.filter(((pl.col("kind") == "screen") & (pl.col("label") == "include"))
                                | ((pl.col("kind") == "discard") & (pl.col("label") == "exclude")))
        n, c = len(judged), len(correct)
        lo, hi = wilson(c, n)
        to_discard = len(won_inc.filter(pl.col("kind") == "discard"))
        rules.append({
            "id": rule.id, "pile": rule.pile, "shadow": rule.shadow,
            "includes_matched": len(matched),
            "includes_won": len(won_inc),
            "includes_to_discard": to_discard,
            "includes_to_hold": len(won_inc.filter(pl.col("kind") == "hold")),
            "won_labelled": n, "won_correct": c,
            "precision": round(c / n, 6) if n else None,
            "wilson_low": round(lo, 6) if n else None,
            "wilson_high": round(hi, 6) if n else None,
            "flagged": to_discard > 0,
        })
    lost = inc.filter(pl.col("kind") == "discard").sort("work_id")
    return {
        "labels": len(labels),
        "labels_in_pool": len(joined),
        "includes_in_pool": len(inc),
        "rules": rules,
        "lost_includes": {"count": len(lost),
                          "works": [{"work_id": w, "rule": r} for w, r in
                                    lost.select("work_id", "winner").head(LOST_LIST_MAX).iter_rows()]},
    }


def label_stats_for(release_dir: Path, labels: pl.DataFrame, book: RuleBook) -> dict:
    """labels.json's content for a release folder: the findings and the labels' digest."""
    stats = label_stats(pl.scan_parquet(Path(release_dir) / "routing.parquet"), labels, book)
    stats["labels_digest"] = labels["_digest"][0] if len(labels) else None
    return stats


def write_label_stats(release_dir: Path, stats: dict | None) -> None:
    """Write labels.json (from `label_stats_for`) into a release folder; None removes an old one.

    Labels are the workspace's current knowledge, not a release input, so the
    status page must show the findings of the labels configured now: none
    configured means no findings, not last run's.
    """
    target = Path(release_dir) / LABELS_FILE
    if stats is None:
        target.unlink(missing_ok=True)
    else:
        write_json(target, stats)
