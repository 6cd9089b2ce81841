"""A regex condition's evidence span: the leftmost match per row, in characters, from one RE2 search.

`regex_spans` asks pyarrow's `extract_regex_span` for the byte start and
length of the match (one search a row); a pyarrow without it searches twice
(`find_substring_regex`, then `extract_regex`). Both must give the spans
worked out by hand below, on rows with non-ASCII characters before and
inside the match, rows normalisation rewrites (the patch), blank rows and
rows without a match.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reporter.routing import evidence
from reporter.routing.fieldtext import FieldText
from reporter.routing.textscan import Scanner, default_engine

TEXTS = [
    "We replicated it; replicated again.",   # leftmost of two matches
    "Études: the effect replicated.",         # é before the match: characters, not bytes
    "Nothing to see.",                        # no match
    "",                                       # blank
    "  Spaces\tthen   réplicated twice",     # a patch row (whitespace normalised), é inside the match
    "ÉÉÉ replicated and Replicated",          # case folded: the first one
]
# (row, character start, character end) of `\b[rR]é?e?plicated\b` ignoring case, on the normalised text:
# row 4 normalises to "Spaces then réplicated twice".
EXPECTED = [(0, 3, 13), (1, 19, 29), (4, 12, 22), (5, 4, 14)]


@pytest.mark.parametrize("one_search", [True, False])
def test_regex_spans_are_the_leftmost_match_in_characters(monkeypatch, one_search):
    if not one_search:
        monkeypatch.setattr(evidence, "_EXTRACT_SPAN", None)
    elif evidence._EXTRACT_SPAN is None:
        pytest.skip("this pyarrow has no extract_regex_span")
    ft = FieldText(pa.array(TEXTS), Scanner(["replicated"], default_engine()))
    rows, start, end = evidence.regex_spans(ft, np.flatnonzero(~ft.blank), r"\br(é|e)?plicated\b", False)
    assert list(zip(rows.tolist(), start.tolist(), end.tolist())) == EXPECTED
    norm = ft.norm.to_pylist()
    assert [norm[r][s:e].lower() for r, s, e in EXPECTED] == ["replicated", "replicated", "réplicated", "replicated"]


def test_regex_spans_without_a_candidate_match():
    ft = FieldText(pa.array(TEXTS), Scanner(["replicated"], default_engine()))
    rows, start, end = evidence.regex_spans(ft, np.array([2, 3]), "replicated", True)
    assert rows.tolist() == start.tolist() == end.tolist() == []


@pytest.mark.parametrize("searched", [None, [0, 1, 2, 3, 4, 5], [1, 4], [2, 3], [4], []])
def test_regex_spans_reuse_the_engines_search(monkeypatch, searched):
    """Rows the engine's own search of the regex covered (`regex_rows(..., keep_spans=True)`) are read from
    what it kept, not searched again; rows it did not cover still are. The spans are the same either way."""
    if evidence._EXTRACT_SPAN is None:
        pytest.skip("this pyarrow has no extract_regex_span")
    ft = FieldText(pa.array(TEXTS), Scanner(["replicated"], default_engine()))
    pattern = r"\br(é|e)?plicated\b"
    matched = ft.regex_rows(pattern, True, None if searched is None else np.array(searched, np.int64), keep_spans=True)
    covered = range(len(TEXTS)) if searched is None else searched
    assert np.flatnonzero(matched).tolist() == [r for r, _, _ in EXPECTED if r in covered]
    calls = []

    def counted(arr, wrapped):
        calls.append(len(arr))
        return pa.compute.extract_regex_span(arr, wrapped)

    monkeypatch.setattr(evidence, "_EXTRACT_SPAN", counted)
    cand = np.flatnonzero(~ft.blank)
    rows, start, end = evidence.regex_spans(ft, cand, pattern, False)
    assert list(zip(rows.tolist(), start.tolist(), end.tolist())) == EXPECTED
    assert sum(calls) == len([r for r in cand if r not in covered])
    # A search of the regex with the other case setting is another regex: nothing of it is reused.
    calls.clear()
    evidence.regex_spans(ft, cand, pattern, True)
    assert sum(calls) == len(cand)
