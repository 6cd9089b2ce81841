"""Combine, decide, override, the stricter pass and the cap (docs/design/digest.md), each rule on a built record."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.digest.axes import PriorKeep
from reporter.digest.criteria import load_criteria, parse_criteria
from reporter.digest.decide import Thresholds, combine, decide_week
from reporter.digest.records import CRITERIA_CAUSES, DROP_CAUSES
from reporter.pool.record import Record
from reporter.digest.watchlist import parse_watchlist

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
CRITERIA = load_criteria(FIXTURES / "criteria.md")
WATCH = parse_watchlist("protein language model\nESM*\t1.5\nprotein design\n", "w.txt")
EMPIRICAL = "We evaluate it on a benchmark."


def rec(id: str, title: str, abstract: str | None = EMPIRICAL, related: tuple = ()) -> Record:
    return Record(id=id, title=title, abstract=abstract, related_ids=related)


def one(record: Record, prior=(), **kw):
    [d] = decide_week([record], WATCH, CRITERIA, prior, **kw).decisions
    return d


# --- the score -----------------------------------------------------------------------------------------


def test_combine_is_exact_half_up():
    # 0.45*70 + 0.45*100 + 0.10*100 = 86.5 -> 87 (float arithmetic and round() both give 86)
    assert combine(70, 100, 100) == 87
    assert combine(100, 70, 100) == 87
    assert combine(10, 40, 100) == 33  # 32.5: float gives 32.49999999999999
    assert combine(0, 0, 0) == 0 and combine(100, 100, 100) == 100 and combine(0, 70, 100) == 42


@settings(deadline=None)  # no wall-clock limit per example: the machine may be busy
@given(st.integers(0, 100), st.integers(0, 100), st.sampled_from([0, 50, 100]))
def test_combine_equals_the_formula_in_fractions(m, c, n):
    exact = 100 * (Fraction(45, 100) * Fraction(m, 100) + Fraction(45, 100) * Fraction(c, 100)
                   + Fraction(10, 100) * Fraction(n, 100))
    assert combine(m, c, n) == math.floor(exact + Fraction(1, 2))


def test_the_rounding_example_end_to_end():
    # match 0.7 (the phrase in the title only), criteria 1.0 (ESM in the title), novelty 1.0: 86.5 -> 87
    w = parse_watchlist("scaling law*\n", "w.txt")
    [d] = decide_week([rec("doi:2", "Scaling laws for ESM", "We evaluate accuracy.")], w, CRITERIA).decisions
    assert (d.axes.match, d.axes.criteria, d.axes.novelty, d.score, d.decision) == (0.7, 1.0, 1.0, 87, "KEEP")


@pytest.mark.parametrize("score, band", [(100, "KEEP"), (70, "KEEP"), (69, "REVIEW"), (50, "REVIEW"),
                                         (49, "DROP"), (0, "DROP")])
def test_default_thresholds(score, band):
    assert Thresholds().band(score) == band


def test_thresholds_are_configurable():
    paper = rec("doi:1", "Title", "We evaluate a protein language model and a PLM.")  # 0.5, 1.0, 1.0: 77.5
    assert (one(paper).score, one(paper).decision) == (78, "KEEP")
    d = one(paper, thresholds=Thresholds(90, 80))
    assert d.score == 78 and d.decision == "DROP" and d.cause == "weak-match"


# --- the overrides -------------------------------------------------------------------------------------

PRIOR = [PriorKeep("doi:old", "Protein language models for enzymes", "2026-W18")]


def test_already_covered_is_drop_whatever_the_score_naming_the_week():
    d = one(rec("doi:old", "A protein language model", "A protein language model; we evaluate ESM-2."), PRIOR)
    assert d.score == 90 and d.decision == "DROP" and d.cause == "already-covered"
    assert "already-covered" in d.tags
    assert d.rationale.startswith("DROP (already-covered): already kept in 2026-W18, so DROP whatever the score "
                                  "(score 90: match 1.00, criteria 1.00, novelty 0.00); ")
    assert d.rationale.endswith("; novelty: already covered (doi:old kept in 2026-W18).")


def test_a_journal_version_of_a_covered_preprint_is_tagged_with_the_week():
    d = one(rec("pmid:9", "A protein language model", "We evaluate a PLM.", related=("doi:old",)), PRIOR)
    assert d.axes.novelty == 0.5 and "journal-version-of:2026-W18" in d.tags and d.decision == "KEEP"


def test_no_abstract_is_never_keep():
    d = one(rec("doi:1", "ESM-2 protein language model", None))
    assert d.score == 100 and d.decision == "REVIEW" and "no-abstract" in d.tags
    assert d.rationale.startswith("REVIEW: no abstract, so never KEEP; strong match and in scope (score 100: ")
    low = one(rec("doi:2", "Nothing we follow", None))
    assert low.decision == "DROP" and "no-abstract" in low.tags


def test_criteria_silent_is_never_keep():
    d = one(rec("doi:1", "Protein design", "protein design, we evaluate"))
    assert d.axes.criteria == 0.7 and d.decision == "REVIEW" and "criteria-silent" in d.tags
    assert d.rationale.startswith("REVIEW: the criteria are silent, so never KEEP; strong match (score 87: match "
                                  "1.00, criteria silent 0.70, novelty 1.00); ")


def test_criteria_silent_below_review_stays_drop_naming_both():
    d = one(rec("doi:1", "Soil microbes", "We evaluate soil."))
    assert (d.score, d.decision, d.cause) == (42, "DROP", "weak-match")
    assert "no watchlist phrase" in d.rationale and "criteria silent" in d.rationale


@pytest.mark.parametrize("title, abstract, cause, quote", [
    ("Enrollment report", "The protein language model helped enrollment.", "look-alike-trap",
     'criteria.md:7 "Clinical trial enrollment reports"'),
    ("A survey of soils", "We evaluate.", "not-in-scope", 'criteria.md:13 "Review articles"'),
])
def test_criteria_drops_name_their_cause_and_quote_the_line(title, abstract, cause, quote):
    d = one(rec("doi:1", title, abstract))
    assert d.decision == "DROP" and d.cause == cause
    assert d.rationale.startswith(f"DROP ({cause}): ") and quote in d.rationale
    assert d.criteria_lines == (int(quote.split(":")[1].split()[0]),)


def test_the_required_rule_on_a_worked_example():
    """Issue 33, item 4: a Required concept with no term is borderline 0.7 (0.4 in the stricter pass), tagged
    `required-unconfirmed`, its line quoted; never the DROP (fails-required) of rules digest.3."""
    strong = rec("doi:1", "ESM-2 protein language model essay", "Thoughts on ESM.")
    weak = rec("doi:2", "A PLM essay", "Thoughts on a protein language model.")
    confirmed = rec("doi:3", "ESM-2 protein language model", "We evaluate a PLM.")
    out = decide_week([strong, weak, confirmed], WATCH, CRITERIA)
    got = {d.id: (d.decision, d.score, d.axes.criteria, d.tags, d.criteria_lines, d.cause) for d in out.decisions}
    assert got == {"doi:1": ("KEEP", 87, 0.7, ("required-unconfirmed",), (4, 10), None),
                   "doi:2": ("REVIEW", 64, 0.7, ("required-unconfirmed",), (4, 10), None),
                   "doi:3": ("KEEP", 100, 1.0, (), (4,), None)}
    assert all('criteria.md:10 "Must report empirical results"' in d.rationale
               for d in out.decisions if d.id != "doi:3")
    # The stricter pass (over the cap of 1): 0.4, so the strong paper is 73, still KEEP before the cap ranks it.
    strict = {d.id: d for d in decide_week([strong, weak, confirmed], WATCH, CRITERIA, max_kept=1).decisions}
    assert (strict["doi:1"].axes.criteria, strict["doi:1"].score) == (0.4, 73)
    assert strict["doi:1"].tags == ("required-unconfirmed", "stricter-pass", "demoted-for-cap")
    assert (strict["doi:2"].decision, strict["doi:2"].score, strict["doi:2"].cause) == ("REVIEW", 51, None)


# --- the stricter pass and the cap ---------------------------------------------------------------------


def test_no_stricter_pass_or_cap_under_the_ceiling():
    week = [rec(f"doi:{i}", "ESM-2 protein language model", "We evaluate a PLM.") for i in range(3)]
    out = decide_week(week, WATCH, CRITERIA, max_kept=3)
    assert out.calibration.kept == 3 and not out.calibration.stricter_pass_applied
    assert out.calibration.demoted_for_cap == 0


def test_the_stricter_pass_runs_before_the_cap():
    x = rec("doi:b", "Scaling laws for ESM", "We evaluate accuracy.")                      # 0.7, 1.0: 87 either pass
    y = rec("doi:a", "Scaling laws reviewed", "Scaling laws: we evaluate a PLM in this review.")  # 1.0, reduced fit: 87 -> 73
    z = rec("doi:c", "Scaling laws for ESM-2", "Scaling laws; we evaluate ESM-2 accuracy.")  # 100
    w = parse_watchlist("scaling law*\n", "w.txt")
    out = decide_week([x, y, z], w, CRITERIA, max_kept=2)
    by = {d.id: d for d in out.decisions}
    assert out.calibration.stricter_pass_applied and out.calibration.demoted_for_cap == 1
    # The cap alone would have demoted x (87, tied with y, larger id); after the stricter pass y is 73 and goes.
    assert by["doi:b"].decision == "KEEP" and by["doi:b"].score == 87
    assert by["doi:a"].decision == "REVIEW" and by["doi:a"].score == 73
    assert by["doi:a"].tags == ("stricter-pass", "demoted-for-cap") and by["doi:a"].axes.criteria == 0.4
    assert by["doi:a"].rationale.startswith(
        "REVIEW: over the cap, KEEP rank 3 of 3 by score, relevance, id with max_kept 2 (relevance 0.4855; the last "
        "kept, doi:b: score 87, relevance 0.4311); strong match, but a reduced fit (score 73: match 1.00, "
        "criteria 0.40, novelty 1.00); ")
    assert by["doi:b"].rationale.startswith("KEEP: rank 2 of 3 by score, relevance, id, within max_kept 2; ")


def test_the_stricter_pass_alone_can_bring_the_week_under_the_ceiling():
    partial = rec("doi:p", "Protein design at scale", "We evaluate ESM-2 accuracy.")  # 1.0, partial: 73 -> 64
    full = rec("doi:f", "ESM-2 protein language model", "We evaluate a PLM.")
    out = decide_week([partial, full], WATCH, CRITERIA, max_kept=1)
    by = {d.id: d for d in out.decisions}
    assert out.calibration.stricter_pass_applied and out.calibration.demoted_for_cap == 0
    assert (by["doi:p"].decision, by["doi:p"].score, by["doi:p"].axes.criteria) == ("REVIEW", 64, 0.2)
    assert "demoted-for-cap" not in by["doi:p"].tags


def test_the_cap_demotes_to_review_never_drop_by_score_relevance_then_id():
    week = [rec(f"doi:{i:02d}", "ESM-2 protein language model", "We evaluate a PLM.") for i in range(10)]
    out = decide_week(week, WATCH, CRITERIA, max_kept=4)
    kept = [d.id for d in out.decisions if d.decision == "KEEP"]
    assert len({d.relevance for d in out.decisions}) == 1  # the same text: the same relevance
    assert kept == ["doi:00", "doi:01", "doi:02", "doi:03"]  # all 100, one relevance: ties broken by id
    demoted = [d for d in out.decisions if "demoted-for-cap" in d.tags]
    assert len(demoted) == 6 == out.calibration.demoted_for_cap
    assert all(d.decision == "REVIEW" and d.score == 100 and d.cause is None for d in demoted)
    assert out.calibration.to_json()["review"] == 6


def test_a_keep_is_never_made_drop_by_the_stricter_pass():
    # Thresholds 51/50: a partial fit at 51 is KEEP; the stricter pass scores it 42, which would be DROP.
    weak = rec("doi:w", "Title", "We evaluate a protein language model.")  # 0.5, partial 0.4: 51 -> 42
    strong = rec("doi:s", "ESM-2 protein language model", "We evaluate a PLM.")
    out = decide_week([weak, strong], WATCH, CRITERIA, max_kept=1, thresholds=Thresholds(51, 50))
    by = {d.id: d for d in out.decisions}
    assert by["doi:w"].score == 42 and by["doi:w"].decision == "REVIEW" and by["doi:w"].cause is None
    assert by["doi:w"].rationale.startswith("REVIEW: KEEP before the stricter pass, and a KEEP is never made DROP; "
                                            "the watchlist barely matched, and in scope only once, in the abstract "
                                            "(score 42, below the REVIEW threshold 50: ")


# --- the guardrails as properties ----------------------------------------------------------------------

WORDS = ["protein language model", "ESM-2", "PLM", "enrollment", "trial registration", "we evaluate", "benchmarks",
         "accuracy", "review", "survey", "protein design", "soil", "weather", "a", "the", "and"]
texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
papers = st.lists(st.tuples(st.sampled_from([f"doi:{i}" for i in range(12)]), texts,
                            st.one_of(st.none(), texts), st.booleans()), max_size=12, unique_by=lambda p: p[0])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(papers, st.integers(1, 5))
def test_every_guardrail_holds_on_any_week(rows, max_kept):
    prior = [PriorKeep("doi:0", "ESM-2", "2026-W18"), PriorKeep("doi:1", "Weather and soil", "2026-W17")]
    week = [Record(id=i, title=t or "untitled", abstract=a, related_ids=("doi:0",) if r else ()) for i, t, a, r in rows]
    out = decide_week(week, WATCH, CRITERIA, prior, max_kept=max_kept)
    again = decide_week(list(reversed(week)), WATCH, CRITERIA, prior, max_kept=max_kept)
    assert [d.to_json() for d in out.decisions] == [d.to_json() for d in again.decisions]  # order-free
    by = {d.id: d for d in out.decisions}
    assert sorted(by) == sorted(r.id for r in week)
    for record in week:
        d = by[record.id]
        if d.decision == "DROP":
            assert d.cause in DROP_CAUSES and d.rationale.startswith(f"DROP ({d.cause}): ")
            if d.cause in CRITERIA_CAUSES:
                assert "criteria.md:" in d.rationale
            if d.cause == "already-covered":
                assert "kept in 2026-W" in d.rationale
        else:
            assert d.cause is None and d.rationale
        if not (record.abstract and record.abstract.strip()):
            assert d.decision != "KEEP" and "no-abstract" in d.tags
        assert d.rationale.startswith(f"{d.decision}") and "\n" not in d.rationale  # one line, the decision first
        if "criteria-silent" in d.tags:
            assert d.decision != "KEEP"
            assert "criteria silent 0.70" in d.rationale and "criteria 0.70" not in d.rationale  # never as a fit
        if d.axes.novelty == 0.0:
            assert d.decision == "DROP" and d.cause == "already-covered"
        if "demoted-for-cap" in d.tags:
            assert d.decision == "REVIEW" and d.score >= 70
    c = out.calibration
    assert c.kept <= max_kept and c.kept + c.review + c.dropped == len(week) == sum(c.histogram)
    assert c.demoted_for_cap == 0 or c.stricter_pass_applied


def test_same_inputs_same_bytes():
    rng = random.Random(7)
    week = [rec(f"doi:{i}", " ".join(rng.sample(WORDS, 3)), " ".join(rng.sample(WORDS, 5))) for i in range(60)]
    one_run = json.dumps([d.to_json() for d in decide_week(week, WATCH, CRITERIA, PRIOR, max_kept=3).decisions])
    rng.shuffle(week)
    other = json.dumps([d.to_json() for d in decide_week(week, WATCH, CRITERIA, PRIOR, max_kept=3).decisions])
    assert one_run == other


# --- calibration and drift -----------------------------------------------------------------------------


def test_calibration_counts_and_histogram():
    out = decide_week([
        rec("doi:1", "ESM-2 protein language model", "We evaluate a PLM."),               # 100 KEEP
        rec("doi:2", "Protein design", "protein design, we evaluate"),                    # silent REVIEW
        rec("doi:3", "Soil", "We evaluate soil."),                                        # 42 DROP
        rec("doi:old", "A protein language model", "We evaluate a PLM."),                 # covered DROP
    ], WATCH, CRITERIA, PRIOR)
    c = out.calibration
    assert (c.kept, c.review, c.dropped, c.force_dropped_already_covered) == (1, 1, 2, 1)
    assert c.histogram[9] == 1 and c.histogram[4] == 1 and sum(c.histogram) == 4
    assert [d.id for d in out.decisions] == ["doi:1", "doi:2", "doi:old", "doi:3"]  # KEEP, REVIEW, DROP by score


def test_watchlist_drift_is_surfaced_never_applied():
    w = parse_watchlist("enrollment\nprotein language model\n", "w.txt")
    week = [rec(f"doi:t{i}", "Report", "Enrollment of patients.") for i in range(3)]        # traps, dropped
    week += [rec("doi:k", "A protein language model", "We evaluate enrollment and a PLM.")]  # kept
    week += [rec(f"doi:m{i}", "Title", "We evaluate a PLM and a PLM.") for i in range(2)]   # In scope, no watchlist
    out = decide_week(week, w, CRITERIA)
    drift = out.watchlist_drift
    assert drift["note"].startswith("surfaced, never applied")
    assert drift["entries_rejected_by_criteria"] == [{
        "phrase": "enrollment", "matched": 4, "rejected_by_criteria": 3, "dropped": 3,
        "causes": {"look-alike-trap": 3},
        "criteria_lines": {'criteria.md:7 "Clinical trial enrollment reports"': 3},
        "ids": ["doi:t0", "doi:t1", "doi:t2"]}]
    assert drift["concepts_missed_by_watchlist"] == [{
        "concept": 'criteria.md:4 "Protein language models trained on sequences"', "line": 4,
        "missed_by_watchlist": 2, "ids": ["doi:m0", "doi:m1"]}]
    assert w.phrases == ("enrollment", "protein language model")  # never applied


WORKED_CRITERIA = parse_criteria(
    "## In scope\n- Gaussian splatting: `Gaussian splatting`, `3D Gaussian*`\n"
    "## Partly in scope\n- Novel view synthesis in general: `novel view synthesis`\n"
    "## Out of scope\n- Driving datasets: `driving dataset`\n"
    "## Required\n- Reports results: `outperforms`, `we evaluate`\n"
    "## Reduced fit\n- Surveys: `survey`\n", "criteria.md")
WORKED_WATCH = parse_watchlist("Gaussian splatting\nnovel view synthesis\nrendering\ngrasping\n", "w.txt")
WORKED = [  # (id, title, abstract) -> (rule's criteria value, score, decision, tags): docs/digest.md's table
    ("doi:a", "Gaussian splatting at scale", "Gaussian splatting that outperforms NeRF.",
     (1.0, 100, "KEEP", ())),
    ("doi:b", "Gaussian splatting at scale", "Gaussian splatting for large scenes.",
     (0.7, 87, "KEEP", ("required-unconfirmed",))),
    ("doi:c", "A survey of Gaussian splatting", "We evaluate Gaussian splatting methods.",
     (0.7, 87, "KEEP", ())),
    ("doi:d", "A driving dataset for rendering", "Rendering with Gaussian splatting on a driving dataset.",
     (0.0, 55, "REVIEW", ("look-alike-trap",))),
    ("doi:e", "Novel view synthesis", "Novel view synthesis with Gaussian splatting; it outperforms.",
     (0.4, 73, "KEEP", ())),
    ("doi:f", "Novel view synthesis for rendering robots", "Rendering novel views; it outperforms.",
     (0.4, 73, "KEEP", ())),
    ("doi:g", "A survey of rendering", "Rendering, surveyed; we evaluate.",
     (0.0, 55, "REVIEW", ())),
    ("doi:h", "Robot grasping", "Grasping objects; it outperforms.",
     (0.7, 87, "REVIEW", ("criteria-silent",))),
]


def test_each_section_on_the_worked_example():
    """Issue 33, item 4: docs/digest.md's worked example, each section's effect, exactly."""
    out = decide_week([rec(i, t, a) for i, t, a, _ in WORKED], WORKED_WATCH, WORKED_CRITERIA)
    got = {d.id: (d.axes.criteria, d.score, d.decision, d.tags) for d in out.decisions}
    assert got == {i: want for i, _, _, want in WORKED}
