"""Routing on real records (SYNERGY v1, 7,233 OpenAlex works) against an independent oracle.

The oracle is support/reference.py, the tests' one plain-Python reading of
routing.md (unicodedata NFKC, Pd dashes to '-', str.lower(), whitespace
collapsed, `re` with explicit `(?<!\\w)` / `(?!\\w)` word boundaries), which
shares no code with the engine and is also what the property test checks
the engine against. Every rule's counts, the piles, the pending reasons, the
shadow forecasts, the domain counts, the overlap matrix and every row's
fate must agree exactly. A few counts are also written as literal numbers
obtained outside Python (zcat, jq, grep).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.reference import norm, phrase_re, route
from support.routing import TODAY, DEFAULT_PILES, synergy_works, write_specs

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


PILES = DEFAULT_PILES

RULES = [
    {"id": "type-not-article", "pile": "discard", "precedence": 95,
     "description": "book chapters, proceedings, reference entries and other non-journal records",
     "match": {"column": "type", "in": ["book-chapter", "proceedings-article", "reference-entry", "book",
                                        "other", "journal-issue", "dissertation"]}},
    {"id": "review-title", "pile": "discard", "precedence": 90,
     "description": "reviews by title; the U+2010 in the pattern must read as '-'",
     "match": {"field": "title", "any_phrase": ["systematic review", "meta\u2010analysis", "literature review",
                                               "a review"]},
     "domain": {"field": "title", "any_phrase": ["review*"]}},
    {"id": "animal-hold", "pile": "hold", "precedence": 80,
     "description": "animal and in-vitro work",
     "match": {"field": "text", "any_phrase": ["rats", "mice", "murine", "in vitro"]}},
    {"id": "rct", "pile": "screen", "precedence": 70,
     "description": "randomised trials by name",
     "match": {"field": "text", "any_phrase": ["randomized controlled trial", "randomised controlled trial",
                                              "randomized clinical trial", "randomized trial"]}},
    {"id": "follow-up-regex", "pile": "screen", "precedence": 65,
     "description": "a follow-up of N months or years (dashes normalised first)",
     "match": {"field": "abstract", "regex": "follow-up (of|was) [0-9]+ (months|years)"}},
    {"id": "trial-not-animal", "pile": "screen", "precedence": 60,
     "description": "trial words without animal words",
     "match": {"all": [{"field": "text", "any_phrase": ["trial*"]},
                       {"not": {"field": "text", "any_phrase": ["rat", "rats", "mice", "mouse", "animal*"]}}]}},
    {"id": "shadow-patients", "pile": "screen", "precedence": 55, "shadow": True,
     "description": "shadow: any 'patients with'",
     "match": {"field": "abstract", "phrase": "patients with"}},
    {"id": "cohort-star", "pile": "screen_cheap", "precedence": 50,
     "description": "cohort words and prospective studies",
     "match": {"field": "text", "any_phrase": ["cohort*", "prospective stud*"]}},
    {"id": "shadow-hospital-hold", "pile": "hold", "precedence": 45, "shadow": True,
     "description": "shadow: hospital words to hold; rows already in hold would be won but not moved",
     "match": {"field": "text", "any_phrase": ["hospital*"]}},
    {"id": "p-value-regex", "pile": "hold", "precedence": 40,
     "description": "reports a p value",
     "match": {"field": "abstract", "regex": "p ?[<=] ?0?\\.0[0-9]+"}},
    {"id": "shadow-title-question", "pile": "discard", "precedence": 35, "shadow": True,
     "description": "shadow: titles ending in a question mark (case-sensitive regex)",
     "match": {"field": "title", "regex": "[A-Za-z]\\?$", "case": "sensitive"}},
    {"id": "no-abstract-hold", "pile": "hold", "precedence": 30,
     "description": "no abstract at all",
     "match": {"empty": "abstract"}},
]


# ---------------------------------------------------------------- the pool

def _works() -> list[dict]:
    return synergy_works()


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    works = _works()
    root = tmp_path_factory.mktemp("realdata")
    pool = root / "pool.parquet"
    cols = ("work_id", "source", "title", "abstract", "type")
    pq.write_table(pa.table({c: pa.array([w[c] for w in works], pa.string()) for c in cols}), pool)
    specs = write_specs(root, {"a.json": RULES[:5], "b.json": RULES[5:]}, PILES)
    from reporter.routing.release import route_release
    result = route_release(pool, specs, root / "releases", workers=2, progress=False, as_of=TODAY)
    stats = json.loads((result.release_dir / "rule_stats.json").read_text(encoding="utf-8"))
    return works, result, stats


@pytest.fixture(scope="module")
def oracle(routed):
    """support.reference's routing of the same works with the same rules."""
    return route(RULES, routed[0], PILES)


# ---------------------------------------------------------------- the tests

def test_counts_match_the_oracle(routed, oracle):
    _, result, stats = routed
    want = oracle
    got = {r["id"]: r for r in stats["rules"]}
    assert set(got) == set(want.rules)
    for rid, e in want.rules.items():
        g = got[rid]
        assert g["matched"] == e["matched"], rid
        if g["shadow"]:
            assert (g["would_win"], g["would_move"]) == (e["would_win"], e["would_move"]), rid
        else:
            assert (g["won"], g["no_text"], g["outranked"]) == (e["won"], e["no_text"], e["outranked"]), rid
            assert g["matched"] == g["won"] + g["no_text"] + g["outranked"], rid
        if g["domain"] is not None:
            assert (g["domain_rows"], g["domain_matched"], g["domain_miss"]) == \
                (e["domain_rows"], e["domain_matched"], e["domain_miss"]), rid
    assert stats["piles"] == want.piles == result.piles
    assert stats["pending"] == want.pending == result.pending
    assert stats["title_only"] == want.title_only
    order = stats["overlap"]["rules"]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert stats["overlap"]["matrix"][i][j] == want.overlap[a, b], (a, b)


def test_routing_table_agrees_with_the_counts(routed, oracle):
    works, result, stats = routed
    table = pq.read_table(result.release_dir / "routing.parquet")
    assert table.column("work_id").to_pylist() == [w["work_id"] for w in works]
    piles = table.column("pile").to_pylist()
    assert {p: piles.count(p) for p in stats["piles"]} == stats["piles"]
    # ... and every row's fate is the oracle's.
    keys = ("pile", "pending_reason", "winner", "matched", "shadow_matched", "title_only")
    got = table.select(list(keys)).to_pylist()
    wrong = [(w["work_id"], g, e) for w, g, e in zip(works, got, oracle.rows) if g != e]
    assert wrong == [], f"{len(wrong)} rows differ from the oracle, e.g. {wrong[:3]}"


def test_counts_checked_outside_python(routed):
    works, result, stats = routed
    got = {r["id"]: r for r in stats["rules"]}
    # zcat synergy_v1_works.jsonl.gz | wc -l  -> 7234 lines;
    # zcat ... | jq -r .openalex_id | sort | uniq -d  -> W4288083134 is the only repeat.
    assert result.rows == 7233
    # zcat ... | jq -r '[.openalex_id, (.abstract == null)] | @tsv' | sort -u -k1,1 | grep -c true  -> 296
    # (no abstract is "" or whitespace only: jq 'select(.abstract != null and (.abstract | test("^\\s*$")))'
    # finds none), so every null abstract is blank to routing.
    assert stats["pool"]["with_abstract"] == 7233 - 296
    # zcat ... | jq -r '.type' | grep -cvx 'journal-article\|posted-content'  -> 57 non-journal records
    # (26 proceedings, 23 chapters, 3 reference entries, 2 other, 1 book, 1 issue, 1 dissertation);
    # the duplicated work is a journal article.
    assert got["type-not-article"]["matched"] == 57
    # zcat ... | jq -r '[.openalex_id, .title] | @tsv' | sort -u -k1,1 | cut -f2 \
    #   | grep -ciE '(^|[^[:alnum:]_])review'  -> 1235 titles with a word starting "review"
    # (the domain of review-title), and with '(^|[^[:alnum:]_])systematic review([^[:alnum:]_]|$)'
    # -> 1065 (grep sees the raw titles; none spells either with odd spaces or dashes).
    assert got["review-title"]["domain_rows"] == 1235
    assert _title_count(works, "systematic review") == 1065


def _title_count(works: list[dict], phrase: str) -> int:
    pat = phrase_re(phrase)
    return sum(1 for w in works if w["title"] and pat.search(norm(w["title"])))
