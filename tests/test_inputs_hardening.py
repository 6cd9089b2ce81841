"""Odd but valid input routes and renders; bad input is exit 2 naming the file (or flag) and what to fix.

Issue 8, items 3, 5 and 6: rows of several megabytes in JSONL and CSV, one
unbroken word of megabytes, byte order marks, `large_string` columns and
deep (but bounded) nesting route; a non-gzip `.gz`, a struct-typed text
column, too-deep JSON, a bad `--n`, `--out` naming a folder and malformed
OpenAlex works are refused with a message, never a traceback. `serve`'s
flags are in test_site_serve.py.
"""

import csv
import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter.cli import main
from reporter.errors import InputError
from reporter.pool import rawscan, reader
from reporter.pool.reader import open_table
from reporter.routing.textscan import word_end as _word_end
from reporter.routing.release import route_release
from reporter.routing.fieldbuffer import FieldBuffer
from reporter.build import render_site
from support.routing import TODAY, write_pool, write_specs

RULES = [
    {"id": "rep", "pile": "screen", "precedence": 20, "match": {"field": "text", "phrase": "replication"}},
    {"id": "tri", "pile": "screen_cheap", "precedence": 25, "match": {"field": "text", "phrase": "trial*"}},
]
MB = 1 << 20


def rows_with(big: str) -> list[dict]:
    return [
        {"work_id": "doi:10.1/a", "source": "crossref", "title": "A replication", "abstract": big},
        {"work_id": "doi:10.1/b", "source": "crossref", "title": "Other", "abstract": "a trial here"},
        {"work_id": "doi:10.1/c", "source": "pubmed", "title": "Nothing", "abstract": "no match"},
    ]


def route(tmp_path, pool, name="releases"):
    return route_release(pool, write_specs(tmp_path, RULES), tmp_path / name, progress=False, as_of=TODAY)


def routing(result) -> list[dict]:
    return pq.read_table(result.release_dir / "routing.parquet").to_pylist()


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


# ---- large rows ------------------------------------------------------------------

def test_a_6_mb_jsonl_row_routes_like_parquet_and_renders(tmp_path):
    big = ("replication words " * (6 * MB // 18 + 1))[: 6 * MB]
    rows = rows_with(big)
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(pool.read_bytes().split(b"\n")[0]) > 6 * MB
    got = route(tmp_path, pool)
    want = route(tmp_path, write_pool(tmp_path / "pool.parquet", rows), "parquet")
    assert got.piles == want.piles == {"discard": 0, "hold": 0, "screen_cheap": 1, "screen": 1, "pending": 1}
    assert routing(got) == routing(want)
    report = render_site(tmp_path / "releases", tmp_path / "site", progress=False)
    assert list(report.releases) == [got.release_id]
    assert (tmp_path / "site" / "releases" / got.release_id / "index.html").is_file()


def test_a_large_row_in_gzipped_jsonl(tmp_path):
    rows = rows_with("x " * (3 * MB))
    with gzip.open(tmp_path / "pool.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    assert route(tmp_path, tmp_path / "pool.jsonl.gz").rows == 3


def test_a_17_mb_csv_field_routes_like_parquet(tmp_path):
    big = "replication\n" + "y " * (17 * MB // 2 + 10)   # a line break inside the quoted field too
    rows = rows_with(big)
    with open(tmp_path / "pool.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["work_id", "source", "title", "abstract"])
        w.writeheader()
        w.writerows(rows)
    got = route(tmp_path, tmp_path / "pool.csv")
    want = route(tmp_path, write_pool(tmp_path / "pool.parquet", rows), "parquet")
    assert got.piles == want.piles
    assert routing(got) == routing(want)


def test_a_long_csv_row_after_many_blocks_is_read_again_without_repeating_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "CSV_BLOCK", 1 << 14)   # rows before the long one fill several blocks
    with open(tmp_path / "pool.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["work_id", "source", "title", "abstract"])
        for i in range(2000):
            w.writerow([f"doi:10.1/{i}", "s", "t", "short, with\na line break"])
        w.writerow(["doi:10.1/long", "s", "t", "z\n" * (1 << 16)])
        for i in range(2000, 2010):
            w.writerow([f"doi:10.1/{i}", "s", "t", "a"])
    source = open_table(tmp_path / "pool.csv")
    ids = [v for b in source.batches(["work_id"]) for v in b.column(0).to_pylist()]
    assert ids == [f"doi:10.1/{i}" for i in range(2000)] + ["doi:10.1/long"] + [f"doi:10.1/{i}" for i in
                                                                                   range(2000, 2010)]
    assert source.block_size >= 1 << 17


def test_the_longest_row_scan_reads_quotes_across_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(rawscan, "PIECE", 5)
    (tmp_path / "t.csv").write_bytes(b'a,b\n1,"x\n\ny"\n22,3\r\n')
    assert rawscan.longest_row(tmp_path / "t.csv", quoted=True) == len(b'1,"x\n\ny"\n')
    assert rawscan.longest_row(tmp_path / "t.csv", quoted=False) == len(b"22,3\r\n")


# ---- one very long word ------------------------------------------------------------

def test_a_word_of_8_mb_routes_and_its_evidence_runs_to_the_word_end(tmp_path):
    # The old extension advanced one byte per numpy step: this word took about 100 s. Now it is linear.
    word = "trial" + "s" * (8 * MB) + "é"
    rows = [{"work_id": "doi:10.1/w", "source": "s", "title": "t", "abstract": f"a {word} end"},
            {"work_id": "doi:10.1/x", "source": "s", "title": "trials", "abstract": "z"}]
    result = route(tmp_path, write_pool(tmp_path / "pool.parquet", rows))
    out = {r["work_id"]: r for r in routing(result)}
    assert out["doi:10.1/w"]["winner"] == "tri"
    assert out["doi:10.1/w"]["evidence"]["start"] == 2 and out["doi:10.1/w"]["evidence"]["end"] == 2 + len(word)
    assert out["doi:10.1/x"]["evidence"] == {"field": "title", "start": 0, "end": 6, "text": "trials"}


def test_word_end_is_the_word_character_run_at_any_length():
    texts = ["trial", "trials-x", "trialé中_9 rest", "tri" + "al" * 5000 + "ß." + "x", "trialsñ", "trial\u0301s y"]
    buf = FieldBuffer.of(pa.array(texts))
    rows = np.arange(len(texts), dtype=np.int64)
    start = buf.offsets[:-1] + 3
    ends = _word_end(buf, rows, start) - buf.offsets[:-1]
    import re
    want = [len(re.match(r"\w*", t[3:]).group().encode()) + 3 for t in texts]
    assert ends.tolist() == want


# ---- byte order marks, large_string, nesting ----------------------------------------------

ROWS = [{"work_id": "doi:10.1/a", "source": "crossref", "title": "A replication", "abstract": "Text."},
        {"work_id": "doi:10.1/b", "source": "crossref", "title": "Trials", "abstract": "More."}]


def test_a_byte_order_mark_at_the_start_of_jsonl_and_csv(tmp_path):
    want = routing(route(tmp_path, write_pool(tmp_path / "pool.parquet", ROWS), "parquet"))
    (tmp_path / "pool.jsonl").write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in ROWS).encode())
    (tmp_path / "pool.csv").write_bytes(b"\xef\xbb\xbfwork_id,source,title,abstract\n"
                                        b"doi:10.1/a,crossref,A replication,Text.\ndoi:10.1/b,crossref,Trials,More.\n")
    for name in ("pool.jsonl", "pool.csv"):
        assert open_table(tmp_path / name).schema.names[0] == "work_id"
        assert routing(route(tmp_path, tmp_path / name, f"rel-{name}")) == want, name


def test_large_string_columns_in_parquet(tmp_path):
    pq.write_table(pa.table({k: pa.array([r[k] for r in ROWS], pa.large_string()) for k in ROWS[0]}),
                   tmp_path / "pool.parquet")
    want = routing(route(tmp_path, write_pool(tmp_path / "plain.parquet", ROWS), "plain"))
    assert routing(route(tmp_path, tmp_path / "pool.parquet")) == want


def deep_pool(path, depth: int):
    nest = "[" * depth + "]" * depth
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps(ROWS[1])[:-1] + f', "extra": {nest}}}\n')
    return path


def test_deep_but_bounded_nesting_in_jsonl_routes(tmp_path):
    result = route(tmp_path, deep_pool(tmp_path / "pool.jsonl", rawscan.MAX_JSON_DEPTH - 1))
    assert result.rows == 2


def test_nesting_deeper_than_the_limit_is_refused_naming_the_line(tmp_path, capsys):
    # pyarrow's parser recurses: 100,000 levels crashed the process (SIGSEGV) before the check.
    pool = deep_pool(tmp_path / "pool.jsonl", 100_000)
    code, err = run(capsys, "route", "--pool", pool, "--specs", write_specs(tmp_path, RULES), "--out", tmp_path / "r")
    assert code == 2
    assert f"{pool}: line 2: JSON nested 100,001 levels deep; at most 1,000 levels" in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_the_nesting_check_follows_strings_and_lines_across_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(rawscan, "PIECE", 7)
    monkeypatch.setattr(rawscan, "MAX_JSON_DEPTH", 4)
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": "[[[[\\\\", "b": [[1]]}\n{"c": "\\"[[[["}\n{"d": [[["\\\\\\"]]]"]]]}\n{"e": [[[[]]]]}\n')
    with pytest.raises(InputError, match=r"t.jsonl: line 4: JSON nested 5 levels deep"):
        rawscan.check_json_depth(path)


# ---- refused with a message (exit 2, no traceback) ------------------------------------

@pytest.mark.parametrize("name", ["pool.jsonl.gz", "pool.csv.gz"])
def test_a_gz_pool_that_is_not_gzip(tmp_path, capsys, name):
    (tmp_path / name).write_text("work_id,source,title,abstract\n")
    code, err = run(capsys, "route", "--pool", tmp_path / name, "--specs", write_specs(tmp_path, RULES),
                    "--out", tmp_path / "r")
    assert code == 2
    assert f"{tmp_path / name}: cannot read the file" in err and "is it really gzip-compressed?" in err


def test_a_struct_typed_text_column_names_the_file_and_the_column(tmp_path, capsys):
    pq.write_table(pa.table({"work_id": ["doi:1"], "source": ["s"], "title": [{"a": 1}], "abstract": ["x"]}),
                   tmp_path / "pool.parquet")
    code, err = run(capsys, "route", "--pool", tmp_path / "pool.parquet", "--specs", write_specs(tmp_path, RULES),
                    "--out", tmp_path / "r")
    assert code == 2
    assert f"{tmp_path / 'pool.parquet'}: column 'title' of the pool has type struct<a: int64>" in err
    (tmp_path / "pool.jsonl").write_text('{"work_id": "doi:1", "source": "s", "title": "t", "abstract": ["x"]}\n')
    code, err = run(capsys, "route", "--pool", tmp_path / "pool.jsonl", "--specs", tmp_path / "specs",
                    "--out", tmp_path / "r")
    assert code == 2 and f"{tmp_path / 'pool.jsonl'}: column 'abstract' of the pool has type list<" in err


@pytest.mark.parametrize("rows,message", [
    ('"abc"', "reporter.toml: [example]: key 'rows' must be an integer, not 'abc'"),
    ("-5", "reporter.toml: [example]: key 'rows' must be from 1 to 50,000,000, not -5"),
])
def test_example_rows_that_are_not_a_count(tmp_path, capsys, rows, message):
    write_specs(tmp_path, RULES)
    (tmp_path / "reporter.toml").write_text('pool = "data/pool.parquet"\nspecs = "specs"\nreleases = "releases"\n'
                                            f'site = "site"\n\n[example]\nrows = {rows}\n')
    code, err = run(capsys, "build", "--workspace", tmp_path)
    assert code == 2 and message in err
    assert not (tmp_path / "data").exists() and not (tmp_path / "site").exists()


def test_diagnose_n_below_one(tmp_path, capsys):
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    specs = write_specs(tmp_path, RULES)
    assert run(capsys, "route", "--pool", pool, "--specs", specs, "--out", tmp_path / "releases", "--json")[0] == 0
    code, err = run(capsys, "diagnose", "--pool", pool, "--specs", specs, "--releases", tmp_path / "releases",
                    "--pile", "screen", "--n", "-1")
    assert code == 2 and "--n -1: the sample size must be 1 or more" in err


# ---- novelty-ingest and the graph ----------------------------------------------------------

def ingest(capsys, tmp_path, works, out=None):
    path = tmp_path / "works.json"
    path.write_text(works if isinstance(works, str) else json.dumps(works))
    out = out or tmp_path / "events.jsonl"
    code, err = run(capsys, "novelty-ingest", "--works", path, "--out", out, "--checked-ts", "2026-09-03T00:00:00Z")
    return code, err, path


@pytest.mark.parametrize("works,message", [
    ([{"id": "W1", "referenced_works": []}, {"id": "https://openalex.org/W7", "referenced_works": [1]}],
     "work #2 (W7): referenced_works[0] must be an OpenAlex work id (W and digits, or its URL), got 1"),
    ([{"id": "W1", "referenced_works": "W2"}],
     ("work #1 (W1): 'referenced_works' must be a list of OpenAlex work ids (or absent when the references "
      "were not read), got str 'W2'")),
    ([{"id": "W1", "referenced_works": ["W2", None]}], "work #1 (W1): referenced_works[1] must be"),
    ([{"id": "W1", "referenced_works": ["not an id"]}], "work #1 (W1): referenced_works[0] must be"),
    ([{"id": "W1", "referenced_works": {"W2": 1}}], "work #1 (W1): 'referenced_works' must be a list"),
    ([{"id": 12}], "work #1: 'id' must be an OpenAlex work id"),
    ([{"id": "W1", "doi": 5}], "work #1 (W1): 'doi' must be a string or null, got 5"),
    ([{"id": "W1", "ids": []}], "work #1 (W1): 'ids' must be an object or null"),
    (["W1"], "work #1: an OpenAlex work must be a JSON object, got str"),
])
def test_a_malformed_openalex_work_is_an_error_never_a_checked_zero(tmp_path, capsys, works, message):
    code, err, path = ingest(capsys, tmp_path, works)
    assert code == 2
    assert f"{path}: {message}" in err
    assert not (tmp_path / "events.jsonl").exists()


def test_null_references_are_unread_and_an_empty_list_is_a_checked_zero(tmp_path, capsys):
    code, _, _ = ingest(capsys, tmp_path, [{"id": "W1", "referenced_works": None}, {"id": "W2", "referenced_works": []}])
    assert code == 0
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["row"]["read"] for e in events if e["table"] == "paper"] == [False, True]
    assert [e["row"] for e in events if e["table"] == "references_checked"] == [
        {"lom_id": "openalex:W2", "source": "openalex", "checked_ts": "2026-09-03T00:00:00Z", "n_refs": 0,
         "status": "ok"}]


def test_ingest_out_naming_a_folder_or_under_a_file(tmp_path, capsys):
    (tmp_path / "graph").mkdir()
    code, err, _ = ingest(capsys, tmp_path, [{"id": "W1"}], out=tmp_path / "graph")
    assert code == 2 and f"--out {tmp_path / 'graph'}: is a folder; name the events file to write" in err
    (tmp_path / "file").write_text("")
    code, err, _ = ingest(capsys, tmp_path, [{"id": "W1"}], out=tmp_path / "file" / "events.jsonl")
    assert code == 2 and f"{tmp_path / 'file'} is a file, not a folder" in err


def test_ingest_reads_a_byte_order_mark_and_refuses_deep_json(tmp_path, capsys):
    code, _, _ = ingest(capsys, tmp_path, "\ufeff" + json.dumps([{"id": "W1", "referenced_works": ["W2"]}]))
    assert code == 0
    code, err, path = ingest(capsys, tmp_path, "[" * 100_000 + "]" * 100_000)
    assert code == 2 and f"{path}: JSON nested too deeply to read" in err


def test_deep_nesting_in_a_graph_file_names_the_line(tmp_path, capsys):
    graph = tmp_path / "events.jsonl"
    ok = '{"op": "upsert", "table": "paper", "row": {"lom_id": "doi:10.1/a", "read": false}}\n'
    graph.write_text(ok + '{"op": "upsert", "table": "paper", "row": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"doi": "10.1/x"}}}))
    code, err = run(capsys, "novelty", "--candidate", cand, "--graph", graph)
    assert code == 2 and f"{graph}: line 2: JSON nested too deeply to read" in err
    # Deep but valid nesting in an extra field is read (extra fields are ignored).
    graph.write_text(ok.replace('"read": false', '"read": false, "x": ' + "[" * 200 + "]" * 200))
    code, _ = run(capsys, "novelty", "--candidate", cand, "--graph", graph)
    assert code == 0
