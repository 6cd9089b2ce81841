"""The three axes of docs/design/digest.md, each rule on a record built to hit it."""

from __future__ import annotations

from pathlib import Path

import pytest

import reporter.digest.axes as axes_mod
from reporter.digest.axes import (
    FAILS_REQUIRED,
    IN_SCOPE_FIT,
    NOT_IN_SCOPE,
    PARTIAL,
    PARTLY,
    REDUCED,
    REQUIRED_UNCONFIRMED,
    SILENT,
    TRAP,
    PriorKeep,
    criteria_axis,
    match_axis,
    match_base,
    novelty_axis,
)
from reporter.digest.criteria import load_criteria, parse_criteria
from reporter.digest.decide import score_axes
from reporter.pool.record import Record
from reporter.digest.watchlist import parse_watchlist

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
CRITERIA = load_criteria(FIXTURES / "criteria.md")
WATCH = parse_watchlist("protein language model\nESM*\t1.5\nprotein design\t0.5\nfolding\n", "w.txt")


def rec(title: str, abstract: str | None = None, id: str = "doi:10.5555/x", related: tuple = ()) -> Record:
    return Record(id=id, title=title, abstract=abstract, related_ids=related)


# --- Axis 1: match -------------------------------------------------------------------------------------


@pytest.mark.parametrize("title, abstract, value, base", [
    ("Nothing here", "Nor here.", 0, 0),                                            # D = 0
    ("A protein language model", "The protein language model works.", 100, 100),   # T and A >= 1
    ("Two entries", "A protein language model; folding too.", 100, 100),            # D >= 2
    ("A protein language model", "Nothing in the abstract.", 70, 70),              # T only
    ("Title", "protein language model, and a protein language model again", 70, 70),  # A >= 2
    ("Title", "Once: protein language model.", 50, 50),                              # one occurrence, abstract only
    ("Title", None, 0, 0),                                                           # no abstract, nothing in title
])
def test_match_rules(title, abstract, value, base):
    [m] = match_axis([rec(title, abstract)], WATCH)
    assert (m.value, m.base) == (value, base)


@pytest.mark.parametrize("title, abstract, value", [
    ("Title", "ESM once.", 75),                             # 0.5 x 1.5 = 0.75
    ("ESM-2 in the title", "Nothing.", 100),                # 0.7 x 1.5 = 1.05, capped at 1.0
    ("Protein design in the title", "Nothing.", 35),        # 0.7 x 0.5 = 0.35
    ("Protein design", "We used ESM2 and ESM-1v.", 100),    # 1.0 x the largest weight (1.5), capped
    ("Protein design", "protein design again", 50),         # 1.0 x 0.5
])
def test_the_largest_matched_weight_multiplies_and_the_match_is_capped(title, abstract, value):
    [m] = match_axis([rec(title, abstract)], WATCH)
    assert m.value == value


def test_weights_round_half_up_to_hundredths():
    w = parse_watchlist("x\t0.33\ny\t1.25\n", "w.txt")
    m1, m2 = match_axis([rec("x in the title", "none"), rec("t", "y once")], w)
    assert m1.value == 23  # 0.7 x 0.33 = 0.231
    assert m2.value == 63  # 0.5 x 1.25 = 0.625, half up


def test_match_uses_the_rule_language_boundaries_and_prefixes():
    w = parse_watchlist("PLM\nbenchmark*\n", "w.txt")
    plural, prefix = match_axis([rec("PLMs everywhere", "nothing"), rec("t", "new benchmarks")], w)
    assert plural.value == 0  # word boundary: PLM does not match PLMs
    assert prefix.value == 50 and prefix.entries == ("benchmark*",)


def test_match_base_table():
    assert [match_base(t, a, d) for t, a, d in [(False, 0, 0), (True, 1, 1), (False, 1, 2), (True, 0, 1),
                                                 (False, 2, 1), (False, 1, 1)]] == [0, 100, 100, 70, 70, 50]


def test_match_rationale_names_entries_and_places():
    [m] = match_axis([rec("ESM-2 models", "We fine-tune ESM-2 and ESM-1v.")], WATCH)
    assert m.value == 100
    assert m.describe() == "'ESM*' in the title and 'ESM*' 2 times in the abstract (weight 1.5)"


# --- Axis 2: criteria fit ------------------------------------------------------------------------------

EMPIRICAL = "We evaluate it; results show gains."


@pytest.mark.parametrize("title, abstract, rule, first, strict, lines", [
    # 1. nothing of In scope, Out of scope or Reduced fit: silent (a Required term alone does not speak)
    ("Soil microbes", "We evaluate soil.", SILENT, 70, 70, ()),
    # 2. out of scope matched, no In scope concept in the title: a look-alike trap
    ("Enrollment report", "A protein language model helped enrollment.", TRAP, 0, 0, (7,)),
    # 2 (not): out of scope matched but In scope in the title goes on to the next rules
    ("A PLM for trial registration", "We evaluate a PLM; accuracy is high.", IN_SCOPE_FIT, 100, 100, (4,)),
    # 3. only a Reduced fit concept matched: not in scope
    ("A survey of soils", "We evaluate.", NOT_IN_SCOPE, 0, 0, (13,)),
    # 4. abstract present, no Required term anywhere: borderline, not a fail (issue 33, item 4: rules digest.4)
    ("A PLM essay", "Thoughts about the PLM.", REQUIRED_UNCONFIRMED, 70, 40, (4, 10)),
    # 4 (not applied): without an abstract a requirement cannot be judged
    ("A PLM essay", None, IN_SCOPE_FIT, 100, 100, (4,)),
    # 5. reduced fit (and in scope): 0.7, stricter 0.4
    ("A review of PLM methods", EMPIRICAL, REDUCED, 70, 40, (4, 13)),
    # 6. in scope in the title: 1.0
    ("ESM-2 at scale", EMPIRICAL, IN_SCOPE_FIT, 100, 100, (4,)),
    # 6. two occurrences of In scope terms in the abstract (two terms, once each): 1.0
    ("Title", "We evaluate a PLM and ESM-2.", IN_SCOPE_FIT, 100, 100, (4,)),
    # 7. one occurrence in the abstract only: partial 0.4, stricter 0.2
    ("Title", "We evaluate a PLM.", PARTIAL, 40, 20, (4,)),
])
def test_criteria_rules_in_order(title, abstract, rule, first, strict, lines):
    [c] = criteria_axis([rec(title, abstract)], CRITERIA)
    assert (c.rule, c.value(), c.value(strict=True)) == (rule, first, strict)
    assert tuple(sorted(x.line for x in c.cited)) == lines


PARTLY_CRITERIA = parse_criteria(
    "## In scope\n- Gaussian splatting: `Gaussian splatting`\n"
    "## Partly in scope\n- Novel view synthesis in general: `novel view synthesis`\n"
    "## Reduced fit\n- Surveys: `survey`\n## Required\n- Reports results: `outperforms`\n", "criteria.md")


@pytest.mark.parametrize("title, abstract, rule, first, strict, lines", [
    # 1. a Partly in scope concept alone makes the criteria speak: not silent
    ("Novel view synthesis for driving", "We render scenes; it outperforms.", PARTLY, 40, 20, (4,)),
    # 3. Partly in scope with a Reduced fit, no In scope: partly, never "not in scope"
    ("A survey of novel view synthesis", "It outperforms.", PARTLY, 40, 20, (4,)),
    # 3. a Reduced fit alone is still not in scope
    ("A survey of rendering", "It outperforms.", NOT_IN_SCOPE, 0, 0, (6,)),
    # In scope in the title wins over Partly in scope
    ("Gaussian splatting for novel view synthesis", "It outperforms.", IN_SCOPE_FIT, 100, 100, (2,)),
    # 4. the Required term is absent: borderline, quoting the Required line first
    ("Gaussian splatting", "We render scenes.", REQUIRED_UNCONFIRMED, 70, 40, (2, 8)),
])
def test_partly_in_scope_and_required_unconfirmed(title, abstract, rule, first, strict, lines):
    """Issue 33, item 4: the "Partly in scope" section scores the seed's partial 0.4 (0.2 stricter)."""
    [c] = criteria_axis([rec(title, abstract)], PARTLY_CRITERIA)
    assert (c.rule, c.value(), c.value(strict=True)) == (rule, first, strict)
    assert tuple(sorted(x.line for x in c.cited)) == lines


def test_required_unconfirmed_quotes_the_concept():
    [c] = criteria_axis([rec("Gaussian splatting", "We render scenes.")], PARTLY_CRITERIA)
    assert c.cited[0].line == 8
    assert c.describe(PARTLY_CRITERIA) == (
        'required unconfirmed criteria.md:8 "Reports results": no term of it in the title or abstract, which is no '
        'evidence of failing it (borderline); in scope criteria.md:2 "Gaussian splatting"')


def test_in_scope_occurrences_are_summed_over_distinct_terms():
    # `PLM` appears in two In scope concepts: one occurrence is still one (partial), not two.
    crit = parse_criteria("## In scope\n- A: `PLM`\n- B: `PLM`, `ESM*`\n", "c.md")
    [once] = criteria_axis([rec("t", "a PLM here")], crit)
    [twice] = criteria_axis([rec("t", "a PLM and a PLM")], crit)
    assert once.rule == PARTIAL and twice.rule == IN_SCOPE_FIT


def test_criteria_rationale_quotes_the_line():
    [c] = criteria_axis([rec("Enrollment report", "A PLM helped enrollment.")], CRITERIA)
    assert c.describe(CRITERIA) == ('out of scope criteria.md:7 "Clinical trial enrollment reports", and no In '
                                    'scope concept in the title')
    [r] = criteria_axis([rec("A review of PLM methods", EMPIRICAL)], CRITERIA)
    assert r.describe(CRITERIA, strict=True).startswith('reduced fit criteria.md:13 "Review articles"')
    assert r.describe(CRITERIA, strict=True).endswith("(stricter pass: 0.40, 0.70 before)")
    [silent] = criteria_axis([rec("Soil", EMPIRICAL)], CRITERIA)
    assert silent.describe(CRITERIA) == ("silent: no In scope, Out of scope or Reduced fit concept matched (0.70 is "
                                         "a stand-in, not a fit)")


# --- Axis 3: novelty -----------------------------------------------------------------------------------

PRIOR = [PriorKeep("doi:10.5555/a", "Protein language models for enzymes", "2026-W18"),
         PriorKeep("doi:10.5555/a", "Protein language models for enzymes", "2026-W16"),
         PriorKeep("arxiv:2605.00001", "Scaling ESM to a billion sequences", "2026-W17")]


def test_novelty_own_id_is_already_covered_naming_the_newest_week():
    [n] = novelty_axis([rec("Anything", id="doi:10.5555/a")], PRIOR)
    assert (n.value, n.covered_by.week, n.how) == (0, "2026-W18", "id")
    assert n.describe() == "already covered (doi:10.5555/a kept in 2026-W18)"


def test_novelty_a_related_id_or_a_matching_title_is_an_earlier_version():
    journal, retitled = novelty_axis([
        rec("Different title", id="pmid:1", related=("arxiv:2605.00001",)),
        rec("Protein Language Models for Enzymes!", id="pmid:2"),
    ], PRIOR)
    assert (journal.value, journal.covered_by.week, journal.how) == (50, "2026-W17", "related id")
    assert (retitled.value, retitled.covered_by.week, retitled.how) == (50, "2026-W18", "title")


def test_novelty_otherwise_and_with_an_empty_prior():
    [n] = novelty_axis([rec("Something new")], PRIOR)
    assert n.value == 100 and n.covered_by is None
    assert [x.value for x in novelty_axis([rec("x", id="doi:10.5555/a")], [])] == [100]


def test_title_match_is_strictly_above_point_nine():
    def by_title(title: str, prior_title: str) -> bool:
        [n] = novelty_axis([rec(title)], [PriorKeep("doi:1", prior_title, "2026-W18")])
        assert (n.value, n.how) in ((100, ""), (50, "title")), n
        return n.how == "title"
    # 10 characters, one edit: similarity exactly 0.9, which is not a match; 11 characters, one edit: 0.909.
    assert not by_title("abcdefghiX", "abcdefghij")
    assert by_title("abcdefghijX", "abcdefghijk")
    assert by_title("Protein  language-models.", "protein language models")
    assert not by_title("!!!", "???")  # empty after normalising never matches


# --- one matcher ---------------------------------------------------------------------------------------


def test_terms_and_phrases_go_through_match_phrases_once_per_field(monkeypatch):
    calls = []
    real = axes_mod.match_phrases

    def counting(texts, phrases):
        calls.append(tuple(phrases))
        return real(texts, phrases)

    monkeypatch.setattr(axes_mod, "match_phrases", counting)
    records = [rec(f"PLM {i}", "We evaluate ESM-2.", id=f"doi:{i}") for i in range(50)]
    score_axes(records, WATCH, CRITERIA, PRIOR)
    assert len(calls) == 2  # one term list (watchlist phrases, every criteria term) over the titles, the abstracts
    assert calls[0] == calls[1]
    assert calls[0][:len(WATCH.phrases)] == WATCH.phrases
    assert set(calls[0]) == set(WATCH.phrases) | {t for c in CRITERIA.concepts for t in c.terms}
    assert len(set(calls[0])) == len(calls[0])  # each term once


def test_title_matching_equals_the_plain_pairwise_reading():
    """The length-windowed cdist finds exactly the first prior title a plain loop over every pair finds."""
    import random

    from reporter.digest.axes import _similar, _title_matches
    from reporter.digest.merge import normalize_title
    rng = random.Random(7)
    words = ["model", "language", "evaluation", "of", "a", "benchmark", "for", "large", "models", "x"]
    prior = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(400)]
    week = [p[:k] + "y" + p[k + 1:] for p in rng.sample(prior, 60) for k in [rng.randrange(len(p))]]
    week += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(140)] + ["", "!!"]
    expected = [next((j for j, p in enumerate(prior) if _similar(normalize_title(t), normalize_title(p))), None)
                for t in week]
    assert _title_matches(week, prior) == expected
    assert sum(x is not None for x in expected) >= 60
