"""The novelty page model, from a results JSONL of `reporter novelty --batch`: no templates here.

Novelty results are not part of a release: the page is rebuilt at every
build. It shows each verdict next to its evidence and counts per verdict;
it never sorts, colours or scores candidates by anything derived from a
verdict (the candidates stay in the batch file's order).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..novelty.results import STATUSES, VERDICTS, Blocking, ResultLine, result_lines
from .links import HOME, href, slug
from .models import CandidateRow, GraphUsed, IdList, NoveltyPage, NoveltySummary, VerdictCount
from .page_parts import meta

NOVELTY = "novelty"
SHOWN_IDS = 20  # ids listed per evidence cell; the count is always shown, so pages stay bounded
STATEMENT_CHARS = 300

VERDICT_MEANINGS = {
    "duplicate": "Rule 1: the candidate is already on the graph. A paper's graph id or one of its identifiers "
                 "(DOI, arXiv id, OpenAlex id, Semantic Scholar id) equals a paper's on the graph; a claim's "
                 "statement (spacing and capitals aside) equals a claim's on the graph.",
    "neighborhood": "Rule 2: the candidate cites at least one paper the graph has read or that carries a claim "
                    "(leaving out, when the candidate names them, the papers used to form it). Papers the graph "
                    "knows only because something cites them never count.",
    "novel": "Rule 4: no identifier matches, no reference is a paper the graph has read or that carries a claim, "
             "and the references of every such paper of the graph were checked: new against the graph as read.",
    "unknown": "No verdict could be reached: a lookup the verdict needed failed (status lookup_failed, the "
               "failed lookups listed), or papers the graph has read have references never checked (status "
               "insufficient_edges, those papers listed).",
}
STATUS_MEANINGS = {
    "ok": "The rules reached a verdict (duplicate, neighborhood or novel).",
    "lookup_failed": "A lookup the verdict needed failed (a stored ingest error about the candidate, or a "
                     "configured resolver that answered 429, missed or timed out): verdict unknown.",
    "insufficient_edges": "Rule 3, the coverage check: a paper the graph has read (or that carries a claim) has "
                          "references that were never checked, so new cannot be claimed: verdict unknown.",
    "incomparable": "Reserved for a later version of the rules; this version never gives it.",
}
NOT_A_RANKER = ("Every result on this page is marked as not a ranking. A verdict is evidence against the graph "
                "as read (what matched, which read or claim-bearing papers the candidate shares, what the "
                "graph has not covered, which lookups failed), never a score: nothing here ranks the "
                "candidates or says which idea deserves resources. Candidates are listed in the order of "
                "the batch file.")


def build_novelty_page(rows: list[dict[str, Any]], source: Path | str = "novelty results") -> NoveltyPage:
    """The novelty page from the lines of a results file (as `load_novelty_results` returns them)."""
    return novelty_page(result_lines(rows, source))


def novelty_page(lines: Sequence[ResultLine]) -> NoveltyPage:
    """The novelty page from results lines already read (`result_lines`)."""
    graphs: dict[tuple[str, str], int] = {}
    for line in lines:
        key = (line.graph.events_jsonl, line.graph.sha256)
        graphs[key] = graphs.get(key, 0) + 1
    used: set[str] = set()
    candidates = tuple(_candidate(line, used, single_graph=len(graphs) <= 1) for line in lines)
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


def _candidate(r: ResultLine, used: set[str], single_graph: bool) -> CandidateRow:
    statement = r.statement
    if statement is not None:
        statement = " ".join(statement.split())  # as rule 1 reads it, before lower-casing
        if len(statement) > STATEMENT_CHARS:
            statement = statement[: STATEMENT_CHARS - 1] + "…"
    return CandidateRow(
        anchor=_anchor(r.id, r.line, used), line=r.line, id=r.id, kind=r.kind, statement=statement,
        lom_id=r.lom_id, verdict=r.verdict, status=r.status, exact_match=r.matched_lom_id,
        holdout_applied=r.holdout_applied, holdout_ids=_ids(r.holdout_ids), in_sample=_ids(r.in_sample),
        holdout=_ids(r.holdout), coverage_gap=_ids(r.coverage_gap), blocking=tuple(_blocking(e) for e in r.blocking),
        graph=None if single_graph else f"{r.graph.events_jsonl} (sha256 {r.graph.sha256[:12]})")


def _anchor(cid: str | None, line: int, used: set[str]) -> str:
    """A fragment id per candidate: from its id when it has one, else its batch line; unique on the page."""
    base = "c-" + (slug(cid) if cid else f"line-{line}")
    anchor, n = base, 1
    while anchor in used:
        n += 1
        anchor = f"{base}-{n}"
    used.add(anchor)
    return anchor


def _ids(ids: tuple[str, ...]) -> IdList:
    """An evidence list as a page cell shows it: the first SHOWN_IDS, with the full count."""
    shown = ids[:SHOWN_IDS]
    return IdList(n=len(ids), ids=shown, more=len(ids) - len(shown))


def _blocking(entry: Blocking) -> str:
    answer = "no answer (timeout or network)" if entry.http_status is None else f"HTTP {entry.http_status}"
    return f"{entry.scheme} {entry.lookup}: {answer}" if entry.lookup else f"{entry.scheme}: {answer}"


__all__ = ["NOVELTY", "build_novelty_page", "novelty_page", "novelty_summary"]
