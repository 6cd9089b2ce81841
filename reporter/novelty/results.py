"""The batch results file: one JSON line per checked candidate, for the site and the digest.

Each line is `{"schema_version", "line", "id", "candidate", "graph", "result"}`
(see docs/novelty.md). `result` is the output object of novelty.md: a
verdict with its evidence, never a score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..files import parse_json, write_text
from ..hashing import canonical_json
from .candidate import CandidateInput
from .graph import Graph
from .verdict import STATUSES, VERDICTS, NoveltyResult

SCHEMA_VERSION = 1
ROW_FIELDS = ("schema_version", "line", "id", "candidate", "graph", "result")
RESULT_FIELDS = ("status", "lom_id", "verdict", "exact_key_match", "citation_overlap", "coverage_gap",
                 "ingest_errors_blocking", "embedding", "holdout_applied", "not_a_ranker")


def result_row(line: int, item: CandidateInput, graph: Graph, graph_path: str,
               result: NoveltyResult) -> dict[str, Any]:
    """One results line: where the candidate came from, what it was, against which graph, the verdict."""
    return {"schema_version": SCHEMA_VERSION, "line": line, "id": item.id,
            "candidate": item.candidate.to_json(),
            "graph": {"events_jsonl": graph_path, "sha256": graph.sha256},
            "result": result.to_json()}


def write_novelty_results(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write the results JSONL whole (a temporary file renamed into place)."""
    write_text(Path(path), "".join(canonical_json(row) + "\n" for row in rows))


def load_novelty_results(path: Path) -> list[dict[str, Any]]:
    """Read a results JSONL written by `reporter novelty --batch`, in file order; validates each line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: novelty results file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the novelty results file: {exc}") from None
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        row = parse_json(line, where)
        _check_row(row, where)
        rows.append(row)
    return rows


def _check_row(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise InputError(f"{where}: a results line must be a JSON object")
    missing = [f for f in ROW_FIELDS if f not in row]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
    if row["schema_version"] != SCHEMA_VERSION:
        raise InputError(f"{where}: schema_version {row['schema_version']!r} is not supported "
                         f"(this reader knows {SCHEMA_VERSION})")
    result = row["result"]
    if not isinstance(result, dict):
        raise InputError(f"{where}: field 'result' must be an object")
    missing = [f for f in RESULT_FIELDS if f not in result]
    if missing:
        raise InputError(f"{where}: result is missing field(s) {', '.join(missing)}")
    if result["verdict"] not in VERDICTS:
        raise InputError(f"{where}: result.verdict must be one of {', '.join(VERDICTS)}")
    if result["status"] not in STATUSES:
        raise InputError(f"{where}: result.status must be one of {', '.join(STATUSES)}")
