"""`reporter route` writes one run record: its inputs with the digests release.json gives, its piles' counts."""

from __future__ import annotations

import os

from reporter.cli import main
from reporter.runs import read_runs

from support.routing import write_pool, write_specs

RULES = [{"id": "drop-x", "pile": "discard", "precedence": 10, "match": {"field": "title", "phrase": "xyzzy"}}]


def test_a_route_writes_one_record_with_its_counts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    specs = write_specs(tmp_path, RULES)
    write_pool(tmp_path / "pool.parquet", [
        {"work_id": "openalex:W1", "source": "openalex", "title": "xyzzy one", "abstract": "a"},
        {"work_id": "openalex:W2", "source": "openalex", "title": "two", "abstract": "b"},
        {"work_id": "openalex:W3", "source": "openalex", "title": "three", "abstract": "c"}])
    argv = ["route", "--pool", "pool.parquet", "--specs", "specs", "--out", "releases", "--workers", "1", "--json"]
    assert main(argv) == 0
    [record] = read_runs(tmp_path / "state")
    assert record.kind == "route" and record.status == "done"
    assert record.command == ("reporter", *argv)
    assert record.started == record.ended == "2026-07-06T12:00:00Z"
    assert [(r.role, r.path) for r in record.inputs] == [("pool", "pool.parquet"), ("specs", "specs")]
    assert record.counts["rows"] == 3 and record.counts["pile.discard"] == 1 and record.counts["created"] == 1
    [out] = record.outputs
    assert out.role == "release.json" and out.path.startswith("releases/") and len(out.sha256) == 64
    assert record.settings["sample_seed"] == 0 and record.settings["workers"] == 1
    # the same route again: the release exists, and the run has its own record
    assert main(argv) == 0
    second = read_runs(tmp_path / "state")
    assert len(second) == 2 and second[1].counts["created"] == 0
    assert not [p for p in os.listdir(tmp_path / "state" / "runs" / "2026") if p.startswith(".")]


def test_the_record_takes_the_pool_digest_routing_made_without_reading_the_pool_again(tmp_path, monkeypatch):
    # Hashing a 500 MB pool a second time cost the route's parent half a CPU-second (issue 35, item 2).
    import reporter.hashing
    import reporter.runs
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    specs = write_specs(tmp_path, RULES)
    write_pool(tmp_path / "pool.parquet", [{"work_id": "openalex:W1", "source": "openalex", "title": "xyzzy", "abstract": "a"}])
    hashed = []
    real = reporter.hashing.sha256_file

    def counting(path, *args, **kw):
        hashed.append(os.path.basename(path))
        return real(path, *args, **kw)

    for module in (reporter.hashing, reporter.runs):
        monkeypatch.setattr(module, "sha256_file", counting)
    import reporter.pool.reader
    monkeypatch.setattr(reporter.pool.reader, "sha256_file", counting)
    assert main(["route", "--pool", "pool.parquet", "--specs", str(specs), "--out", "releases", "--workers", "1"]) == 0
    assert hashed.count("pool.parquet") == 1
    [record] = read_runs(tmp_path / "state")
    assert record.inputs[0].sha256 == real(tmp_path / "pool.parquet")
