"""Property tests: on random rule books and pools, every row lands in exactly one pile,
the identity holds, and the engine agrees with the plain-Python reading of routing.md
in support/reference.py (the same reference the real-data test uses)."""

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reporter.routing.release import route_release
from support.reference import norm, phrase_re, route
from support.routing import TODAY, DEFAULT_PILES, write_pool, write_specs

WORDS = ["trial", "trials", "pretrial", "replication", "replicate", "of", "study", "Hébert", "ﬁsh", "café", "naïve",
         "Ørsted", "Hébert",
         "meta\u2010analysis", "meta-analysis", "data", "x_y", "TRIAL", "Replication"]
SEPS = [" ", "  ", "\n", ", ", "-", "\t"]
PILES = ["discard", "hold", "screen_cheap", "screen"]
SOURCES = ["osf", "pubmed", "crossref"]
FIELDS = ["title", "abstract", "text"]
REGEXES = ["replicat[a-z]* of", "(trial|study) data", "^meta", "^(meta|fish)", "(hébert|data)\\b"]


phrase = st.sampled_from(["trial", "trial*", "replicat*", "replication", "meta-analysis", "meta-analysis of",
                          "of study", "hébert", "fish", "data", "x", "y", "study data"])
leaf = st.one_of(
    st.builds(lambda f, p: {"field": f, "phrase": p}, st.sampled_from(FIELDS), phrase),
    st.builds(lambda f, ps: {"field": f, "any_phrase": ps}, st.sampled_from(FIELDS), st.lists(phrase, min_size=1, max_size=3)),
    st.builds(lambda f, r, c: {"field": f, "regex": r, **c}, st.sampled_from(FIELDS), st.sampled_from(REGEXES),
              st.sampled_from([{}, {}, {"case": "sensitive"}])),
    st.builds(lambda vs: {"column": "source", "in": vs}, st.lists(st.sampled_from(SOURCES), min_size=1, max_size=2, unique=True)),
    st.builds(lambda f: {"empty": f}, st.sampled_from(FIELDS)),
)
predicate = st.recursive(leaf, lambda kids: st.one_of(
    st.builds(lambda xs: {"all": xs}, st.lists(kids, min_size=1, max_size=3)),
    st.builds(lambda xs: {"any": xs}, st.lists(kids, min_size=1, max_size=3)),
    st.builds(lambda x: {"not": x}, kids)), max_leaves=5)


@st.composite
def rule_books(draw):
    n = draw(st.integers(1, 6))
    precs = draw(st.lists(st.integers(1, 100), min_size=n, max_size=n, unique=True))
    rules = [{"id": f"r{i}", "pile": draw(st.sampled_from(PILES)), "precedence": precs[i],
              "shadow": draw(st.booleans()), "match": draw(predicate)} for i in range(n)]
    for r in rules:
        domain = draw(st.one_of(st.none(), predicate))
        if domain is not None:
            r["domain"] = domain
    return rules


text = st.one_of(st.none(), st.just(""), st.just("  "),
                 st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPS)), max_size=8).map(
                     lambda ws: "".join(w + s for w, s in ws)))


@st.composite
def pools(draw):
    n = draw(st.integers(0, 40))
    return [{"work_id": f"doi:10.1/{i}", "source": draw(st.sampled_from(SOURCES)),
             "title": draw(text), "abstract": draw(text)} for i in range(n)]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=rule_books(), rows=pools())
def test_engine_agrees_with_reference(tmp_path_factory, rules, rows):
    root = tmp_path_factory.mktemp("prop")
    specs = write_specs(root, rules)
    pool = write_pool(root / "pool.parquet", rows) if rows else _empty_pool(root)
    result = route_release(pool, specs, root / "releases", progress=False, batch_rows=7, workers=2, as_of=TODAY)
    stats = json.loads((result.release_dir / "rule_stats.json").read_text())
    table = pq.read_table(result.release_dir / "routing.parquet").to_pylist()

    # Every row lands in exactly one pile, and the piles add up.
    assert len(table) == len(rows) == stats["rows"] == sum(stats["piles"].values())
    assert all(r["pile"] in stats["piles"] for r in table)
    assert stats["pending"]["unrouted"] + stats["pending"]["no_text"] == stats["piles"]["pending"]

    # Evidence offsets are character offsets into the normalised (case-preserved) field,
    # and the span is what one of the winner's text predicates matched.
    by_id = {r["id"]: r for r in rules}
    for row, routed in zip(rows, table):
        ev = routed["evidence"]
        if ev is not None:
            assert routed["winner"] is not None
            assert norm(row[ev["field"]], lower=False)[ev["start"]:ev["end"]][:200] == ev["text"]
            assert any(_explains(leaf, ev["text"]) for leaf in _text_leaves(by_id[routed["winner"]]["match"])), ev
        # Every text condition of the winner that matched keeps its first span, in the rule's order
        # (a span equal to an earlier condition's once); `evidence` is the lowest (field, start) of them.
        leaves = _text_leaves(by_id[routed["winner"]]["match"]) if routed["winner"] else []
        want_all = []
        for leaf in leaves:
            found = _first_span(leaf, row)
            if found is not None and found not in want_all:
                want_all.append(found)
        assert routed["evidence_all"] == want_all, (row, routed["winner"])
        want_best = min(want_all, key=lambda e: (("title", "abstract").index(e["field"]), e["start"]), default=None)
        assert ev == want_best

    # Every row's fate and every count agree exactly with the reference.
    want = route(rules, rows, DEFAULT_PILES)
    keys = ("pile", "pending_reason", "winner", "matched", "shadow_matched", "title_only")
    assert [{k: r[k] for k in keys} for r in table] == want.rows
    assert stats["piles"] == want.piles and stats["pending"] == want.pending
    assert stats["title_only"] == want.title_only
    for r in stats["rules"]:
        e = want.rules[r["id"]]
        assert r["matched"] == e["matched"]
        if not r["shadow"]:
            assert r["matched"] == r["won"] + r["no_text"] + r["outranked"]
            assert {k: r[k] for k in ("won", "no_text", "outranked")} == \
                {k: e[k] for k in ("won", "no_text", "outranked")}
        else:
            assert r["won"] == r["no_text"] == r["outranked"] == 0
            assert 0 <= r["would_move"] <= r["would_win"] <= r["matched"]
            assert (r["would_win"], r["would_move"]) == (e["would_win"], e["would_move"])
        if "domain" in by_id[r["id"]]:
            assert (r["domain_rows"], r["domain_matched"], r["domain_miss"]) == \
                (e["domain_rows"], e["domain_matched"], e["domain_miss"])
        else:
            assert r["domain_rows"] is None
    order = stats["overlap"]["rules"]
    assert stats["overlap"]["matrix"] == [[want.overlap[a, b] for b in order] for a in order]


def _text_leaves(pred):
    """Phrase and regex leaves not under a `not`."""
    if "all" in pred or "any" in pred:
        return [leaf for p in pred.get("all", pred.get("any")) for leaf in _text_leaves(p)]
    if "phrase" in pred or "any_phrase" in pred or "regex" in pred:
        return [pred]
    return []


def _first_span(leaf, raw):
    """A text leaf's first hit in a row as the engine stores it: title before abstract, then the lowest
    start, a leaf's phrases in order on a tie; character offsets into the case-preserved field."""
    best = None
    for f in (("title", "abstract") if leaf["field"] == "text" else (leaf["field"],)):
        low, case = norm(raw[f]), norm(raw[f], lower=False)
        if not low:
            continue
        if "regex" in leaf:
            found = [re.search(leaf["regex"], case, 0 if leaf.get("case") == "sensitive" else re.IGNORECASE)]
        else:
            found = [phrase_re(p).search(low) for p in ([leaf["phrase"]] if "phrase" in leaf else leaf["any_phrase"])]
        for m in found:
            if m is not None and (best is None or m.start() < best["start"]):
                best = {"field": f, "start": m.start(), "end": m.end(), "text": case[m.start():m.end()][:200]}
        if best is not None:
            return best
    return best


def _explains(leaf, text):
    """Whether the evidence text is a match of this leaf."""
    if "regex" in leaf:
        return re.fullmatch(leaf["regex"], text, re.IGNORECASE) is not None
    for p in ([leaf["phrase"]] if "phrase" in leaf else leaf["any_phrase"]):
        body = norm(p.removesuffix("*"))
        if norm(text) == body or (p.endswith("*") and norm(text).startswith(body)):
            return True
    return False


def _empty_pool(root):
    path = root / "pool.parquet"
    pq.write_table(pa.table({k: pa.array([], pa.string()) for k in ("work_id", "source", "title", "abstract")}), path)
    return path
