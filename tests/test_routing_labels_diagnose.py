"""Labels and `reporter diagnose` on the hand-computed fixture of test_routing_fixture (support/routing_fixture.py)."""

import json
import subprocess
import sys

import pytest

from reporter.routing.labels import label_stats_for, load_labels, wilson, write_label_stats
from reporter.routing.specs import load_rulebook
from reporter.routing.release import route_release
from support.routing import TODAY, write_pool, write_specs
from support.routing_fixture import ROWS, RULES

LABELS = """work_id,label
doi:10.1/w1,include
osf:a2,include
pmid:6,exclude
doi:10.1/w10,include
doi:10.1/w7,include
osf:a1,exclude
pmid:5,include
doi:10.1/not-in-pool,include
"""


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    specs = write_specs(root, RULES)
    pool = write_pool(root / "pool.parquet", ROWS)
    (root / "labels.csv").write_text(LABELS)
    result = route_release(pool, specs, root / "releases", progress=False, as_of=TODAY)
    write_label_stats(result.release_dir,
                      label_stats_for(result.release_dir, load_labels(root / "labels.csv"), load_rulebook(specs)))
    return root, result


def test_wilson_matches_hand_values():
    lo, hi = wilson(0, 1)
    assert lo == 0.0 and hi == pytest.approx(0.793450, abs=1e-6)   # z^2/(1+z^2) with z = 1.96
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.236593, abs=1e-6), pytest.approx(0.763407, abs=1e-6))
    assert wilson(0, 0) == (0.0, 1.0)


def test_label_stats(ws):
    root, result = ws
    stats = json.loads((result.release_dir / "labels.json").read_text())
    assert (stats["labels"], stats["labels_in_pool"], stats["includes_in_pool"]) == (8, 7, 5)
    rules = {r["id"]: r for r in stats["rules"]}
    e = rules["discard-erratum"]
    assert (e["includes_matched"], e["includes_won"], e["includes_to_discard"], e["flagged"]) == (1, 1, 1, True)
    assert (e["won_labelled"], e["won_correct"], e["precision"]) == (1, 0, 0.0)
    g = rules["generic-replication"]
    # includes matched: w1, osf:a2, pmid:5; won (into screen): osf:a2 only, pmid:5 was downgraded to pending
    assert (g["includes_matched"], g["includes_won"], g["won_labelled"], g["won_correct"]) == (3, 1, 2, 1)
    assert g["precision"] == 0.5 and g["flagged"] is False
    assert rules["osf-discard-prereg"]["precision"] == 1.0
    h = rules["hold-protocol"]
    assert (h["includes_to_hold"], h["won_labelled"], h["precision"]) == (1, 0, None)
    assert rules["shadow-trial"]["includes_matched"] == 2
    assert stats["lost_includes"] == {"count": 1, "works": [{"work_id": "doi:10.1/w1", "rule": "discard-erratum"}]}


def test_labels_are_not_a_release_input(ws):
    root, result = ws
    again = route_release(root / "pool.parquet", root / "specs", root / "releases", progress=False, as_of=TODAY)
    assert again.release_id == result.release_id


def test_bad_label_is_refused(tmp_path, ws):
    root, _ = ws
    (tmp_path / "labels.csv").write_text("work_id,label\ndoi:1,maybe\n")
    done = _diagnose(root, "--labels", str(tmp_path / "labels.csv"))
    assert done.returncode == 2
    assert "label other than include/exclude, e.g. work_id 'doi:1' label 'maybe'" in done.stderr


def _diagnose(root, *args):
    return subprocess.run([sys.executable, "-m", "reporter.cli", "diagnose", "--pool", str(root / "pool.parquet"),
                           "--specs", str(root / "specs"), "--releases", str(root / "releases"), *args],
                          capture_output=True, text=True)


def test_diagnose_domain_misses_with_context(ws):
    root, _ = ws
    done = _diagnose(root, "--rule", "osf-discard-prereg", "--of", "domain-misses", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["selection"]["rows"] == 2
    got = {s["work_id"]: s for s in out["samples"]}
    assert sorted(got) == ["osf:a2", "osf:a3"]
    assert got["osf:a3"]["context"] == {"field": "title", "before": "Exact ", "match": "Replication of",
                                        "after": " Rinck (2007)", "match_cut": False}
    assert got["osf:a2"]["winner"] == "generic-replication"


def test_diagnose_samples_are_seeded(ws):
    root, _ = ws
    first = json.loads(_diagnose(root, "--pile", "pending", "--n", "3", "--seed", "7", "--json").stdout)
    again = json.loads(_diagnose(root, "--pile", "pending", "--n", "3", "--seed", "7", "--json").stdout)
    assert first == again and first["selection"]["rows"] == 5 and len(first["samples"]) == 3
    wins = json.loads(_diagnose(root, "--rule", "generic-replication", "--json").stdout)
    assert sorted(s["work_id"] for s in wins["samples"]) == ["osf:a2", "pmid:6"]
    text = _diagnose(root, "--rule", "generic-replication", "--labels", str(root / "labels.csv"))
    assert "LOSES INCLUDES" in text.stdout and "doi:10.1/w1  (rule discard-erratum)" in text.stdout


def test_diagnose_unknown_rule(ws):
    done = _diagnose(ws[0], "--rule", "nope")
    assert done.returncode == 2 and "unknown rule 'nope'" in done.stderr
