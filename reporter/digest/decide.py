"""Combine, decide, cap (docs/design/digest.md): one week's records in, one Decision per paper out.

The order is the contract's: score each paper from its three axes (exact,
in integer hundredths); map the score to KEEP / REVIEW / DROP; apply the
overrides (already covered: DROP; no abstract or criteria silent: never
KEEP); then, only when more papers are KEEP than `max_kept`, re-score
everyone with the stricter criteria pass, and if still over, keep the first
`max_kept` KEEPs by score, then relevance (`reporter.digest.relevance`),
then id, and demote the rest to REVIEW. A paper that was KEEP is never made
DROP by the cap or the stricter pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..pool.record import Record
from .axes import (
    FAILS_REQUIRED,
    NOT_IN_SCOPE,
    REQUIRED_UNCONFIRMED,
    SILENT,
    TRAP,
    CriteriaAxis,
    MatchAxis,
    NoveltyAxis,
    PriorKeep,
    count_terms,
    criteria_axis,
    has_abstract,
    match_axis,
    novelty_axis,
    week_terms,
)
from .config import DEFAULT_KEEP, DEFAULT_MAX_KEPT, DEFAULT_REVIEW
from .criteria import Criteria
from .meaning import Nearness, blend, close_in_meaning, week_meaning
from .rationale import COVERED, NEVER_KEEP, RESCUED, CapRank, Outcome, rationale
from .records import EARLIER_VERSION_NOVELTY, Axes, Calibration, Decision, JudgeEntry, paper_key, review_reason_of
from .relevance import query_terms, relevance
from .semantic import Model
from .watchlist import Watchlist

WEIGHTS = (45, 45, 10)
"""Weights of match, criteria and novelty, in hundredths: score = 100 * (0.45 m + 0.45 c + 0.10 n)."""
DRIFT_MIN = 2
"""A watchlist entry or a criteria concept is surfaced as drift from this many papers on."""
DRIFT_EXAMPLES = 5
"""Example ids listed per drift entry."""
_ORDER = {"KEEP": 0, "REVIEW": 1, "DROP": 2}


@dataclass(frozen=True)
class Thresholds:
    """The score bands: KEEP from `keep`, REVIEW from `review`, DROP below."""

    keep: int = DEFAULT_KEEP
    review: int = DEFAULT_REVIEW

    def band(self, score: int) -> str:
        """KEEP, REVIEW or DROP for a score."""
        return "KEEP" if score >= self.keep else "REVIEW" if score >= self.review else "DROP"


@dataclass(frozen=True)
class PaperAxes:
    """The three axes of one paper, with what each came from."""

    match: MatchAxis
    criteria: CriteriaAxis
    novelty: NoveltyAxis
    abstract: bool
    """The paper has an abstract."""
    relevance: float = 0.0
    """BM25F of the watchlist and In scope terms, the week as the corpus: orders papers of one score."""
    meaning: Nearness | None = None
    """Its similarity to the In scope concepts (`reporter.digest.meaning`); None with `[digest] semantic = false`."""
    order: float | None = None
    """The blend of relevance and similarity that orders papers of one score; None without meaning (relevance)."""


@dataclass(frozen=True)
class WeekOutcome:
    """One week's decisions, their calibration and the watchlist drift they show."""

    decisions: tuple[Decision, ...]
    """Every paper once: KEEP, then REVIEW, then DROP; by score (high first), relevance (high first), id."""
    calibration: Calibration
    watchlist_drift: dict[str, Any] = field(default_factory=dict)
    """Surfaced, never applied: see `watchlist_drift`."""
    close_in_meaning: list[dict[str, Any]] | None = None
    """Surfaced, never applied: papers not KEEP close in meaning to the In scope concepts (`meaning.close_in_meaning`);
    None with `[digest] semantic = false`."""


def combine(match: int, criteria: int, novelty: int) -> int:
    """The 0-100 score from axes in hundredths, exactly: 86.5 is 87 (half up, no float in between)."""
    total = WEIGHTS[0] * match + WEIGHTS[1] * criteria + WEIGHTS[2] * novelty  # hundredths of a point
    return (total + 50) // 100


def score_axes(records: Sequence[Record], watchlist: Watchlist, criteria: Criteria,
               prior: Sequence[PriorKeep], judged: Mapping[str, Sequence[JudgeEntry]] | None = None,
               model: Model | None = None, wanted: Sequence[tuple[str, str]] = ()) -> list[PaperAxes]:
    """The three axes and the relevance of every record (two match_phrases calls for the whole week).

    `judged`: each record's judge entries (a criteria judge is configured): Axis 2 is the judges'
    (`reporter.digest.judge.axis`), the keyword rule's for a paper a judge failed or has not answered.
    `model`: the embedding model (`reporter.digest.semantic`), for each paper's meaning and the order within a
    score; None: ordered by relevance alone. `wanted`: (id, text) of the papers the reader marked wanted in
    earlier weeks, for each paper's nearness to them (the close-in-meaning list only).
    """
    counts = count_terms(records, week_terms(watchlist, criteria))
    fits = criteria_axis(records, criteria, counts)
    if judged is not None:
        from .judge.axis import judged_axis
        fits = [judged_axis(k, judged[r.id], criteria) for r, k in zip(records, fits)]
    axes = [PaperAxes(m, c, n, has_abstract(r), rel) for r, m, c, n, rel in
            zip(records, match_axis(records, watchlist, counts), fits,
                novelty_axis(records, prior), relevance(records, query_terms(watchlist, criteria), counts))]
    if model is None or not records:
        return axes
    top = max(a.relevance for a in axes)
    return [replace(a, meaning=near, order=blend(a.relevance, near.similarity, top))
            for a, near in zip(axes, week_meaning(model, records, criteria, wanted))]


def decide_week(records: Sequence[Record], watchlist: Watchlist, criteria: Criteria,
                prior: Sequence[PriorKeep] = (), *, max_kept: int = DEFAULT_MAX_KEPT,
                thresholds: Thresholds = Thresholds(),
                merged: Mapping[str, Sequence[str]] | None = None,
                new_versions: Mapping[str, str] | None = None,
                judged: Mapping[str, Sequence[JudgeEntry]] | None = None,
                model: Model | None = None, wanted: Sequence[tuple[str, str]] = ()) -> WeekOutcome:
    """Decide every record of a week; `merged` maps a surviving id to the ids folded into it; `new_versions` maps
    the id of a paper listed again in a newer version to the prior week that decided it (tag `new-version-of:`);
    `judged` gives each record's judge entries when a criteria judge is configured (`score_axes`); `model`: the
    embedding model, for the order within a score and the close-in-meaning list (None: neither); `wanted`: the
    papers the reader marked wanted in earlier weeks (id, text), which that list reads too."""
    axes = score_axes(records, watchlist, criteria, prior, judged, model, wanted)
    outcome = decide(records, axes, criteria, max_kept=max_kept, thresholds=thresholds, merged=merged,
                     new_versions=new_versions)
    if model is None:
        return outcome
    meaning = {r.id: a.meaning for r, a in zip(records, axes)}
    close = close_in_meaning(outcome.decisions, meaning, {r.id: r for r in records}, model, criteria, watchlist)
    return replace(outcome, close_in_meaning=close)


def decide(records: Sequence[Record], axes: Sequence[PaperAxes], criteria: Criteria, *,
           max_kept: int = DEFAULT_MAX_KEPT, thresholds: Thresholds = Thresholds(),
           merged: Mapping[str, Sequence[str]] | None = None,
           new_versions: Mapping[str, str] | None = None) -> WeekOutcome:
    """Score, band, override, then the stricter pass and the cap when over `max_kept`."""
    merged, new_versions = merged or {}, new_versions or {}
    earlier = {r.id: next((new_versions[i] for i in (r.id, *merged.get(r.id, ())) if i in new_versions), None)
               for r in records}  # a merged paper is a new version when any of its ids is

    def judged(r: Record, a: PaperAxes, **kw: Any) -> Decision:
        return judge(r, a, criteria, thresholds, merged.get(r.id, ()), new_version_of=earlier[r.id], **kw)

    first = [judged(r, a) for r, a in zip(records, axes)]
    decisions, strict = first, False
    if _kept(first) > max_kept:
        strict = True
        decisions = [judged(r, a, strict=True, was_kept=before.decision == "KEEP")
                     for before, r, a in zip(first, records, axes)]
    demoted = 0
    if _kept(decisions) > max_kept:
        ranked = sorted((d for d in decisions if d.decision == "KEEP"), key=rank_key)
        last = ranked[max_kept - 1]
        measure = "order" if last.order is not None else "relevance"
        caps = {d.id: CapRank(k, len(ranked), max_kept, _order(d), last.id, last.score, _order(last), measure)
                for k, d in enumerate(ranked, 1)}
        demoted = len(ranked) - max_kept
        decisions = [judged(r, a, strict=True, cap=caps[d.id]) if d.id in caps else d
                     for d, r, a in zip(decisions, records, axes)]
    decisions.sort(key=lambda d: (_ORDER[d.decision], *rank_key(d)))
    return WeekOutcome(tuple(decisions), calibrate(decisions, axes, demoted, strict),
                       watchlist_drift(decisions, axes, records, criteria))


def rank_key(d: Decision) -> tuple[int, float, str]:
    """The order within one decision: score (high first), then the order within a score (high first: the blend of
    relevance and similarity, `meaning.blend`; relevance alone without meaning), then id."""
    return (-d.score, -_order(d), d.id)


def _order(d: Decision) -> float:
    return d.order if d.order is not None else (d.relevance or 0.0)


def judge(record: Record, axes: PaperAxes, criteria: Criteria, thresholds: Thresholds,
          merged_ids: Sequence[str] = (), *, strict: bool = False, was_kept: bool = False,
          cap: CapRank | None = None, new_version_of: str | None = None) -> Decision:
    """One paper's decision: its score, band and overrides, with rationale and tags.

    `strict`: the stricter criteria pass; `was_kept`: the paper was KEEP in the
    first pass, so the stricter pass may make it REVIEW but never DROP; `cap`:
    the paper is a KEEP ranked under the cap (beyond `max_kept`, it is REVIEW);
    `new_version_of`: the prior week that decided an earlier version of it.
    """
    m, c, n = axes.match.value, axes.criteria.value(strict), axes.novelty.value
    score = combine(m, c, n)
    band = decision = thresholds.band(score)
    override = None
    tags: list[str] = []
    rule = axes.criteria.rule
    if rule in (SILENT, TRAP, FAILS_REQUIRED, REQUIRED_UNCONFIRMED):
        tags.append(rule)
    tags.extend(axes.criteria.flags)
    if strict and axes.criteria.value(True) != axes.criteria.value(False):
        tags.append("stricter-pass")
    if n == EARLIER_VERSION_NOVELTY:
        tags.append(f"journal-version-of:{axes.novelty.covered_by.week}")
    if new_version_of is not None:
        tags.append(f"new-version-of:{new_version_of}")
    if not axes.abstract:
        tags.append("no-abstract")
    if n == 0:
        decision, override = "DROP", COVERED
        tags.append("already-covered")
    elif decision == "KEEP" and (not axes.abstract or rule == SILENT or axes.criteria.never_keep):
        decision, override = "REVIEW", NEVER_KEEP
    elif decision == "DROP" and was_kept:
        decision, override = "REVIEW", RESCUED
    elif cap is not None and cap.demoted:
        decision = "REVIEW"
        tags.append("demoted-for-cap")
    cause = drop_cause(axes.criteria, axes.novelty) if decision == "DROP" else None
    reason = (review_reason_of(tuple(tags), score, thresholds.keep, thresholds.review) if decision == "REVIEW"
              else None)
    line = rationale(Outcome(decision, score, band, cause, override, cap, strict), axes.match, axes.criteria,
                     axes.novelty, criteria, keep=thresholds.keep, review=thresholds.review, abstract=axes.abstract)
    return Decision(
        id=record.id, decision=decision, score=score, axes=Axes(m / 100, c / 100, n / 100),
        rationale=line, tags=tuple(tags), title=record.title, cause=cause, review_reason=reason,
        criteria_lines=tuple(sorted({x.line for x in axes.criteria.cited})),
        matched_terms=axes.match.entries, merged_ids=tuple(merged_ids), relevance=axes.relevance,
        authors=record.authors, published=record.published, venue=record.venue, categories=record.categories,
        abstract=record.abstract, version=record.version, criteria_source=axes.criteria.source,
        judges=axes.criteria.judges, similarity=None if axes.meaning is None else axes.meaning.similarity,
        order=axes.order, key=paper_key(record.id))


def drop_cause(criteria: CriteriaAxis, novelty: NoveltyAxis) -> str:
    """Why a DROP was dropped (one of DROP_CAUSES): the override first, then the criteria, else a weak match."""
    if novelty.value == 0:
        return "already-covered"
    return {TRAP: "look-alike-trap", FAILS_REQUIRED: "fails-required", NOT_IN_SCOPE: "not-in-scope"}.get(
        criteria.rule, "weak-match")


def calibrate(decisions: Sequence[Decision], axes: Sequence[PaperAxes], demoted: int,
              strict: bool) -> Calibration:
    """The calibration block: counts per decision, the overrides and the cap, a score histogram."""
    count = Counter(d.decision for d in decisions)
    histogram = [0] * 10
    for d in decisions:
        histogram[min(d.score // 10, 9)] += 1
    return Calibration(kept=count["KEEP"], review=count["REVIEW"], dropped=count["DROP"],
                       force_dropped_already_covered=sum(a.novelty.value == 0 for a in axes),
                       demoted_for_cap=demoted, stricter_pass_applied=strict, histogram=tuple(histogram))


def watchlist_drift(decisions: Sequence[Decision], axes: Sequence[PaperAxes], records: Sequence[Record],
                    criteria: Criteria) -> dict[str, Any]:
    """Themes the criteria keep rejecting, and concepts the watchlist keeps missing: surfaced, never applied.

    `entries_rejected_by_criteria`: watchlist entries that matched papers the
    criteria scored 0.0 (look-alike trap, not in scope, fails required) at least
    DRIFT_MIN times and for most of the papers they matched, with the criteria
    lines that rejected them and how many of those papers were dropped.
    `concepts_missed_by_watchlist`: In scope concepts that matched at least
    DRIFT_MIN papers no watchlist entry matched.
    """
    by_id = {d.id: d for d in decisions}
    entries: dict[str, dict[str, Any]] = {}
    concepts: dict[int, dict[str, Any]] = {}
    for record, a in zip(records, axes):
        d = by_id[record.id]
        rejected = a.criteria.rule in (TRAP, NOT_IN_SCOPE, FAILS_REQUIRED)
        for phrase in a.match.entries:
            e = entries.setdefault(phrase, {"phrase": phrase, "matched": 0, "rejected_by_criteria": 0, "dropped": 0,
                                            "causes": Counter(), "criteria_lines": Counter(), "ids": []})
            e["matched"] += 1
            if rejected:
                e["rejected_by_criteria"] += 1
                e["dropped"] += d.decision == "DROP"
                e["causes"][a.criteria.rule] += 1
                e["criteria_lines"].update(criteria.cite(c) for c in a.criteria.cited)
                e["ids"].append(d.id)
        if a.match.value == 0:
            for c in a.criteria.in_scope:
                k = concepts.setdefault(c.line, {"concept": criteria.cite(c), "line": c.line,
                                                 "missed_by_watchlist": 0, "ids": []})
                k["missed_by_watchlist"] += 1
                k["ids"].append(d.id)
    rejected = [{**e, "causes": dict(sorted(e["causes"].items())), "ids": sorted(e["ids"])[:DRIFT_EXAMPLES],
                 "criteria_lines": dict(sorted(e["criteria_lines"].items()))}
                for e in entries.values()
                if e["rejected_by_criteria"] >= DRIFT_MIN and 2 * e["rejected_by_criteria"] > e["matched"]]
    missed = [{**k, "ids": sorted(k["ids"])[:DRIFT_EXAMPLES]} for k in concepts.values()
              if k["missed_by_watchlist"] >= DRIFT_MIN]
    return {"note": "surfaced, never applied: the watchlist is not changed by the tool",
            "entries_rejected_by_criteria": sorted(rejected, key=lambda e: (-e["rejected_by_criteria"], e["phrase"])),
            "concepts_missed_by_watchlist": sorted(missed, key=lambda k: (-k["missed_by_watchlist"], k["line"]))}


def _kept(decisions: Sequence[Decision]) -> int:
    return sum(d.decision == "KEEP" for d in decisions)
