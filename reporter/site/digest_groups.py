"""How a digest week page groups its papers: REVIEW by why it waits for a reader, DROP by cause and rationale.

Read from the decisions alone, as `reporter digest` wrote them (each REVIEW's
`review_reason`, the week's thresholds and cap), so an archived page says only
what its week holds. Each REVIEW is listed under the reason the digest
recorded for it (the archive's reader derives it for a week decided before it
was recorded), the groups in the digest's REVIEW_REASONS order; the numbers
the groups' words quote are the week's settings and the digest's constants. Every DROP is listed under its cause and, within
it, under its rationale: a week's DROPs share a handful of rationales word for
word (1,933 DROPs of the real 2026-W22 have 15), so each is written once
above the papers it decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..digest.archive import (DROP_CAUSES, EARLIER_VERSION_NOVELTY, REVIEW_REASONS, SILENT_CRITERIA, Decision,
                              WeekSettings)
from ..errors import InternalError

CAUSES = {
    "already-covered": ("Already covered", "A prior week (W-1 to W-4) already kept this paper: dropped whatever "
                                           "its score."),
    "look-alike-trap": ("Look-alike trap", "An Out of scope concept matched and no In scope concept is in the "
                                           "title."),
    "fails-required": ("Fails required", "The abstract has no term of a Required concept."),
    "not-in-scope": ("Not in scope", "No In scope concept matched (only a Reduced fit one did)."),
    "weak-match": ("Weak match", "The score is below the REVIEW threshold: the watchlist barely matched."),
}
assert tuple(CAUSES) == DROP_CAUSES
RELEVANCE_DECIMALS = 4
"""decisions.json rounds a relevance to 4 decimals (docs/digest.md, "Relevance"); the page shows all four."""


@dataclass(frozen=True)
class Group:
    """Papers of one reason or cause, with what it means this week."""

    key: str
    """The reason (the digest's REVIEW_REASONS) or the cause (DROP_CAUSES)."""
    label: str
    """The reason in words."""
    meaning: str
    """What it means, with the week's numbers."""
    decisions: tuple[Decision, ...]
    """Its papers, in the order of decisions.json."""


def review_groups(decisions: Sequence[Decision], settings: WeekSettings) -> tuple[Group, ...]:
    """Every REVIEW in its group, the groups in REVIEW_REASONS order (only those with papers)."""
    keeps = [d for d in decisions if d.decision == "KEEP"]
    reviews = [d for d in decisions if d.decision == "REVIEW"]
    cap = settings.max_kept if settings.max_kept is not None else len(keeps)
    last = "none" if not keeps else ", ".join(
        x for x in (keeps[-1].id, f"score {keeps[-1].score}", relevance(keeps[-1])) if x)
    keep_at, review_at = settings.keep_threshold, settings.review_threshold
    words = {
        "over-cap": ("Over the cap", f"They scored KEEP, but more papers did than max_kept {cap} allows: all were "
                                     f"ranked by score, then {_within(keeps)}, then id, the first {cap} stayed "
                                     f"KEEP and these came next, in rank order. The last one kept: {last}."),
        "rescued": ("Kept before the stricter pass", f"KEEP in the first pass; the stricter criteria pass, run "
                                                     f"because more papers were KEEP than max_kept {cap} allows, "
                                                     f"scored them under the REVIEW threshold {review_at}, and a "
                                                     f"KEEP is never made DROP."),
        "no-abstract": ("No abstract", "The source gave no abstract, so the paper is never KEEP: read it to decide."),
        "judges-disagree": ("The judges disagree", "The two criteria judges' fits are two or more steps apart, or "
                                                   "one is silent and the other not: never KEEP, a reader decides."),
        "judge-failed": ("A judge failed", "A criteria judge's reply was a failure (its cause is in the rationale); "
                                           "the keyword rule decided Axis 2, and the paper is never KEEP."),
        "judge-missing": ("Not judged yet", "A criteria judge had not answered when the week was decided "
                                            "(--keyword-fallback): the keyword rule decided Axis 2, never KEEP."),
        "criteria-silent": ("Criteria silent", f"No concept of the criteria matched: their "
                                               f"{_fraction(SILENT_CRITERIA)} is a stand-in, not a fit, so the paper "
                                               f"is never KEEP."),
        "fails-required": ("Fails a required criterion", f"The abstract has no term of a Required concept, so the "
                                                         f"criteria score 0 and the score stays under the KEEP "
                                                         f"threshold {keep_at}."),
        "look-alike-trap": ("Look-alike trap", f"An Out of scope concept matched and no In scope concept is in the "
                                               f"title, so the criteria score 0 and the score stays under the KEEP "
                                               f"threshold {keep_at}."),
        "earlier-version": ("An earlier version was kept", f"A prior week kept another version of the paper "
                                                           f"(novelty {_fraction(EARLIER_VERSION_NOVELTY)}), and the "
                                                           f"score is under the KEEP threshold {keep_at}."),
        "near-threshold": ("Near the threshold", f"A score from {review_at} to {keep_at - 1}: at or over the REVIEW "
                                                 f"threshold, under the KEEP one. The rationale says what was weak."),
        "other": ("For review", "The rationale says why."),
    }
    by_reason: dict[str, list[Decision]] = {r: [] for r in REVIEW_REASONS}
    for d in reviews:
        if d.review_reason not in by_reason:  # the archive's reader gives every REVIEW its reason
            raise InternalError(f"{d.id}: a REVIEW without its review_reason reached the week page")
        by_reason[d.review_reason].append(d)
    return tuple(Group(r, *words[r], tuple(ds)) for r, ds in by_reason.items() if ds)


def cap_ranks(decisions: Sequence[Decision]) -> dict[str, str]:
    """The rank, among every KEEP by score when the cap applied, of the KEEPs and of the REVIEWs over the cap.

    decisions.json lists both in the cap's order (score, then relevance, then id), the KEEPs first: the
    ranks follow from the order, as the rationales state them. Empty when nothing was over the cap.
    """
    ranked = [d for d in decisions if d.decision == "KEEP"] + [
        d for d in decisions if d.decision == "REVIEW" and "demoted-for-cap" in d.tags]
    if len(ranked) == sum(d.decision == "KEEP" for d in decisions):
        return {}
    return {d.id: f"rank {k} of {len(ranked)}" for k, d in enumerate(ranked, 1)}


def drop_groups(decisions: Sequence[Decision]) -> tuple[Group, ...]:
    """Every DROP under its cause, in DROP_CAUSES order (only causes with papers)."""
    return tuple(Group(cause, *CAUSES[cause], tuple(d for d in decisions if d.cause == cause))
                 for cause in DROP_CAUSES if any(d.cause == cause for d in decisions))


def by_rationale(decisions: Sequence[Decision]) -> tuple[tuple[str, tuple[Decision, ...]], ...]:
    """Papers by their rationale, word for word: each rationale with its papers, in the order it first appears."""
    found: dict[str, list[Decision]] = {}
    for d in decisions:
        found.setdefault(d.rationale, []).append(d)
    return tuple((r, tuple(ds)) for r, ds in found.items())


def ranking(d: Decision, ranks: dict[str, str]) -> str:
    """A paper's rank when the cap applied and its relevance, joined: what explains where it stands."""
    return " · ".join(x for x in (ranks.get(d.id, ""), relevance(d)) if x)


def _fraction(hundredths: int) -> str:
    """An axis value in hundredths as the rationales write it: 70 is `0.70`."""
    return f"{hundredths / 100:.2f}"


def relevance(d: Decision) -> str:
    """`relevance 3.1416`, with `· similarity 0.6121` when the week was decided with meaning (docs/digest.md,
    "Meaning"); empty for a decisions.json written before relevance was recorded."""
    if d.relevance is None:
        return ""
    shown = f"relevance {d.relevance:.{RELEVANCE_DECIMALS}f}"
    return shown if d.similarity is None else f"{shown} · similarity {d.similarity:.{RELEVANCE_DECIMALS}f}"


def _within(keeps: Sequence[Decision]) -> str:
    """What ordered papers of one score: relevance, or (rules digest.4) the blend of relevance and similarity."""
    return "relevance" if not keeps or keeps[0].similarity is None else "the blend of relevance and similarity"


__all__ = ["CAUSES", "Group", "by_rationale", "cap_ranks", "drop_groups", "ranking", "relevance", "review_groups"]
