"""Every rule-book validation error names the file, the rule id and the JSON path; nothing is routed."""

import json

import pytest

from reporter.errors import InputError
from reporter.routing.release import route_release
from reporter.routing.specs import load_rulebook
from support.routing import TODAY, DEFAULT_PILES, write_pool, write_specs

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
    # \C matched one byte of a character, and evidence could not say where in characters it began and ended
    ([rule(match={"field": "title", "regex": r"trial\C"})], ["$.match.regex", r"\C (any one byte) is not allowed"]),
    ([rule(match={"field": "title", "regex": r"(?i)\\\C"})], ["$.match.regex", r"\C (any one byte)"]),
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
        route_release(pool, specs, out, progress=False, as_of=TODAY)
    assert not out.exists() or list(out.iterdir()) == []


def test_good_book_loads_sorted_by_precedence(tmp_path):
    specs = write_specs(tmp_path, [rule(), rule(id="r2", precedence=50), rule(id="r3", precedence=5, shadow=True)])
    book = load_rulebook(specs)
    assert [r.id for r in book.rules] == ["r2", "r1", "r3"]
    assert book.rules[0].spec == rule(id="r2", precedence=50)
    assert json.loads(json.dumps(book.rules[0].spec)) == book.rules[0].spec


# ---------------------------------------------------------------- issue 8, item 2: books that passed and then broke

POOL_ROWS = [
    {"work_id": "doi:1", "source": "osf", "title": "A replication of x", "abstract": "We replicate it."},
    {"work_id": "doi:2", "source": "pubmed", "title": "Other work", "abstract": None},
    {"work_id": "doi:3", "source": "osf", "title": "Abc (quoted) text", "abstract": "ΑΣ and abc"},
    {"work_id": "doi:4", "source": "pubmed", "title": None, "abstract": None},
]


def _route_and_render(tmp_path, specs, rows=POOL_ROWS, out="releases"):
    from reporter.build import render_site
    pool = write_pool(tmp_path / "pool.parquet", rows)
    result = route_release(pool, specs, tmp_path / out, progress=False, as_of=TODAY)
    render_site(tmp_path / out, tmp_path / "site", progress=False)
    return result


def test_a_book_of_empty_rule_files_is_refused_before_anything_is_written(tmp_path):
    specs = write_specs(tmp_path, {"a.json": [], "b.json": []})
    pool = write_pool(tmp_path / "pool.parquet", POOL_ROWS)
    out = tmp_path / "releases"
    with pytest.raises(InputError, match=r"rules: the rule files \(a.json, b.json\) hold no rule; "
                                         r"a rule book needs at least one rule"):
        route_release(pool, specs, out, progress=False, as_of=TODAY)
    assert not out.exists()


def test_an_empty_rule_file_beside_rules_is_no_rule(tmp_path):
    specs = write_specs(tmp_path, {"a.json": [], "b.json": [rule()]})
    assert [r.id for r in load_rulebook(specs).rules] == ["r1"]


def test_the_engine_routes_a_book_without_rules_to_pending(tmp_path):
    import pyarrow as pa

    from reporter.routing.engine import route_batch
    from reporter.routing.plan import compile_plan
    from reporter.routing.specs import RuleBook, load_piles
    specs = write_specs(tmp_path, [rule()])
    piles, title_only = load_piles(specs)
    batch = pa.RecordBatch.from_pylist(POOL_ROWS)
    res = route_batch(compile_plan(RuleBook((), piles, title_only, specs), batch.schema), batch)
    assert res.table.column("pending_reason").to_pylist() == ["unrouted"] * 4


@pytest.mark.parametrize("pile", [["screen"], {"name": "screen"}, 3, None, True])
def test_a_pile_that_is_not_a_name_is_refused(tmp_path, pile):
    specs = write_specs(tmp_path, [rule(pile=pile)])
    with pytest.raises(InputError, match=r"rules/rules.json: rule 'r1': \$\[0\].pile: must be a pile name \(a string\)"):
        load_rulebook(specs)


def _nested_not(levels: int) -> str:
    leaf = json.dumps(GOOD["match"])
    return '{"not": ' * levels + leaf + "}" * levels


def test_json_too_deep_to_read_is_refused(tmp_path):
    specs = write_specs(tmp_path, [rule()])
    (specs / "rules" / "rules.json").write_text(
        '[{"id": "r1", "pile": "screen", "precedence": 1, "match": ' + _nested_not(3000) + "}]")
    with pytest.raises(InputError, match=r"rules/rules.json: JSON nested too deeply to read; "
                                         r"a predicate may nest at most 32 levels"):
        load_rulebook(specs)


def test_predicates_nested_past_the_limit_are_refused_with_their_path(tmp_path):
    from reporter.routing.predicates import MAX_DEPTH
    specs = write_specs(tmp_path, [rule()])
    (specs / "rules" / "rules.json").write_text(
        '[{"id": "r1", "pile": "screen", "precedence": 1, "match": ' + _nested_not(MAX_DEPTH) + "}]")
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    assert str(err.value).startswith("rules/rules.json: rule 'r1': $[0].match" + ".not" * MAX_DEPTH + ": ")
    assert f"predicates nest more than {MAX_DEPTH} levels deep" in str(err.value)


def test_predicates_nested_to_the_limit_route_and_render(tmp_path):
    """MAX_DEPTH - 1 nots around a leaf (MAX_DEPTH levels) route as the same parity of one not does."""
    from reporter.routing.predicates import MAX_DEPTH
    specs = write_specs(tmp_path / "deep", [rule()])
    (specs / "rules" / "rules.json").write_text(
        '[{"id": "r1", "pile": "screen", "precedence": 1, "match": ' + _nested_not(MAX_DEPTH - 1) + "}]")
    deep = _route_and_render(tmp_path / "deep", specs)
    flat = route_release(write_pool(tmp_path / "flat.parquet", POOL_ROWS),
                         write_specs(tmp_path / "flat", [rule(match=json.loads(_nested_not(2 - MAX_DEPTH % 2)))]),
                         tmp_path / "flat" / "releases", progress=False, as_of=TODAY)
    # 31 nots: not "replication" in the title, so doi:2, doi:3 and doi:4 (two of them without an abstract)
    assert deep.piles == flat.piles
    assert {pile: n for pile, n in deep.piles.items() if n} == {"screen": 1, "pending": 3}
    assert (tmp_path / "deep" / "site" / "releases" / deep.release_id / "rules" / "r1.html").is_file()


@pytest.mark.parametrize("pattern", [
    r"\Qreplication",            # a quote RE2 closes at the end of the pattern; the span pattern used to swallow its ')'
    r"\Q(quoted)",               # a quoted parenthesis is a character, not a group
    r"(?<m>replication)",        # RE2's other spelling of a named group, named as the span pattern's own
    r"replication(\\C)?",        # an escaped backslash before C: not RE2's any-byte \C
    r"\Q\C\Ereplication|replication",  # a quoted \C is the two characters
])
def test_regexes_routing_compiles_route_and_render(tmp_path, pattern):
    specs = write_specs(tmp_path, [rule(match={"field": "title", "regex": pattern})])
    result = _route_and_render(tmp_path, specs)
    assert result.piles["screen"] == 1


def test_a_regex_whose_span_pattern_re2_refuses_is_refused_at_load(tmp_path, monkeypatch):
    from reporter.routing import regexlit
    monkeypatch.setattr(regexlit, "_uncapture", lambda pattern: pattern + "(")
    specs = write_specs(tmp_path, [rule(match={"field": "title", "regex": "replication"})])
    with pytest.raises(InputError, match=r"rule 'r1': \$\[0\].match.regex: invalid RE2 regex 'replication': .*missing \)"):
        load_rulebook(specs)


@pytest.mark.parametrize("pattern,text", [
    (r"\pLabc", "xabc"),                      # \pL is a class: 'L' is not a literal
    (r"\x41bc", "Abc"),                       # \x41 is 'A'
    (r"\101bc", "Abc"),                       # octal
    (r"[[:alpha:]]abc", "xabc"),              # a POSIX class inside a class
    (r"[\]x]abc", "]abc"),                    # an escaped ] inside a class
    (r"ab{cd", "ab{cd"),                      # a brace that is not a repetition is a literal
    (r"\Qabc)\E|xyz", "xyz"),                 # a quoted ')' does not end the pattern
    (r"\Qab|cd\E", "ab|cd"),                  # a quoted '|' is no alternation
    ("σωμα", "ΣΩΜΑ"),                          # RE2 folds σ, ς and Σ; lower-casing does not
    ("ςxyz", "σxyz"),
    (r"replication(?i)?", "replicatio"),       # a quantifier after a flag group repeats the item before it
    (r"replication\Q\E?", "replicatio"),       # ... and so does one after an empty quote
    (r"xyzab+cde", "xyzabbcde"),              # a repeated character ends the literal run
    (r"abc{2}def", "abccdef"),                # ... and so does an exact repeat of two or more
    (r"re(pl)+ication", "replplication"),     # ... and a repeated group
    (r"ab(?i)+cdef", "abbcdef"),              # ... and a repeat after a flag group
    (r"p [<=] ?0", "P = 0"),                  # a small class is read as alternatives ('p <', 'p =')
    (r"x[.]y[-+]z", "x.y+z"),                 # escaped and plain symbols in a class
    (r"random(ised|ized) trial", "RANDOMIZED trial"),
    (r"\(β = 0", "an effect (Β = 0.4)"),          # a non-ASCII literal, the row lower-cased by normalisation
    (r"\(β = 0", "an effect (β = 0.4)"),          # ... and a row normalisation leaves as it is
    (r"\(β = 0", "an effect (ϐ = 0.4)"),          # ... and one NFKC changes (ϐ is β)
    (r"straße", "STRAẞE"),
    (r"µg per", "5 μg per day"),
    (r"ſtudy of", "A STUDY OF"),
    (r"ς data", "ΣΩΜΑ Σ data"),                    # Σ lower-cases to σ: ς is no literal
])
@pytest.mark.parametrize("engine", ["hyperscan", "aho-corasick"])
def test_the_literal_prefilter_never_hides_a_match(tmp_path, pattern, text, engine):
    import pyarrow as pa
    import pyarrow.compute as pc

    from reporter.routing.normalise import normalise_text
    from reporter.routing.regexlit import required_literals
    assert pc.match_substring_regex(pa.array([text]), pattern, ignore_case=True)[0].as_py()
    lits = required_literals(pattern)
    assert lits is None or any(lit in normalise_text(text) for lit in lits), lits
    specs = write_specs(tmp_path, [rule(match={"field": "title", "regex": pattern})])
    rows = [{"work_id": "doi:1", "source": "x", "title": text, "abstract": "a"}]
    result = route_release(write_pool(tmp_path / "pool.parquet", rows), specs, tmp_path / "releases", progress=False,
                           as_of=TODAY, engine=engine)
    assert result.piles["screen"] == 1


def test_a_pending_pile_of_another_name_routes_renders_and_diffs(tmp_path):
    piles = {"piles": [{"name": "screen", "kind": "screen", "tier": "expensive"},
                       {"name": "pending", "kind": "hold"},
                       {"name": "waiting", "kind": "pending"}]}
    first = _route_and_render(tmp_path / "one", write_specs(tmp_path / "one", [rule()]))
    assert first.piles["pending"] == 3   # the default book: its pending pile is called pending
    specs = write_specs(tmp_path, [rule(), rule(id="r2", pile="pending", precedence=5,
                                            match={"field": "title", "phrase": "other"})], piles=piles)
    result = _route_and_render(tmp_path, specs, out="one/releases")   # a second release beside the first: a diff
    assert result.piles == {"screen": 1, "pending": 1, "waiting": 2}
    page = (tmp_path / "site" / "releases" / result.release_id / "index.md").read_text()
    assert "| waiting | not decided | 2 | 50.0% | — | pending |" in page   # name, plain name, works, share, kind
    assert (tmp_path / "site" / "releases" / result.release_id / "diff.md").exists()


def test_rule_ids_the_site_would_give_one_page_are_refused(tmp_path):
    from reporter.site.links import slug
    twin = slug("A")   # a plain id spelled like A's page name
    specs = write_specs(tmp_path, {"a.json": [rule(id="A")],
                                   "b.json": [rule(id="x", precedence=11), rule(id=twin, precedence=12)]})
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    assert str(err.value) == (f"rules/b.json: rule '{twin}': $[1].id: the site would give this rule the page "
                              f"name '{twin}', which rule 'A' (in rules/a.json) already has; rename one of them")


def test_ids_differing_only_in_case_get_pages_of_their_own(tmp_path):
    from reporter.site.links import slug
    specs = write_specs(tmp_path, [rule(id="A"), rule(id="a", precedence=12)])
    result = _route_and_render(tmp_path, specs)
    pages = tmp_path / "site" / "releases" / result.release_id / "rules"
    names = {slug("A"), slug("a")}
    assert len(names) == 2 and {p.stem for p in pages.glob("*.html")} == names
    for rule_id, precedence in (("A", 10), ("a", 12)):   # each page is its own rule's
        page = (pages / f"{slug(rule_id)}.md").read_text()
        assert f"\n# Rule {rule_id}\n" in page and f"at precedence **{precedence}**" in page


def test_a_book_past_the_rule_limit_is_refused_naming_the_first_rule_too_many(tmp_path):
    from reporter.routing.specs import MAX_RULES
    rules = [rule(id=f"r{i}", precedence=i) for i in range(MAX_RULES + 5)]
    specs = write_specs(tmp_path, {"a.json": rules[:10], "b.json": rules[10:]})
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    assert str(err.value).startswith(f"rules/b.json: $[{MAX_RULES - 10}]: the rule book holds more than "
                                     f"{MAX_RULES:,} rules (shadow rules included)")


@pytest.mark.slow
def test_a_book_at_the_rule_limit_routes_and_renders(tmp_path):
    from reporter.routing.specs import MAX_RULES
    words = ["replication", "trial", "erratum", "other", "data"]
    rules = [rule(id=f"r{i}", precedence=i, pile=["screen", "hold", "discard"][i % 3], shadow=i % 10 == 0,
                  match={"field": "text", "phrase": words[i % 5]}) for i in range(MAX_RULES)]
    specs = write_specs(tmp_path, rules)
    result = _route_and_render(tmp_path, specs)
    assert result.rows == len(POOL_ROWS)
    assert len(list((tmp_path / "site" / "releases" / result.release_id / "rules").glob("*.html"))) == MAX_RULES


@pytest.mark.parametrize("values", [["osf", 1], [True, "osf"], [0, False]])
def test_values_of_mixed_types_are_refused_at_load(tmp_path, values):
    specs = write_specs(tmp_path, [rule(domain={"column": "source", "in": values})])
    with pytest.raises(InputError, match=r"rule 'r1': \$\[0\].domain.in: values must be all strings, all numbers "
                                         r"or all booleans \(one column holds one type\); got \w+ and \w+ in \["):
        load_rulebook(specs)


@pytest.mark.parametrize("name", ["pending/unrouted", "a/b"])
def test_a_pile_name_with_a_slash_is_refused(tmp_path, name):
    piles = {"piles": [{"name": "screen", "kind": "screen", "tier": "expensive"},
                       {"name": name, "kind": "hold"}, {"name": "pending", "kind": "pending"}]}
    specs = write_specs(tmp_path, [rule()], piles=piles)
    with pytest.raises(InputError, match=r"piles.json: \$.piles\[1\].name: '.*' holds '/', which the site keeps"):
        load_rulebook(specs)
