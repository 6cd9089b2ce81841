"""Property tests: on random rule books and pools, every row lands in exactly one pile,
the identity holds, and the engine agrees with a plain-Python reading of routing.md."""

import json
import re
import unicodedata

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reporter.routing.release import route_release
from routing_helpers import write_pool, write_specs

WORDS = ["trial", "trials", "pretrial", "replication", "replicate", "of", "study", "Hébert", "ﬁsh", "café", "naïve",
         "Ørsted", "Hébert",
         "meta\u2010analysis", "meta-analysis", "data", "x_y", "TRIAL", "Replication"]
SEPS = [" ", "  ", "\n", ", ", "-", "\t"]
PILES = ["discard", "hold", "screen_cheap", "screen"]
SOURCES = ["osf", "pubmed", "crossref"]
FIELDS = ["title", "abstract", "text"]
REGEXES = ["replicat[a-z]* of", "(trial|study) data", "^meta", "^(meta|fish)", "(hébert|data)\\b"]


def norm(s, lower=True):
    s = unicodedata.normalize("NFKC", s)
    s = "".join("-" if unicodedata.category(c) == "Pd" else c for c in s)
    if lower:
        s = s.lower()
    return " ".join(s.split())


def texts(row, field):
    names = ["title", "abstract"] if field == "text" else [field]
    return [row[n] for n in names if row[n] is not None]


def ref_eval(pred, row):
    if "all" in pred:
        return all(ref_eval(p, row) for p in pred["all"])
    if "any" in pred:
        return any(ref_eval(p, row) for p in pred["any"])
    if "not" in pred:
        return not ref_eval(pred["not"], row)
    if "empty" in pred:
        names = ["title", "abstract"] if pred["empty"] == "text" else [pred["empty"]]
        return all(row[n] is None or norm(row[n]) == "" for n in names)
    if "in" in pred:
        return row[pred["column"]] in pred["in"]
    if "regex" in pred:
        return any(re.search(pred["regex"], norm(t, lower=False), re.I) for t in texts(row, pred["field"]))
    phrases = [pred["phrase"]] if "phrase" in pred else pred["any_phrase"]
    for p in phrases:
        prefix = p.endswith("*")
        body = norm(p[:-1] if prefix else p)
        pat = r"(?<!\w)" + re.escape(body) + ("" if prefix else r"(?!\w)")
        if any(re.search(pat, norm(t)) for t in texts(row, pred["field"])):
            return True
    return False


def ref_route(rules, rows):
    """A direct reading of routing.md: returns per-row (pile, reason) and per-rule counts."""
    live = sorted((r for r in rules if not r.get("shadow")), key=lambda r: -r["precedence"])
    out, counts = [], {r["id"]: {"matched": 0, "won": 0, "no_text": 0, "outranked": 0} for r in rules}
    matched = []
    for row in rows:
        hit = {r["id"] for r in rules if ref_eval(r["match"], row)}
        matched.append(hit)
        for rid in hit:
            counts[rid]["matched"] += 1
        winner = next((r for r in live if r["id"] in hit), None)
        has_abs = row["abstract"] is not None and norm(row["abstract"]) != ""
        has_title = row["title"] is not None and norm(row["title"]) != ""
        if winner is None:
            out.append(("pending", "unrouted"))
            continue
        for r in live:
            if r["id"] in hit and r["precedence"] < winner["precedence"]:
                counts[r["id"]]["outranked"] += 1
        if winner["pile"].startswith("screen") and not has_abs and not (row["source"] == "osf" and has_title):
            out.append(("pending", "no_text"))
            counts[winner["id"]]["no_text"] += 1
        else:
            out.append((winner["pile"], None))
            counts[winner["id"]]["won"] += 1
    return out, counts, matched


phrase = st.sampled_from(["trial", "trial*", "replicat*", "replication", "meta-analysis", "meta-analysis of",
                          "of study", "hébert", "fish", "data", "x", "y", "study data"])
leaf = st.one_of(
    st.builds(lambda f, p: {"field": f, "phrase": p}, st.sampled_from(FIELDS), phrase),
    st.builds(lambda f, ps: {"field": f, "any_phrase": ps}, st.sampled_from(FIELDS), st.lists(phrase, min_size=1, max_size=3)),
    st.builds(lambda f, r: {"field": f, "regex": r}, st.sampled_from(FIELDS), st.sampled_from(REGEXES)),
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
    return [{"id": f"r{i}", "pile": draw(st.sampled_from(PILES)), "precedence": precs[i],
             "shadow": draw(st.booleans()), "match": draw(predicate)} for i in range(n)]


text = st.one_of(st.none(), st.just(""), st.just("  "),
                 st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPS)), max_size=8).map(
                     lambda ws: "".join(w + s for w, s in ws)))


@st.composite
def pools(draw):
    n = draw(st.integers(0, 40))
    return [{"work_id": f"doi:10.1/{i}", "source": draw(st.sampled_from(SOURCES)),
             "title": draw(text), "abstract": draw(text)} for i in range(n)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=rule_books(), rows=pools())
def test_engine_agrees_with_reference(tmp_path_factory, rules, rows):
    root = tmp_path_factory.mktemp("prop")
    specs = write_specs(root, rules)
    pool = write_pool(root / "pool.parquet", rows) if rows else _empty_pool(root)
    result = route_release(pool, specs, root / "releases", progress=False, batch_rows=7, workers=2)
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

    expected_rows, expected_counts, expected_matched = ref_route(rules, rows)
    assert [set(r["matched"]) | set(r["shadow_matched"]) for r in table] == expected_matched
    assert [(r["pile"], r["pending_reason"]) for r in table] == expected_rows
    for r in stats["rules"]:
        if not r["shadow"]:
            assert r["matched"] == r["won"] + r["no_text"] + r["outranked"]
            assert {k: r[k] for k in ("matched", "won", "no_text", "outranked")} == expected_counts[r["id"]]
        else:
            assert r["matched"] == expected_counts[r["id"]]["matched"]
            assert r["won"] == r["no_text"] == r["outranked"] == 0
            assert 0 <= r["would_move"] <= r["would_win"] <= r["matched"]


def _text_leaves(pred):
    """Phrase and regex leaves not under a `not`."""
    if "all" in pred or "any" in pred:
        return [leaf for p in pred.get("all", pred.get("any")) for leaf in _text_leaves(p)]
    if "phrase" in pred or "any_phrase" in pred or "regex" in pred:
        return [pred]
    return []


def _explains(leaf, text):
    """Whether the evidence text is a match of this leaf."""
    if "regex" in leaf:
        return re.fullmatch(leaf["regex"], text, re.I) is not None
    for p in ([leaf["phrase"]] if "phrase" in leaf else leaf["any_phrase"]):
        body = norm(p[:-1] if p.endswith("*") else p)
        if norm(text) == body or (p.endswith("*") and norm(text).startswith(body)):
            return True
    return False


def _empty_pool(root):
    import pyarrow as pa
    path = root / "pool.parquet"
    pq.write_table(pa.table({k: pa.array([], pa.string()) for k in ("work_id", "source", "title", "abstract")}), path)
    return path
