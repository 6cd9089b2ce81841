"""Hand-computed routing on a tiny pool where every fate of routing.md occurs.

The rules and rows are in support/routing_fixture.py (shared with
test_routing_labels_diagnose.py); every expected number below was worked out by hand
from them, and the comments on each row there say which rules match it and why.
"""

import json

import pyarrow.parquet as pq
import pytest

from reporter.routing.release import route_release
from support.reference import route
from support.routing import TODAY, DEFAULT_PILES, write_pool, write_specs
from support.routing_fixture import ROWS, RULES


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixture")
    specs = write_specs(root, RULES)
    pool = write_pool(root / "pool.parquet", ROWS)
    result = route_release(pool, specs, root / "releases", progress=False, as_of=TODAY)
    stats = json.loads((result.release_dir / "rule_stats.json").read_text())
    table = pq.read_table(result.release_dir / "routing.parquet").to_pylist()
    return result, stats, {r["work_id"]: r for r in table}, root


def test_works_per_source(release):
    _, stats, _, _ = release
    expected = {}
    for row in ROWS:
        key = row["source"] if row.get("source") and row["source"].strip() else "(no source)"
        expected[key] = expected.get(key, 0) + 1
    assert stats["sources"] == dict(sorted(expected.items()))
    assert sum(stats["sources"].values()) == stats["rows"]


def by_id(stats):
    return {r["id"]: r for r in stats["rules"]}


def test_piles_and_pending_reasons(release):
    result, stats, _, _ = release
    assert stats["piles"] == {"discard": 2, "hold": 2, "screen_cheap": 1, "screen": 3, "pending": 5}
    assert stats["pending"] == {"unrouted": 3, "no_text": 2}
    assert result.piles == stats["piles"] and result.pending == stats["pending"]
    assert stats["rows"] == len(ROWS) == sum(stats["piles"].values())
    assert stats["title_only"] == 2


@pytest.mark.parametrize("rule,matched,won,no_text,outranked", [
    ("discard-erratum", 1, 1, 0, 0),
    ("osf-discard-prereg", 1, 1, 0, 0),
    ("osf-replication-title", 1, 1, 0, 0),
    ("generic-replication", 5, 2, 1, 2),
    ("cheap-reanalysis", 2, 1, 0, 1),
    ("hold-protocol", 1, 1, 0, 0),
    ("hold-hebert", 1, 1, 0, 0),
    ("empty-osf", 1, 0, 1, 0),
])
def test_rule_counts_and_identity(release, rule, matched, won, no_text, outranked):
    r = by_id(release[1])[rule]
    assert (r["matched"], r["won"], r["no_text"], r["outranked"]) == (matched, won, no_text, outranked)
    assert r["matched"] == r["won"] + r["no_text"] + r["outranked"]
    assert r["would_win"] is None and r["would_move"] is None


def test_outranked_by(release):
    rules = by_id(release[1])
    assert rules["generic-replication"]["outranked_by"] == [
        {"rule": "discard-erratum", "rows": 1}, {"rule": "osf-discard-prereg", "rows": 1}]
    assert rules["cheap-reanalysis"]["outranked_by"] == [{"rule": "generic-replication", "rows": 1}]


def test_shadow_forecast(release):
    r = by_id(release[1])["shadow-trial"]
    assert (r["matched"], r["won"], r["no_text"], r["outranked"]) == (3, 0, 0, 0)
    assert r["would_win"] == 3      # pmid:5, pmid:6, doi:10.1/w7 (all won by lower precedence)
    assert r["would_move"] == 1     # only doi:10.1/w7 (hold -> screen); pmid:5 stays pending
    table = release[2]
    assert table["doi:10.1/w7"]["shadow_matched"] == ["shadow-trial"]
    assert "shadow-trial" not in table["doi:10.1/w7"]["matched"]


def test_domain_miss(release):
    rules = by_id(release[1])
    r = rules["osf-discard-prereg"]
    assert (r["domain_rows"], r["domain_matched"], r["domain_miss"]) == (4, 1, 2)
    assert r["domain_miss_winners"] == [{"rule": "generic-replication", "rows": 1},
                                        {"rule": "osf-replication-title", "rows": 1}]
    assert rules["generic-replication"]["domain_rows"] is None


def test_routing_rows(release):
    t = release[2]
    assert t["osf:a2"]["pile"] == "screen" and t["osf:a2"]["title_only"] is True
    assert t["pmid:5"]["pile"] == "pending" and t["pmid:5"]["pending_reason"] == "no_text"
    assert t["pmid:5"]["winner"] == "generic-replication"
    assert t["osf:a4"]["pending_reason"] == "no_text" and t["osf:a4"]["title_only"] is False
    assert t["arxiv:2601.00008"]["pending_reason"] == "unrouted" and t["arxiv:2601.00008"]["winner"] is None
    assert t["doi:10.1/w12"]["pending_reason"] == "unrouted"
    assert t["doi:10.1/w1"]["matched"] == ["discard-erratum", "generic-replication"]
    assert t["pmid:6"]["matched"] == ["generic-replication", "cheap-reanalysis"]
    assert t["doi:10.1/w10"]["pile"] == "screen_cheap"
    assert [r["work_id"] for r in release[2].values()] == [r["work_id"] for r in ROWS]  # pool order


@pytest.mark.parametrize("work_id,field,start,end,text", [
    ("doi:10.1/w1", "title", 0, 7, "Erratum"),
    ("osf:a2", "title", 2, 19, "replication study"),
    ("osf:a3", "title", 6, 20, "Replication of"),
    ("pmid:6", "title", 0, 15, "Reproducibility"),   # trial* style prefix: the span runs to the word's end
    ("doi:10.1/w10", "abstract", 4, 14, "reanalysis"),
    ("doi:10.1/w11", "title", 0, 6, "Hébert"),
])
def test_evidence(release, work_id, field, start, end, text):
    assert release[2][work_id]["evidence"] == {"field": field, "start": start, "end": end, "text": text}


def test_no_evidence_without_text_hit(release):
    assert release[2]["osf:a4"]["evidence"] is None     # won by a column/empty rule
    assert release[2]["doi:10.1/w9"]["evidence"] is None


def test_overlap_matrix(release):
    ov = release[1]["overlap"]
    i = {rid: k for k, rid in enumerate(ov["rules"])}
    m = ov["matrix"]
    assert m[i["generic-replication"]][i["discard-erratum"]] == 1
    assert m[i["generic-replication"]][i["shadow-trial"]] == 2   # pmid:5, pmid:6
    assert m[i["generic-replication"]][i["generic-replication"]] == 5
    assert all(m[k][k] == r["matched"] for k, r in enumerate(release[1]["rules"]))
    assert m == [list(col) for col in zip(*m)]


def test_samples_cover_every_pile(release):
    result = release[0]
    samples = json.loads((result.release_dir / "samples.json").read_text())
    sizes = {pile: len(works) for pile, works in samples["piles"].items()}
    assert sizes == {"discard": 2, "hold": 2, "screen_cheap": 1, "screen": 3, "pending": 5}
    screen = {w["work_id"]: w for w in samples["piles"]["screen"]}
    assert screen["osf:a3"]["context"] == {"field": "title", "before": "Exact ", "match": "Replication of",
                                           "after": " Rinck (2007)", "match_cut": False}
    assert samples["rules"]["osf-discard-prereg"]["domain_misses"][0]["work_id"] in {"osf:a2", "osf:a3"}
    assert len(samples["rules"]["osf-discard-prereg"]["domain_misses"]) == 2


def test_the_reference_agrees_with_the_hand_computed_release(release):
    """support.reference (the property and real-data tests' oracle) on the hand-checked fixture."""
    _, stats, table, _ = release
    want = route([r for rules in RULES.values() for r in rules], ROWS, DEFAULT_PILES)
    keys = ("pile", "pending_reason", "winner", "matched", "shadow_matched", "title_only")
    assert [{k: row[k] for k in keys} for row in table.values()] == want.rows
    assert (stats["piles"], stats["pending"], stats["title_only"]) == (want.piles, want.pending, want.title_only)
    for r in stats["rules"]:
        keys = ("matched", "would_win", "would_move") if r["shadow"] else ("matched", "won", "no_text", "outranked")
        if r["domain"] is not None:
            keys += ("domain_rows", "domain_matched", "domain_miss")
        assert {k: r[k] for k in keys} == {k: want.rules[r["id"]][k] for k in keys}, r["id"]


def test_release_manifest(release):
    result = release[0]
    manifest = json.loads((result.release_dir / "release.json").read_text())
    assert manifest["release_id"] == result.release_id == result.release_dir.name
    assert sorted(manifest["inputs"]) == ["engine", "normalisation", "overlay", "piles", "pool", "specs"]
    assert manifest["inputs"]["overlay"] == "none"
    index = json.loads((result.release_dir.parent / "index.json").read_text())
    assert index == [result.release_id]
