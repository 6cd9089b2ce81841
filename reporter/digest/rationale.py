"""A decision's one line (docs/digest.md, "Rationales"): the decisive reason first, in words, then the numbers.

    KEEP: strong match and in scope (score 100: match 1.00, criteria 1.00, novelty 1.00); match: ...
    REVIEW: strong match, but fails a required criterion (criteria.md:11 "Must involve language models";
        score 55, under the KEEP threshold 70: match 1.00, criteria 0.00, novelty 1.00); match: ...
    DROP (weak-match): no watchlist phrase matched, and no criteria concept matched (score 42, below the
        REVIEW threshold 50: match 0.00, criteria silent 0.70, novelty 1.00); match: ...

The head names the rule that decided (an override, the cap, or the score's
band with what was strong and what was weak), quoting the criteria line
when a criteria rule scored 0; the numbers follow in one parenthesis; then
what each axis came from (`match: `, `criteria: `, `novelty: `), each
quoting its phrases, lines or prior week, so the line can be audited. A
silent criteria value is written `criteria silent 0.70`: a stand-in that
never KEEPs, not a fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .axes import FAILS_REQUIRED, IN_SCOPE_FIT, JUDGE_FAILED, JUDGES_DISAGREE, NOT_IN_SCOPE, PARTIAL, PARTLY, REDUCED, \
    REQUIRED_UNCONFIRMED, SILENT, TRAP, CriteriaAxis, MatchAxis, NoveltyAxis
from .criteria import Criteria
from .records import CRITERIA_CAUSES, EARLIER_VERSION_NOVELTY
from .relevance import DECIMALS

COVERED, NEVER_KEEP, RESCUED = "already-covered", "never-keep", "rescued"
"""The overrides a head can name: novelty 0 (DROP), no abstract or criteria silent (never KEEP), a KEEP the
stricter pass would have dropped (REVIEW)."""
_CRITERIA_WORDS = {
    SILENT: "no criteria concept matched",
    TRAP: "an Out of scope concept matched and no In scope concept is in the title",
    NOT_IN_SCOPE: "only a Reduced fit concept matched, no In scope one",
    FAILS_REQUIRED: "fails a required criterion",
    PARTLY: "only partly in scope",
    REQUIRED_UNCONFIRMED: "a required criterion unconfirmed",
    REDUCED: "a reduced fit",
    IN_SCOPE_FIT: "in scope",
    PARTIAL: "in scope only once, in the abstract",
}
_QUOTED = (TRAP, NOT_IN_SCOPE, FAILS_REQUIRED, REQUIRED_UNCONFIRMED)
"""The rules that score 0, and the Required concept left unconfirmed: the head quotes the line that decided."""


@dataclass(frozen=True)
class CapRank:
    """Where a KEEP stood when the cap applied: its rank by score, relevance, id, and the last one kept."""

    rank: int
    """1 for the first KEEP by score, relevance, id."""
    of: int
    """The KEEPs ranked."""
    max_kept: int
    """The cap: ranks beyond it are REVIEW."""
    relevance: float
    """This paper's relevance."""
    last_id: str
    """The last paper kept (rank max_kept), what a demoted paper is compared with."""
    last_score: int
    last_relevance: float
    measure: str = "relevance"
    """What `relevance` and `last_relevance` are: `relevance`, or `order` (the blend of relevance and similarity,
    docs/digest.md, "Meaning")."""

    @property
    def demoted(self) -> bool:
        return self.rank > self.max_kept


@dataclass(frozen=True)
class Outcome:
    """What decided one paper, for its rationale."""

    decision: str
    """KEEP, REVIEW or DROP: what was decided."""
    score: int
    band: str
    """KEEP, REVIEW or DROP for the score alone (before the overrides and the cap)."""
    cause: str | None = None
    """A DROP's cause (one of DROP_CAUSES)."""
    override: str | None = None
    """COVERED, NEVER_KEEP, RESCUED or None."""
    cap: CapRank | None = None
    """The paper's rank when the cap demoted some KEEPs."""
    strict: bool = False
    """Scored by the stricter criteria pass."""


def rationale(outcome: Outcome, match: MatchAxis, fit: CriteriaAxis, novelty: NoveltyAxis, criteria: Criteria, *,
              keep: int, review: int, abstract: bool) -> str:
    """The one line: the head (decisive reason, then the numbers), then what each axis came from."""
    parts = [head(outcome, match, fit, novelty, criteria, keep=keep, review=review, abstract=abstract),
             f"match: {match.describe()}", f"criteria: {fit.describe(criteria, outcome.strict)}",
             f"novelty: {novelty.describe()}"]
    return "; ".join(parts) + "."


def head(o: Outcome, match: MatchAxis, fit: CriteriaAxis, novelty: NoveltyAxis, criteria: Criteria, *,
         keep: int, review: int, abstract: bool) -> str:
    """`DECISION (cause): why, in words (the quoted line; score S, its band: match M, criteria C, novelty N)`."""
    c = fit.value(o.strict)
    label = f"{o.decision} ({o.cause})" if o.cause else o.decision
    numbers = (f"match {match.value / 100:.2f}, criteria {'silent ' if fit.rule == SILENT else ''}{c / 100:.2f}, "
               f"novelty {novelty.value / 100:.2f}")
    band = {"KEEP": "", "REVIEW": f", under the KEEP threshold {keep}",
            "DROP": f", below the REVIEW threshold {review}"}[o.band]
    if o.override == COVERED:
        return (f"{label}: already kept in {novelty.covered_by.week}, so DROP whatever the score "
                f"(score {o.score}: {numbers})")
    strong, weak = _sides(match.value, fit, c, novelty)
    if o.override == NEVER_KEEP and fit.rule == SILENT:
        weak = [w for w in weak if w != criteria_words(fit)]  # the override says it
    if o.cause in CRITERIA_CAUSES:
        weak.sort(key=lambda w: w != criteria_words(fit))  # the criteria's rule first: it decided
        summary = ", and ".join(weak) + (f", though {' and '.join(strong)}" if strong else "")
    else:
        summary = ", but ".join(x for x in (" and ".join(strong), ", and ".join(weak)) if x)
    quoted = f"{criteria.cite(fit.cited[0])}; " if fit.rule in _QUOTED and fit.cited else ""
    relevance = f", {o.cap.measure} {o.cap.relevance:.{DECIMALS}f}" if o.cap and not o.cap.demoted else ""
    tail = f"{summary} ({quoted}score {o.score}{relevance}{band}: {numbers})"
    if o.override == NEVER_KEEP:
        why = " and ".join(x for x, on in (("no abstract", not abstract),
                                           ("the criteria are silent", fit.rule == SILENT),
                                           ("the judges disagree", JUDGES_DISAGREE in fit.flags),
                                           ("a judge failed", JUDGE_FAILED in fit.flags)) if on)
        return f"{label}: {why}, so never KEEP; {tail}"
    if o.override == RESCUED:
        return f"{label}: KEEP before the stricter pass, and a KEEP is never made DROP; {tail}"
    if o.cap is not None:
        r = o.cap
        if r.demoted:
            return (f"{label}: over the cap, KEEP rank {r.rank} of {r.of} by score, {r.measure}, id with max_kept "
                    f"{r.max_kept} ({r.measure} {r.relevance:.{DECIMALS}f}; the last kept, {r.last_id}: score "
                    f"{r.last_score}, {r.measure} {r.last_relevance:.{DECIMALS}f}); {tail}")
        return f"{label}: rank {r.rank} of {r.of} by score, {r.measure}, id, within max_kept {r.max_kept}; {tail}"
    return f"{label}: {tail}"


def _sides(m: int, fit: CriteriaAxis, c: int, novelty: NoveltyAxis) -> tuple[list[str], list[str]]:
    """What was strong and what was weak, in words: match, then criteria, then novelty."""
    strong: list[str] = []
    weak: list[str] = []
    if m == 0:
        weak.append("no watchlist phrase matched")
    else:
        (strong if m >= 70 else weak).append(
            "strong match" if m == 100 else "the watchlist matched" if m >= 70 else "the watchlist barely matched")
    (strong if c >= 70 and fit.rule not in (SILENT, REQUIRED_UNCONFIRMED) else weak).append(criteria_words(fit))
    if novelty.value == EARLIER_VERSION_NOVELTY:
        weak.append(f"an earlier version was kept in {novelty.covered_by.week}")
    return strong, weak


def criteria_words(fit: CriteriaAxis) -> str:
    """The criteria's rule in words: the judge's fit when a judge decided (`words`), else the keyword rule's."""
    return getattr(fit, "words", "") or _CRITERIA_WORDS[fit.rule]


__all__ = ["COVERED", "NEVER_KEEP", "RESCUED", "CapRank", "Outcome", "head", "rationale"]
