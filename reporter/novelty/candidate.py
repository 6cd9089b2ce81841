"""The candidate: the input object of novelty.md, validated into a frozen spec."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import parse_json
from ..ids import normalize_key, normalize_lom_id
from .keys import derive_lom_id

KINDS = ("paper", "claim")
# Input key name -> scheme. `s2_paper_id` (the graph's spelling) is read as s2_paperId.
KEY_FIELDS = {"doi": "doi", "arxiv": "arxiv", "openalex": "openalex",
              "s2_paperId": "s2", "s2_paper_id": "s2"}


@dataclass(frozen=True)
class Candidate:
    """A paper or claim to check, with normalised keys and lom_ids."""

    kind: str
    """`paper` or `claim`."""
    keys: tuple[tuple[str, str], ...]
    """Normalised keys present, as (scheme, value) in scheme order (doi, arxiv, openalex, s2)."""
    lom_id: str
    """Derived from the keys: doi, then arxiv, then openalex."""
    statement: str | None
    """The claim's statement (claims only)."""
    holdout_lom_ids: tuple[str, ...] | None
    """Nodes used while forming the candidate, normalised; None when omitted (in-sample only)."""
    references: tuple[str, ...] = ()
    """lom_ids the candidate cites (e.g. from its PDF's bibliography), normalised."""

    def key_map(self) -> dict[str, str]:
        """The keys as a dict, scheme -> value."""
        return dict(self.keys)

    def to_json(self) -> dict[str, Any]:
        """The candidate as normalised input (every key present, null when absent)."""
        keys = self.key_map()
        return {"kind": self.kind,
                "keys": {"doi": keys.get("doi"), "arxiv": keys.get("arxiv"),
                         "openalex": keys.get("openalex"), "s2_paperId": keys.get("s2")},
                "statement": self.statement,
                "holdout_lom_ids": None if self.holdout_lom_ids is None else list(self.holdout_lom_ids),
                "references": list(self.references)}


@dataclass(frozen=True)
class CandidateInput:
    """One input object: the candidate, its optional graph path and optional id."""

    candidate: Candidate
    """The candidate itself."""
    graph_path: str | None
    """`graph.events_jsonl` as written (relative to the input file), or None."""
    id: str | None = None
    """An optional caller's id, carried to the results."""


def _lom_list(value: Any, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: candidate.{name} must be a list of lom_id strings")
    return tuple(sorted({normalize_lom_id(v) for v in value}))


def parse_candidate(obj: Any, where: str) -> CandidateInput:
    """Validate one input object of novelty.md; errors name `where` and the field."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: the input must be a JSON object with a 'candidate' entry")
    cand = obj.get("candidate")
    if not isinstance(cand, dict):
        raise InputError(f"{where}: 'candidate' must be an object")
    kind = cand.get("kind")
    if kind not in KINDS:
        raise InputError(f"{where}: candidate.kind must be one of {', '.join(KINDS)}, got {kind!r}")
    raw_keys = cand.get("keys")
    if not isinstance(raw_keys, dict):
        raise InputError(f"{where}: candidate.keys must be an object with doi / arxiv / openalex / s2_paperId")
    keys: dict[str, str] = {}
    for name, scheme in KEY_FIELDS.items():
        value = raw_keys.get(name)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}: candidate.keys.{name} must be a string or null, got {value!r}")
        normal = normalize_key(scheme, value)
        if normal:
            keys.setdefault(scheme, normal)
    lom_id = derive_lom_id(keys)
    if lom_id is None:
        raise InputError(f"{where}: candidate.keys needs at least one of doi, arxiv, openalex")
    statement = cand.get("statement")
    if statement is not None and not isinstance(statement, str):
        raise InputError(f"{where}: candidate.statement must be a string or null")
    if kind == "claim" and not (statement and statement.strip()):
        raise InputError(f"{where}: a claim candidate needs a non-empty candidate.statement")
    holdout = cand.get("holdout_lom_ids")
    holdout_ids = None if holdout is None else _lom_list(holdout, where, "holdout_lom_ids")
    refs = cand.get("references")
    references = () if refs is None else _lom_list(refs, where, "references")
    graph = obj.get("graph")
    graph_path = None
    if graph is not None:
        if not isinstance(graph, dict) or not isinstance(graph.get("events_jsonl"), str) \
                or not graph["events_jsonl"].strip():
            raise InputError(f"{where}: 'graph' must be an object with a non-empty 'events_jsonl' path")
        graph_path = graph["events_jsonl"]
    cid = obj.get("id")
    if cid is not None and not isinstance(cid, str):
        raise InputError(f"{where}: 'id' must be a string or null")
    ordered = tuple((s, keys[s]) for s in ("doi", "arxiv", "openalex", "s2") if s in keys)
    return CandidateInput(
        candidate=Candidate(kind=kind, keys=ordered, lom_id=lom_id,
                            statement=statement if kind == "claim" else None,
                            holdout_lom_ids=holdout_ids, references=references),
        graph_path=graph_path, id=cid)


def read_candidate_file(path: Path) -> CandidateInput:
    """Read one candidate JSON file (the input object of novelty.md)."""
    text = _read_text(path, "candidate file")
    return parse_candidate(parse_json(text, str(path)), str(path))


def read_candidate_batch(path: Path) -> list[tuple[int, CandidateInput]]:
    """Read a JSONL of input objects, one per line, as (line number, input); all lines must be valid."""
    text = _read_text(path, "batch file")
    out: list[tuple[int, CandidateInput]] = []
    problems: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            out.append((number, parse_candidate(parse_json(line, where), where)))
        except InputError as exc:
            problems.append(str(exc))
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise InputError("; ".join(problems[:5]) + more)
    if not out:
        raise InputError(f"{path}: no candidates (one JSON object per line expected)")
    return out


def _read_text(path: Path, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: {what} is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
