"""The fast normalisation path equals the plain one on every row, whatever the characters."""

import unicodedata

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.routing.fieldtext import FieldText
from reporter.routing.normalise import normalise_array, normalise_text
from reporter.routing.textscan import Scanner

TRICKY = ["a", "B", "é", "É", "e\u0301", "\u0301", "²", "ﬁ", "ﬀ", "\u00a0", "\u2028", "\u0085", "\u3000",
          "–", "—", "\u2010", "\u2011", "-", "İ", "ß", "ẞ", "\u1100", "\u1161", "\u11a8", "…", "Ａ", "µ",
          "Σ", "β", " ", "  ", "\t", "\n", "\r\n", "\x1f", "x", "trial", "_", "٣", "\ufe58", "\u212b",
          "’", "ö", "中"]  # the last three normalisation leaves as they are


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(TRICKY), max_size=12).map("".join)),
                min_size=1, max_size=20))
def test_fast_path_equals_full_normalisation(values):
    arr = pa.array(values, pa.string())
    ft = FieldText(arr, Scanner(["trial"]))
    norm, low = normalise_array(arr)
    assert ft.norm.to_pylist() == norm.to_pylist()
    assert ft.low.to_pylist() == low.to_pylist()


def test_spec_examples():
    assert normalise_text("Meta\u2010analysis  of \ufb01sh\n trials ") == "meta-analysis of fish trials"
    assert normalise_text("HÉBERT\u00a0et al.") == "hébert et al."
    assert normalise_text("e\u0301") == unicodedata.normalize("NFKC", "e\u0301") == "é"
    assert normalise_text("Case", lower=False) == "Case"


def test_required_literals_of_regexes():
    from reporter.routing.regexlit import required_literals
    assert required_literals(r"\breplicat\w+ of\b") == ("replicat",)
    assert required_literals(r"colou?r chart") == ("color chart", "colour chart")  # `u?`: with or without
    assert required_literals(r"\bp [<=] ?\.[0-9]+") == ("p < .", "p <.", "p = .", "p =.")
    assert required_literals(r"\(d = -?[0-9]") == ("(d = ",)      # "(d = -" holds "(d = ": one literal does
    assert required_literals(r"colou*r chart") == ("r chart",)        # `u*` may repeat: the run stops
    assert required_literals(r"direct\s+Replication") == ("replication",)
    assert required_literals(r"foo|bar") == ("bar", "foo")            # top-level alternation: one of either
    assert required_literals(r"re(analysis|analyses)") == ("reanalyses", "reanalysis")  # the group's two ways
    assert required_literals(r"A\.B\.C test") == ("a.b.c test",)


def test_non_ascii_characters_join_a_literal_only_where_lower_casing_mirrors_their_case_folding():
    """β (Β, ϐ) and é are seen as themselves in the lower-cased text; ς and σ are not (Σ lower-cases to σ)."""
    from reporter.routing.regexchars import seen_as
    from reporter.routing.regexlit import needs_non_ascii, required_literals
    assert required_literals(r"\((d|or|β) = -?[0-9]+\.[0-9]+") == ("(d = ", "(or = ", "(β = ")
    assert required_literals("Café au lait") == ("café au lait",)
    assert required_literals("STRAẞE") == ("straße",)
    assert required_literals("µg of") == ("μg of",)            # the micro sign is μ after NFKC
    assert required_literals("ſtudy") == ("study",)             # long s: RE2 folds it with s, NFKC makes it s
    assert required_literals("ςσ data") == (" data",)           # both sigmas stop the literal run
    assert required_literals("ab\u0301cd") is None             # a combining mark: NFKC may join it to a neighbour
    assert [seen_as(c) for c in "βΒϐςσΣÉİ"] == ["β", "β", "β", None, None, None, "é", "i"]
    assert needs_non_ascii("β") and not needs_non_ascii("ſ")   # ſ matches s


def test_every_cased_character_lies_below_the_orbit_search_bound():
    """The case-folding orbit of a regex character is looked for below CASED_BELOW: no code point at or
    above it has a case mapping (so none is in any orbit)."""
    import sys

    from reporter.routing.regexchars import CASED_BELOW, cased_candidates
    cased = [c for c in range(CASED_BELOW, sys.maxunicode + 1)
             if chr(c).lower() != chr(c) or chr(c).upper() != chr(c) or chr(c).casefold() != chr(c)]
    assert cased == []
    # The candidates, UTF-8-encoded in numpy, are those code points one a string.
    assert cased_candidates().to_pylist() == [chr(c) for c in range(CASED_BELOW) if not 0xD800 <= c < 0xE000]


def test_whitespace_set_is_every_isspace_character():
    import sys

    from reporter.routing.normalise import WHITESPACE_CHARS
    assert WHITESPACE_CHARS == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


def test_whitespace_runs_of_any_length_collapse_like_str_split():
    """The numpy collapse steps back over a row's trailing run a few bytes at a time, then finishes long ones."""
    import numpy as np

    from reporter.routing.arrowtext import collapse_whitespace
    values = ["a" + " " * 40, " " * 50, "b \t\n" * 3 + "\t" * 100, "x  y", "", None, "  z  ",
              "q" + " \n" * 50_000, "\x1f\x1c lead", "c\u00a0 d"]
    arr = pa.array(["skip"] + values, pa.string()).slice(1)  # a sliced array: offsets start past zero
    got = collapse_whitespace(arr, np.arange(len(values)), unicode_rows=np.array([len(values) - 1]))
    assert got.to_pylist() == [None if v is None else " ".join(v.split()) for v in values]


def test_rows_of_positions_is_the_row_each_byte_lies_in():
    """Row bounds looked up among the positions give each position the row a binary search of the bounds
    gives, empty rows and a buffer starting past zero included."""
    import numpy as np

    from reporter.routing.normalise import rows_of
    rng = np.random.default_rng(5)
    for _ in range(200):
        lengths = rng.integers(0, 6, size=int(rng.integers(1, 30))) * rng.integers(0, 2, size=1)[0]
        offsets = np.concatenate([[0], np.cumsum(lengths)]) + int(rng.integers(0, 4))
        inside = np.arange(offsets[0], offsets[-1])
        positions = np.sort(rng.choice(inside, size=int(rng.integers(0, len(inside) + 1)), replace=False)) \
            if len(inside) else inside
        want = np.searchsorted(offsets, positions, side="right") - 1
        assert rows_of(offsets, positions).tolist() == want.tolist()
