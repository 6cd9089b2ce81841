"""The novelty page: every checked candidate with its verdict and evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .common import PageMeta
from .home import VerdictCount

@dataclass(frozen=True)
class IdList:
    """Node ids from a results line, shown up to a bound with the full count."""

    n: int
    """How many there are (the count the results file states)."""
    ids: tuple[str, ...]
    """The first of them, as the file sorts them (at most NoveltyPage's bound)."""
    more: int
    """How many are not shown."""


@dataclass(frozen=True)
class CandidateRow:
    """One checked candidate: its verdict next to its evidence, as one results line states them."""

    anchor: str
    """Fragment id of its row (`c-<id>`, or `c-line-<n>` without an id)."""
    line: int
    """Its line in the batch file."""
    id: str | None
    """The caller's id, or None."""
    kind: str
    """`paper` or `claim`."""
    statement: str | None
    """A claim's statement (whitespace collapsed, shortened to 300 characters), None for a paper."""
    lom_id: str
    """The candidate's lom_id (the matched paper's when rule 1 matched a paper)."""
    verdict: str
    """duplicate, neighborhood, novel or unknown."""
    status: str
    """ok, lookup_failed, insufficient_edges (or the reserved incomparable)."""
    exact_match: str | None
    """Rule 1's matched lom_id (a claim's: the matched claim's about_lom_id), or None."""
    holdout_applied: bool
    """False when no holdout was given: the result is in-sample only (labelled so)."""
    holdout_ids: IdList
    """The candidate's holdout_lom_ids (the nodes excluded from the holdout slice)."""
    in_sample: IdList
    """Shared read or claim-bearing references, all of them."""
    holdout: IdList
    """Shared nodes outside the holdout (equal to in_sample when no holdout was given)."""
    coverage_gap: IdList
    """Uncovered read or claim-bearing nodes of the graph (empty unless rule 3 decided)."""
    blocking: tuple[str, ...]
    """Failed lookups the verdict needed, as `scheme lookup: HTTP status` (or `no answer`)."""
    graph: str | None
    """The graph it was checked against (events file as given, sha256 prefix); None when all share one."""


@dataclass(frozen=True)
class GraphUsed:
    """A graph some candidates were checked against."""

    events_jsonl: str
    """The events file as the results line gives it."""
    sha256: str
    """sha256 of its bytes: the graph version the verdicts are against."""
    candidates: int
    """Candidates checked against it."""


@dataclass(frozen=True)
class NoveltyPage:
    """The novelty checks of this build: every candidate with its verdict and evidence; rebuilt every build."""

    TEMPLATE: ClassVar[str] = "novelty"
    meta: PageMeta
    """Title, path, twin link."""
    not_a_ranker: str
    """The sentence saying that a verdict is evidence, never a score (every results line says not_a_ranker: true;
    the page says it in words)."""
    candidates: tuple[CandidateRow, ...]
    """Every checked candidate, in the batch file's order (never sorted by anything derived from a verdict)."""
    verdicts: tuple[VerdictCount, ...]
    """Candidates per verdict with what each verdict means, in the fixed order of novelty.md."""
    statuses: tuple[VerdictCount, ...]
    """Candidates per status with what each status means (the reserved `incomparable` only when present)."""
    graphs: tuple[GraphUsed, ...]
    """The graphs the candidates were checked against, in order of first use."""
    shown: int
    """At most this many ids are listed per evidence cell; the count is always shown."""
    rules_note: str = ("The rules apply in order (a match on the graph, shared papers, the graph's coverage, then "
                       "new); the first that applies decides.")
    """How a verdict is reached."""
    graph_note: str = ("Each verdict holds against the graph as read when it was checked, named by the sha256 of its "
                       "events file. Novelty results are not part of a release: this page is rebuilt at every build.")
    """Which graph a verdict holds against, and why this page is rebuilt."""
    candidates_note: str = ("In the order of the batch file. The shared papers are the candidate's references that "
                            "the graph has read or that carry a claim (a paper the graph knows only because "
                            "something cites it is never shared). A candidate may name the papers used to form it: "
                            "those are held out, and the verdict counts only the shared papers outside them; "
                            "without such a list it counts every shared paper (marked \"nothing held out\").")
    """What the evidence columns mean, in a reader's words."""
