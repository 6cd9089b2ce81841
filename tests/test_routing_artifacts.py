"""routing/artifacts.py: a release folder read back into frozen, typed records, or refused with one message."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import shutil

import pytest
from conftest import SITE_WORKSPACE
from support.huge import link_to_huge

from reporter.errors import InputError
from reporter.routing import artifact_records, artifact_samples, artifacts
from reporter.routing.artifacts import (INPUT_NAMES, LabelFindings, Manifest, Pile, Published, Release, RuleRows,
                                        RuleStat, RuleStats, SampleWork, Samples, load_release, load_releases)
from reporter.routing.labels import label_stats_for, load_labels, write_label_stats
from reporter.routing.release import ENGINE_VERSION, route_release
from reporter.routing.specs import load_rulebook

FIRST_WRITTEN = dt.date(2026, 5, 4)


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    """The fixture workspace's pool routed once, with its review labels' findings and a name: (folder, id)."""
    releases = tmp_path_factory.mktemp("artifacts") / "releases"
    result = route_release(SITE_WORKSPACE / "pool.jsonl", SITE_WORKSPACE / "specs", releases, workers=1,
                           progress=False, release_name=" 2026-W19 ", as_of=FIRST_WRITTEN)
    write_label_stats(result.release_dir, label_stats_for(result.release_dir, load_labels(SITE_WORKSPACE / "labels.csv"),
                                                          load_rulebook(SITE_WORKSPACE / "specs")))
    return releases, result.release_id


@pytest.fixture
def copied(routed, tmp_path):
    """A copy of the routed releases folder to spoil: (folder, id, its rule_stats.json and that file's JSON)."""
    releases, rid = routed
    folder = tmp_path / "releases"
    shutil.copytree(releases, folder)
    path = folder / rid / "rule_stats.json"
    return folder, rid, path, json.loads(path.read_text(encoding="utf-8"))


def _doc(routed, name: str) -> dict:
    releases, rid = routed
    return json.loads((releases / rid / name).read_text(encoding="utf-8"))


def test_a_release_reads_into_typed_records_equal_to_its_files(routed):
    releases, rid = routed
    (rel,) = load_releases(releases).releases
    assert isinstance(rel, Release) and rel.release_id == rid and rel.folder == releases / rid
    manifest, stats, samples = _doc(routed, "release.json"), _doc(routed, "rule_stats.json"), _doc(routed, "samples.json")

    assert isinstance(rel.manifest, Manifest)
    assert set(rel.manifest.inputs) == set(INPUT_NAMES) and dict(rel.manifest.inputs) == manifest["inputs"]
    assert (rel.manifest.engine_version, rel.manifest.rows) == (ENGINE_VERSION, manifest["rows"])
    assert set(rel.manifest.files) == {"routing.parquet", "rule_stats.json", "samples.json"}

    assert isinstance(rel.stats, RuleStats) and rel.stats.rows == stats["rows"] == sum(rel.stats.piles.values())
    assert rel.stats.pile_order == tuple(Pile(p["name"], p["kind"], p["tier"]) for p in stats["pile_order"])
    assert dict(rel.stats.piles) == stats["piles"] and dict(rel.stats.pending) == stats["pending"]
    assert rel.stats.pool.rows == stats["pool"]["rows"] and rel.stats.overlay is None
    assert dict(rel.stats.sources) == stats["sources"]
    assert [list(row) for row in rel.stats.overlap.matrix] == stats["overlap"]["matrix"]
    for rule, doc in zip(rel.stats.rules, stats["rules"], strict=True):
        assert isinstance(rule, RuleStat)
        assert (rule.id, rule.pile, rule.shadow, rule.matched, rule.won, rule.no_text, rule.outranked) == \
            (doc["id"], doc["pile"], doc["shadow"], doc["matched"], doc["won"], doc["no_text"], doc["outranked"])
        assert (rule.domain, rule.domain_rows, rule.domain_miss) == (doc["domain"], doc["domain_rows"], doc["domain_miss"])
        assert rule.outranked_by == tuple(RuleRows(o["rule"], o["rows"]) for o in doc["outranked_by"])
        assert rule.spec == doc["spec"] and rule.spec_text == doc["spec_text"]
        if not rule.shadow:
            assert rule.matched == rule.won + rule.no_text + rule.outranked
    assert {r.id for r in rel.stats.live()} == {r["id"] for r in stats["rules"] if not r["shadow"]}

    assert isinstance(rel.samples, Samples)
    assert (rel.samples.seed, rel.samples.k, rel.samples.context_chars) == (0, samples["k"], 80)
    for pile, works in rel.samples.piles.items():
        assert all(isinstance(w, SampleWork) and w.pile == pile for w in works)
        assert [w.work_id for w in works] == [w["work_id"] for w in samples["piles"][pile]]
    shown = [w for w in rel.samples.works() if w.context is not None]
    assert shown and all(w.windows()[0] == w.context for w in shown)

    labels = _doc(routed, "labels.json")
    assert isinstance(rel.labels, LabelFindings) and rel.labels.labels == labels["labels"]
    assert [r.id for r in rel.labels.rules] == [r["id"] for r in labels["rules"]]
    assert rel.labels.lost_includes.count == labels["lost_includes"]["count"]
    assert rel.published == Published(name="2026-W19", first_written="2026-05-04")


def test_the_records_are_frozen(routed):
    releases, rid = routed
    rel = load_release(releases, rid)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.stats.rows = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.stats.rules[0].won = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        rel.stats.piles["screen"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        rel.samples.piles["screen"] = ()  # type: ignore[index]
    assert isinstance(rel.stats.rules, tuple) and isinstance(rel.stats.pile_order, tuple)
    records = [c for module in (artifacts, artifact_records, artifact_samples) for c in vars(module).values()
               if dataclasses.is_dataclass(c) and c.__module__ == module.__name__]
    assert len(records) >= 19
    assert all(c.__dataclass_params__.frozen for c in records), [c.__name__ for c in records]


def _refused(folder, rid: str, path, stats: dict, message: str) -> None:
    """Write the spoiled statistics; the whole releases folder is then refused with exactly `message`."""
    path.write_text(json.dumps(stats), encoding="utf-8")
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        load_releases(folder)


def test_a_broken_identity_is_refused_with_the_rule_named(copied):
    folder, rid, path, stats = copied
    rule = next(r for r in stats["rules"] if not r["shadow"] and r["matched"])
    rule["outranked"] += 1
    total = rule["won"] + rule["no_text"] + rule["outranked"]
    _refused(folder, rid, path, stats, f"{path}: rule {rule['id']}: matched {rule['matched']} != won + no_text + "
                                       f"outranked {total}; the identity must hold (re-route this release)")


def test_a_rule_lacking_a_field_is_refused_with_the_field_named(copied):
    folder, rid, path, stats = copied
    del stats["rules"][0]["outranked_by"]
    _refused(folder, rid, path, stats, f"{path}: rules[0] ({stats['rules'][0]['id']}) lacks 'outranked_by'")


def test_statistics_lacking_a_field_are_refused_with_the_field_named(copied):
    folder, rid, path, stats = copied
    del stats["overlap"]
    _refused(folder, rid, path, stats, f"{path}: lacks the field 'overlap' (see docs/release-format.md)")


def test_statistics_edited_after_routing_are_refused_by_their_digest(copied):
    folder, rid, path, stats = copied
    path.write_text(json.dumps(stats, indent=1), encoding="utf-8")  # the same numbers, other bytes
    with pytest.raises(InputError, match="its bytes differ from the sha256 release.json records"):
        load_release(folder, rid)


def test_a_release_name_that_is_not_one_printable_line_is_refused(copied):
    folder, rid, _path, _stats = copied
    published = folder / rid / "published.json"
    published.write_text(json.dumps({"label": "two\nlines", "first_written": "2026-05-04"}), encoding="utf-8")
    message = (f"{published}: label must be null or one line of printable text of at most 100 characters, "
               f"not 'two\\nlines'")
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        load_release(folder, rid)



@pytest.mark.parametrize("name", ["release.json", "rule_stats.json", "samples.json", "labels.json",
                                  "published.json", "index.json"])
def test_a_release_file_linked_to_a_huge_file_is_refused_by_its_size_before_it_is_read(copied, name):
    """Issue 30, item 10: each was read whole (then refused as bad JSON); now its size is refused first."""
    from reporter.routing.index import INDEX_CAP
    from reporter.routing.published import RELEASE_JSON_CAP

    folder, rid, _path, _stats = copied
    path = folder / name if name == "index.json" else folder / rid / name
    size = link_to_huge(path)
    cap = INDEX_CAP if name == "index.json" else RELEASE_JSON_CAP
    with pytest.raises(InputError, match=re.escape(f"{path}: {size:,} bytes, more than the {cap:,}")):
        load_releases(folder)
