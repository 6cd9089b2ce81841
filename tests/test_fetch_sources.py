"""Each source's paging and records, against a local server answering in the API's own wire format.

The server (tests/support/fake_sources.py) serves tests/fixtures/fetch/, made-up papers of 2026-W20 in
each API's documented format, filtered to the dates asked and cut into the pages asked.
"""

from __future__ import annotations

import datetime as dt

import pytest
from support.fake_sources import ALL, fake_server, run_fetch, write_workspace  # noqa: F401 (fixture)

from reporter.errors import InputError
from reporter.fetch import pubmed
from reporter.fetch.http import http_transport
from reporter.fetch.pages import Window


def _by_id(result):
    return {r.id: r for r in result.records}


# Per source: the ids of 2026-W20, the requests a week takes at 2 records a page (bioRxiv: the server's 2
# rows a call), and the rows folded into a newer version.
WEEK = {
    "arxiv": (["arxiv:2605.01234", "arxiv:2605.02345", "arxiv:2605.03456", "arxiv:2605.04567"], 2, 0),
    "biorxiv": (["doi:10.1101/2026.05.11.600001", "doi:10.1101/2026.05.12.600002"], 2, 1),
    "medrxiv": (["doi:10.1101/2026.05.12.26300001", "doi:10.1101/2026.05.13.26300002"], 2, 1),
    "pubmed": (["pmid:41000001", "pmid:41000002", "pmid:41000003"], 3, 0),  # esearch + 2 efetch
    "openalex": (["openalex:W5000000001", "openalex:W5000000002", "openalex:W5000000003"], 3, 0),  # + the end page
}


@pytest.mark.parametrize("source", ALL)
def test_a_week_from_each_source_follows_its_pages_to_the_end(tmp_path, fake, source):
    ids, requests, folded = WEEK[source]
    result = run_fetch(write_workspace(tmp_path, fake), (source,))
    report, = result.reports
    assert [r.id for r in result.records] == ids  # each paper once, the week before filtered out by the API
    assert (report.sent, report.cached, report.retried, report.versions_folded) == (requests, 0, 0, folded)
    assert len(fake.requests(source)) == requests and report.skipped == ()
    assert {r.source for r in result.records} == {source}


def test_arxiv_pages_by_start_to_total_results(tmp_path, fake):
    run_fetch(write_workspace(tmp_path, fake), ("arxiv",))
    asked = fake.requests("arxiv")
    assert [(q["start"], q["max_results"]) for q in asked] == [("0", "2"), ("2", "2")]
    assert {q["search_query"] for q in asked} == {"submittedDate:[202605110000 TO 202605172359]"}
    assert {(q["sortBy"], q["sortOrder"]) for q in asked} == {("submittedDate", "ascending")}


@pytest.mark.parametrize("base", ["", "/", "/api"])
def test_an_arxiv_base_url_without_the_query_path_gets_it(tmp_path, fake, base):
    root = write_workspace(tmp_path, fake, ("arxiv",), extra={"arxiv": ""})
    toml = (root / "reporter.toml").read_text().replace(f"{fake.root}/arxiv/api/query", fake.root + base)
    (root / "reporter.toml").write_text(toml)
    assert len(run_fetch(root, ("arxiv",)).records) == 4
    assert [path.split("?")[0] for _, path, _ in fake.log] == ["/api/query", "/api/query"]


def test_arxiv_ids_lose_their_version_and_keep_it_as_a_field(tmp_path, fake):
    records = _by_id(run_fetch(write_workspace(tmp_path, fake), ("arxiv",)))
    assert [(r.id, r.version) for r in records.values()] == [
        ("arxiv:2605.01234", "v2"), ("arxiv:2605.02345", "v1"), ("arxiv:2605.03456", "v3"), ("arxiv:2605.04567", "v1")]
    tokenizers = records["arxiv:2605.03456"]
    assert tokenizers.related_ids == ("doi:10.1000/jml.2026.77",)  # the journal DOI, for the digest's merge
    assert tokenizers.published == "2026-05-13" and records["arxiv:2605.01234"].title == (
        "Protein language models as zero-shot fitness predictors")  # the hard wrap collapsed


def test_biorxiv_versions_fold_into_the_newest_text_with_the_journal_doi(tmp_path, fake):
    result = run_fetch(write_workspace(tmp_path, fake), ("biorxiv",))
    preprint = _by_id(result)["doi:10.1101/2026.05.11.600001"]
    assert preprint.version == "2" and preprint.abstract.endswith("and we evaluate them on a benchmark.")
    assert preprint.published == "2026-05-11"  # the first version's date: when the paper appeared
    assert preprint.related_ids == ("doi:10.1038/s41586-026-00001-x",)
    assert preprint.doi == "10.1101/2026.05.11.600001" and preprint.venue == "bioRxiv"
    assert [(q["cursor"]) for q in fake.requests("biorxiv")] == ["0", "2"]  # stepped by the rows served


def test_medrxiv_rows_fold_too_and_name_their_server(tmp_path, fake):
    result = run_fetch(write_workspace(tmp_path, fake), ("medrxiv",))
    enrollment = _by_id(result)["doi:10.1101/2026.05.12.26300001"]
    assert (enrollment.version, enrollment.source, enrollment.venue) == ("2", "medrxiv", "medRxiv")
    assert enrollment.title == "Enrollment in cancer screening trials during 2025 (revised)"
    assert [q["server"] for q in fake.requests("medrxiv")] == ["medrxiv", "medrxiv"]


def test_pubmed_records_carry_the_pmid_and_the_doi_of_the_article_id_list(tmp_path, fake):
    records = _by_id(run_fetch(write_workspace(tmp_path, fake), ("pubmed",)))
    nature = records["pmid:41000001"]
    assert nature.doi == "10.1038/s41586-026-00001-x" and nature.venue == "Nature"
    assert nature.abstract == ("BACKGROUND: Protein language models predict contacts.\n"
                               "RESULTS: We show these models store coevolution statistics.")
    assert records["pmid:41000003"].doi == "10.3389/fpubh.2026.1000003"  # only in ArticleIdList


def test_pubmed_pages_through_the_history_server(tmp_path, fake):
    run_fetch(write_workspace(tmp_path, fake, ("pubmed",), extra={"pubmed": 'email = "digest@example.org"'}),
              ("pubmed",))
    search, *fetches = fake.requests("pubmed")
    assert {k: search[k] for k in ("db", "term", "datetype", "mindate", "maxdate", "usehistory", "retmax",
                                   "retmode", "tool", "email")} == {
        "db": "pubmed", "term": "all[sb]", "datetype": "edat", "mindate": "2026/05/11", "maxdate": "2026/05/17",
        "usehistory": "y", "retmax": "0", "retmode": "json", "tool": "reporter", "email": "digest@example.org"}
    webenv = next(iter(fake.webenvs))
    assert [(q["WebEnv"], q["query_key"], q["retstart"], q["retmax"], q["retmode"]) for q in fetches] == [
        (webenv, "1", "0", "2", "xml"), (webenv, "1", "2", "2", "xml")]
    assert {q["email"] for q in fetches} == {"digest@example.org"} and "api_key" not in search


def test_an_expired_history_is_searched_again_once(tmp_path, fake):
    searches = []

    def expire_after_the_search(url, headers, timeout, max_bytes):
        answer = http_transport(url, headers, timeout, max_bytes)
        if "esearch.fcgi" in url:
            searches.append(url)
            if len(searches) == 1:
                fake.expire_history()  # as NCBI does after a while: the first WebEnv is gone before efetch
        return answer

    result = run_fetch(write_workspace(tmp_path, fake, ("pubmed",)), ("pubmed",), transport=expire_after_the_search)
    asked = [(q.get("WebEnv") or "search", q.get("retstart")) for q in fake.requests("pubmed")]
    first, second = "MCID_" + "1".zfill(24), "MCID_" + "2".zfill(24)
    assert asked == [("search", None), (first, "0"), ("search", None), (second, "0"), (second, "2")]
    assert [r.id for r in result.records] == WEEK["pubmed"][0]


def test_pubmed_splits_a_window_the_history_server_would_cut(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(pubmed, "HISTORY_LIMIT", 2)  # the E-utilities serve 10,000 records of one search
    result = run_fetch(write_workspace(tmp_path, fake, ("pubmed",)), ("pubmed",))
    searches = [(q["mindate"], q["maxdate"]) for q in fake.requests("pubmed") if "term" in q]
    assert searches == [("2026/05/11", "2026/05/17"), ("2026/05/11", "2026/05/13"), ("2026/05/14", "2026/05/17")]
    assert sorted(r.id for r in result.records) == WEEK["pubmed"][0]


def test_a_day_above_the_history_limit_asks_for_a_narrower_query(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(pubmed, "HISTORY_LIMIT", 0)
    with pytest.raises(InputError, match=r"pubmed: 1 records entered PubMed on 2026-05-12 for this query, and the "
                                        r"E-utilities serve at most 0 of one search; narrow \[fetch.pubmed\] query"):
        run_fetch(write_workspace(tmp_path, fake, ("pubmed",)), ("pubmed",),
                  Window(dt.date(2026, 5, 12), dt.date(2026, 5, 12)))


def test_openalex_follows_next_cursor_until_it_is_null(tmp_path, fake):
    run_fetch(write_workspace(tmp_path, fake, ("openalex",), extra={"openalex": 'mailto = "digest@example.org"'}),
              ("openalex",))
    asked = fake.requests("openalex")
    assert [q["cursor"] for q in asked] == ["*", "Mg==", "NA=="]  # the last answer: no results, next_cursor null
    assert {(q["filter"], q["per_page"], q["mailto"]) for q in asked} == {
        ("from_publication_date:2026-05-11,to_publication_date:2026-05-17", "2", "digest@example.org")}


def test_a_week_without_papers_is_empty_everywhere(tmp_path, fake):
    result = run_fetch(write_workspace(tmp_path, fake), ALL, Window(dt.date(2026, 7, 20), dt.date(2026, 7, 26)))
    assert result.records == ()
    assert [(r.source, r.sent, r.pages, r.records) for r in result.reports] == [
        ("arxiv", 1, 1, 0), ("biorxiv", 1, 1, 0), ("medrxiv", 1, 1, 0), ("pubmed", 1, 1, 0), ("openalex", 1, 1, 0)]


@pytest.mark.parametrize("source, why", [
    ("arxiv", "arxiv page 1: record 1 (id arxiv:2605.01234): record without a title"),
    ("biorxiv", "biorxiv page 1: record 1: record without a 'doi'; every record needs an id and a title"),
    ("pubmed", "pubmed efetch page 1: record 1 (id pmid:41000001): record without a title"),
    ("openalex", "openalex page 1: record 1 (id openalex:W5000000001): record without a title"),
])
def test_a_record_the_reader_refuses_is_skipped_and_named_and_its_page_kept(tmp_path, fake, source, why):
    fake.faults[source] = ["ok"] * (source == "pubmed") + ["bad-record"]  # PubMed: the esearch comes first
    ids, requests, _ = WEEK[source]
    result = run_fetch(write_workspace(tmp_path, fake), (source,))
    report, = result.reports
    assert report.skipped == (why,) and report.retried == 0 and report.sent == requests
    assert len(result.records) == len(ids) - (source != "biorxiv")  # bioRxiv's v2 row of that paper remains


def test_each_query_goes_into_its_api_syntax(tmp_path, fake):
    extra = {"arxiv": 'query = "cat:cs.CL OR cat:cs.IR"', "biorxiv": 'query = "bioinformatics"',
             "pubmed": 'query = "protein[tiab]"', "openalex": 'query = "type:article"'}
    result = run_fetch(write_workspace(tmp_path, fake, extra=extra), ("arxiv", "biorxiv", "pubmed", "openalex"))
    assert fake.requests("arxiv")[0]["search_query"] == (
        "(cat:cs.CL OR cat:cs.IR) AND submittedDate:[202605110000 TO 202605172359]")
    assert fake.requests("biorxiv")[0]["category"] == "bioinformatics"
    assert fake.requests("pubmed")[0]["term"] == "protein[tiab]"
    assert fake.requests("openalex")[0]["filter"] == (
        "from_publication_date:2026-05-11,to_publication_date:2026-05-17,type:article")
    assert [r.id for r in result.records if r.source == "biorxiv"] == ["doi:10.1101/2026.05.11.600001"]


@pytest.mark.parametrize("source", ["openalex", "biorxiv"])
def test_a_lone_surrogate_in_a_fetched_json_page_is_read_as_the_replacement_character(tmp_path, fake, source):
    """`"A \\ud800 b"` is legal JSON and no character: it became a record UTF-8 cannot write (issue 21)."""
    from reporter.fetch.run import records_jsonl
    rows = fake.works if source == "openalex" else fake.rows["biorxiv"]
    rows[:] = [{**row, "title": f"A \ud800 b {n}"} for n, row in enumerate(rows)]
    result = run_fetch(write_workspace(tmp_path, fake), (source,))
    assert result.reports[0].skipped == () and result.records
    assert all(r.title.startswith("A \ufffd b ") for r in result.records)
    assert "A \ufffd b".encode() in records_jsonl(result.records)
