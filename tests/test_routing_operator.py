"""What a routing operator guessed, made plain (issue 34, item 6).

The `always` predicate: a catch-all rule, so no work is left unrouted (375 works of a real review sat unrouted for
want of one); it loses to every rule of higher precedence and takes no other value. And `reporter route` warns
how many abstract-less works of screening piles wait as pending/no_text (57 of a real review, one an include,
were never screened) and names `title_only_sources`."""

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


def test_route_warns_how_many_works_of_screening_piles_wait_as_no_text(tmp_path, capsys):
    from reporter.cli import main
    rows = [{"work_id": f"t:w{i}", "source": source, "title": f"A trial {i}", "abstract": abstract}
            for i, (source, abstract) in enumerate([("journal", None), ("journal", " "), ("journal", "Text."),
                                                     ("osf", None)])]
    write_pool(tmp_path / "pool.parquet", rows)
    write_specs(tmp_path, RULES)
    argv = ["route", "--pool", str(tmp_path / "pool.parquet"), "--specs", str(tmp_path / "specs"),
            "--out", str(tmp_path / "releases")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert ("warning: 2 works that rules sent to screening piles (screen 2) have no abstract and wait as "
            "pending/no_text: the screen never sees them. To screen such works on their title alone, list their "
            "sources in specs/piles.json `title_only_sources` (now: osf)") in err
    rows[0]["abstract"] = rows[1]["abstract"] = "Now it has one."
    write_pool(tmp_path / "pool.parquet", rows)
    assert main(argv) == 0
    assert "no_text" not in capsys.readouterr().err
