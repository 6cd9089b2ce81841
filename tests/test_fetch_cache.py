"""The raw-answer cache: a re-run sends nothing, a killed fetch resumes without asking an answered page
again, a window that has not ended is asked again the next day, --refresh and --dry-run."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fake_sources import ALL, LAUNCH, cli_main, fake_server, run_fetch, write_workspace  # noqa: F401 (fixture)

from reporter.digest.read import read_papers
from reporter.errors import InputError
from reporter.fetch.pages import Window

ROOT = Path(__file__).resolve().parents[1]


def test_a_rerun_sends_no_request_and_gives_the_same_records(tmp_path, fake):
    root = write_workspace(tmp_path, fake)
    first = run_fetch(root, ALL)
    asked = len(fake.log)
    second = run_fetch(root, ALL)
    assert asked == 12 and len(fake.log) == asked  # not one request the second time
    assert second.records == first.records
    assert [(r.sent, r.cached) for r in second.reports] == [(0, r.pages) for r in first.reports]


def test_each_page_is_one_file_a_header_line_then_the_answer_as_it_came(tmp_path, fake):
    run_fetch(write_workspace(tmp_path, fake, ("biorxiv",)), ("biorxiv",))
    pages = sorted((tmp_path / "cache" / "biorxiv").rglob("*.page"))
    heads = sorted(json.loads(p.read_bytes().partition(b"\n")[0])["url"] for p in pages)
    assert heads == [f"{fake.root}/biorxiv/details/biorxiv/2026-05-11/2026-05-17/{c}/json" for c in (0, 2)]
    body = pages[0].read_bytes().partition(b"\n")[2]
    assert body.startswith(b'{"messages": [{"status": "ok"') and b"10.1101\\/2026" in body  # untouched bytes
    assert not [p for p in (tmp_path / "cache").rglob(".tmp-*")]


def test_a_window_that_has_not_ended_is_asked_again_the_next_day(tmp_path, fake):
    root = write_workspace(tmp_path, fake, ("arxiv",))
    open_on = lambda day: Window(dt.date(2026, 5, 11), dt.date(2026, 5, 17), day)  # noqa: E731
    run_fetch(root, ("arxiv",), open_on("2026-05-15"))
    run_fetch(root, ("arxiv",), open_on("2026-05-15"))
    assert len(fake.log) == 2  # the same day: from the cache
    run_fetch(root, ("arxiv",), open_on("2026-05-16"))
    assert len(fake.log) == 4  # the next day: the week has grown, so it is asked again


def test_refresh_asks_every_page_again(tmp_path, fake):
    root = write_workspace(tmp_path, fake, ("openalex",))
    run_fetch(root, ("openalex",))
    report, = run_fetch(root, ("openalex",), refresh=True).reports
    assert (report.sent, report.cached, len(fake.log)) == (3, 0, 6)


def test_a_damaged_page_in_the_cache_is_asked_again_and_only_it(tmp_path, fake):
    root = write_workspace(tmp_path, fake, ("pubmed",))
    run_fetch(root, ("pubmed",))
    efetch = next(p for p in (tmp_path / "cache").rglob("*.page") if b"efetch.fcgi" in p.read_bytes()
                  and b"retstart=2" in p.read_bytes())
    efetch.write_bytes(efetch.read_bytes()[:-40])  # cut short, as no write of ours leaves it
    report, = run_fetch(root, ("pubmed",)).reports
    assert (report.sent, report.cached, report.records) == (1, 2, 3)
    assert fake.requests("pubmed")[-1]["retstart"] == "2"


def test_a_dry_run_sends_nothing_and_names_the_next_request(tmp_path, fake):
    root = write_workspace(tmp_path, fake, ("arxiv", "pubmed"))
    plan = run_fetch(root, ("arxiv", "pubmed"), dry_run=True)
    assert fake.log == [] and [r.would_send.split("?")[0] for r in plan.reports] == [
        f"{fake.root}/arxiv/api/query", f"{fake.root}/eutils/esearch.fcgi"]
    fake.faults["pubmed"] = ["ok", "ok", "hang"]
    fake.release.set()  # the hang drops at once: PubMed stops after its first efetch page
    with pytest.raises(InputError, match="the connection was dropped"):
        run_fetch(write_workspace(tmp_path, fake, ("arxiv", "pubmed"), fetch="retries = 0"), ("arxiv", "pubmed"))
    asked = len(fake.log)
    plan = run_fetch(root, ("arxiv", "pubmed"), dry_run=True)
    assert len(fake.log) == asked
    assert plan.reports[0].would_send is None and plan.reports[0].cached == 2  # every arXiv page is cached
    assert plan.reports[1].cached == 2 and "retstart=2" in plan.reports[1].would_send


def test_a_fetch_killed_with_sigkill_resumes_without_asking_an_answered_page_again(tmp_path, fake):
    root = write_workspace(tmp_path, fake, ("arxiv", "pubmed"), page_size=1)
    out = tmp_path / "week.jsonl"
    fake.faults["arxiv"] = ["ok", "ok", "hang"]  # the third page never comes: the process is killed waiting
    argv = ["fetch", "--workspace", str(root), "--source", "arxiv,pubmed", "--since", "2026-05-11",
            "--until", "2026-05-17", "--out", str(out), "--as-of", "2026-06-01"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", LAUNCH, *argv], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(fake.requests("arxiv")) < 3:
            assert process.poll() is None and time.monotonic() < deadline, "the fetch never reached page 3"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        assert process.wait(30) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
    fake.release.set()
    assert not out.exists()  # nothing written: the fetch had not finished
    assert len(list((tmp_path / "cache" / "arxiv").rglob("*.page"))) == 2  # the two answered pages, whole
    before = len(fake.log)
    assert cli_main(argv) == 0
    resumed = [q["start"] for q in fake.requests("arxiv")[3:]]
    assert resumed == ["2", "3"]  # pages 1 and 2 (start 0 and 1) came from the cache
    assert len(fake.log) - before == 2 + 4  # arXiv's last two pages, PubMed's esearch and three efetch pages
    assert [r.id for r in read_papers(out)][:4] == ["arxiv:2605.01234", "arxiv:2605.02345", "arxiv:2605.03456",
                                                   "arxiv:2605.04567"]
