"""match_phrases: the rule language's `phrase` predicate over a text column, exactly as the engine matches it.

The property test routes every random phrase through the engine itself (a
one-rule book, `route_batch`) and checks that match_phrases marks the same
rows and measures the same first span as the rule's evidence; a plain
Python reading (unicodedata + `re`) checks the occurrence counts. Hand cases
cover the normalisation, the boundaries and the input types.
"""

from __future__ import annotations

import json
import re
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reporter.routing.phrases as phrases_mod
from reporter.errors import InputError
from reporter.routing import PhraseMatches, Span, load_rulebook, match_phrases
from reporter.routing.engine import route_batch
from reporter.routing.plan import compile_plan

PILES = {"piles": [{"name": "screen", "kind": "screen", "tier": "expensive"},
                   {"name": "pending", "kind": "pending"}]}


def engine_matches(texts: list[str | None], phrase: str) -> tuple[np.ndarray, list[dict | None]]:
    """Rows a one-rule book `{"field": "title", "phrase": phrase}` matches, and the rule's evidence per row."""
    with tempfile.TemporaryDirectory() as tmp:
        specs = Path(tmp)
        (specs / "rules").mkdir()
        (specs / "piles.json").write_text(json.dumps(PILES))
        rule = {"id": "r", "pile": "screen", "precedence": 1, "match": {"field": "title", "phrase": phrase}}
        (specs / "rules" / "r.json").write_text(json.dumps(rule, ensure_ascii=False))
        book = load_rulebook(specs)
    n = len(texts)
    batch = pa.record_batch({"work_id": pa.array([f"doi:{i}" for i in range(n)], pa.string()),
                             "source": pa.array(["crossref"] * n, pa.string()),
                             "title": pa.array(texts, pa.string()), "abstract": pa.array(["x"] * n, pa.string())})
    table = route_batch(compile_plan(book, batch.schema), batch).table
    return (np.array([m == ["r"] for m in table.column("matched").to_pylist()], dtype=bool),
            table.column("evidence").to_pylist())


def norm(text: str, lower: bool = True) -> str:
    """routing.md's normalisation, read plainly: NFKC, dashes to '-', lower-casing, whitespace collapsed."""
    text = "".join("-" if unicodedata.category(c) == "Pd" else c for c in unicodedata.normalize("NFKC", text))
    return " ".join((text.lower() if lower else text).split())


def occurrences(text: str | None, phrase: str) -> int:
    """Start positions of the phrase in the normalised text with the phrase's boundaries (overlaps counted)."""
    if text is None:
        return 0
    prefix = phrase.rstrip().endswith("*")
    body = norm(phrase.rstrip()[:-1] if prefix else phrase)
    return len(re.findall(r"(?<!\w)(?=" + re.escape(body) + ("" if prefix else r"(?!\w)") + ")", norm(text)))


# Tokens chosen to hit every normalisation step and boundary case: NFKC ligatures
# and full-width letters, Unicode dashes, combining accents, non-ASCII letters
# and digits glued to ASCII words, Unicode and control whitespace.
TOKENS = ["trial", "Trials", "TRIAL", "pretrial", "trialled", "trial_x", "trial2", "randomised", "study",
          "meta\u2010analysis", "meta-analysis", "meta\u2014analysis", "Meta–Analysis", "ﬁsh", "fish", "Ｆish",
          "café", "cafe\u0301", "Hébert", "HÉBERT", "naïve", "Ωtrial", "trialé", "試験trial", "٣trial", "of",
          "x", "a", "a a", "e\u0301", "·", "(", ")", ".", ","]
SEPS = [" ", "  ", "\n", "\t", "\u00a0", "\u3000", "-", "", " \u2010 "]
def texts_of(tokens: list[str]):
    """Texts (None and blank ones too) made of tokens and separators."""
    return st.one_of(st.none(), st.just(""), st.just("  "),
                     st.lists(st.tuples(st.sampled_from(tokens), st.sampled_from(SEPS)), max_size=10).map(
                         lambda ws: "".join(w + s for w, s in ws)))


WORDS = ["trial", "Trial", "trials", "randomised", "study", "meta-analysis", "meta\u2010analysis", "ﬁsh", "fish",
         "café", "cafe\u0301", "hébert", "naïve", "of", "x", "a", "a a", "é", "試験", "٣", "Ｆish", "(", "."]
phrase_st = st.builds(lambda ws, sep, star: sep.join(ws) + ("*" if star else ""),
                      st.one_of(st.lists(st.sampled_from(WORDS), min_size=1, max_size=1),
                                st.lists(st.sampled_from(WORDS), min_size=2, max_size=3)),
                      st.sampled_from([" ", "  ", "-", "\u2010", "\n"]), st.booleans())


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(phrases=st.lists(phrase_st, min_size=1, max_size=4), chunk=st.sampled_from([3, 65_536]), data=st.data())
def test_agrees_with_the_engine(phrases, chunk, data):
    # Texts hold the phrases themselves (and the phrases run on) often enough to match.
    own = [p.rstrip("*") + end for p in phrases for end in ("", "s", "é")]
    texts = data.draw(st.lists(texts_of(TOKENS + own), min_size=1, max_size=12), label="texts")
    old, phrases_mod.CHUNK_ROWS = phrases_mod.CHUNK_ROWS, chunk   # small chunks: sliced arrays too
    try:
        m = match_phrases(texts, phrases)
    finally:
        phrases_mod.CHUNK_ROWS = old
    assert m.phrases == tuple(phrases) and m.n_rows == len(texts)
    assert list(zip(m.row.tolist(), m.phrase.tolist())) == sorted(zip(m.row.tolist(), m.phrase.tolist()))
    counts = m.counts()
    for j, phrase in enumerate(phrases):
        matched, evidence = engine_matches(texts, phrase)
        assert (m.matched(j) == matched).all(), (phrase, texts)
        for i, text in enumerate(texts):
            assert counts[i, j] == occurrences(text, phrase), (phrase, text)
            if matched[i]:
                span = next(s for s in m.spans(i) if s.index == j)
                ev = evidence[i]
                assert (ev["field"], ev["start"], ev["end"]) == ("title", span.start, span.end)
                assert ev["text"] == span.text[:200]
                assert span.text == norm(text, lower=False)[span.start:span.end]


def test_the_digest_question_in_one_call_per_field():
    titles = ["ESM-2 protein language models", "A survey", None]
    abstracts = ["We benchmark a protein language model; the protein language model wins.", None, "benchmarks"]
    terms = ["protein language model*", "ESM*", "benchmark*", "survey"]
    t, a = match_phrases(titles, terms), match_phrases(abstracts, terms)
    assert t.matrix().tolist() == [[True, True, False, False], [False, False, False, True],
                                   [False, False, False, False]]
    assert a.counts()[0].tolist() == [2, 0, 1, 0]
    assert a.counts()[2].tolist() == [0, 0, 1, 0]
    assert (t.matrix() | a.matrix()).sum(axis=1).tolist() == [3, 1, 1]    # distinct terms anywhere
    assert t.spans(0) == [Span("protein language model*", 0, 6, 29, "protein language models", 1),
                          Span("ESM*", 1, 0, 3, "ESM", 1)]
    assert t.matched("survey").tolist() == [False, True, False]
    assert t.matched().tolist() == [True, True, False]
    assert t.to_arrow().column_names == ["row", "phrase_index", "phrase", "count", "start", "end", "text"]
    assert t.to_arrow().num_rows == len(t) == 3


@pytest.mark.parametrize("text, phrase, expected", [
    # Unicode dashes: every Pd character is '-', in the text and in the phrase.
    ("a meta\u2010analysis of trials", "meta-analysis", (2, 15, "meta-analysis")),
    ("a meta-analysis", "meta\u2014analysis", (2, 15, "meta-analysis")),
    # NFKC: the ligature reads fi, full-width letters read ASCII (offsets into the normalised text).
    ("the \ufb01sh", "fish", (4, 8, "fish")),
    ("the fish", "\ufb01sh", (4, 8, "fish")),
    ("ＴＲＩＡＬ", "trial", (0, 5, "TRIAL")),
    ("cafe\u0301 au lait", "café", (0, 4, "café")),
    # Case and whitespace.
    ("A Randomised\n\t Trial", "randomised trial", (2, 18, "Randomised Trial")),
    ("HÉBERT et al.", "hébert", (0, 6, "HÉBERT")),
    # A trailing * lets the last word go on, to the end of the word.
    ("trialled twice", "trial*", (0, 8, "trialled")),
    ("two trials", "trial*", (4, 10, "trials")),
    ("the trialé", "trial*", (4, 10, "trialé")),
    ("pretrial", "trial*", None),
    # Word boundaries: letters, digits and _ in any script are word characters.
    ("two trials", "trial", None),
    ("pretrial", "trial", None),
    ("étrial", "trial", None),
    ("trialé", "trial", None),
    ("Ωtrial", "trial", None),
    ("試験trial", "trial", None),
    ("trial٣", "trial", None),
    ("trial_x", "trial", None),
    ("(trial)", "trial", (1, 6, "trial")),
    ("trial\u2014x", "trial", (0, 5, "trial")),
    ("·trial·", "trial", (1, 6, "trial")),
    # Blank or absent text matches nothing.
    ("", "trial", None),
    ("   ", "trial", None),
    (None, "trial", None),
])
def test_hand_cases(text, phrase, expected):
    m = match_phrases([text], [phrase])
    got = [(s.start, s.end, s.text) for s in m.spans(0)]
    assert got == ([] if expected is None else [expected])
    assert m.matched(0)[0] == engine_matches([text], phrase)[0][0]


def test_counts_rows_and_inputs():
    texts = ["trial trial trial", "a a a", None, "tri", "al trial"]
    m = match_phrases(texts, ["trial", "a a", "Trial"])
    assert m.counts().tolist() == [[3, 0, 3], [0, 2, 0], [0, 0, 0], [0, 0, 0], [1, 0, 1]]
    assert m.spans(4) == [Span("trial", 0, 3, 8, "trial", 1), Span("Trial", 2, 3, 8, "trial", 1)]
    same = [match_phrases(col, ["trial"]).matched().tolist() for col in (
        texts, tuple(texts), np.array(texts, dtype=object), pa.array(texts), pa.array(texts, pa.large_string()),
        pa.chunked_array([texts[:2], [], texts[2:]], pa.string()), pl.Series(texts),
        pa.array(texts).dictionary_encode())]
    assert all(s == [True, False, False, False, True] for s in same)
    assert match_phrases([None, None], ["trial"]).matched().tolist() == [False, False]
    assert match_phrases(pa.nulls(2), ["trial"]).matched().tolist() == [False, False]
    empty = match_phrases([], ["trial"])
    assert empty.n_rows == 0 and len(empty) == 0 and empty.matrix().shape == (0, 1)
    none = match_phrases(["trial"], [])
    assert none.matrix().shape == (1, 0) and not none.matched().any()


def test_result_is_frozen():
    m = match_phrases(["a trial"], ["trial"])
    assert isinstance(m, PhraseMatches)
    with pytest.raises(ValueError):
        m.row[0] = 5
    with pytest.raises(AttributeError):
        m.n_rows = 3
    assert repr(m) == "PhraseMatches(1 phrases, 1 rows, 1 matches)"


@pytest.mark.parametrize("phrase, message", [
    ("tr*al", "'*' is allowed only at the end"),
    ("*", "empty after normalisation"),
    ("  ", "empty after normalisation"),
    (3, "a phrase must be a string"),
])
def test_refuses_what_the_rule_book_refuses(phrase, message):
    with pytest.raises(InputError, match=re.escape(message)) as err:
        match_phrases(["text"], ["ok", phrase])
    assert str(err.value).startswith(f"phrases[1] {phrase!r}: ")


@pytest.mark.parametrize("texts", ["a trial", [1, 2], pa.array([1, 2]), pl.Series([1, 2])])
def test_refuses_a_column_that_is_not_text(texts):
    with pytest.raises(TypeError):
        match_phrases(texts, ["trial"])


def test_refuses_one_string_as_phrases():
    with pytest.raises(TypeError):
        match_phrases(["a trial"], "trial")


def test_any_str_is_matched_a_lone_surrogate_as_one_replacement_character():
    """A lone surrogate (legal in JSON, not in UTF-8) crashed the matcher with UnicodeEncodeError (issue 21)."""
    texts = ["A \ud800 b protein language model", "\udfffprotein\ud800", None, "\ud83d\ude00 protein"]
    m = match_phrases(texts, ["protein", "b protein*"])
    assert m.matched("protein").tolist() == [True, True, False, True]
    [first, second] = m.spans(0)
    assert (first.start, first.end, first.text) == (6, 13, "protein")  # offsets as in the text given
    assert (second.start, second.text) == (4, "b protein")
    assert [(s.start, s.end) for s in m.spans(1)] == [(1, 8)]
