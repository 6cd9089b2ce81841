"""The batch results file: one JSON line per checked candidate, and its reader for the site and the digest.

Each line is `{"schema_version", "line", "id", "candidate", "graph", "result"}`
(see docs/novelty.md). `result` is the output object of novelty.md: a
verdict with its evidence, never a score. The site reads the lines only
through here: `result_lines` checks them and returns them typed
(`ResultLine`), with the vocabulary (`VERDICTS`, `STATUSES`) they use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import MiB, parse_json, read_capped, write_text
from ..hashing import canonical_json
from .candidate import CandidateInput
from .graph import Graph
from .verdict import STATUSES, VERDICTS, NoveltyResult

SCHEMA_VERSION = 1
RESULTS_CAP = 128 * MiB
"""The largest results file read (`render --novelty`, a digest week's novelty.jsonl): a line is about 1 KB, so
over 100,000 candidates; a week's file holds one line a KEEP (docs/limits.md)."""
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
        text = read_capped(path, RESULTS_CAP, "novelty results file").decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: novelty results file not found") from None
    except UnicodeDecodeError as exc:
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


# The typed reader ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphRef:
    """The graph a candidate was checked against."""

    events_jsonl: str
    """The events file, as the workspace names it."""
    sha256: str
    """The sha256 of the graph read."""


@dataclass(frozen=True)
class Blocking:
    """A failed lookup the verdict needed (`ingest_errors_blocking`)."""

    scheme: str
    """The key's scheme (doi, arxiv, openalex, s2)."""
    lookup: str | None
    """What was looked up, when recorded."""
    http_status: int | None
    """The HTTP status of the answer, or None when none came (a timeout, the network)."""


@dataclass(frozen=True)
class ResultLine:
    """One results line read back and checked: the candidate, the graph, the verdict and its evidence."""

    line: int
    """The candidate's line in the batch file."""
    id: str | None
    """The candidate's id, or None when it has none."""
    kind: str
    """`paper` or `claim`."""
    statement: str | None
    """A claim's statement as given (None for a paper)."""
    holdout_ids: tuple[str, ...]
    """The candidate's holdout_lom_ids (empty without a holdout)."""
    graph: GraphRef
    """The graph it was checked against."""
    lom_id: str
    """The candidate's lom_id; the matched paper's when rule 1 matched one."""
    verdict: str
    """One of VERDICTS."""
    status: str
    """One of STATUSES."""
    matched_lom_id: str | None
    """Rule 1's match, or None."""
    holdout_applied: bool
    """True when a holdout was given."""
    in_sample: tuple[str, ...]
    """The shared read or claim-bearing references, in sample."""
    holdout: tuple[str, ...]
    """The shared ones outside the holdout."""
    coverage_gap: tuple[str, ...]
    """The graph's uncovered read or claim-bearing nodes."""
    blocking: tuple[Blocking, ...]
    """The failed lookups the verdict needed."""


def result_lines(rows: Sequence[dict[str, Any]], source: Path | str = "novelty results") -> tuple[ResultLine, ...]:
    """The lines of a results file (as `load_novelty_results` returns them, or as a build made them), typed.

    Each line is checked as the pages need it: the graph of every line first,
    then each line's fields; an inconsistent line (not_a_ranker not true, a
    verdict that does not fit its status, a count that does not fit its ids)
    is an InputError naming `source` and the line's place.
    """
    graphs = [_graph(row, source, i) for i, row in enumerate(rows, 1)]
    return tuple(_line(row, graph, source, i) for i, (row, graph) in enumerate(zip(rows, graphs), 1))


def _graph(row: dict[str, Any], source: Path | str, i: int) -> GraphRef:
    g = _field(row, ("graph",), dict, source, i)
    return GraphRef(_field(g, ("events_jsonl",), str, source, i), _field(g, ("sha256",), str, source, i))


def _line(row: dict[str, Any], graph: GraphRef, source: Path | str, i: int) -> ResultLine:
    result = _field(row, ("result",), dict, source, i)
    cand = _field(row, ("candidate",), dict, source, i)
    line = _field(row, ("line",), int, source, i)
    cid = row.get("id")
    if cid is not None and not isinstance(cid, str):
        raise InputError(f"{source}: results line {i}: id must be a string or null")
    if result.get("not_a_ranker") is not True:
        raise InputError(f"{source}: results line {i}: not_a_ranker is not true; the page shows verdicts "
                         f"as evidence only")
    verdict, status = result["verdict"], result["status"]
    if (verdict == "unknown") == (status == "ok"):
        raise InputError(f"{source}: results line {i}: verdict {verdict} with status {status} "
                         f"(unknown goes with a status other than ok, and only it does)")
    overlap = _field(result, ("citation_overlap",), dict, source, i)
    applied = _field(result, ("holdout_applied",), bool, source, i)
    match = _field(result, ("exact_key_match",), dict, source, i)
    matched = match.get("matched_lom_id") if match.get("hit") is True else None
    if match.get("hit") is True and not isinstance(matched, str):
        raise InputError(f"{source}: results line {i}: exact_key_match.hit without a matched_lom_id")
    statement = cand.get("statement")
    holdout_ids = cand.get("holdout_lom_ids") or []
    return ResultLine(
        line=line, id=cid, kind=_field(cand, ("kind",), str, source, i),
        statement=statement if isinstance(statement, str) else None, graph=graph,
        lom_id=_field(result, ("lom_id",), str, source, i), verdict=verdict, status=status,
        matched_lom_id=matched, holdout_applied=applied,
        holdout_ids=_ids(holdout_ids, len(holdout_ids), source, i, "candidate.holdout_lom_ids"),
        in_sample=_slice(overlap, "in_sample", source, i), holdout=_slice(overlap, "holdout", source, i),
        coverage_gap=_ids(_field(result, ("coverage_gap",), list, source, i), None, source, i, "coverage_gap"),
        blocking=tuple(_blocking(e, source, i) for e in _field(result, ("ingest_errors_blocking",), list, source, i)))


def _slice(overlap: dict[str, Any], name: str, source: Path | str, i: int) -> tuple[str, ...]:
    part = _field(overlap, (name,), dict, source, i)
    ids = _field(part, ("shared_lom_ids",), list, source, i)
    return _ids(ids, _field(part, ("n_shared",), int, source, i), source, i, f"citation_overlap.{name}")


def _ids(ids: Any, n: int | None, source: Path | str, i: int, name: str) -> tuple[str, ...]:
    if not all(isinstance(x, str) for x in ids):
        raise InputError(f"{source}: results line {i}: {name} must list lom_id strings")
    if n is not None and n != len(ids):
        raise InputError(f"{source}: results line {i}: {name}: n_shared {n} but {len(ids)} ids listed")
    return tuple(ids)


def _blocking(entry: Any, source: Path | str, i: int) -> Blocking:
    if not isinstance(entry, dict) or not isinstance(entry.get("scheme"), str):
        raise InputError(f"{source}: results line {i}: each ingest_errors_blocking entry needs a scheme")
    return Blocking(entry["scheme"], entry.get("lookup"), entry.get("http_status"))


def _field(obj: dict[str, Any], path: tuple[str, ...], kind: type, source: Path | str, i: int) -> Any:
    value: Any = obj
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(f"{source}: results line {i}: field {'.'.join(path)!r} must be {kind.__name__}, "
                         f"got {value!r}")
    return value


__all__ = ["STATUSES", "VERDICTS", "Blocking", "GraphRef", "ResultLine", "load_novelty_results", "result_lines",
           "result_row", "write_novelty_results"]
