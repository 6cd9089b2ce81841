"""The relevance measure (docs/digest.md, "Relevance"): BM25F on tiny weeks whose values are worked out by hand."""

from __future__ import annotations

import json
import math

from reporter.digest.axes import count_terms
from reporter.digest.criteria import parse_criteria
from reporter.digest.decide import decide_week
from reporter.digest.records import Decision, WeekDecisions
from reporter.pool.record import Record
from reporter.digest.relevance import B, K1, TITLE_WEIGHT, field_words, query_terms, relevance
from reporter.digest.watchlist import parse_watchlist

# The watchlist follows "benchmark"; the criteria's In scope concept is judges. No Required section, so any
# paper with "benchmark" in its title and its abstract and "judge" in its title scores 100.
WATCH = parse_watchlist("benchmark\n", "w.txt")
CRITERIA = parse_criteria("# Criteria\n\n## In scope\n- Models as judges: `judge`\n", "criteria.md")


def rec(id: str, title: str, abstract: str | None) -> Record:
    return Record(id=id, title=title, abstract=abstract)


def test_the_parameters_are_the_documented_ones():
    assert (K1, B, TITLE_WEIGHT) == (1.2, 0.75, 3.0)


def test_query_terms_are_the_watchlist_then_the_in_scope_terms_each_once():
    w = parse_watchlist("LLM judge*\nbenchmark\n", "w.txt")
    c = parse_criteria("## In scope\n- Judges: `llm judge*`, `judge model`\n## Out of scope\n- Vision: `image`\n"
                       "## Required\n- Language: `language model`\n", "c.md")
    assert query_terms(w, c) == ("LLM judge*", "benchmark", "judge model")  # `llm judge*` is `LLM judge*`


def test_words_are_counted_as_the_matcher_splits_them():
    assert field_words(["LLM-as-a-judge, v2!", "  two\twords ", None, ""]).tolist() == [5, 2, 0, 0]
    assert field_words(["ﬁne-tuning"]).tolist() == [2]  # NFKC: the ligature is "fi"


def test_bm25f_by_hand_on_a_three_paper_week():
    week = [rec("doi:1", "judge", "benchmark benchmark"),  # title 1 word, abstract 2
            rec("doi:2", "a new benchmark", None),           # title 3 words, no abstract
            rec("doi:3", "other", "nothing here at all")]    # matches nothing
    w = parse_watchlist("judge\n", "w.txt")
    c = parse_criteria("## In scope\n- Benchmarks: `benchmark`\n", "c.md")
    terms = query_terms(w, c)
    # N = 3; mean title length 5/3, mean abstract length 6/3 = 2.
    # df(judge) = 1, idf = ln(1 + 2.5/1.5); df(benchmark) = 2, idf = ln(1 + 1.5/2.5).
    idf_judge, idf_bench = math.log(1 + 2.5 / 1.5), math.log(1 + 1.5 / 2.5)
    # doi:1: title norm 0.25 + 0.75 * 1 / (5/3) = 0.7, abstract norm 0.25 + 0.75 * 2 / 2 = 1.
    tf_judge, tf_bench = 3 * 1 / 0.7, 1 * 2 / 1
    first = idf_judge * tf_judge / (1.2 + tf_judge) + idf_bench * tf_bench / (1.2 + tf_bench)
    # doi:2: title norm 0.25 + 0.75 * 3 / (5/3) = 1.6.
    second = idf_bench * (3 / 1.6) / (1.2 + 3 / 1.6)
    assert relevance(week, terms, count_terms(week, terms)) == [round(first, 4), round(second, 4), 0.0]
    assert (round(first, 4), round(second, 4)) == (1.06, 0.2866)


# A week of five papers, every one at score 100. Titles are two words, abstracts four, so every length is
# the mean and the length normalisation is 1; both terms occur in all five papers, so both idf are
# ln(1 + (5 - 5 + 0.5) / (5 + 0.5)) = ln(12 / 11). Then tf~ = 3 x (title occurrences) + (abstract occurrences).
TIED = [
    rec("doi:a", "benchmark judge", "benchmark data and more"),     # benchmark 3 + 1 = 4, judge 3
    rec("doi:b", "benchmark judge", "benchmark data and more"),     # the same text as doi:a
    rec("doi:y", "benchmark judge", "benchmark judge data now"),    # benchmark 4, judge 3 + 1 = 4
    rec("doi:z", "benchmark judge", "benchmark judge judge now"),   # benchmark 4, judge 3 + 2 = 5
    rec("doi:x", "benchmark judge", "benchmark two benchmark now"),  # benchmark 3 + 2 = 5, judge 3
]
IDF = math.log(12 / 11)


def sat(tf: float) -> float:
    return tf / (K1 + tf)


EXPECTED = {"doi:a": IDF * (sat(4) + sat(3)), "doi:b": IDF * (sat(4) + sat(3)), "doi:y": IDF * (sat(4) + sat(4)),
            "doi:z": IDF * (sat(4) + sat(5)), "doi:x": IDF * (sat(5) + sat(3))}


def test_ties_at_the_cap_keep_the_most_relevant_then_the_smallest_id():
    out = decide_week(TIED, WATCH, CRITERIA, max_kept=3)
    by = {d.id: d for d in out.decisions}
    assert {d.score for d in out.decisions} == {100}
    assert {k: d.relevance for k, d in by.items()} == {k: round(v, 4) for k, v in EXPECTED.items()}
    assert [(d.id, d.relevance) for d in out.decisions] == [
        ("doi:z", 0.1371), ("doi:y", 0.1339), ("doi:x", 0.1323),   # kept: the three most relevant
        ("doi:a", 0.1291), ("doi:b", 0.1291)]                     # demoted: a tie in relevance falls to id
    assert [d.decision for d in out.decisions] == ["KEEP"] * 3 + ["REVIEW"] * 2
    # by id alone the cap would have kept doi:a, doi:b and doi:x
    assert out.calibration.demoted_for_cap == 2 and out.calibration.stricter_pass_applied


def test_a_demoted_paper_names_its_rank_and_relevance():
    by = {d.id: d for d in decide_week(TIED, WATCH, CRITERIA, max_kept=3).decisions}
    assert by["doi:b"].tags == ("demoted-for-cap",)
    assert by["doi:b"].rationale.startswith(
        "REVIEW: over the cap, KEEP rank 5 of 5 by score, relevance, id with max_kept 3 (relevance 0.1291; the last "
        "kept, doi:x: score 100, relevance 0.1323); strong match and in scope (score 100: ")
    assert by["doi:a"].rationale.startswith("REVIEW: over the cap, KEEP rank 4 of 5 ")
    assert by["doi:z"].rationale.startswith("KEEP: rank 1 of 5 by score, relevance, id, within max_kept 3; strong "
                                            "match and in scope (score 100, relevance 0.1371: match 1.00, ")


def test_the_cap_never_drops_and_relevance_is_the_same_in_any_order():
    one = decide_week(TIED, WATCH, CRITERIA, max_kept=1)
    other = decide_week(TIED[::-1], WATCH, CRITERIA, max_kept=1)
    assert [d.to_json() for d in one.decisions] == [d.to_json() for d in other.decisions]
    assert [d.decision for d in one.decisions] == ["KEEP"] + ["REVIEW"] * 4


def test_decisions_carry_the_paper_and_read_back():
    record = Record(id="arxiv:2605.00001", title="benchmark judge", abstract="benchmark data and more",
                    source="arxiv", published="2026-05-20", authors=("Ada Lovelace", "Alan Turing"),
                    venue="arXiv", categories=("cs.CL", "cs.AI"))
    [d] = decide_week([record], WATCH, CRITERIA).decisions
    data = d.to_json()
    assert (data["authors"], data["published"], data["venue"], data["categories"], data["abstract"]) == (
        ["Ada Lovelace", "Alan Turing"], "2026-05-20", "arXiv", ["cs.CL", "cs.AI"], "benchmark data and more")
    assert isinstance(data["relevance"], float)
    assert Decision.from_json(json.loads(json.dumps(data))) == d


def test_an_older_decisions_json_without_the_new_fields_reads():
    old = {"id": "doi:1", "decision": "KEEP", "score": 100, "axes": {"match": 1.0, "criteria": 1.0, "novelty": 1.0},
           "rationale": "match 1.00: ...", "tags": [], "title": "T", "cause": None, "criteria_lines": [4],
           "matched_terms": ["benchmark"], "merged_ids": []}
    d = Decision.from_json(old)
    assert (d.relevance, d.authors, d.published, d.venue, d.categories, d.abstract) == (None, (), None, None, (), None)
    week = WeekDecisions.from_json({"week": "2026-W20", "decisions": [old], "calibration": {
        "kept": 1, "review": 0, "dropped": 0, "force_dropped_already_covered": 0, "demoted_for_cap": 0,
        "stricter_pass_applied": False}})
    assert week.kept() == (d,)


def test_a_malformed_new_field_is_refused():
    base = {"id": "doi:1", "decision": "KEEP", "score": 100, "axes": {"match": 1.0, "criteria": 1.0, "novelty": 1.0},
            "rationale": "r", "tags": []}
    for bad in ({"relevance": "high"}, {"relevance": True}, {"relevance": math.nan}, {"authors": "A; B"},
                {"categories": [1]}, {"published": 20260520}, {"abstract": ["x"]}):
        try:
            Decision.from_json({**base, **bad})
        except (TypeError, ValueError):
            continue
        raise AssertionError(f"{bad} was read")


def test_relevance_orders_the_document_within_one_score():
    out = decide_week(TIED, WATCH, CRITERIA, max_kept=25)  # no cap: all KEEP, still in relevance order
    assert [d.id for d in out.decisions] == ["doi:z", "doi:y", "doi:x", "doi:a", "doi:b"]


