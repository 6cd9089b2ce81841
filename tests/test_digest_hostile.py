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
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "digest"
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
