"""The `always` predicate (issue 34, item 6): a catch-all rule, so no work is left unrouted (375 works of a real
review sat unrouted for want of one); it loses to every rule of higher precedence and takes no other value."""

from __future__ import annotations

import pytest
from support.routing import TODAY, write_pool, write_specs

from reporter.errors import InputError
from reporter.routing.release import route_release

RULES = [
    {"id": "to-screen", "description": "the screen", "pile": "screen", "precedence": 10,
     "match": {"field": "title", "any_phrase": ["trial"]}},
    {"id": "rest", "description": "whatever no other rule took", "pile": "discard", "precedence": 1,
     "match": {"always": True}},
]


def route(tmp_path, rules):
    rows = [{"work_id": f"t:w{i}", "source": "journal", "title": title, "abstract": abstract}
            for i, (title, abstract) in enumerate([("A trial", "An abstract."), ("A cohort", "An abstract."),
                                                    ("Nothing", None), (None, None)])]
    write_pool(tmp_path / "pool.parquet", rows)
    write_specs(tmp_path, rules)
    return route_release(tmp_path / "pool.parquet", tmp_path / "specs", tmp_path / "releases", workers=1,
                         progress=False, as_of=TODAY)


def test_a_catch_all_rule_leaves_nothing_unrouted(tmp_path):
    result = route(tmp_path, RULES)
    assert result.piles["screen"] == 1 and result.piles["discard"] == 3
    assert result.pending.get("unrouted", 0) == 0


def test_without_it_works_stay_unrouted(tmp_path):
    result = route(tmp_path, RULES[:1])
    assert result.pending["unrouted"] == 3


@pytest.mark.parametrize("value", [False, 1, "yes", None])
def test_always_takes_true_alone(tmp_path, value):
    bad = [RULES[0], {**RULES[1], "match": {"always": value}}]
    with pytest.raises(InputError, match=r"rule 'rest':.*match\.always: must be true"):
        route(tmp_path, bad)
    with pytest.raises(InputError, match="unknown key for a 'always' predicate"):
        route(tmp_path, [RULES[0], {**RULES[1], "match": {"always": True, "field": "title"}}])
