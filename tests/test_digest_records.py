"""Reading papers into digest records: normalized records and the sources' own formats (docs/digest.md)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter.digest.read import detect_format, read_papers
from reporter.pool.record import Record
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
     "related_ids": ["DOI:10.1101/2024.01.01.000001", "arxiv:2401.01234"], "version": None,
     "categories": ["q-bio.BM", "cs.LG", "q-bio.BM"]},
    {"id": "pmid:39000000", "title": "A journal article", "abstract": "", "source": "pubmed"},
]


def check_normalized(records: list[Record]) -> None:
    a, b = records
    assert a.id == "arxiv:2401.01234" and a.version == "v2"
    assert a.doi == "10.48550/arxiv.2401.01234"
    assert a.related_ids == ("doi:10.1101/2024.01.01.000001",)  # its own id is not related to itself
    assert a.authors == ("Ada Lovelace", "Charles Babbage") and a.published == "2024-01-02"
    assert a.categories == ("q-bio.BM", "cs.LG")  # in order, each once
    assert b.id == "pmid:39000000" and b.abstract is None and b.authors == () and b.source == "pubmed"
    assert b.categories == ()


def test_normalized_jsonl_and_gz(tmp_path):
    check_normalized(read_papers(write_jsonl(tmp_path / "papers.jsonl", NORMALIZED)))
    gz = tmp_path / "papers.jsonl.gz"
    gz.write_bytes(gzip.compress((tmp_path / "papers.jsonl").read_bytes()))
    check_normalized(read_papers(gz))
    assert read_papers(gz)[0].where == f"{gz}: line 1"


def test_a_record_written_by_to_json_reads_back_the_same(tmp_path):
    record = Record(id="arxiv:2401.01234", title="T", abstract="A.", source="arxiv", published="2024-01-02",
                    type="preprint", authors=("Ada Lovelace",), venue="arXiv", version="v2",
                    categories=("cs.CL", "cs.AI"))
    [back] = read_papers(write_jsonl(tmp_path / "papers.jsonl", [record.to_json()]))
    assert replace(back, where="") == record


def test_normalized_parquet(tmp_path):
    path = tmp_path / "papers.parquet"
    pq.write_table(pa.Table.from_pylist(NORMALIZED), path)
    check_normalized(read_papers(path))


def test_normalized_csv_lists_are_semicolon_separated(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(
        "id,title,abstract,source,doi,published,type,authors,venue,related_ids,version,categories\n"
        "arxiv:2401.01234v2,Protein language models,We evaluate.,arxiv,https://doi.org/10.48550/ARXIV.2401.01234,"
        '2024-01-02,preprint,"Ada Lovelace; Charles Babbage",arXiv,DOI:10.1101/2024.01.01.000001;arxiv:2401.01234,,'
        "q-bio.BM; cs.LG;q-bio.BM\n"
        "\n"
        "pmid:39000000,A journal article,,pubmed,,,,,,,,\n", encoding="utf-8")
    records = read_papers(path)
    check_normalized(records)
    assert records[1].where == f"{path}: line 4"


@pytest.mark.parametrize("row, message", [
    ({"title": "no id"}, "line 2: record without an id"),
    ({"id": "arxiv:2401.00001"}, "line 2 (id arxiv:2401.00001): record without a title"),
    ({"id": "arxiv:2401.00001", "title": "  "}, "record without a title"),
    ({"id": "2401.00001", "title": "t"}, "line 2: id '2401.00001' has no scheme"),
    ({"id": "pmid:1", "title": "t", "abstarct": "x"}, "line 2: unknown field(s) 'abstarct'"),
    ({"id": "pmid:1", "title": "t", "published": "2024-02-30"}, "'published' must be a date (YYYY-MM-DD)"),
    ({"id": "pmid:1", "title": "t", "authors": "A; B"}, "'authors' must be a list of strings"),
    ({"id": "pmid:1", "title": "t", "categories": "cs.CL"}, "'categories' must be a list of strings"),
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


def test_an_empty_file_has_no_records(tmp_path):
    path = tmp_path / "papers.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    assert read_papers(path) == []


def test_unknown_content_is_refused(tmp_path):
    path = tmp_path / "papers.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a papers file"):
        detect_format(path)
    with pytest.raises(InputError, match="file not found"):
        read_papers(tmp_path / "missing.jsonl")


# --- the sources' own formats, each on its fixture ------------------------------------------------

def fixture(name: str) -> Path:
    return FIXTURES / name


@pytest.mark.parametrize("name, kind", [
    ("openalex_works.json", "openalex"), ("pubmed_efetch.xml", "pubmed"), ("biorxiv_details.json", "biorxiv"),
    ("arxiv_atom.xml", "arxiv-atom"), ("arxiv_listing.jsonl", "arxiv-listing"),
])
def test_format_is_detected_by_content_whatever_the_name(tmp_path, name, kind):
    assert detect_format(fixture(name)) == kind
    renamed = tmp_path / "papers.dat.gz"  # neither the name nor gzip hides the format
    renamed.write_bytes(gzip.compress(fixture(name).read_bytes()))
    assert detect_format(renamed) == kind
    assert read_papers(renamed) == [
        Record(**{**r.__dict__, "where": r.where.replace(str(fixture(name)), str(renamed))})
        for r in read_papers(fixture(name))]


def test_openalex_page(tmp_path):
    first, second = read_papers(fixture("openalex_works.json"))
    assert first.id == "openalex:W4390000001" and first.source == "openalex"
    assert first.title == "Protein language models learn evolutionary statistics of interacting sequence motifs"
    assert first.abstract == ("Protein language models (PLMs) predict structure. We show these models store "
                              "coevolution statistics.")  # word positions, "models" used twice
    assert first.doi == "10.1038/s41586-024-07001-x"  # resolver prefix stripped, lower-cased
    assert first.related_ids == ("pmid:38800001",)
    assert first.authors == ("Zhidian Zhang", "Sergey Ovchinnikov")
    assert (first.published, first.type, first.venue) == ("2024-06-12", "article", "Nature")
    assert second.abstract is None  # abstract_inverted_index null
    assert second.related_ids == ("arxiv:2401.01234",)  # arXiv's own DOI names the arXiv paper
    assert second.where == f"{fixture('openalex_works.json')}: record 2"


def test_openalex_as_a_list_and_as_jsonl(tmp_path):
    works = json.loads(fixture("openalex_works.json").read_text(encoding="utf-8"))["results"]
    as_list = tmp_path / "works.json"
    as_list.write_text(json.dumps(works, indent=2), encoding="utf-8")
    as_jsonl = write_jsonl(tmp_path / "works.jsonl", works)
    expected = [(r.id, r.abstract, r.related_ids) for r in read_papers(fixture("openalex_works.json"))]
    assert [(r.id, r.abstract, r.related_ids) for r in read_papers(as_list)] == expected
    records = read_papers(as_jsonl)
    assert [(r.id, r.abstract, r.related_ids) for r in records] == expected
    assert records[1].where == f"{as_jsonl}: line 2"


def test_pubmed_efetch():
    first, second = read_papers(fixture("pubmed_efetch.xml"))  # its DOCTYPE names an external DTD: allowed
    assert first.id == "pmid:38800001" and first.source == "pubmed"
    assert first.title == "Protein language models learn evolutionary statistics of interacting sequence motifs."
    assert first.abstract == ("BACKGROUND: Protein language models (PLMs) predict structure.\n"
                              "RESULTS: We show these models store coevolution statistics.")
    assert first.authors == ("Zhang, Zhidian", "Ovchinnikov, Sergey", "Protein Design Consortium")
    assert first.doi == "10.1038/s41586-024-07001-x"  # PubmedData's ArticleIdList, not a reference's
    assert first.venue == "Nature" and first.published == "2024-06-12"  # the electronic date is complete
    assert second.abstract is None and second.authors == ("Lovelace, A",)
    assert second.doi == "10.5555/jsm.2023.0042"  # from ELocationID when ArticleIdList has none
    assert second.published == "2023-11-01"  # MedlineDate "2023 Nov-Dec": the first day of the period
    assert second.type == "Journal Article; Review"


def test_biorxiv_versions_fold_into_the_newest():
    preprint, medrxiv = read_papers(fixture("biorxiv_details.json"))
    assert preprint.id == "doi:10.1101/2024.01.15.575001" and preprint.version == "2"
    assert preprint.abstract.endswith("We show these models store coevolution statistics.")  # version 2's text
    assert preprint.published == "2024-01-16"  # posted first as version 1
    assert preprint.related_ids == ("doi:10.1038/s41586-024-07001-x",)  # `published`: the journal DOI
    assert preprint.authors == ("Zhang, Z.", "Ovchinnikov, S.") and preprint.source == "biorxiv"
    assert medrxiv.source == "medrxiv" and medrxiv.venue == "medRxiv" and medrxiv.related_ids == ()  # "NA"
    assert preprint.categories == ("bioinformatics",) and medrxiv.categories == ("epidemiology",)


def test_biorxiv_pages_as_a_list_and_as_jsonl(tmp_path):
    page = json.loads(fixture("biorxiv_details.json").read_text(encoding="utf-8"))
    first, second = dict(page, collection=page["collection"][:2]), dict(page, collection=page["collection"][2:])
    as_list = tmp_path / "pages.json"
    as_list.write_text(json.dumps([first, second]), encoding="utf-8")
    as_jsonl = write_jsonl(tmp_path / "pages.jsonl", [first, second])
    expected = [(r.id, r.version, r.abstract) for r in read_papers(fixture("biorxiv_details.json"))]
    for path in (as_list, as_jsonl):
        assert detect_format(path) == "biorxiv"
        assert [(r.id, r.version, r.abstract) for r in read_papers(path)] == expected
    assert read_papers(as_jsonl)[0].where == f"{as_jsonl}: record 3"  # records count across the pages


def test_arxiv_atom_versions_and_old_style_ids():
    new, old = read_papers(fixture("arxiv_atom.xml"))
    assert (new.id, new.version) == ("arxiv:2401.01234", "v2")
    assert new.title == "Scaling laws for protein language models"  # arXiv's hard wrap collapsed
    assert new.abstract == "We fit scaling laws for protein language models and report benchmark accuracy."
    assert new.authors == ("Ada Lovelace", "Charles Babbage") and new.published == "2024-01-02"
    assert new.related_ids == ("doi:10.1000/journal.2024.1",)  # arxiv:doi and the doi link, once
    assert (old.id, old.version) == ("arxiv:hep-th/9901001", "v1")
    assert new.categories == ("q-bio.BM", "cs.LG") and old.categories == ("hep-th",)  # the primary first, once


def test_arxiv_listing_repeats_are_one_record():
    scaling, compilers = read_papers(fixture("arxiv_listing.jsonl"))
    assert scaling.id == "arxiv:2401.01234" and scaling.abstract == "We fit scaling laws and report benchmark accuracy."
    assert scaling.published == "2024-01-03"  # first listed
    assert scaling.where == f"{fixture('arxiv_listing.jsonl')}: line 3"  # the text kept is the last listing's
    assert compilers.id == "arxiv:2401.05678"
    assert scaling.categories == ("q-bio.BM", "cs.LG") and compilers.categories == ("cs.CL",)


@pytest.mark.parametrize("raw, expected", [
    ("arxiv:2401.01234v1", ("arxiv:2401.01234", "v1")),
    ("arxiv:2401.01234v12", ("arxiv:2401.01234", "v12")),
    ("https://arxiv.org/abs/2401.01234v3", ("arxiv:2401.01234", "v3")),
    ("arxiv:hep-th/9901001v2", ("arxiv:hep-th/9901001", "v2")),
    ("arxiv:math.AG/0309136", ("arxiv:math.AG/0309136", None)),
])
def test_arxiv_ids_lose_their_version(tmp_path, raw, expected):
    path = write_jsonl(tmp_path / "papers.jsonl", [{"id": raw, "title": "t"}])
    (record,) = read_papers(path)
    assert (record.id, record.version) == expected


# --- each format's bad records stop the run with the file and the position ------------------------

def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = fixture(name).read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize("name, old, new, message", [
    ("openalex_works.json", '"id": "https://openalex.org/W4390000002",', "",
     "openalex_works.json: record 2: record without an 'id'"),
    ("openalex_works.json", '"title": "Scaling laws for protein language models",', '"title": null,',
     "openalex_works.json: record 2 (id openalex:W4390000002): record without a title"),
    ("openalex_works.json", '"store": [10]', '"store": ["ten"]',
     "record 1 (id openalex:W4390000001): 'abstract_inverted_index' entry 'store'"),
    ("openalex_works.json", '"id": "https://openalex.org/W4390000002",', '"id": "https://openalex.org/A1",',
     "record 2: 'id' must be an OpenAlex work id"),
    ("biorxiv_details.json", '"doi":"10.1101\\/2024.01.17.24301234",', "",
     "biorxiv_details.json: record 2: record without a 'doi'"),
    ("biorxiv_details.json", '"date":"2024-01-17"', '"date":"17 Jan 2024"',
     "record 2 (id doi:10.1101/2024.01.17.24301234): 'date' must be a date"),
    ("pubmed_efetch.xml", "<PMID Version=\"1\">38800002</PMID>", "",
     "pubmed_efetch.xml: record 2: record without a PMID"),
    ("pubmed_efetch.xml", "<ArticleTitle>Enrollment in screening trials: a registry review.</ArticleTitle>", "",
     "pubmed_efetch.xml: record 2 (id pmid:38800002): record without a title"),
    ("pubmed_efetch.xml", "<PubmedArticle>", "<PubmedBookArticle></PubmedBookArticle><PubmedArticle>",
     "pubmed_efetch.xml: record 1: <PubmedBookArticle> is not read"),
    ("pubmed_efetch.xml", "</ArticleTitle>", "</ArticleTitl>", "pubmed_efetch.xml: line 19: not well-formed XML"),
    ("arxiv_atom.xml", "<id>http://arxiv.org/abs/hep-th/9901001v1</id>", "",
     "arxiv_atom.xml: record 2: record without an <id>"),
    ("arxiv_atom.xml", "<title>An old-style identifier</title>", "<title> </title>",
     "arxiv_atom.xml: record 2 (id arxiv:hep-th/9901001): record without a title"),
    ("arxiv_atom.xml", "<id>http://arxiv.org/abs/hep-th/9901001v1</id>", "<id>http://example.org/x</id>",
     "arxiv_atom.xml: record 2: <id> must be an arXiv abs URL"),
    ("arxiv_listing.jsonl", '"id": "2401.05678", ', "", "arxiv_listing.jsonl: line 2: record without an 'id'"),
    ("arxiv_listing.jsonl", '"title": "Compilers for language models"', '"title": ""',
     "arxiv_listing.jsonl: line 2 (id arxiv:2401.05678): record without a title"),
    ("arxiv_listing.jsonl", '"authors": ["Grace Hopper"]', '"authors": "Grace Hopper"',
     "arxiv_listing.jsonl: line 2 (id arxiv:2401.05678): 'authors' must be a list"),
])
def test_source_errors_name_file_and_position(tmp_path, name, old, new, message):
    path = edited(tmp_path, name, old, new)
    with pytest.raises(InputError) as err:
        read_papers(path)
    assert str(err.value).startswith(str(tmp_path))
    assert message in str(err.value)


def test_arxiv_api_error_entry_is_refused(tmp_path):
    path = tmp_path / "feed.xml"
    path.write_text('<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
                    "<id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id><title>Error</title>"
                    "<summary>incorrect id format for 1234</summary></entry></feed>", encoding="utf-8")
    with pytest.raises(InputError, match=r"feed.xml: record 1: the arXiv API answered with an error: incorrect id"):
        read_papers(path)


def test_xml_with_entity_declarations_is_refused(tmp_path):
    bomb = tmp_path / "bomb.xml"
    bomb.write_text('<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [\n<!ENTITY a "aaaaaaaaaa">\n'
                    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<PubmedArticleSet>&b;</PubmedArticleSet>\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"bomb.xml: XML with a DTD internal subset .* is refused"):
        read_papers(bomb)
    external = tmp_path / "external.xml"
    external.write_text('<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet SYSTEM "file:///etc/passwd">\n'
                        "<PubmedArticleSet>&xxe;</PubmedArticleSet>\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"external.xml: line 3: not well-formed XML"):
        read_papers(external)  # the DTD is never read, so the entity is undefined


def test_unknown_xml_and_json_content(tmp_path):
    other = tmp_path / "other.xml"
    other.write_text("<rss><channel/></rss>", encoding="utf-8")
    with pytest.raises(InputError, match="XML whose root is <rss> is not read"):
        read_papers(other)


# --- real data ------------------------------------------------------------------------------------

ARXIV_DAILY = (Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv_daily"
               / "arxiv_daily_2026-05-06_to_2026-07-01.jsonl.gz")


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(not ARXIV_DAILY.exists(), reason="../shared/data/arxiv_daily is absent")
def test_real_arxiv_listing_folds_repeated_listings():
    with gzip.open(ARXIV_DAILY, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    assert len(rows) == 23_631  # the data README's counts
    assert len({row["id"] for row in rows}) == 13_429
    records = read_papers(ARXIV_DAILY)
    assert len(records) == 13_429 and len({r.id for r in records}) == 13_429
    assert all(r.id.startswith("arxiv:") and r.title and r.source == "arxiv" for r in records)
    last_listing = {}
    for row in rows:
        last_listing[row["id"]] = row
    first_seen = {}
    for row in rows:
        first_seen.setdefault(row["id"], row["crawl_date"])
    for record in records[:500]:
        bare = record.id.removeprefix("arxiv:")
        assert record.published == first_seen[bare]
        assert record.abstract == " ".join(last_listing[bare]["summary"].split())
