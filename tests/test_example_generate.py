"""The seeded example-pool generator: deterministic, well-formed, realistic in its shares, marked as invented."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from importlib import resources

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter import files
from reporter.example import (HOSTILE_TITLES, INCLUDE_KINDS, KINDS, MARKER_KEY, generate_labels, generate_pool,
                              pool_truth)
from reporter.example import generate as gen
from reporter.example import words

ROWS = 6_000
ID_SHAPES = re.compile(r"^(doi:10\.5555/\S+|osf:[0-9a-z]{5}|pmid:[0-9]{8}|arxiv:[0-9]{4}\.[0-9]{5}|openalex:W[0-9]+)$")


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "pool.parquet"
    generate_pool(path, ROWS, seed=3, progress=False)
    return path


@pytest.fixture(scope="module")
def table(pool):
    return pq.read_table(pool)


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, pool):
    again = generate_pool(tmp_path / "again.parquet", ROWS, seed=3, progress=False)
    other = generate_pool(tmp_path / "other.parquet", ROWS, seed=4, progress=False)
    assert again.read_bytes() == pool.read_bytes()
    assert other.read_bytes() != pool.read_bytes()


def test_schema_and_marker(table):
    assert table.schema.names == ["work_id", "source", "title", "abstract", "type", "doi", "published",
                                  "venue", "authors"]
    assert table.schema.field("published").type == pa.date32()
    assert table.schema.field("authors").type == pa.list_(pa.string())
    marker = table.schema.metadata[MARKER_KEY].decode()
    assert marker == "seeded example data (reporter.pool.generate, seed=3, rows=6000): not real works"
    assert table.num_rows == ROWS
    assert table.column("work_id").null_count == 0
    assert table.column("source").null_count == 0


def test_work_ids_unique_and_scheme_prefixed(table):
    ids = table.column("work_id").to_pylist()
    assert len(set(ids)) == len(ids)
    assert all(ID_SHAPES.match(i) for i in ids), [i for i in ids if not ID_SHAPES.match(i)][:5]
    dois = [d for d in table.column("doi").to_pylist() if d]
    assert all(d.startswith("10.5555/") for d in dois)  # the DOI test prefix only


def test_ids_unique_across_many_row_groups(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "GROUP_ROWS", 1_000)
    path = generate_pool(tmp_path / "groups.parquet", 9_500, seed=0, progress=False)
    ids = pq.read_table(path, columns=["work_id"]).column("work_id").to_pylist()
    assert len(set(ids)) == 9_500
    assert pq.ParquetFile(path).metadata.num_row_groups == 10


def test_smaller_pool_is_a_prefix_of_a_larger_one(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "GROUP_ROWS", 1_000)
    small = pq.read_table(generate_pool(tmp_path / "s.parquet", 2_000, seed=5, progress=False))
    large = pq.read_table(generate_pool(tmp_path / "l.parquet", 3_500, seed=5, progress=False))
    assert large.slice(0, 2_000).equals(small)


def test_shares_are_realistic(table):
    sources = table.column("source").to_pylist()
    share = {s: sources.count(s) / ROWS for s in set(sources)}
    assert set(share) == {"openalex", "osf", "pubmed", "biorxiv", "medrxiv", "arxiv", "crossref"}
    assert 0.04 <= share["osf"] <= 0.08
    abstracts = table.column("abstract").to_pylist()
    missing = sum(1 for a in abstracts if a is None or not a.strip()) / ROWS
    assert 0.10 <= missing <= 0.20
    assert any(a is None for a in abstracts) and any(a == "" for a in abstracts)
    osf_abstracts = [a for a, s in zip(abstracts, sources) if s == "osf"]
    assert sum(1 for a in osf_abstracts if not a) / len(osf_abstracts) > 0.5  # registrations: often no abstract
    sizes = [len(a.encode()) for a in abstracts if a]
    assert 1_100 <= np.mean(sizes) <= 1_700
    titles = table.column("title").to_pylist()
    assert any(t is None for t in titles)
    types = set(table.column("type").to_pylist())
    assert {"article", "preprint", "registration", "erratum", "retraction", "editorial", "paratext"} <= types


def test_campaign_flavour(table):
    titles = [t for t in table.column("title").to_pylist() if t]
    assert any(re.match(r"^Exact Replication of \S+ & \S+ \(\d{4}\)$", t) for t in titles)
    assert any(t.startswith("Preregistration:") for t in titles)
    assert any(t in ("Table of Contents", "Front Matter", "Issue Information") for t in titles)
    assert any(t.startswith(("Erratum", "Correction to:", "Corrigendum")) for t in titles)
    replication = sum(1 for t in titles if re.search(r"(?i)\breplicat", t)) / len(titles)
    assert 0.01 <= replication <= 0.10  # low, as in a real keyword-survivor pool


def test_hostile_and_unusual_text_present(table):
    titles = [t for t in table.column("title").to_pylist() if t]
    for hostile in HOSTILE_TITLES:
        assert hostile in titles
    for needle in ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", " | ", "**", "\u2010",
                   "\u2013", "\ufb01", "Hébert", "\u202e", "\n", "  ", "\t"):
        assert any(needle in t for t in titles), needle
    assert any(len(w) > 200 for t in titles for w in t.split())
    abstracts = "\n".join(a for a in table.column("abstract").to_pylist() if a)
    assert "\ufb01" in abstracts and "\u2010" in abstracts and "\n\n" in abstracts


def test_labels_follow_the_hidden_truth(tmp_path, pool, table):
    out = generate_labels(pool, tmp_path / "labels.csv", seed=1)
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"work_id", "label"}
    assert {r["label"] for r in rows} == {"include", "exclude"}
    ids = table.column("work_id").to_pylist()
    position = {w: i for i, w in enumerate(ids)}
    assert all(r["work_id"] in position for r in rows)
    seed, kinds = pool_truth(pool)
    assert seed == 3 and len(kinds) == ROWS
    truth = {ids[i]: KINDS[k] in INCLUDE_KINDS for i, k in enumerate(kinds)}
    agree = sum((r["label"] == "include") == truth[r["work_id"]] for r in rows) / len(rows)
    assert 0.95 <= agree < 1.0  # a little label noise, as in real screening
    assert generate_labels(pool, tmp_path / "again.csv", seed=1).read_bytes() == out.read_bytes()


def test_osf_replications_are_labelled_include(tmp_path, pool, table):
    out = generate_labels(pool, tmp_path / "labels.csv", seed=0, noise=0.0)
    with open(out, newline="", encoding="utf-8") as f:
        labels = dict(csv.reader(f))
    exact = [w for w, t in zip(table.column("work_id").to_pylist(), table.column("title").to_pylist())
             if t and t.startswith("Exact Replication of") and w in labels]
    assert exact and all(labels[w] == "include" for w in exact)


def test_cli_and_bad_rows(tmp_path, capsys):
    assert gen.main([str(tmp_path / "cli.parquet"), "--rows", "500", "--seed", "2", "--quiet",
                     "--labels", str(tmp_path / "cli.csv")]) == 0
    assert pq.read_metadata(tmp_path / "cli.parquet").num_rows == 500
    assert (tmp_path / "cli.csv").exists()
    assert gen.main([str(tmp_path / "bad.parquet"), "--rows", "0", "--quiet"]) == 2
    assert not (tmp_path / "bad.parquet").exists()


def test_cli_runs_as_a_module_with_help_and_an_example():
    out = subprocess.run([sys.executable, "-m", "reporter.example", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "python -m reporter.example" in out and "Example:" in out


def test_importing_the_package_loads_nothing_heavy():
    """Reading a workspace imports reporter.example.config; the generator loads on first use."""
    code = ("import sys, reporter.example; assert not {'pyarrow', 'numpy'} & set(sys.modules); "
            "reporter.example.generate_pool; assert 'pyarrow' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_word_lists_are_package_data():
    data = json.loads(resources.files("reporter.example").joinpath("words.json").read_text(encoding="utf-8"))
    assert data["hostile_titles"] == HOSTILE_TITLES
    for name, bank in data["banks"].items():
        assert words.BANKS[name] == bank
        lists = bank.values() if isinstance(bank, dict) else [bank]
        assert all(lists) and all(isinstance(v, str) and v for values in lists for v in values), name
    # Weighted templates are pairs in JSON and (template, weight) tuples in code.
    assert ("Erratum", 2) in words.TITLES["erratum_title"]


def test_writes_go_through_the_file_layer(tmp_path, monkeypatch):
    """The pool is written under the file layer's unique temporary name, then renamed into place."""
    seen = []
    real = gen.group_table

    def spy(*args):
        seen.extend(p.name for p in tmp_path.iterdir())
        return real(*args)

    monkeypatch.setattr(gen, "group_table", spy)
    generate_pool(tmp_path / "pool.parquet", 300, seed=1, progress=False)
    assert seen and all(name.startswith(files.TEMP_PREFIX + "pool.parquet.") for name in seen)
    assert [p.name for p in tmp_path.iterdir()] == ["pool.parquet"]


def test_a_failed_write_keeps_the_old_files_and_leaves_no_temporary(tmp_path, pool, monkeypatch):
    target, labels = tmp_path / "pool.parquet", tmp_path / "labels.csv"
    target.write_bytes(b"old pool")
    labels.write_text("old labels")

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(gen, "group_table", boom)
    with pytest.raises(RuntimeError):
        generate_pool(target, 300, seed=1, progress=False)
    monkeypatch.setattr(gen.csv, "writer", boom)
    with pytest.raises(RuntimeError):
        generate_labels(pool, labels, seed=1)
    assert target.read_bytes() == b"old pool" and labels.read_text() == "old labels"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "pool.parquet"]
