"""`reporter fetch`: a week into the digest's papers folder (and the digest run on it), --out and --json,
the summary, and the errors a user can make. Against the local fake servers; nothing leaves 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.fake_sources import ALL, cli_main, fake_server, workspace_toml, write_workspace  # noqa: F401 (fixture)

from reporter.digest.read import read_papers

ROOT = Path(__file__).resolve().parents[1]
DIGEST = ('[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\ncriteria = "criteria.md"\n'
          'archive = "digests"\n')
WEEK = ["--week", "2026-W20", "--as-of", "2026-06-01"]


def _ws(tmp_path, fake, sources=ALL, **options):
    write_workspace(tmp_path, fake, sources, digest=DIGEST, **options)
    for name in ("watchlist.txt", "criteria.md"):
        shutil.copy(ROOT / "tests" / "fixtures" / "digest" / "made-up" / name, tmp_path / name)
    return tmp_path


def test_a_fetched_week_is_digested_and_the_preprint_folds_with_its_publication(tmp_path, fake, capsys):
    root = _ws(tmp_path, fake)
    assert cli_main(["fetch", "--workspace", str(root), *WEEK]) == 0
    papers = root / "papers" / "2026-W20.jsonl"
    records = read_papers(papers)  # the digest's own reader: normalized records, one a line
    assert len(records) == 14 and [r.source for r in records] == (
        ["arxiv"] * 4 + ["biorxiv"] * 2 + ["medrxiv"] * 2 + ["pubmed"] * 3 + ["openalex"] * 3)
    out = capsys.readouterr().out
    assert out.splitlines()[1] == ("biorxiv: 2 records (1 version folded) from 2 pages: 2 requests sent, "
                                   "0 answered from cache, 0 retried")
    assert out.splitlines()[-1] == f"14 records from 5 sources (2026-05-11 to 2026-05-17) -> {papers}"

    assert cli_main(["digest", "--workspace", str(root), "--week", "2026-W20"]) == 0
    decisions = json.loads((root / "digests" / "2026-W20" / "decisions.json").read_text())
    merged = {(m["survivor"], m["merged_ids"][0], m["reason"], m["via"]) for m in decisions["merges"]}
    assert merged == {  # the preprint survives (it appeared first) and holds its publication's ids
        ("doi:10.1101/2026.05.11.600001", "openalex:W5000000002", "related_ids",  # the journal DOI it names
         "doi:10.1101/2026.05.11.600001"),
        ("doi:10.1101/2026.05.11.600001", "pmid:41000001", "doi", "openalex:W5000000002"),  # one DOI, and ids.pmid
        ("arxiv:2605.01234", "openalex:W5000000001", "related_ids", "arxiv:2605.01234"),  # arXiv's DOI in OpenAlex
    }
    kept = {d["id"]: d for d in decisions["decisions"]}
    assert len(kept) == 11 and set(kept["doi:10.1101/2026.05.11.600001"]["merged_ids"]) == {
        "pmid:41000001", "openalex:W5000000002"}


def test_out_with_json_prints_every_count(tmp_path, fake, capsys):
    root = _ws(tmp_path, fake)
    fake.faults["pubmed"] = ["ok", "503:1"]
    out = tmp_path / "two.jsonl"
    assert cli_main(["fetch", "--workspace", str(root), "--source", "pubmed", "--source", "arxiv", "--since",
                     "2026-05-11", "--until", "2026-05-17", "--out", str(out), "--json", "--as-of", "2026-06-01"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["out"], summary["records"], summary["since"], summary["until"]) == (
        str(out), 7, "2026-05-11", "2026-05-17")
    assert [(s["source"], s["records"], s["pages"], s["requests_sent"], s["answered_from_cache"], s["retried"],
             s["versions_folded"], s["waited_seconds"]) for s in summary["sources"]] == [
        ("arxiv", 4, 2, 2, 0, 0, 0, 0.0), ("pubmed", 3, 3, 4, 0, 1, 0, 1.0)]  # in SOURCES order
    assert [r.id[:5] for r in read_papers(out)] == ["arxiv"] * 4 + ["pmid:"] * 3


def test_the_dry_run_of_the_help_example_sends_nothing(tmp_path, capsys):
    # A workspace without [fetch]: the public APIs by default. A dry run must not reach them.
    (tmp_path / "reporter.toml").write_text('pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "t"\n' + DIGEST)
    assert cli_main(["fetch", "--workspace", str(tmp_path), "--week", "2026-W20", "--source", "arxiv,pubmed",
                     "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("arxiv: 0 pages answered from the cache; the next request: GET "
                        "https://export.arxiv.org/api/query?search_query=submittedDate%3A%5B202605110000+TO+"
                        "202605172359%5D&start=0&max_results=200&sortBy=submittedDate&sortOrder=ascending")
    assert lines[1].startswith("pubmed: 0 pages answered from the cache; the next request: GET "
                               "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?db=pubmed&term=all%5Bsb%5D")
    assert not (tmp_path / "papers").exists()


def test_a_published_week_is_not_replaced_by_other_papers_without_force(tmp_path, fake, capsys):
    root = _ws(tmp_path, fake, ("arxiv", "pubmed"))
    assert cli_main(["fetch", "--workspace", str(root), *WEEK, "--source", "arxiv"]) == 0
    assert cli_main(["digest", "--workspace", str(root), "--week", "2026-W20"]) == 0
    assert cli_main(["fetch", "--workspace", str(root), *WEEK, "--source", "arxiv"]) == 0  # the same papers
    before = (root / "papers" / "2026-W20.jsonl").read_bytes()
    capsys.readouterr()
    assert cli_main(["fetch", "--workspace", str(root), *WEEK, "--refresh", "--source", "arxiv,pubmed"]) == 2
    assert "2026-W20 is already published in" in capsys.readouterr().err
    assert (root / "papers" / "2026-W20.jsonl").read_bytes() == before
    assert cli_main(["fetch", "--workspace", str(root), *WEEK, "--source", "arxiv,pubmed", "--force"]) == 0
    assert len(read_papers(root / "papers" / "2026-W20.jsonl")) == 7


@pytest.mark.parametrize("argv, message", [
    (["--since", "2026-05-11", "--until", "2026-05-17"], "give --out FILE.jsonl"),
    (["--week", "2026-W20", "--since", "2026-05-11"], "give --week or --since/--until, not both"),
    (["--since", "2026-05-11", "--out", "x.jsonl"], "give --week YYYY-Www, or --since YYYY-MM-DD and --until"),
    (["--since", "2026-05-18", "--until", "2026-05-17", "--out", "x.jsonl"], "--since 2026-05-18 is after --until"),
    (["--since", "May 11", "--until", "2026-05-17", "--out", "x.jsonl"], "--since 'May 11': not a date"),
    (["--week", "2026-W54"], "'2026-W54' is not an ISO week"),
    (["--week", "2026-W20", "--source", "scholar"], "--source scholar: unknown source; choose from arxiv, biorxiv"),
])
def test_a_wrong_flag_is_an_error_naming_it(tmp_path, fake, capsys, argv, message):
    root = _ws(tmp_path, fake)
    assert cli_main(["fetch", "--workspace", str(root), *argv]) == 2
    assert message in capsys.readouterr().err and fake.log == []


def test_week_needs_a_digest_papers_folder_and_some_source(tmp_path, fake, capsys):
    (tmp_path / "reporter.toml").write_text(workspace_toml(fake, ("arxiv",)))
    assert cli_main(["fetch", "--workspace", str(tmp_path), *WEEK]) == 2
    assert "--week writes into the [digest] papers folder, and there is no [digest] table" in capsys.readouterr().err
    (tmp_path / "reporter.toml").write_text(workspace_toml(fake, ()))
    assert cli_main(["fetch", "--workspace", str(tmp_path), *WEEK, "--out", "x.jsonl"]) == 2
    assert "no source to fetch: give --source" in capsys.readouterr().err and fake.log == []


def test_out_naming_a_folder_a_link_a_fifo_a_device_or_a_missing_folder_is_refused(tmp_path, fake, capsys):
    from test_files import assert_untouched, out_targets
    (tmp_path / "ws").mkdir()
    root = _ws(tmp_path / "ws", fake)
    targets = tmp_path / "targets"
    targets.mkdir()
    for kind, (path, message) in out_targets(targets, "week.jsonl").items():
        assert cli_main(["fetch", "--workspace", str(root), "--source", "arxiv", "--since", "2026-05-11",
                         "--until", "2026-05-17", "--as-of", "2026-06-01", "--out", str(path)]) == 2, kind
        err = capsys.readouterr().err
        assert f"--out {path}" in err and message in err and "Traceback" not in err, kind
    assert fake.log == [], "refused before any request"
    assert_untouched(targets)


@pytest.mark.parametrize("week", ["2026-W20\n", "\u0662\u0660\u0662\u0666-W20", "2025-W53", "9999-W52"])
def test_fetch_refuses_a_week_that_is_not_an_iso_week_and_writes_nothing(tmp_path, fake, capsys, week):
    """`--week $'2026-W20\\n'` wrote `2026-W20\\n.jsonl` (issue 21): the digest's one week parser decides."""
    root = _ws(tmp_path, fake, ("arxiv",))
    assert cli_main(["fetch", "--workspace", str(root), "--week", week, "--as-of", "2026-06-01"]) == 2
    assert f"--week: {week!r} is not an ISO week" in capsys.readouterr().err
    assert not (root / "papers").exists() or list((root / "papers").iterdir()) == []
    assert fake.log == []
