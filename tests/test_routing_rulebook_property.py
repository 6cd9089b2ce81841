"""A validation that is the whole truth: a rule book either fails to load with an InputError, or it routes and renders.

Random rule books (ids with case twins, Unicode and punctuation; piles of any
name and kind, pending-kind piles not called `pending` among them;
phrases; RE2 regexes from a small grammar with `\\Q...\\E`, `\\p{L}`, `\\b`,
classes, alternation, groups and anchors; all/any/not nesting up to and past
the limit; domains, shadow rules, clashing precedences) are written to files.
Then `load_rulebook` raises InputError, or routing two small pools (a release
and a second one to diff against) and rendering the site both succeed. Any
other exception is a bug: a book that passed validation and then crashed
routing (exit 1) or published a release the site refuses.

A second property checks the literal prefilter on its own: whenever RE2
matches a normalised text, one of the regex's required literals occurs in
its lower-cased form, and the span pattern the evidence uses matches too.
"""

import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reporter.errors import InputError
from reporter.routing.normalise import normalise_text
from reporter.routing.regexlit import regex_error, required_literals, span_pattern
from reporter.routing.release import route_release
from reporter.routing.predicates import MAX_DEPTH
from reporter.routing.specs import load_rulebook
from reporter.build import render_site
from support.routing import TODAY, write_pool, write_specs

# ---------------------------------------------------------------- regexes from a small RE2 grammar

REGEX_WORDS = ["replication", "trial", "Study", "data", "café", "Σσ", "ς", "abc", "x", " of ", "meta-analysis",
               "(β = ", "Β", "ϐ", "ſ", "µ", "ß", "ẞ", "É", "e\u0301", "ı", "İ"]
QUOTED = st.text(alphabet=st.sampled_from(list("ab)(|]*.\\ Σ{")), min_size=0, max_size=5)
regex_atom = st.one_of(
    st.sampled_from(REGEX_WORDS),
    st.sampled_from([r"\b", r"\B", r"\w+", r"\W", r"\d", r"\s", ".", "^", "$", r"\pL", r"\p{L}", r"\PN",
                     r"\p{Greek}", r"[a-z]", r"[^ ]", r"[[:alpha:]]", r"[\]x]", "[]a]", r"\x41", r"\x{3a3}",
                     r"\101", r"\.", r"\(", "{", "ab{cd", r"\C", r"(?i)", r"(?-i)", r"\A", r"\z"]),
    QUOTED.map(lambda q: f"\\Q{q}\\E"),
)
BAD_REGEXES = ["(", ")", r"\E", "a{1001}", r"\8", "(?P=m)", r"\p{Foo}", "[z-a]", "*", "(?<=a)b"]


def _regex(children):
    seq = st.lists(children, min_size=1, max_size=3).map("".join)
    quant = st.sampled_from(["", "", "?", "*", "+", "{2}", "{0,1}", "{1,}", "??"])
    return st.one_of(
        st.tuples(seq, quant).map(lambda t: t[0] + t[1]),
        st.tuples(st.sampled_from(["(", "(?:", "(?P<m>", "(?<pre>", "(?i:", "(?P<name>"]), seq, quant).map(
            lambda t: f"{t[0]}{t[1]}){t[2]}"),
        st.lists(seq, min_size=2, max_size=3).map("|".join),
    )


regexes = st.one_of(
    st.recursive(regex_atom, _regex, max_leaves=6),
    # a \Q quote left open to the end of the pattern (RE2 closes it there)
    st.tuples(st.recursive(regex_atom, _regex, max_leaves=3), QUOTED).map(lambda t: f"{t[0]}\\Q{t[1]}"),
)

# ---------------------------------------------------------------- rule books: mostly valid, then perhaps one fault

ID_CHARS = list("aAbBzZ09-_.:/ é✓ΣσςİıK\u202e\u200b'\"<>&|*#[]")
ids = st.one_of(
    st.sampled_from(["A", "a", "a-559aead0", "r1", "R1", "index", "..", "status", "a/b", "a\\b", "Ünï", "σ", "Σ"]),
    st.text(alphabet=st.sampled_from(ID_CHARS), min_size=1, max_size=10).filter(lambda s: s.strip()),
)
PILE_NAMES = ["discard", "hold", "screen", "screen_cheap", "waiting", "Pending", "Screen", "sc reen", "ŝcreen",
              "a-559aead0", "A", "index", "ok|pipe", "*x*", "<b>&amp;", "\u202eRTL", "discard", "hold", "screen"]
# a name the site cannot show ('/' is kept for pending/<reason>): the book must then fail to load
PILE_NAMES_BAD = ["pending/unrouted", "pending/no_text", "a/b"]
KIND = st.sampled_from([("discard", None), ("hold", None), ("screen", "cheap"), ("screen", "expensive")])


@st.composite
def pile_books(draw):
    """piles.json: one pending-kind pile of any name, and 1-4 piles of other kinds."""
    pending = draw(st.sampled_from(["pending", "pending", "pending", "waiting", "Pending", "ŝcreen", "<b>"]))
    names = draw(st.lists(st.sampled_from(PILE_NAMES + ["pending"]), min_size=1, max_size=4, unique=True)
                 .filter(lambda ns: pending not in ns))
    piles = []
    for name in names:
        kind, tier = draw(KIND)
        piles.append({"name": name, "kind": kind, **({"tier": tier} if tier else {})})
    piles.insert(draw(st.integers(0, len(piles))), {"name": pending, "kind": "pending"})
    return {"piles": piles, "title_only_sources": draw(st.sampled_from([["osf"], [], ["osf", "pubmed"]]))}


PHRASES = ["trial", "trial*", "replicat*", "replication", "meta-analysis", "Café", "ΣΩΜΑ", "of study", "x",
           "data", "İstanbul", "ﬁsh", "\u202ereversed", "ab|cd", "(quoted)"]
BAD_PHRASES = ["*", "a*b", "   ", 7]
FIELDS = ["title", "abstract", "text"]


def leaf():
    return st.one_of(
        st.builds(lambda f, p: {"field": f, "phrase": p}, st.sampled_from(FIELDS), st.sampled_from(PHRASES)),
        st.builds(lambda f, ps: {"field": f, "any_phrase": ps}, st.sampled_from(FIELDS),
                  st.lists(st.sampled_from(PHRASES), min_size=1, max_size=3)),
        st.builds(lambda f, r, c: {"field": f, "regex": r, **c}, st.sampled_from(FIELDS), regexes,
                  st.sampled_from([{}, {}, {"case": "sensitive"}, {"case": "insensitive"}])),
        st.builds(lambda c, vs: {"column": c, "in": vs}, st.sampled_from(["source", "source", "type"]),
                  st.one_of(st.lists(st.sampled_from(["osf", "pubmed", "OSF", "preprint", "", "ŝ"]), min_size=1,
                                     max_size=3),
                            st.lists(st.integers(-2, 2), min_size=1, max_size=2),
                            st.lists(st.booleans(), min_size=1, max_size=2))),
        st.builds(lambda f: {"empty": f}, st.sampled_from(FIELDS)),
    )


predicates = st.recursive(leaf(), lambda kids: st.one_of(
    st.builds(lambda xs: {"all": xs}, st.lists(kids, min_size=1, max_size=3)),
    st.builds(lambda xs: {"any": xs}, st.lists(kids, min_size=1, max_size=3)),
    st.builds(lambda x: {"not": x}, kids)), max_leaves=8)


def _deep(pred: dict, levels: int) -> dict:
    for i in range(levels):
        pred = {"not": pred} if i % 3 else {"all": [pred]}
    return pred


deep_predicates = st.builds(_deep, leaf(), st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH - 1]))

FAULTS = ["id", "duplicate id", "duplicate precedence", "pending pile", "unknown pile", "pile type",
          "bad regex", "bad phrase", "too deep", "no tier", "two pending", "no pending", "empty book",
          "slash pile", "mixed values"]


@st.composite
def books(draw):
    """(piles.json, rules): a valid book, or one with a single fault drawn from FAULTS."""
    piles = draw(pile_books())
    targets = [p["name"] for p in piles["piles"] if p["kind"] != "pending"]
    n = draw(st.integers(1, 6))
    rule_ids = draw(st.lists(ids, min_size=n, max_size=n, unique=True))
    precs = draw(st.lists(st.one_of(st.integers(-3, 40), st.sampled_from([2**63, -(2**70)])),
                          min_size=n, max_size=n, unique=True))
    rules = []
    for i in range(n):
        rule = {"id": rule_ids[i], "pile": draw(st.sampled_from(targets)), "precedence": precs[i],
                "match": draw(st.one_of(predicates, predicates, predicates, deep_predicates))}
        if draw(st.booleans()):
            rule["shadow"] = draw(st.sampled_from([True, False, True]))
        if draw(st.integers(0, 2)) == 0:
            rule["domain"] = draw(predicates)
        if draw(st.booleans()):
            rule["description"] = draw(st.sampled_from(["", "why: *this* rule", "ΣΣ <b>&amp;</b>", "# heading"]))
        rules.append(rule)
    fault = draw(st.one_of(st.none(), st.none(), st.none(), st.sampled_from(FAULTS)))
    victim = rules[draw(st.integers(0, n - 1))]
    pending = next(p for p in piles["piles"] if p["kind"] == "pending")
    if fault == "id":
        victim["id"] = draw(st.sampled_from(["", " ", 3, None, ["r"]]))
    elif fault == "duplicate id" and n > 1:
        rules[-1]["id"] = rules[0]["id"]
    elif fault == "duplicate precedence" and n > 1:
        rules[-1]["precedence"] = rules[0]["precedence"]
    elif fault == "pending pile":
        victim["pile"] = pending["name"]
    elif fault == "unknown pile":
        victim["pile"] = "nowhere"
    elif fault == "pile type":
        victim["pile"] = draw(st.sampled_from([[targets[0]], {"name": targets[0]}, 1, True]))
    elif fault == "bad regex":
        victim["match"] = {"all": [victim["match"], {"field": "title", "regex": draw(st.sampled_from(BAD_REGEXES))}]}
    elif fault == "bad phrase":
        victim["match"] = {"any": [victim["match"], {"field": "text", "phrase": draw(st.sampled_from(BAD_PHRASES))}]}
    elif fault == "too deep":
        victim["match"] = _deep(victim["match"], MAX_DEPTH)
    elif fault == "no tier":
        piles["piles"].append({"name": "untiered", "kind": "screen"})
    elif fault == "two pending":
        piles["piles"].append({"name": "pending2", "kind": "pending"})
    elif fault == "no pending":
        pending["kind"] = "hold"
    elif fault == "empty book":
        rules = []
    elif fault == "slash pile":
        draw(st.sampled_from([pending, piles["piles"][0]]))["name"] = draw(st.sampled_from(PILE_NAMES_BAD))
    elif fault == "mixed values":
        victim["domain"] = {"column": "source", "in": draw(st.sampled_from([["osf", 1], [True, "osf"], [0, False]]))}
    if draw(st.booleans()):  # spread over files, one perhaps a single-rule file or an empty list
        split = draw(st.integers(0, len(rules)))
        files = {"a.json": rules[:split], "b.json": rules[split:]}
        if len(files["b.json"]) == 1 and draw(st.booleans()):
            files["b.json"] = files["b.json"][0]
        return piles, files
    return piles, rules


# ---------------------------------------------------------------- the pools

TEXTS = [None, "", "  ", "A Replication of the trial data", "Replicating studies: a meta‐analysis of trials",
         "ΣΩΜΑ and ς σ", "café ﬁsh İstanbul", "abc (quoted) ab|cd ]abc ab{cd", "Study of STUDY data \u202e rtl",
         "x", "The Trial* pretrial trialled", "\tmixed   whitespace\nlines "]


def _pool_rows(offset: int, n: int) -> list[dict]:
    sources = ["osf", "pubmed", "crossref", None]
    types = ["preprint", "article", None]
    return [{"work_id": f"doi:10.1/{i}", "source": sources[i % 4], "type": types[i % 3],
             "title": TEXTS[(i * 5) % len(TEXTS)], "abstract": TEXTS[(i * 7 + 3) % len(TEXTS)]}
            for i in range(offset, offset + n)]


def _check(root, piles, rules) -> str:
    """What happened to one book: 'refused' (InputError at load), 'column' (a pool column check), or 'rendered'."""
    specs = write_specs(root, rules, piles=piles)
    try:
        load_rulebook(specs)
    except InputError as exc:
        assert str(exc).startswith(("piles.json: ", "rules/", str(specs))), str(exc)
        return "refused"
    releases = root / "releases"
    for name, rows in (("one", _pool_rows(0, 14)), ("two", _pool_rows(6, 14))):
        pool = write_pool(root / f"{name}.parquet", rows)
        try:
            route_release(pool, specs, releases, progress=False, batch_rows=5, as_of=TODAY)
        except InputError as exc:
            # Only the pool can refuse a book that loaded: a column the pool lacks or values of another type.
            assert "column" in str(exc), str(exc)
            return "column"
    render_site(releases, root / "site", progress=False)
    return "rendered"


OUTCOMES: dict[str, int] = {}


@pytest.mark.slow
@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(book=books())
def test_a_book_either_fails_to_load_or_routes_and_renders(tmp_path_factory, book):
    piles, rules = book
    outcome = _check(tmp_path_factory.mktemp("book"), piles, rules)
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + 1


def test_the_property_sees_books_that_render():
    """The generator is not all noise: a fixed valid book of the same shapes renders (guards the strategy's reach)."""
    import tempfile
    from pathlib import Path
    piles = {"piles": [{"name": "screen", "kind": "screen", "tier": "expensive"}, {"name": "waiting", "kind": "pending"}]}
    rules = [{"id": "A", "pile": "screen", "precedence": 2, "match": {"field": "text", "regex": r"\Qreplicat"}},
             {"id": "a", "pile": "screen", "precedence": 1, "shadow": True,
              "match": _deep({"field": "title", "phrase": "trial*"}, MAX_DEPTH - 1)}]
    with tempfile.TemporaryDirectory() as tmp:
        assert _check(Path(tmp), piles, rules) == "rendered"


# ---------------------------------------------------------------- the literal prefilter on its own

@settings(max_examples=300, deadline=None)
@example(pattern=r"(replication)+\Q\E?", case=False, text="  ")  # the empty quote's `?` makes the group optional
@given(pattern=regexes, case=st.booleans(),
       text=st.one_of(st.sampled_from([t for t in TEXTS if t]),
                      st.lists(st.sampled_from(REGEX_WORDS + [" ", "(", ")", "|", "]", "{", "A", "Σ", "\\"]),
                               max_size=8).map("".join)))
def test_the_prefilter_never_hides_a_match(pattern, case, text):
    if regex_error(pattern, case) is not None:
        return
    norm = normalise_text(text, lower=False)
    arr = pa.array([norm], pa.string())
    if not pc.match_substring_regex(arr, pattern, ignore_case=not case)[0].as_py():
        return
    lits = required_literals(pattern)
    assert lits is None or any(lit in normalise_text(text) for lit in lits), (pattern, text, lits)
    assert pc.extract_regex(arr, span_pattern(pattern, case))[0].is_valid, (pattern, text)
    json.dumps(lits)


@settings(max_examples=500, deadline=None)
@given(parts=st.lists(st.tuples(st.sampled_from(["p", " ", "<", "=", r"\.", "ab", "[<=]", "(x|yz)", "(?:u)", "q"]),
                                st.sampled_from(["", "", "?", "??", "{0,1}", "*"])), min_size=1, max_size=7),
       text=st.lists(st.sampled_from(["p", " ", "<", "=", ".", "a", "b", "x", "yz", "u", "P", "q", "Q"]),
                     max_size=14).map("".join))
def test_optional_items_multiply_the_required_literals_soundly(parts, text):
    """`x?` makes each required string with x and without it (`colou?r`): never a hidden match."""
    pattern = "".join(atom + quant for atom, quant in parts)
    if regex_error(pattern, False) is not None:
        return
    norm = normalise_text(text, lower=False)
    if not pc.match_substring_regex(pa.array([norm], pa.string()), pattern, ignore_case=True)[0].as_py():
        return
    lits = required_literals(pattern)
    assert lits is None or any(lit in normalise_text(text) for lit in lits), (pattern, text, lits)
