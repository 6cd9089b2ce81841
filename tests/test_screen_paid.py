"""No paid answer is lost, whatever the other voter does (issue 30, items 1 and 5).

Each voter's answer goes to disk (raw line fsynced, then its row) as soon as
it arrives: a second voter that fails (401) or stalls, then a kill -9 or a
SIGTERM, never makes a re-run pay the first voter again. The screen and the
judge run the same loop; both are tried, with real processes, real signals
and the fake OpenAI server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from support.fake_openai import Answer, FakeOpenAI, Status
from support.judge import KEY as JUDGE_KEY, KEY_ENV as JUDGE_KEY_ENV, MODELS as JUDGE_MODELS, judge_workspace, \
    judgement
from test_screen_crash import WAIT_SECONDS, finish, start_run
from test_screen_run import MODELS, db_rows, make_workspace, screen

from reporter.config import load_workspace
from reporter.digest.judge.run import run_judge
from reporter.errors import InputError
from reporter.panel.rawlog import orphans

WEEK = "2026-W20"
CONDITION_BOUND = 30.0
"""How long a held reply waits for its condition before answering anyway (the run under test then fails its
assertions, never by timing: with the fix the condition comes at once)."""


@dataclass(frozen=True)
class Until:
    """A reply held until `condition()` holds (or CONDITION_BOUND passed), then `then`."""

    condition: Callable[[], bool]
    then: Any
    bound: float = CONDITION_BOUND

    async def _reply(self, exchange: Any) -> None:
        deadline = time.monotonic() + self.bound
        while not self.condition() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await self.then._reply(exchange)


def raw_lines_of(raw_dir, voter: str) -> int:
    return sum(1 for r in orphans(raw_dir, {}) if r.voter == voter)


def kill_once_on_disk(proc: subprocess.Popen, raw, voter: str, n: int) -> int:
    """SIGKILL the run once `voter` has `n` raw lines (or CONDITION_BOUND passed); the raw lines it left."""
    try:
        deadline = time.monotonic() + CONDITION_BOUND
        while raw_lines_of(raw, voter) < n and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    return raw_lines_of(raw, voter)


def terminate_once_sent(server: FakeOpenAI, proc: subprocess.Popen, sent: int) -> tuple[str, str]:
    """SIGTERM the run once the server has `sent` requests; its stdout and stderr once it ended."""
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while server.total < sent:
            assert time.monotonic() < deadline, "the run never sent its first requests"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=WAIT_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# --- the screen -------------------------------------------------------------------------------------------


def test_screen_a_second_voter_failing_after_the_first_answered_costs_the_first_nothing(tmp_path):
    """The first voter answers all 10; the second fails 5 times (401: the run stops) with 5 more held."""
    again = threading.Event()
    raw = tmp_path / "ws" / "state" / "raw"

    def script(work: str, model: str, attempt: int):
        if model == "exp-a" or again.is_set():
            return Answer("include")
        if int(work[1:]) <= 5:
            return Until(lambda: raw_lines_of(raw, "expensive-a") == 10, Status(401))
        return Until(again.is_set, Answer("include"), bound=300)

    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=10, cheap_voters=False, batch_size=10,
                           concurrency=10)
        server.titles = w["titles"]
        with pytest.raises(InputError, match="401"):
            screen(w, tiers=("expensive",))
        assert db_rows(w, "SELECT COUNT(*) FROM votes WHERE voter = 'expensive-a'") == [(10,)]
        again.set()
        screen(w, tiers=("expensive",))
        counts = server.counts()
    assert {k: n for k, n in counts.items() if k[1] == "exp-a"} == {(f"W{i:03d}", "exp-a"): 1 for i in range(1, 11)}
    assert db_rows(w, "SELECT COUNT(*) FROM verdicts") == [(10,)]


def test_screen_killed_while_the_second_voter_is_slow_pays_the_first_nothing_again(tmp_path):
    again = threading.Event()

    def script(work: str, model: str, attempt: int):
        if model == "exp-a" or again.is_set():
            return Answer("include")
        return Until(again.is_set, Answer("include"), bound=300)

    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=8, cheap_voters=False, batch_size=8,
                           concurrency=8)
        server.titles = w["titles"]
        raw = w["root"] / "state" / "raw"
        proc = start_run(w["root"])
        on_disk = kill_once_on_disk(proc, raw, "expensive-a", 8)
        again.set()
        report = finish(start_run(w["root"]))
        counts = server.counts()
    assert on_disk == 8, "each answer of the first voter was on disk before the kill"
    assert all(counts[(f"W{i:03d}", "exp-a")] == 1 for i in range(1, 9)), "the first voter was paid again"
    [tier] = [t for t in report["tiers"] if t["tier"] == "expensive"]
    # The kill can land between a raw line's fsync and its vote row: the re-run then adopts that line
    # (recovered, not asked again). Either way the only votes asked anew are the second voter's 8.
    assert tier["screened"] == 8 and tier["votes"] == 8 and tier["recovered"] <= 8, "only the second voter's votes were new"
    assert db_rows(w, "SELECT COUNT(*) FROM votes") == [(16,)]


def test_sigterm_drains_the_screen_like_ctrl_c(tmp_path):
    release = threading.Event()

    def script(work: str, model: str, attempt: int):
        return Answer("include") if release.is_set() else Until(release.is_set, Answer("include"), bound=2.0)

    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=6, cheap_voters=False, batch_size=2,
                           concurrency=1)
        server.titles = w["titles"]
        proc = start_run(w["root"])
        out, err = terminate_once_sent(server, proc, 2)
        sent = server.total
        release.set()
        report = json.loads(out)
        assert proc.returncode == 143, err[-2000:]
        assert sent == 2 and report["interrupted"] is True and report["signal"] == "SIGTERM"
        assert "SIGTERM: claiming no more works" in err and "interrupted (SIGTERM)" in err
        assert db_rows(w, "SELECT COUNT(*) FROM votes") == [(2,)], "what was in flight was answered and recorded"
        assert db_rows(w, "SELECT sent, answered FROM requests") == [(2, 2)]
        finish(start_run(w["root"]))
        counts = server.counts()
    assert len(counts) == 12 and all(n == 1 for n in counts.values()), "each work asked once per voter overall"


# --- the judge --------------------------------------------------------------------------------------------


def judge_command(w: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "reporter.cli", "judge", "--workspace", str(w["root"]),
                             "--week", WEEK, "--run", "--json", *args],
                            env={**os.environ, JUDGE_KEY_ENV: JUDGE_KEY}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def judge_rows(w: dict, sql: str) -> list[tuple]:
    import sqlite3
    conn = sqlite3.connect(w["db"])
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_judge_a_second_judge_failing_after_the_first_answered_costs_the_first_nothing(tmp_path):
    again = threading.Event()
    raw = tmp_path / "ws" / "state" / "judge-raw"

    def script(work: str, model: str, attempt: int):
        if model == JUDGE_MODELS[0] or again.is_set():
            return judgement()
        if int(work[1:]) <= 5:
            return Until(lambda: raw_lines_of(raw, "judge-a") == 10, Status(401))
        return Until(again.is_set, judgement(), bound=300)

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {WEEK: 10}, batch_size=10, concurrency=10)
        server.titles = w["titles"]
        with pytest.raises(InputError, match="401"):
            run_judge(load_workspace(w["root"]).digest, [WEEK], environ={JUDGE_KEY_ENV: JUDGE_KEY}, progress=False)
        again.set()
        run_judge(load_workspace(w["root"]).digest, [WEEK], environ={JUDGE_KEY_ENV: JUDGE_KEY}, progress=False)
        counts = server.counts()
    assert all(counts[(f"P{i:03d}", JUDGE_MODELS[0])] == 1 for i in range(1, 11)), "the first judge was paid again"
    assert judge_rows(w, "SELECT COUNT(*) FROM verdicts") == [(10,)]


def test_judge_killed_while_the_second_judge_is_slow_pays_the_first_nothing_again(tmp_path):
    again = threading.Event()

    def script(work: str, model: str, attempt: int):
        if model == JUDGE_MODELS[0] or again.is_set():
            return judgement()
        return Until(again.is_set, judgement(), bound=300)

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {WEEK: 8}, batch_size=8, concurrency=8)
        server.titles = w["titles"]
        raw = w["root"] / "state" / "judge-raw"
        proc = judge_command(w)
        on_disk = kill_once_on_disk(proc, raw, "judge-a", 8)
        again.set()
        rerun = judge_command(w)
        out, err = rerun.communicate(timeout=WAIT_SECONDS)
        counts = server.counts()
    assert rerun.returncode == 0, err[-2000:]
    assert on_disk == 8
    assert all(counts[(f"P{i:03d}", JUDGE_MODELS[0])] == 1 for i in range(1, 9)), "the first judge was paid again"
    assert json.loads(out)["weeks"][0]["screened"] == 8


def test_sigterm_drains_the_judge_like_ctrl_c(tmp_path):
    release = threading.Event()

    def script(work: str, model: str, attempt: int):
        return judgement() if release.is_set() else Until(release.is_set, judgement(), bound=2.0)

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {WEEK: 6}, batch_size=2, concurrency=1)
        server.titles = w["titles"]
        proc = judge_command(w)
        out, err = terminate_once_sent(server, proc, 2)
        release.set()
        assert proc.returncode == 143, err[-2000:]
        assert json.loads(out)["signal"] == "SIGTERM" and "interrupted (SIGTERM)" in err
        assert judge_rows(w, "SELECT COUNT(*) FROM votes") == [(2,)]
        rerun = judge_command(w)
        _, err = rerun.communicate(timeout=WAIT_SECONDS)
        assert rerun.returncode == 0, err[-2000:]
        counts = server.counts()
    assert len(counts) == 12 and all(n == 1 for n in counts.values()), "each paper asked once per judge overall"


def test_the_cap_is_shown_to_a_tenth_of_a_cent():
    """Issue 30, item 6: a cap of $0.001 was shown as `$0.00`."""
    from reporter.money import dollars
    from reporter.panel.run_report import RunReport, format_run
    from reporter.screening.run import SCREEN_WORDS
    assert [dollars(v, tenths=True) for v in (0.001, 0.0015, 1.005, 12.0, 1234.5)] == [
        "$0.0010", "$0.0015", "$1.005", "$12.00", "$1,234.50"]
    assert "spend $0.00 of --max-cost $0.0010" in format_run(RunReport("r", "rel", (), 0.001), SCREEN_WORDS)


def test_a_second_sigterm_aborts_with_sigterms_exit_code(tmp_path):
    """Issue 30, adversarial: a second SIGTERM (systemd's, docker's) aborted with exit 130, Ctrl-C's code."""
    release = threading.Event()
    with FakeOpenAI(lambda work, model, attempt: Until(release.is_set, judgement(), bound=WAIT_SECONDS)) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {WEEK: 4}, batch_size=2, concurrency=1)
        server.titles = w["titles"]
        proc = judge_command(w)
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while server.total < 1:
                assert time.monotonic() < deadline, "the run never sent its first request"
                time.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            # Two SIGTERMs pending at once are one (signals do not queue): the second is sent once the first was
            # taken, and the held request cannot be answered before it arrives.
            err = ""
            while "claiming no more works" not in err:
                chunk = os.read(proc.stderr.fileno(), 4096)
                assert chunk, "the run ended before it took the first SIGTERM"
                err += chunk.decode(errors="replace")
            proc.send_signal(signal.SIGTERM)
            _, rest = proc.communicate(timeout=WAIT_SECONDS)
            err += rest
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 143, err[-2000:]
    assert "second SIGTERM: aborting now" in err and "Traceback" not in err
