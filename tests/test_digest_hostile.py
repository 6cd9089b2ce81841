"""Hostile values in the digest's inputs (issue 21): each one works or is exit 2 naming the file; never exit 1.

Lone surrogates in the record readers, the fetched pages and a decisions.json read back; numbers past
Python's 4,300-digit `int()` limit, `1e308`, nesting 100,000 deep, an 8,000-character phrase; week names
that are not ISO weeks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reporter.cli import main
from reporter.digest.read import read_papers

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
EXAMPLES = Path(__file__).resolve().parent / "fixtures" / "digest" / "made-up"
LONE = "A \ud800 b protein language model \udfff"
SHOWN = "A \ufffd b protein language model \ufffd"


def digest(papers: Path, archive: Path, *extra: str, watchlist: Path = FIXTURES / "watchlist.txt",
           criteria: Path = FIXTURES / "criteria.md") -> list[str]:
    return ["digest", "--papers", str(papers), "--watchlist", str(watchlist), "--criteria", str(criteria),
            "--archive", str(archive), *extra]


# --- lone surrogates ----------------------------------------------------------------------------------


def _dumps(value) -> str:
    return json.dumps(value)  # ensure_ascii: a lone surrogate is written as the escape \ud800


@pytest.mark.parametrize("name, content", [
    ("normalized", _dumps({"id": "doi:10.5555/1", "title": LONE, "abstract": LONE, "authors": [LONE]}) + "\n"),
    ("openalex", _dumps({"results": [{"id": "https://openalex.org/W1", "title": LONE,
                                      "abstract_inverted_index": {"\ud800": [0], "protein": [1]},
                                      "authorships": [{"author": {"display_name": LONE}}]}]})),
    ("biorxiv", _dumps({"messages": [{"status": "ok"}], "collection": [
        {"doi": "10.1101/2026.05.11.600001", "title": LONE, "abstract": LONE, "authors": "A; B", "date": "2026-05-11",
         "version": "1", "type": "new results", "published": "NA", "server": "bioRxiv"}]})),
    ("listing", _dumps({"crawl_date": "2026-05-11", "id": "2605.01234", "authors": [LONE], "title": LONE,
                        "summary": LONE}) + "\n"),
])
def test_a_lone_surrogate_is_read_as_the_replacement_character_and_the_week_publishes(tmp_path, capsys, name,
                                                                                       content):
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(content, encoding="ascii")
    [record] = read_papers(papers)
    assert record.title == SHOWN
    assert "\ud800" not in json.dumps(record.to_json(), ensure_ascii=False).encode("utf-8", "surrogatepass").decode(
        "utf-8", "surrogateescape")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20")) == 0, capsys.readouterr().err
    data = (tmp_path / "archive" / "2026-W20" / "decisions.json").read_bytes()
    assert SHOWN in data.decode("utf-8")


def test_a_decisions_json_with_a_lone_surrogate_is_rendered(tmp_path, capsys):
    archive = tmp_path / "archive"
    assert main(digest(EXAMPLES / "papers", archive, "--from", "2026-W19", "--to", "2026-W20",
                       watchlist=EXAMPLES / "watchlist.txt", criteria=EXAMPLES / "criteria.md")) == 0
    path = archive / "2026-W20" / "decisions.json"
    doc = json.loads(path.read_bytes())
    doc["decisions"][0]["title"] = LONE
    doc["decisions"][0]["rationale"] = LONE
    path.write_text(json.dumps(doc, indent=2), encoding="ascii")
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / "index.json").write_text("[]\n")
    capsys.readouterr()
    assert main(["render", "--releases", str(tmp_path / "releases"), "--digests", str(archive),
                 "--out", str(tmp_path / "site")]) == 0, capsys.readouterr().err
    page = (tmp_path / "site" / "digest" / "2026-W20.html").read_text(encoding="utf-8")
    assert "A \ufffd b protein language model" in page


# --- numbers: Python's 4,300-digit int() limit, 1e308, nesting, long phrases ----------------------------


def test_a_version_of_5000_digits_is_compared_as_a_number(tmp_path, capsys):
    papers = tmp_path / "2026-W20.jsonl"
    rows = [{"id": "doi:10.5555/1", "title": "A protein language model, old", "version": "9" * 30},
            {"id": "doi:10.5555/1", "title": "A protein language model, new", "version": "1" + "0" * 5000},
            {"id": "doi:10.5555/1", "title": "A protein language model, older", "version": "v0" + "0" * 5000 + "7"}]
    papers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20")) == 0, capsys.readouterr().err
    doc = json.loads((tmp_path / "archive" / "2026-W20" / "decisions.json").read_bytes())
    assert [d["title"] for d in doc["decisions"]] == ["A protein language model, new"]


PUBMED = """<?xml version="1.0"?>
<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>41000001</PMID><Article>
<Journal><JournalIssue><PubDate><Year>{year}</Year><Month>May</Month></PubDate></JournalIssue></Journal>
<ArticleTitle>A protein language model</ArticleTitle>{article_date}</Article></MedlineCitation></PubmedArticle>
</PubmedArticleSet>
"""


@pytest.mark.parametrize("year", ["2" * 5000, "\u00b2\u2070\u00b2\u2076", "\u0662\u0660\u0662\u0666", "20260"])
def test_a_pubmed_year_that_is_not_four_ascii_digits_is_exit_2_naming_the_record(tmp_path, capsys, year):
    papers = tmp_path / "2026-W20.xml"
    papers.write_text(PUBMED.format(year=year, article_date=""), encoding="utf-8")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20")) == 2
    err = capsys.readouterr().err
    assert f"{papers}: record 1 (id pmid:41000001): PubDate Year must be a year of 4 ASCII digits" in err
    assert len(err) < 500
    # In the electronic ArticleDate the same year is not a complete date: the PubDate is read instead.
    dated = f"<ArticleDate><Year>{year}</Year><Month>05</Month><Day>12</Day></ArticleDate>"
    papers.write_text(PUBMED.format(year="2026", article_date=dated), encoding="utf-8")
    [record] = read_papers(papers)
    assert record.published == "2026-05-01"


def test_a_pmid_in_other_digits_is_refused(tmp_path):
    papers = tmp_path / "2026-W20.xml"
    papers.write_text(PUBMED.format(year="2026", article_date="").replace("41000001", "\u00b2\u2070"),
                      encoding="utf-8")
    with pytest.raises(Exception, match="PMID must be a number"):
        read_papers(papers)


@pytest.mark.parametrize("weight, message", [
    ("1" * 5000, "not a JSON watchlist this tool reads (Exceeds the limit (4300 digits)"),
    ("1" * 400, "weight of about 399 digits is too large"),
    ("1e400", "weight inf must be a positive number"),
    ('"1e400"', "weight inf must be a positive number"),
])
def test_a_json_watchlist_weight_past_what_a_number_holds_is_exit_2(tmp_path, capsys, weight, message):
    watchlist = tmp_path / "watchlist.json"
    watchlist.write_text(f'[\n  {{"phrase": "protein language model", "weight": {weight}}}\n]\n')
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(json.dumps({"id": "doi:10.5555/1", "title": "A protein language model"}) + "\n")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20", watchlist=watchlist)) == 2
    err = capsys.readouterr().err
    assert str(watchlist) in err and message in err and len(err) < 500
    assert not (tmp_path / "archive").exists()


def test_a_weight_of_1e308_works_and_gives_the_full_match(tmp_path, capsys):
    watchlist = tmp_path / "watchlist.json"
    watchlist.write_text('[{"phrase": "protein language model", "weight": 1e308}, {"phrase": "enzyme", '
                         '"weight": 5e-324}]\n')
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(json.dumps({"id": "doi:10.5555/1", "title": "A protein language model",
                                  "abstract": "We evaluate it on a benchmark."}) + "\n"
                      + json.dumps({"id": "doi:10.5555/2", "title": "An enzyme"}) + "\n")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20", watchlist=watchlist)) == 0, \
        capsys.readouterr().err
    doc = json.loads((tmp_path / "archive" / "2026-W20" / "decisions.json").read_bytes())
    assert {d["id"]: d["axes"]["match"] for d in doc["decisions"]} == {"doi:10.5555/1": 1.0, "doi:10.5555/2": 0.0}


def test_a_json_watchlist_nested_100000_deep_is_exit_2(tmp_path, capsys):
    watchlist = tmp_path / "watchlist.json"
    watchlist.write_text("[" * 100_000 + "]" * 100_000)
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(json.dumps({"id": "doi:10.5555/1", "title": "A protein language model"}) + "\n")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20", watchlist=watchlist)) == 2
    assert f"{watchlist}: JSON nested too deeply to read" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["watchlist", "criteria"])
def test_a_phrase_of_8000_characters_is_exit_2_naming_the_line(tmp_path, capsys, where):
    long = "protein " * 1000
    files = {"watchlist": FIXTURES / "watchlist.txt", "criteria": FIXTURES / "criteria.md"}
    path = tmp_path / files[where].name
    if where == "watchlist":
        path.write_text(f"ESM*\n{long}\t2\n")
        line = 2
    else:
        text = (FIXTURES / "criteria.md").read_text()
        path.write_text(text.replace("`PLM`", f"`{long}`"))
        line = next(n for n, row in enumerate(path.read_text().splitlines(), 1) if long in row)
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(json.dumps({"id": "doi:10.5555/1", "title": "A protein language model"}) + "\n")
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20", **{where: path})) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}: the phrase" in err
    assert "7,999 characters long after normalisation; a phrase holds at most 1,000" in err and len(err) < 600


def test_a_phrase_of_1000_characters_of_four_bytes_each_is_matched():
    from reporter.routing import match_phrases
    phrase = "\U0001f9ec" * 1000
    assert match_phrases([f"a {phrase} b", "no"], [phrase]).matched().tolist() == [True, False]


def test_a_decisions_json_with_an_infinite_score_is_exit_2(tmp_path, capsys):
    archive = tmp_path / "archive"
    assert main(digest(EXAMPLES / "papers", archive, "--week", "2026-W19",
                       watchlist=EXAMPLES / "watchlist.txt", criteria=EXAMPLES / "criteria.md")) == 0
    path = archive / "2026-W19" / "decisions.json"
    path.write_text(path.read_text().replace('"score": 87', '"score": Infinity', 1))
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / "index.json").write_text("[]\n")
    capsys.readouterr()
    assert main(["render", "--releases", str(tmp_path / "releases"), "--digests", str(archive),
                 "--out", str(tmp_path / "site")]) == 2
    assert f"{path}: not a decisions.json this tool wrote (OverflowError" in capsys.readouterr().err


# --- week names: only real ISO weeks, everywhere ------------------------------------------------------

NOT_WEEKS = ["2026-W20\n", "2026-W20\r\n", " 2026-W20", "\u0662\u0660\u0662\u0666-W20", "2026-W\u0662\u0660",
             "\uff12\uff10\uff12\uff16-W20", "2025-W53", "2026-W00", "2026-W54", "9999-W52", "9999-W01", "0001-W01",
             "0000-W01", "2026-w20", "2026-W20x"]


@pytest.mark.parametrize("week", NOT_WEEKS)
def test_only_iso_weeks_are_accepted_by_the_parser(week):
    from reporter.errors import InputError
    from reporter.isoweek import is_week, parse_week
    with pytest.raises(InputError, match="not an ISO week; write YYYY-Www in ASCII digits"):
        parse_week(week)
    assert not is_week(week)


def test_the_first_and_last_years_accepted_can_be_shifted_and_shown():
    from reporter.digest.archive import prior_weeks
    from reporter.isoweek import parse_week, shift_week, week_start
    from reporter.site.feed import updated
    assert parse_week("9998-W53") == "9998-W53" and parse_week("0002-W01") == "0002-W01"
    assert shift_week("9998-W53", 1) == "9999-W01" and prior_weeks("0002-W01")[0] == "0001-W49"
    assert updated("9998-W53").startswith("9999-01-") and week_start("0002-W01").isoformat() == "0001-12-31"


@pytest.mark.parametrize("flag", ["--week", "--from", "--to"])
@pytest.mark.parametrize("week", ["2026-W20\n", "\u0662\u0660\u0662\u0666-W20", "9999-W52"])
def test_the_digest_flags_refuse_a_week_that_is_not_an_iso_week(tmp_path, capsys, flag, week):
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "2026-W20.jsonl").write_text("")
    extra = {"--week": ["--week", week], "--from": ["--from", week, "--to", "2026-W20"],
             "--to": ["--from", "2026-W20", "--to", week]}[flag]
    assert main(digest(papers, tmp_path / "archive", *extra)) == 2
    assert f"{flag}: {week!r} is not an ISO week" in capsys.readouterr().err
    assert not (tmp_path / "archive").exists()


def test_render_and_the_prior_ignore_an_archive_folder_that_is_not_an_iso_week(tmp_path, capsys):
    """`9999-W52` once published made every later `render --digests` end in OverflowError (issue 21)."""
    archive = tmp_path / "archive"
    assert main(digest(EXAMPLES / "papers", archive, "--week", "2026-W19",
                       watchlist=EXAMPLES / "watchlist.txt", criteria=EXAMPLES / "criteria.md")) == 0
    week = (archive / "2026-W19" / "decisions.json").read_text()
    for name in ("9999-W52", "2026-W20\n", "\u0662\u0660\u0662\u0666-W20"):
        (archive / name).mkdir()
        (archive / name / "decisions.json").write_text(week.replace('"week": "2026-W19"', f'"week": {json.dumps(name)}'))
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / "index.json").write_text("[]\n")
    capsys.readouterr()
    assert main(["render", "--releases", str(tmp_path / "releases"), "--digests", str(archive),
                 "--out", str(tmp_path / "site")]) == 0, capsys.readouterr().err
    pages = sorted(p.name for p in (tmp_path / "site" / "digest").glob("*.html"))
    assert pages == ["2026-W19.email.html", "2026-W19.html", "index.html"]
    assert main(digest(EXAMPLES / "papers", archive, "--week", "2026-W20",
                       watchlist=EXAMPLES / "watchlist.txt", criteria=EXAMPLES / "criteria.md")) == 0
    assert json.loads((archive / "2026-W20" / "decisions.json").read_bytes())["prior_weeks"] == ["2026-W19"]


# --- found by the adversarial pass ---------------------------------------------------------------------


def test_a_parquet_text_cell_that_is_not_utf8_is_exit_2_naming_the_record(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq
    titles = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(b"\x00\x00\x00\x00\x02\x00\x00\x00\x07\x00\x00\x00"),
                                                    pa.py_buffer(b"okA\xff\xfeBC")])
    papers = tmp_path / "papers.parquet"
    pq.write_table(pa.table({"id": ["doi:10.5555/1", "doi:10.5555/2"], "title": titles}), papers)
    assert main(digest(papers, tmp_path / "archive", "--week", "2026-W20")) == 2
    assert f"{papers}: record 2: a text cell is not UTF-8 (byte 1" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["folder", "fifo", "device"])
def test_a_decisions_json_that_is_not_a_file_is_exit_2_and_never_read(tmp_path, capsys, kind):
    import os
    archive = tmp_path / "archive"
    (archive / "2026-W19").mkdir(parents=True)
    target = archive / "2026-W19" / "decisions.json"
    {"folder": target.mkdir, "fifo": lambda: os.mkfifo(target),
     "device": lambda: target.symlink_to("/dev/zero")}[kind]()
    papers = tmp_path / "p.jsonl"  # a paper in each week (a file of any dates: each record on its `published`)
    papers.write_text("".join(json.dumps({"id": f"doi:10.5555/{n}", "title": "A protein language model",
                                          "published": day}) + "\n" for n, day in ((1, "2026-05-08"), (2, "2026-05-12"))))
    for week, extra in (("2026-W20", ()), ("2026-W19", ("--force",))):  # as a prior, and re-published
        assert main(digest(papers, archive, "--week", week, *extra)) == 2
        assert f"{target}: cannot read it (not a regular file)" in capsys.readouterr().err
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / "index.json").write_text("[]\n")
    assert main(["render", "--releases", str(tmp_path / "releases"), "--digests", str(archive),
                 "--out", str(tmp_path / "site")]) == 2
    assert f"{target}: cannot read it" in capsys.readouterr().err


def test_a_published_week_with_hostile_identity_fields_is_refused_in_a_short_message(tmp_path, capsys):
    papers = tmp_path / "2026-W20.jsonl"
    papers.write_text(json.dumps({"id": "doi:10.5555/1", "title": "A protein language model"}) + "\n")
    archive = tmp_path / "archive"
    assert main(digest(papers, archive, "--week", "2026-W20")) == 0
    path = archive / "2026-W20" / "decisions.json"
    doc = json.loads(path.read_bytes())
    doc["inputs"]["prior"] = {f"\u202e{'x' * 1000}{n}": "0" * 64 for n in range(10_000)}
    doc["settings"] = "not a table"
    doc["rules"] = ["\ud800"] * 1000
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(digest(papers, archive, "--week", "2026-W20")) == 2
    err = capsys.readouterr().err
    assert "week 2026-W20 is already published with other inputs (rules [" in err
    assert "more); re-publishing is refused" in err and len(err) < 1500 and "\u202e" not in err
