"""Every rule-book validation error names the file, the rule id and the JSON path; nothing is routed."""

import json

import pytest

from reporter.errors import InputError
from reporter.routing.release import route_release
from reporter.routing.specs import load_rulebook
from support.routing import DEFAULT_PILES, write_pool, write_specs

GOOD = {"id": "r1", "pile": "screen", "precedence": 10, "match": {"field": "title", "phrase": "replication"}}


def rule(**kw):
    return {**GOOD, **kw}


@pytest.mark.parametrize("rules,expected", [
    ([rule(colour="red")], ["rules/rules.json", "'r1'", "$.colour", "unknown key"]),
    ([rule(pile="screne")], ["'r1'", "$.pile", "unknown pile 'screne'"]),
    ([rule(pile="pending")], ["'r1'", "$.pile", "engine-owned pending"]),
    ([rule(), rule(precedence=11)], ["'r1'", "$[1].id", "duplicate rule id"]),
    ([rule(), rule(id="r2", shadow=True)], ["'r2'", "$[1].precedence", "also used by rule 'r1'"]),
    ([rule(match={"field": "title", "regex": "replicat(ion"})], ["'r1'", "$.match.regex", "invalid RE2 regex"]),
    ([rule(match={"all": [{"field": "titel", "phrase": "x"}]})], ["'r1'", "$.match.all[0].field", "unknown field 'titel'"]),
    ([rule(match={"any": [{"field": "title", "phrase": "x", "weight": 2}]})],
     ["'r1'", "$.match.any[0].weight", "unknown key"]),
    ([rule(match={"not": {"field": "title", "phrase": "x*y"}})], ["$.match.not.phrase", "'*' is allowed only at the end"]),
    ([rule(match={"field": "title", "phrase": "   "})], ["$.match.phrase", "empty after normalisation"]),
    ([rule(match={"all": []})], ["$.match.all", "non-empty list"]),
    ([rule(match={"field": "title"})], ["$[0].match:", "exactly one of"]),
    ([{"pile": "screen", "precedence": 1, "match": GOOD["match"]}], ["$.id", "non-empty string 'id'"]),
    ([{"id": "r9", "pile": "screen", "match": GOOD["match"]}], ["'r9'", "missing required key 'precedence'"]),
    ([rule(precedence="high")], ["$.precedence", "must be an integer"]),
    ([rule(shadow="yes")], ["$.shadow", "true or false"]),
    ([rule(domain={"column": "source", "in": []})], ["$.domain.in", "non-empty list"]),
])
def test_rule_errors(tmp_path, rules, expected):
    specs = write_specs(tmp_path, rules)
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    for part in expected:  # the rules are written as a list, so paths start at $[i]
        part = part.replace("$.", "$[0].").replace("$[0].match\"", "$[0].match")
        assert part in str(err.value), str(err.value)


def test_duplicate_id_across_files_names_both(tmp_path):
    specs = write_specs(tmp_path, {"a.json": [rule()], "b.json": [rule(precedence=12)]})
    with pytest.raises(InputError, match=r"rules/b.json: rule 'r1': \$\[0\].id: duplicate rule id \(also in rules/a.json\)"):
        load_rulebook(specs)


def test_single_rule_file_uses_root_path(tmp_path):
    specs = write_specs(tmp_path, {"one.json": rule(pile="nowhere")})
    with pytest.raises(InputError, match=r"rules/one.json: rule 'r1': \$.pile: unknown pile"):
        load_rulebook(specs)


def test_invalid_json_names_line(tmp_path):
    specs = write_specs(tmp_path, [rule()])
    (specs / "rules" / "rules.json").write_text('[{"id": "r1",\n "pile": }]')
    with pytest.raises(InputError, match=r"rules/rules.json: not valid JSON: .* line 2"):
        load_rulebook(specs)


@pytest.mark.parametrize("piles,expected", [
    ({"piles": []}, "$.piles: must be a non-empty list"),
    ({"piles": [{"name": "a", "kind": "bin"}]}, "$.piles[0].kind: 'bin' is not a pile kind"),
    ({"piles": [{"name": "s", "kind": "screen"}, {"name": "pending", "kind": "pending"}]}, "$.piles[0].tier"),
    ({"piles": [{"name": "screen", "kind": "screen", "tier": "expensive"}]}, "exactly one pile must have kind 'pending'"),
    ({**DEFAULT_PILES, "title_only": ["osf"]}, "unknown key 'title_only'"),
])
def test_pile_errors(tmp_path, piles, expected):
    specs = write_specs(tmp_path, [rule()], piles=piles)
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    assert "piles.json" in str(err.value) and expected in str(err.value)


def test_unknown_column_is_checked_against_the_pool_and_nothing_is_written(tmp_path):
    specs = write_specs(tmp_path, [rule(match={"column": "venue_kind", "in": ["journal"]})])
    pool = write_pool(tmp_path / "pool.parquet", [{"work_id": "doi:1", "source": "x", "title": "t", "abstract": "a"}])
    out = tmp_path / "releases"
    with pytest.raises(InputError, match=r"rules/rules.json: rule 'r1': \$.match: unknown column 'venue_kind'"):
        route_release(pool, specs, out, progress=False)
    assert not out.exists() or list(out.iterdir()) == []


def test_good_book_loads_sorted_by_precedence(tmp_path):
    specs = write_specs(tmp_path, [rule(), rule(id="r2", precedence=50), rule(id="r3", precedence=5, shadow=True)])
    book = load_rulebook(specs)
    assert [r.id for r in book.rules] == ["r2", "r1", "r3"]
    assert book.rules[0].spec == rule(id="r2", precedence=50)
    assert json.loads(json.dumps(book.rules[0].spec)) == book.rules[0].spec
