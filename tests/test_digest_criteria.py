"""The watchlist and the criteria document: what they parse into, and errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reporter.digest.criteria import (
    IN_SCOPE,
    OUT_OF_SCOPE,
    REDUCED_FIT,
    REQUIRED,
    load_criteria,
    parse_criteria,
    section_name,
)
from reporter.digest.watchlist import WatchEntry, load_watchlist, parse_watchlist
from reporter.errors import InputError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"


# --- the watchlist ------------------------------------------------------------------------------------


def test_text_watchlist_phrases_weights_and_comments():
    w = parse_watchlist("# a comment\n\nprotein language model\nESM*\t1.5   # strong\nC#\n  \n"
                        "protein design\t0.5\n", "w.txt")
    assert w.entries == (WatchEntry("protein language model", 1.0, 3), WatchEntry("ESM*", 1.5, 4),
                         WatchEntry("C#", 1.0, 5), WatchEntry("protein design", 0.5, 7))
    assert w.name == "w.txt" and w.phrases[0] == "protein language model"


def test_json_watchlist_strings_and_objects_with_their_lines():
    text = '[\n  "protein language model",\n  {"phrase": "ESM*", "weight": 1.5},\n  {"phrase": "PLM"}\n]\n'
    w = parse_watchlist(text, "w.json")
    assert w.entries == (WatchEntry("protein language model", 1.0, 2), WatchEntry("ESM*", 1.5, 3),
                         WatchEntry("PLM", 1.0, 4))


def test_the_fixture_watchlist_loads_from_a_file():
    w = load_watchlist(FIXTURES / "watchlist.txt")
    assert [(e.phrase, e.weight) for e in w.entries] == [("protein language model", 1.0), ("ESM*", 1.5),
                                                          ("protein design", 0.5)]


@pytest.mark.parametrize("text, line, fix", [
    ("ok\nESM*\tstrong\n", 2, "not a number"),
    ("ok\nESM*\t0\n", 2, "positive number"),
    ("ok\nESM*\t-1\n", 2, "positive number"),
    ("ok\nESM*\tnan\n", 2, "positive number"),
    ("ok\n\t1.5\n", 2, "empty phrase"),
    ("ok\nx\t1\t2\n", 2, "more than one TAB"),
    ("ok\n\nmeta*analysis\n", 3, "'*' is allowed only at the end"),
    ("ok\n *\n", 2, "empty after normalisation"),
    ("ok\nok\n", 2, "already on line 1"),
])
def test_text_watchlist_errors_name_file_line_and_fix(text, line, fix):
    with pytest.raises(InputError) as err:
        parse_watchlist(text, "lists/w.txt")
    assert str(err.value).startswith(f"lists/w.txt:{line}:") and fix in str(err.value)


@pytest.mark.parametrize("text, line, fix", [
    ('[\n "ok",\n {"phrase": "x", "weight": "heavy"}\n]', 3, "not a number"),
    ('[\n "ok",\n {"phrase": "x", "weight": true}\n]', 3, "positive number"),
    ('[\n "ok",\n {"term": "x"}\n]', 3, 'an entry must be "phrase"'),
    ('[\n "ok",\n 3\n]', 3, 'an entry must be "phrase"'),
    ('[\n "ok",\n ""\n]', 3, "empty phrase"),
    ('[\n "ok",\n "a*b"\n]', 3, "only at the end"),
    ('[\n "ok",\n "ok"\n', 4, "not valid JSON"),
])
def test_json_watchlist_errors_name_file_line_and_fix(text, line, fix):
    with pytest.raises(InputError) as err:
        parse_watchlist(text, "w.json")
    assert str(err.value).startswith(f"w.json:{line}:") and fix in str(err.value)


def test_an_empty_watchlist_or_a_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"w.txt: no phrases"):
        parse_watchlist("# only a comment\n", "w.txt")
    with pytest.raises(InputError, match="watchlist not found"):
        load_watchlist(tmp_path / "absent.txt")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError, match="not UTF-8"):
        load_watchlist(tmp_path / "bad.txt")


# --- the criteria document ----------------------------------------------------------------------------


def test_the_spec_example_parses_into_concepts_with_prose_terms_and_lines():
    c = load_criteria(FIXTURES / "criteria.md")
    assert c.name == "criteria.md"
    assert [(x.section, x.prose, x.terms, x.line) for x in c.concepts] == [
        (IN_SCOPE, "Protein language models trained on sequences", ("protein language model", "PLM", "ESM*"), 4),
        (OUT_OF_SCOPE, "Clinical trial enrollment reports", ("enrollment", "trial registration"), 7),
        (REQUIRED, "Must report empirical results", ("we evaluate", "benchmark*", "accuracy", "results show"), 10),
        (REDUCED_FIT, "Review articles", ("review", "survey", "overview"), 13),
    ]
    assert c.cite(c.section(OUT_OF_SCOPE)[0]) == 'criteria.md:7 "Clinical trial enrollment reports"'


def test_any_heading_level_any_case_numbered_and_nested_bullets_and_prose_elsewhere():
    text = ("Intro with `code` is prose.\n"
            "# Notes\n- a plain bullet without terms is prose\n"
            "### IN-SCOPE:\n"
            "1. LLM judges: `LLM-as-a-judge`,\n   `judge model*`\n"
            "   - nested concept: `pairwise preference`\n"
            "* `MT-Bench` results\n\n"
            "A paragraph with `terms` in a section is prose too.\n"
            "#### out of Scope\n- Speech: `speech recognition`\n")
    c = parse_criteria(text, "c.md")
    assert [(x.section, x.prose, x.terms, x.line) for x in c.concepts] == [
        (IN_SCOPE, "LLM judges", ("LLM-as-a-judge", "judge model*"), 5),
        (IN_SCOPE, "nested concept", ("pairwise preference",), 7),
        (IN_SCOPE, "`MT-Bench` results", ("MT-Bench",), 8),
        (OUT_OF_SCOPE, "Speech", ("speech recognition",), 12),
    ]


def test_section_names_are_matched_loosely_but_exactly():
    assert section_name("  In_Scope : ") == "in scope" == section_name("IN-SCOPE")
    assert section_name("Reduced  fit") == "reduced fit"
    assert section_name("In scope (LLMs)") not in ("in scope",)


@pytest.mark.parametrize("text, where, fix", [
    ("## Out of scope\n- x: `x`\n", "c.md:", "no In scope section"),
    ("## In scope\nNo bullets here.\n", "c.md:", "has no bullet"),
    ("## In scope\n- a: `a`\n## Required\n- Must be empirical\n", "c.md:4:", "without a backticked term"),
    ("## In scope\n- a: `a`\n## Out of scop\n- Speech: `speech`\n", "c.md:4:", "under the heading 'Out of scop'"),
    ("- early: `x`\n## In scope\n- a: `a`\n", "c.md:1:", "before any heading"),
    ("## In scope\n- a: `a`\n- b: `meta*analysis`\n", "c.md:3:", "only at the end"),
    ("## In scope\n- a: `a`\n- b: `*`\n", "c.md:3:", "empty after normalisation"),
    ("## In scope\n- a: `a`\n- b: `  `\n", "c.md:3:", "empty backticked term"),
])
def test_criteria_errors_name_file_line_and_fix(text, where, fix):
    with pytest.raises(InputError) as err:
        parse_criteria(text, "c.md")
    message = str(err.value)
    assert message.startswith(where) and fix in message, message


def test_a_missing_criteria_file_is_named(tmp_path):
    with pytest.raises(InputError, match="criteria document not found"):
        load_criteria(tmp_path / "criteria.md")


def test_bullet_prose_stops_at_the_first_term_and_soft_breaks_are_spaces():
    c = parse_criteria("## In scope\n- Evaluation of *language*\n  models — `LLM eval*`, `benchmark*`\n", "c.md")
    assert c.concepts[0].prose == "Evaluation of language models"
    assert json.dumps(c.concepts[0].terms) == '["LLM eval*", "benchmark*"]'
