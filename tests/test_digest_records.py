"""Reading papers into digest records: normalized records and the sources' own formats (docs/digest.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter.digest.read import detect_format, read_papers
from reporter.digest.records import Record
from reporter.errors import InputError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sources"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- normalized records ---------------------------------------------------------------------------

NORMALIZED = [
    {"id": "arxiv:2401.01234v2", "title": "Protein language models", "abstract": "We evaluate.",
     "source": "arxiv", "doi": "https://doi.org/10.48550/ARXIV.2401.01234", "published": "2024-01-02",
     "type": "preprint", "authors": ["Ada Lovelace", "Charles Babbage"], "venue": "arXiv",
     "related_ids": ["DOI:10.1101/2024.01.01.000001", "arxiv:2401.01234"], "version": None},
    {"id": "pmid:39000000", "title": "A journal article", "abstract": "", "source": "pubmed"},
]


def check_normalized(records: list[Record]) -> None:
    a, b = records
    assert a.id == "arxiv:2401.01234" and a.version == "v2"
    assert a.doi == "10.48550/arxiv.2401.01234"
    assert a.related_ids == ("doi:10.1101/2024.01.01.000001",)  # its own id is not related to itself
    assert a.authors == ("Ada Lovelace", "Charles Babbage") and a.published == "2024-01-02"
    assert b.id == "pmid:39000000" and b.abstract is None and b.authors == () and b.source == "pubmed"


def test_normalized_jsonl_and_gz(tmp_path):
    check_normalized(read_papers(write_jsonl(tmp_path / "papers.jsonl", NORMALIZED)))
    gz = tmp_path / "papers.jsonl.gz"
    gz.write_bytes(gzip.compress((tmp_path / "papers.jsonl").read_bytes()))
    check_normalized(read_papers(gz))
    assert read_papers(gz)[0].where == f"{gz}: line 1"


def test_normalized_parquet(tmp_path):
    path = tmp_path / "papers.parquet"
    pq.write_table(pa.Table.from_pylist(NORMALIZED), path)
    check_normalized(read_papers(path))


def test_normalized_csv_lists_are_semicolon_separated(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(
        "id,title,abstract,source,doi,published,type,authors,venue,related_ids,version\n"
        "arxiv:2401.01234v2,Protein language models,We evaluate.,arxiv,https://doi.org/10.48550/ARXIV.2401.01234,"
        '2024-01-02,preprint,"Ada Lovelace; Charles Babbage",arXiv,DOI:10.1101/2024.01.01.000001;arxiv:2401.01234,\n'
        "\n"
        "pmid:39000000,A journal article,,pubmed,,,,,,,\n", encoding="utf-8")
    records = read_papers(path)
    check_normalized(records)
    assert records[1].where == f"{path}: line 4"


@pytest.mark.parametrize("row, message", [
    ({"title": "no id"}, "line 2: record without an id"),
    ({"id": "arxiv:2401.00001"}, "line 2 (id arxiv:2401.00001): record without a title"),
    ({"id": "arxiv:2401.00001", "title": "  "}, "record without a title"),
    ({"id": "2401.00001", "title": "t"}, "line 2: id '2401.00001' has no scheme"),
    ({"id": "pmid:1", "title": "t", "abstarct": "x"}, "line 2: unknown field(s) 'abstarct'"),
    ({"id": "pmid:1", "title": "t", "published": "2024-02-30"}, "'published' must be an ISO date"),
    ({"id": "pmid:1", "title": "t", "authors": "A; B"}, "'authors' must be a list of strings"),
    ({"id": "pmid:1", "title": 5}, "'title' must be a string or null"),
])
def test_normalized_errors_name_file_and_line(tmp_path, row, message):
    path = write_jsonl(tmp_path / "papers.jsonl", [{"id": "pmid:0", "title": "fine"}, row])
    with pytest.raises(InputError) as err:
        read_papers(path)
    assert str(err.value).startswith(f"{path}: line 2")
    assert message in str(err.value)


def test_bad_json_line_and_bad_utf8_name_the_line(tmp_path):
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b'{"id": "pmid:1", "title": "t"}\n{"id": \n')
    with pytest.raises(InputError, match=r"papers.jsonl: line 2: not valid JSON"):
        read_papers(path)
    path.write_bytes(b'{"id": "pmid:1", "title": "t"}\n{"id": "pmid:2", "title": "\xff"}\n')
    with pytest.raises(InputError, match=r"papers.jsonl: line 2: not UTF-8"):
        read_papers(path)


def test_csv_errors(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text("id,title,abstarct\npmid:1,t,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown column"):
        read_papers(path)
    path.write_text("id,abstract\npmid:1,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="no title column"):
        read_papers(path)
    path.write_text("id,title\npmid:1,t\npmid:2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"papers.csv: line 3: 1 cells for 2 columns"):
        read_papers(path)


def test_parquet_error_names_the_record(tmp_path):
    path = tmp_path / "papers.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "pmid:1", "title": "t"}, {"id": "pmid:2", "title": None}]), path)
    with pytest.raises(InputError, match=r"papers.parquet: record 2 \(id pmid:2\): record without a title"):
        read_papers(path)


def test_unknown_content_is_refused(tmp_path):
    path = tmp_path / "papers.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a papers file"):
        detect_format(path)
    with pytest.raises(InputError, match="file not found"):
        read_papers(tmp_path / "missing.jsonl")
