"""The novelty page model, from a results JSONL of `reporter novelty --batch`: no templates here.

Novelty results are not part of a release: the page is rebuilt at every
build. It shows each verdict next to its evidence and counts per verdict;
it never sorts, colours or scores candidates by anything derived from a
verdict (the candidates stay in the batch file's order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..novelty.verdict import STATUSES, VERDICTS
from .links import HOME, href, slug
from .models import CandidateRow, GraphUsed, IdList, NoveltyPage, NoveltySummary, VerdictCount
from .page_parts import meta

NOVELTY = "novelty"
SHOWN_IDS = 20  # ids listed per evidence cell; the count is always shown, so pages stay bounded
STATEMENT_CHARS = 300

VERDICT_MEANINGS = {
    "duplicate": "Rule 1: the candidate is already on the graph. A paper's lom_id or one of its keys "
                 "(DOI, arXiv, OpenAlex, S2) equals an ingested paper's; a claim's statement (whitespace "
                 "collapsed, lower-cased) equals an ingested claim's.",
    "neighborhood": "Rule 2: the candidate cites at least one read or claim-bearing paper of the graph "
                    "(outside its holdout when a holdout was given; in-sample otherwise). Stubs never count.",
    "novel": "Rule 4: no key match, no shared read or claim-bearing reference, and every read or "
             "claim-bearing node of the graph has recorded reference coverage: new against the graph as read.",
    "unknown": "No verdict could be reached: a lookup the verdict needed failed (status lookup_failed, the "
               "lookups listed), or the graph has read or claim-bearing nodes whose references were never "
               "checked (status insufficient_edges, the nodes listed as the coverage gap).",
}
STATUS_MEANINGS = {
    "ok": "The rules reached a verdict (duplicate, neighborhood or novel).",
    "lookup_failed": "A lookup the verdict needed failed (a stored ingest error about the candidate, or a "
                     "configured resolver that answered 429, missed or timed out): verdict unknown.",
    "insufficient_edges": "Rule 3, the coverage gate: a read or claim-bearing node of the graph is not "
                          "covered by a recorded reference check, so novel cannot be claimed: verdict unknown.",
    "incomparable": "Reserved by novelty.md; this version never emits it.",
}
NOT_A_RANKER = ("Every result on this page says not_a_ranker: true. A verdict is evidence against the graph "
                "as read (what matched, which read or claim-bearing papers the candidate shares, what the "
                "graph has not covered, which lookups failed), never a score: nothing here ranks the "
                "candidates or says which idea deserves resources. Candidates are listed in the order of "
                "the batch file.")


def build_novelty_page(rows: list[dict[str, Any]], source: Path | str = "novelty results") -> NoveltyPage:
    """The novelty page from the lines of a results file (as `load_novelty_results` returns them)."""
    graphs: dict[tuple[str, str], int] = {}
    for i, row in enumerate(rows, 1):
        g = _field(row, ("graph",), dict, source, i)
        key = (_field(g, ("events_jsonl",), str, source, i), _field(g, ("sha256",), str, source, i))
        graphs[key] = graphs.get(key, 0) + 1
    used: set[str] = set()
    candidates = tuple(_candidate(row, source, i, used, single_graph=len(graphs) <= 1)
                       for i, row in enumerate(rows, 1))
    statuses = [s for s in STATUSES if s != "incomparable" or any(c.status == s for c in candidates)]
    return NoveltyPage(
        meta=meta(NOVELTY, "Novelty checks", [("Home", HOME)], archived=False),
        not_a_ranker=NOT_A_RANKER, candidates=candidates,
        verdicts=_counts(candidates, "verdict", VERDICTS, VERDICT_MEANINGS, "v"),
        statuses=_counts(candidates, "status", statuses, STATUS_MEANINGS, "s"),
        graphs=tuple(GraphUsed(path, sha, n) for (path, sha), n in graphs.items()), shown=SHOWN_IDS)


def novelty_summary(page: NoveltyPage, from_page: str = HOME) -> NoveltySummary:
    """What the home page says about the novelty page."""
    return NoveltySummary(href=href(from_page, NOVELTY), candidates=len(page.candidates), verdicts=page.verdicts)


def _counts(candidates: tuple[CandidateRow, ...], attr: str, names, meanings: dict[str, str],
            prefix: str) -> tuple[VerdictCount, ...]:
    return tuple(VerdictCount(name, f"{prefix}-{name}", sum(getattr(c, attr) == name for c in candidates),
                              meanings[name]) for name in names)


def _candidate(row: dict[str, Any], source: Path | str, i: int, used: set[str], single_graph: bool) -> CandidateRow:
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
    if isinstance(statement, str):
        statement = " ".join(statement.split())  # as rule 1 reads it, before lower-casing
    if isinstance(statement, str) and len(statement) > STATEMENT_CHARS:
        statement = statement[: STATEMENT_CHARS - 1] + "…"
    holdout_ids = cand.get("holdout_lom_ids") or []
    graph = row["graph"]
    return CandidateRow(
        anchor=_anchor(cid, line, used), line=line, id=cid,
        kind=_field(cand, ("kind",), str, source, i),
        statement=statement if isinstance(statement, str) else None,
        lom_id=_field(result, ("lom_id",), str, source, i), verdict=verdict, status=status,
        exact_match=matched, holdout_applied=applied,
        holdout_ids=_ids(holdout_ids, len(holdout_ids), source, i, "candidate.holdout_lom_ids"),
        in_sample=_slice(overlap, "in_sample", source, i), holdout=_slice(overlap, "holdout", source, i),
        coverage_gap=_ids(_field(result, ("coverage_gap",), list, source, i), None, source, i, "coverage_gap"),
        blocking=tuple(_blocking(e, source, i) for e in _field(result, ("ingest_errors_blocking",), list, source, i)),
        graph=None if single_graph else f"{graph['events_jsonl']} (sha256 {graph['sha256'][:12]})")


def _anchor(cid: str | None, line: int, used: set[str]) -> str:
    """A fragment id per candidate: from its id when it has one, else its batch line; unique on the page."""
    base = "c-" + (slug(cid) if cid else f"line-{line}")
    anchor, n = base, 1
    while anchor in used:
        n += 1
        anchor = f"{base}-{n}"
    used.add(anchor)
    return anchor


def _slice(overlap: dict[str, Any], name: str, source: Path | str, i: int) -> IdList:
    part = _field(overlap, (name,), dict, source, i)
    ids = _field(part, ("shared_lom_ids",), list, source, i)
    return _ids(ids, _field(part, ("n_shared",), int, source, i), source, i, f"citation_overlap.{name}")


def _ids(ids: list[Any], n: int | None, source: Path | str, i: int, name: str) -> IdList:
    if not all(isinstance(x, str) for x in ids):
        raise InputError(f"{source}: results line {i}: {name} must list lom_id strings")
    if n is not None and n != len(ids):
        raise InputError(f"{source}: results line {i}: {name}: n_shared {n} but {len(ids)} ids listed")
    shown = tuple(ids[:SHOWN_IDS])
    return IdList(n=len(ids), ids=shown, more=len(ids) - len(shown))


def _blocking(entry: Any, source: Path | str, i: int) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get("scheme"), str):
        raise InputError(f"{source}: results line {i}: each ingest_errors_blocking entry needs a scheme")
    status = entry.get("http_status")
    answer = "no answer (timeout or network)" if status is None else f"HTTP {status}"
    lookup = entry.get("lookup")
    return f"{entry['scheme']} {lookup}: {answer}" if lookup else f"{entry['scheme']}: {answer}"


def _field(obj: dict[str, Any], path: tuple[str, ...], kind: type, source: Path | str, i: int) -> Any:
    value: Any = obj
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(f"{source}: results line {i}: field {'.'.join(path)!r} must be {kind.__name__}, "
                         f"got {value!r}")
    return value


__all__ = ["NOVELTY", "build_novelty_page", "novelty_summary"]
