"""Ctrl-C and kills: a real `reporter screen --run` process, a real SIGINT (or SIGKILL), the fake server slowed down.

The first Ctrl-C stops the claiming and lets the requests already sent be
answered and recorded (exit 130, with what was recorded and spent); a second
aborts at once. What was in flight at a kill (sent, never answered) is
counted per run and shown by the dry run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from support.fake_openai import Answer, FakeOpenAI, Slow
from test_screen_crash import KEY, KEY_ENV, WAIT_SECONDS, finish, start_run, wait_for
from test_screen_run import db_rows, make_workspace, verdicts


def slow_until(release: threading.Event, seconds: float):
    """A script: each reply waits `seconds` until `release` is set, then answers at once."""
    def script(work: str, model: str, attempt: int):
        return Answer("include") if release.is_set() else Slow(seconds, Answer("include"))
    return script


@contextlib.contextmanager
def running(tmp_path, seconds: float, *, screen: int, batch: int, concurrency: int, sent: int):
    """A workspace and its `screen --run` process, once the fake server (replies held `seconds`) has `sent` requests.

    Yields (server, workspace, process, release): set `release` to answer at once from then on.
    """
    release = threading.Event()
    with FakeOpenAI(slow_until(release, seconds)) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=screen, cheap_voters=False, batch_size=batch,
                           concurrency=concurrency)
        server.titles = w["titles"]
        proc = start_run(w["root"])
        try:
            wait_for(lambda: server.total == sent, f"{sent} requests sent")
            yield server, w, proc, release
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def dry_run(root) -> dict:
    out = subprocess.run([sys.executable, "-m", "reporter.cli", "screen", "--workspace", str(root), "--json"],
                         env={**os.environ, KEY_ENV: KEY}, capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.slow
def test_ctrl_c_lets_what_was_sent_be_answered_and_recorded_then_a_rerun_resumes(tmp_path):
    # One request in flight per voter: of the first 2 works claimed, one is sent, the other waits for a slot.
    with running(tmp_path, 2.0, screen=6, batch=2, concurrency=1, sent=2) as (server, w, proc, release):
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_SECONDS)
        sent_before_resume = server.total
        release.set()
        report = json.loads(out)
        assert proc.returncode == 130, err[-2000:]
        assert sent_before_resume == 2, "after Ctrl-C nothing more was sent: the requests waiting for a slot stayed"
        assert report["interrupted"] is True
        [tier] = [t for t in report["tiers"] if t["tier"] == "expensive"]
        assert tier["votes"] == 2 and tier["screened"] == 1, "the 2 replies in flight were answered and recorded"
        assert "interrupted (Ctrl-C)" in err and "recorded 2 votes and 1 verdicts" in err and "run the same command" in err
        assert db_rows(w, "SELECT COUNT(*) FROM votes") == [(2,)]
        assert db_rows(w, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)], "claims released"
        assert db_rows(w, "SELECT sent, answered FROM requests") == [(2, 2)], "nothing in flight at its end"
        assert dry_run(w["root"])["in_flight"] == []
        resumed = finish(start_run(w["root"]))
        counts = server.counts()
    assert all(n == 1 for n in counts.values()) and len(counts) == 12, "each work asked once per voter overall"
    assert [t["votes"] for t in resumed["tiers"] if t["tier"] == "expensive"] == [10] and len(verdicts(w, "expensive")) == 6


def test_a_second_ctrl_c_aborts_at_once(tmp_path):
    with running(tmp_path, 300, screen=4, batch=4, concurrency=4, sent=8) as (_server, _w, proc, _release):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        assert proc.poll() is None, "the first Ctrl-C waits for the replies in flight"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=WAIT_SECONDS)  # a bound for hanging, the replies would take 300 s
    assert proc.returncode == 130 and "second Ctrl-C: aborting now" in err and "Traceback" not in err


@pytest.mark.slow
def test_requests_in_flight_at_a_kill_are_counted_per_run_and_shown_by_the_dry_run(tmp_path):
    with running(tmp_path, 300, screen=4, batch=4, concurrency=4, sent=8) as (_server, w, proc, release):
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        plan = dry_run(w["root"])
        text = subprocess.run([sys.executable, "-m", "reporter.cli", "screen", "--workspace", str(w["root"])],
                              env={**os.environ, KEY_ENV: KEY}, capture_output=True, text=True,
                              timeout=WAIT_SECONDS).stdout
        release.set()
        finish(start_run(w["root"]))
    [run] = plan["in_flight"]
    assert (run["sent"], run["answered"], run["in_flight"], run["running"], run["finished"]) == (8, 0, 8, False, False)
    assert "Requests sent and never answered" in text and "killed): 8 sent, 0 answered, 8 in flight" in text


def test_the_expensive_progress_line_shows_its_own_spend(tmp_path, capsys):
    from reporter.screening.run import run_screen
    from test_screen_run import environ
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=3, screen=3)
        server.titles = w["titles"]
        report = run_screen(w["ws"], w["release_dir"], tiers=("cheap", "expensive"), environ=environ(), progress=True)
    cheap, expensive = report.tiers
    assert cheap.spend_usd > 0 and expensive.spend_usd > 0
    lines = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines()
             if line.startswith("screen expensive (")]
    assert lines and lines[-1].startswith(f"screen expensive (12 votes, ${expensive.spend_usd:.4f},")
