"""Regexes every match of which holds a non-ASCII character run only on the rows that hold one.

`needs_non_ascii` must never say yes for a regex that can match plain ASCII
(that would drop matches); the routing check routes the same pool with the
script regex as written and with a twin the reader cannot prove non-ASCII
(an alternative that never occurs), which takes the all-rows path, and
requires the same pile for every work.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from support.routing import TODAY, write_pool, write_specs

from reporter.routing.plan import compile_plan
from reporter.routing.regexlit import needs_non_ascii
from reporter.routing.release import route_release
from reporter.routing.specs import load_rulebook


@pytest.mark.parametrize("pattern", [
    r"[\p{Arabic}\p{Hebrew}\p{Cyrillic}\p{Han}]", r"[\p{Cyrillic}\p{Han}\p{Arabic}\p{Greek}]{3}", r"\p{Han}+",
    r"(\p{Greek})", "日本|中文", "é", "(?i)Ω", r"x?\p{Cyrillic}",
])
def test_regexes_that_always_hold_a_non_ascii_character(pattern):
    assert needs_non_ascii(pattern)


@pytest.mark.parametrize("pattern", [
    r"[\p{Cyrillic}\p{Latin}]",   # Latin holds a-z
    r"\p{Common}", r"\p{Any}",    # punctuation, digits; everything
    r"\p{L}", r"\pL", r"\p{Lu}",  # categories hold ASCII letters
    r"\P{Han}", r"[^\p{Han}]",    # negated
    r"\p{Han}*", r"\p{Han}?x",    # optional
    r"\p{Han}|x", "x|日本",        # an ASCII alternative
    "ſ", "K", "(?i)ſ",            # long s and the Kelvin sign fold to s and k
    "[α-ω]",                      # ranges are not read
    r"\x{4e2d}", "trial", "",     # escapes are not read; ASCII; empty
    r"[\p{Han}",                  # unclosed class
])
def test_regexes_that_may_match_plain_ascii(pattern):
    assert not needs_non_ascii(pattern)


ROWS = [
    {"work_id": "osf:w1", "source": "s", "title": "Исследование памяти", "abstract": "Russian title."},
    {"work_id": "osf:w2", "source": "s", "title": "A plain ASCII title", "abstract": "Nothing."},
    {"work_id": "osf:w3", "source": "s", "title": "Études on ﬁsh — a “quoted” study", "abstract": "Latin only."},
    {"work_id": "osf:w4", "source": "s", "title": None, "abstract": "心理学 abstract only"},
    {"work_id": "osf:w5", "source": "s", "title": "Mixed: memory and память", "abstract": None},
    {"work_id": "osf:w6", "source": "s", "title": "  Whitespace\n run  ", "abstract": "中文"},
    {"work_id": "osf:w7", "source": "s", "title": "Ελληνικά", "abstract": "Greek is not in the class."},
]


def _piles(tmp_path, name: str, regex: str, field: str) -> list[tuple[str, str]]:
    specs = write_specs(tmp_path / name, [{"id": "non-latin", "pile": "hold", "precedence": 10,
                                            "match": {"field": field, "regex": regex}}])
    pool = write_pool(tmp_path / f"{name}.parquet", ROWS)
    result = route_release(pool, specs, tmp_path / name / "releases", progress=False, as_of=TODAY)
    table = pq.read_table(result.release_dir / "routing.parquet", columns=["work_id", "pile"])
    return sorted(zip(table.column("work_id").to_pylist(), table.column("pile").to_pylist()))


@pytest.mark.parametrize("field", ["title", "text"])
def test_the_non_ascii_path_routes_as_the_all_rows_path(tmp_path, field):
    wide = r"[\p{Arabic}\p{Hebrew}\p{Cyrillic}\p{Han}]"
    narrow = wide + "|qqqxqqqzzz"  # an ASCII alternative no row holds: every row is read
    for regex, expected in ((wide, True), (narrow, False)):
        specs = write_specs(tmp_path / f"check-{expected}-{field}", [
            {"id": "non-latin", "pile": "hold", "precedence": 10, "match": {"field": field, "regex": regex}}])
        plan = compile_plan(load_rulebook(specs), pq.read_schema(write_pool(tmp_path / "schema.parquet", ROWS)))
        assert bool(plan.regex_wide) is expected
    got = _piles(tmp_path, "wide", wide, field)
    assert got == _piles(tmp_path, "narrow", narrow, field)
    held = {w.removeprefix("osf:") for w, pile in got if pile == "hold"}
    assert held == ({"w1", "w5"} if field == "title" else {"w1", "w4", "w5", "w6"})
