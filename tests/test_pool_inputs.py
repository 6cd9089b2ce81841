"""Pools and overlays: every accepted format routes the same; bad input is refused whole."""

import gzip
import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter.errors import InputError
from reporter.routing.release import route_release
from support.routing import TODAY, write_pool, write_specs

RULES = [
    {"id": "rep", "pile": "screen", "precedence": 20, "match": {"field": "text", "phrase": "replication"}},
    {"id": "err", "pile": "discard", "precedence": 30, "match": {"field": "title", "phrase": "erratum"}},
]
ROWS = [
    {"work_id": "doi:10.1/a", "source": "crossref", "title": "A replication", "abstract": "Text here."},
    {"work_id": "doi:10.1/b", "source": "crossref", "title": "Erratum", "abstract": None},
    {"work_id": "doi:10.1/c", "source": "pubmed", "title": "Replication, again", "abstract": ""},
    {"work_id": "doi:10.1/d", "source": "pubmed", "title": "Nothing", "abstract": "No match."},
]
EXPECTED = {"discard": 1, "hold": 0, "screen_cheap": 0, "screen": 1, "pending": 2}


def route(tmp_path, pool, **kw):
    specs = write_specs(tmp_path, RULES)
    return route_release(pool, specs, tmp_path / "releases", progress=False, **kw, as_of=TODAY)


def test_parquet_file(tmp_path):
    assert route(tmp_path, write_pool(tmp_path / "pool.parquet", ROWS)).piles == EXPECTED


def test_parquet_folder(tmp_path):
    folder = tmp_path / "pool"
    folder.mkdir()
    write_pool(folder / "part-0.parquet", ROWS[:2])
    write_pool(folder / "part-1.parquet", ROWS[2:])
    result = route(tmp_path, folder)
    assert result.piles == EXPECTED
    ids = pq.read_table(result.release_dir / "routing.parquet", columns=["work_id"]).column(0).to_pylist()
    assert ids == [r["work_id"] for r in ROWS]


def test_jsonl_and_gzip(tmp_path):
    text = "".join(json.dumps(r) + "\n" for r in ROWS)
    (tmp_path / "pool.jsonl").write_text(text)
    assert route(tmp_path, tmp_path / "pool.jsonl").piles == EXPECTED
    with gzip.open(tmp_path / "pool.jsonl.gz", "wt") as f:
        f.write(text)
    assert route(tmp_path, tmp_path / "pool.jsonl.gz").piles == EXPECTED


def test_csv_with_invalid_utf8_is_replaced_and_counted(tmp_path):
    body = b"work_id,source,title,abstract\n"
    body += b'doi:10.1/a,crossref,A replication,Text \xff here.\n'
    body += b'doi:10.1/b,crossref,Erratum,\n'
    body += b'doi:10.1/c,pubmed,"Replication, again",\n'
    body += b'doi:10.1/d,pubmed,Nothing,"No\nmatch."\n'
    (tmp_path / "pool.csv").write_bytes(body)
    result = route(tmp_path, tmp_path / "pool.csv")
    assert result.piles == EXPECTED
    stats = json.loads((result.release_dir / "rule_stats.json").read_text())
    assert stats["pool"]["utf8_replaced"] == 1


def test_missing_required_column(tmp_path):
    pq.write_table(pa.table({"work_id": ["doi:1"], "title": ["t"]}), tmp_path / "pool.parquet")
    with pytest.raises(InputError, match=r"pool.parquet: the pool lacks required column\(s\) source, abstract"):
        route(tmp_path, tmp_path / "pool.parquet")


def test_file_that_is_not_what_its_extension_says(tmp_path):
    (tmp_path / "pool.parquet").write_text("work_id,source\n")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        route(tmp_path, tmp_path / "pool.parquet")


@pytest.mark.parametrize("ids,message", [
    (["doi:1", "doi:2", "doi:1"], "1 duplicate work_id value\\(s\\), e.g. doi:1"),
    (["doi:1", "12345", "doi:3"], "lack a scheme prefix, e.g. '12345'"),
    (["doi:1", None, "doi:3"], "1 row\\(s\\) have no work_id"),
])
def test_bad_ids_write_nothing(tmp_path, ids, message):
    pool = write_pool(tmp_path / "pool.parquet",
                      [{"work_id": i, "source": "x", "title": "replication", "abstract": "a"} for i in ids])
    with pytest.raises(InputError, match=message):
        route(tmp_path, pool)
    assert list((tmp_path / "releases").iterdir()) == []   # no release, no index, no temporary folder


def test_overlay_fills_blank_text_only(tmp_path):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    overlay = write_pool(tmp_path / "overlay.parquet", [
        {"work_id": "doi:10.1/c", "abstract": "Now with text."},          # fills a blank abstract: c -> screen
        {"work_id": "doi:10.1/a", "abstract": "An erratum, not used."},   # a has text: never overwritten
        {"work_id": "doi:10.1/zz", "abstract": "Unknown work."},          # counted, not fatal
    ])
    result = route(tmp_path, pool, overlay=overlay)
    assert result.piles == {"discard": 1, "hold": 0, "screen_cheap": 0, "screen": 2, "pending": 1}
    stats = json.loads((result.release_dir / "rule_stats.json").read_text())
    assert stats["overlay"] == {"rows": 3, "abstracts_filled": 1, "titles_filled": 0, "unknown_ids": 1}
    manifest = json.loads((result.release_dir / "release.json").read_text())
    assert manifest["inputs"]["overlay"] != "none"


def test_overlay_duplicate_is_bad_input(tmp_path):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    overlay = write_pool(tmp_path / "overlay.parquet", [{"work_id": "doi:10.1/c", "abstract": "x"},
                                                        {"work_id": "doi:10.1/c", "abstract": "y"}])
    with pytest.raises(InputError, match="duplicate work_id in the overlay, e.g. doi:10.1/c"):
        route(tmp_path, pool, overlay=overlay)


def test_same_inputs_same_bytes_changed_input_new_release(tmp_path):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    first = route(tmp_path, pool)
    files = {p.name: p.read_bytes() for p in first.release_dir.iterdir()}
    again = route(tmp_path, pool)
    assert again.release_id == first.release_id and again.created is False
    assert {p.name: p.read_bytes() for p in again.release_dir.iterdir()} == files
    write_pool(pool, ROWS + [{"work_id": "doi:10.1/e", "source": "x", "title": "t", "abstract": "a"}])
    third = route(tmp_path, pool)
    assert third.release_id != first.release_id
    assert {p.name: p.read_bytes() for p in first.release_dir.iterdir()} == files   # old one untouched
    assert json.loads((tmp_path / "releases" / "index.json").read_text()) == [first.release_id, third.release_id]


def test_changed_rule_mints_new_id(tmp_path):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    first = route(tmp_path, pool)
    specs = write_specs(tmp_path, [RULES[0], {**RULES[1], "precedence": 31}])
    second = route_release(pool, specs, tmp_path / "releases", progress=False, as_of=TODAY)
    assert second.release_id != first.release_id


def test_cli_route_json_and_bad_input_exit_2(tmp_path):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    specs = write_specs(tmp_path, RULES)
    cmd = [sys.executable, "-m", "reporter.cli", "route", "--pool", str(pool), "--specs", str(specs),
           "--out", str(tmp_path / "rel"), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["piles"] == EXPECTED and out["pending"] == {"unrouted": 1, "no_text": 1}
    assert out["release_dir"].endswith(out["release_id"])
    bad = subprocess.run(cmd[:-1] + ["--pool", str(tmp_path / "missing.parquet")], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "missing.parquet: the pool does not exist" in bad.stderr


def test_bytes_do_not_depend_on_batching_or_workers(tmp_path, monkeypatch):
    import reporter.routing.release as release_mod
    monkeypatch.setattr(release_mod, "ROW_GROUP_ROWS", 16)   # exercise several row groups
    rows = [{"work_id": f"doi:10.1/{i:03d}", "source": "crossref", "title": ["A replication", "Erratum", "x"][i % 3],
             "abstract": ["Text.", None, "More text."][i % 3]} for i in range(100)]
    pool = write_pool(tmp_path / "pool.parquet", rows)
    specs = write_specs(tmp_path, RULES)
    a = route_release(pool, specs, tmp_path / "a", progress=False, as_of=TODAY)
    b = route_release(pool, specs, tmp_path / "b", progress=False, batch_rows=7, workers=1, as_of=TODAY)
    assert a.release_id == b.release_id
    for name in ("release.json", "routing.parquet", "rule_stats.json", "samples.json"):
        assert (a.release_dir / name).read_bytes() == (b.release_dir / name).read_bytes(), name
    meta = pq.ParquetFile(a.release_dir / "routing.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [16] * 6 + [4]
