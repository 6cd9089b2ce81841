"""Rationales say the decisive reason first, in words, then the numbers (docs/digest.md, "Rationales")."""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter.digest.axes import PriorKeep
from reporter.digest.criteria import load_criteria
from reporter.digest.decide import Thresholds, decide_week
from reporter.pool.record import Record
from reporter.digest.watchlist import parse_watchlist

CRITERIA = load_criteria(Path(__file__).resolve().parent / "fixtures" / "digest" / "criteria.md")
WATCH = parse_watchlist("protein language model\nESM*\t1.5\nprotein design\n", "w.txt")
PRIOR = [PriorKeep("doi:old", "Protein language models for enzymes", "2026-W18")]
NOVEL = "novelty: not in the prior four weeks."
IN_SCOPE = 'criteria: in scope criteria.md:4 "Protein language models trained on sequences"'


def line(title: str, abstract: str | None, **kw) -> str:
    [d] = decide_week([Record(id=kw.pop("id", "doi:1"), title=title, abstract=abstract,
                              related_ids=kw.pop("related", ()))], WATCH, CRITERIA, PRIOR, **kw).decisions
    return d.rationale


@pytest.mark.parametrize("title, abstract, expected", [
    # KEEP: what was strong, then the numbers, then what each axis came from.
    ("ESM-2 protein language model", "We evaluate a PLM.",
     "KEEP: strong match and in scope (score 100: match 1.00, criteria 1.00, novelty 1.00); match: 'protein "
     "language model', 'ESM*' in the title (weight 1.5); " + IN_SCOPE + "; " + NOVEL),
    # KEEP with a weak side: "but".
    ("Title", "We evaluate a protein language model and a PLM.",
     "KEEP: in scope, but the watchlist barely matched (score 78: match 0.50, criteria 1.00, novelty 1.00); match: "
     "'protein language model' once in the abstract; " + IN_SCOPE + "; " + NOVEL),
    # A required criterion no term confirms: borderline (issue 33, item 4), its line quoted in the head.
    ("ESM-2 protein language model essay", "Thoughts on ESM.",
     'KEEP: strong match, but a required criterion unconfirmed (criteria.md:10 "Must report empirical results"; '
     "score 87: match 1.00, criteria 0.70, novelty 1.00); match: 'protein language model', 'ESM*' in the title and "
     "'ESM*' once in the abstract (weight 1.5); criteria: required unconfirmed criteria.md:10 \"Must report "
     'empirical results": no term of it in the title or abstract, which is no evidence of failing it (borderline); '
     'in scope criteria.md:4 "Protein language models trained on sequences"; ' + NOVEL),
    # DROP for a weak match and silent criteria: both named, and 0.70 written as silence, not as a fit.
    ("Soil microbes", "We evaluate soil.",
     "DROP (weak-match): no watchlist phrase matched, and no criteria concept matched (score 42, below the REVIEW "
     "threshold 50: match 0.00, criteria silent 0.70, novelty 1.00); match: no watchlist phrase in the title or "
     "abstract; criteria: silent: no In scope, Out of scope or Reduced fit concept matched (0.70 is a stand-in, not "
     "a fit); " + NOVEL),
    # REVIEW with a required criterion unconfirmed: the weak sides, the Required line quoted.
    ("A PLM essay", "Thoughts on a protein language model.",
     'REVIEW: the watchlist barely matched, and a required criterion unconfirmed (criteria.md:10 "Must report '
     'empirical results"; score 64, under the KEEP threshold 70: match 0.50, criteria 0.70, novelty 1.00)'),
    # DROP for the criteria: the criteria's rule first, quoting its line.
    ("Protein design enrollment", "Enrollment counts.",
     "DROP (look-alike-trap): an Out of scope concept matched and no In scope concept is in the title, though "
     'the watchlist matched (criteria.md:7 "Clinical trial enrollment reports"; score 42, below the REVIEW '
     "threshold 50: match 0.70, criteria 0.00, novelty 1.00)"),
])
def test_the_decisive_reason_comes_first(title, abstract, expected):
    got = line(title, abstract)
    assert got.startswith(expected) if expected.endswith(")") else got == expected


def test_overrides_are_named_before_the_score():
    assert line("doi:old title", "A protein language model; we evaluate ESM-2.", id="doi:old").startswith(
        "DROP (already-covered): already kept in 2026-W18, so DROP whatever the score (score 90: ")
    both = line("Protein design at scale", None, id="doi:2")  # no abstract, and no criteria concept matched
    assert both.startswith("REVIEW: no abstract and the criteria are silent, so never KEEP; the watchlist matched "
                           "(score 73: match 0.70, criteria silent 0.70, novelty 1.00); ")
    journal = line("A protein language model", "We evaluate a PLM.", id="pmid:9", related=("doi:old",))
    assert journal.startswith("KEEP: the watchlist matched and in scope, but an earlier version was kept in 2026-W18 "
                              "(score 82: match 0.70, criteria 1.00, novelty 0.50); ")


def test_thresholds_in_the_words_are_the_weeks_own():
    got = line("Title", "We evaluate a protein language model and a PLM.", thresholds=Thresholds(90, 80))
    assert got.startswith("DROP (weak-match): in scope, but the watchlist barely matched (score 78, below the "
                          "REVIEW threshold 80: ")
