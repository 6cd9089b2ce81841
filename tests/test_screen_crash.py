"""Crash safety: the raw-response files, and runners killed with SIGKILL at the worst moments.

After a kill at any point, a re-run asks only the votes that are missing,
adopts every reply that was paid for but never got its vote row, and leaves
every work with its verdict.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fake_openai import Answer, FakeOpenAI, Slow
from test_screen_run import KEY, KEY_ENV, MODELS, db_rows, make_workspace, short, verdicts

from reporter.errors import InputError
from reporter.panel.rawlog import dead_runners, open_raw_log, orphans, raw_line

WAIT_SECONDS = 120
"""The most a test waits for a condition it polls (a bound, never a timing the result depends on)."""


def line(work: str, voter: str = "a", body: str = '{"x": 1}') -> dict:
    return raw_line(tier="expensive", generation="g1", work_id=work, voter=voter, model="m", at="2026-01-01T00:00:00Z",
                    status=200, usage={"input_tokens": 3, "output_tokens": 1, "cost_usd": 0.0, "estimated": False},
                    body=body)


# --- the raw file ---------------------------------------------------------------------------------


def test_appended_lines_are_found_at_their_offsets_and_orphans_start_after_the_recorded_one(tmp_path):
    with open_raw_log(tmp_path, "r1") as log:
        first = log.append([line("w1"), line("w2", body='{"text": "line\\nbreak \u2028 ü"}')])
        second = log.append([line("w3")])
        assert log.append([]) == []
    assert [f for f, _ in first + second] == ["r1.jsonl"] * 3
    at = {(r.file, r.offset): r for r in orphans(tmp_path, {})}  # every line, by where the log said it wrote it
    assert [at[place].work_id for place in first + second] == ["w1", "w2", "w3"]
    assert at[first[1]].body == '{"text": "line\\nbreak \u2028 ü"}'
    assert [r.work_id for r in orphans(tmp_path, {})] == ["w1", "w2", "w3"]
    assert [r.work_id for r in orphans(tmp_path, {"r1.jsonl": first[1][1]})] == ["w3"]
    assert [r.work_id for r in orphans(tmp_path, {"r1.jsonl": second[0][1]})] == []
    assert [(r.file, r.offset) for r in orphans(tmp_path, {})] == first + second


def test_a_cut_final_line_is_skipped_and_the_next_append_starts_on_a_new_line(tmp_path):
    with open_raw_log(tmp_path, "r1") as log:
        log.append([line("w1")])
    path = tmp_path / "r1.jsonl"
    whole = json.dumps(line("w2"))
    with open(path, "a") as f:
        f.write(whole[: len(whole) // 2])  # a kill mid-write
    assert [r.work_id for r in orphans(tmp_path, {})] == ["w1"]
    with open_raw_log(tmp_path, "r1") as log:
        [(_, offset)] = log.append([line("w3")])
    assert [r.work_id for r in orphans(tmp_path, {})] == ["w1", "w3"]
    assert {(r.file, r.offset): r.work_id for r in orphans(tmp_path, {})}[("r1.jsonl", offset)] == "w3"


def test_a_line_holds_exactly_the_documented_fields_so_a_key_cannot_slip_in(tmp_path):
    with open_raw_log(tmp_path, "r1") as log:
        with pytest.raises(ValueError):
            log.append([{**line("w1"), "api_key": "sk-secret"}])
        with pytest.raises(TypeError):
            raw_line(tier="t", generation="g", work_id="w", voter="v", model="m", at="", status=200,
                     usage=None, body="", headers={"authorization": "Bearer sk-secret"})
    assert (tmp_path / "r1.jsonl").read_bytes() == b""


def test_a_runner_is_dead_once_its_process_is_gone_however_it_ended(tmp_path):
    live = open_raw_log(tmp_path, "live")
    ended = open_raw_log(tmp_path, "ended")
    ended.close()
    code = ("import sys, time; from reporter.panel.rawlog import open_raw_log; "
            "log = open_raw_log(sys.argv[1], 'killed'); print('ready', flush=True); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert dead_runners(tmp_path) == ["ended"]
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert dead_runners(tmp_path) == ["ended", "killed"]
        with pytest.raises(InputError, match="another live runner"):
            open_raw_log(tmp_path, "live")
    finally:
        child.kill()
        child.wait()
        live.close()
    assert dead_runners(tmp_path) == ["ended", "killed", "live"]


def test_a_runner_id_must_be_a_plain_file_name(tmp_path):
    for bad in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(InputError, match="runner id"):
            open_raw_log(tmp_path, bad)


# --- killed runs ----------------------------------------------------------------------------------


KILLED_RUN = Path(__file__).resolve().parent / "support" / "screen_killed.py"


def start_run(root: Path, *args: str, kill_at: int | None = None, **env: str) -> subprocess.Popen:
    """`reporter screen --run --json` in its own process; with `kill_at=N`, a run that SIGKILLs itself right
    after its N-th batch's raw lines are fsynced (tests/support/screen_killed.py, run_screen's seam)."""
    environment = {**os.environ, KEY_ENV: KEY, **env}
    command = ([sys.executable, str(KILLED_RUN), str(root), str(kill_at)] if kill_at is not None else
               [sys.executable, "-m", "reporter.cli", "screen", "--workspace", str(root), "--run", "--json", *args])
    return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=WAIT_SECONDS)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out)


def finish_together(procs: list[subprocess.Popen]) -> list[tuple[str, str]]:
    """(stdout, stderr) of runners that shared the work. Each exits 0, or 3 when it ended while another still held
    works (issue 34); the last to end sees none held, so one of them exits 0."""
    outs = [p.communicate(timeout=WAIT_SECONDS) for p in procs]
    codes = [p.returncode for p in procs]
    assert set(codes) <= {0, 3} and 0 in codes, [err[-2000:] for _, err in outs]
    return outs


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def vote_count(w: dict) -> int:
    path = w["root"] / "state" / "screen.db"
    if not path.exists():
        return 0
    try:
        return db_rows(w, "SELECT COUNT(*) FROM votes")[0][0]
    except Exception:  # the schema is being made
        return 0


def assert_every_raw_reply_is_a_vote(w: dict) -> None:
    """No paid reply lost: each raw line is named by exactly the vote row of its work and voter."""
    rows = {(f, o): (short(wid), voter) for wid, voter, f, o in db_rows(
        w, "SELECT work_id, voter, raw_file, raw_offset FROM votes")}
    names = {f"{tier}-{'ab'[i]}": m for tier, models in MODELS.items() for i, m in enumerate(models)}
    raw = w["root"] / "state" / "raw"
    lines = [r for r in orphans(raw, {})]
    assert lines, "the runs wrote raw lines"
    for r in lines:
        assert rows.get((r.file, r.offset)) == (short(r.work_id), r.voter), f"raw reply {r.file}@{r.offset} lost"
        assert names[r.voter] == r.model
    assert len(rows) == len(lines)


def test_a_runner_killed_mid_batch_then_a_rerun_asks_only_what_is_missing(tmp_path):
    fast = {f"W{i:03d}" for i in range(1, 7)}
    killed = []

    def script(work: str, model: str, attempt: int):
        if work in fast or killed:
            return Answer("include" if work.endswith(("1", "3", "5", "7", "9")) else "exclude")
        return Slow(300, Answer("include"))  # never answered before the kill

    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=12, cheap_voters=False, batch_size=4,
                           concurrency=4)
        server.titles = w["titles"]
        first = start_run(w["root"])
        try:
            # The first batch is recorded and the second is in flight: W005, W006 answered, W007, W008 waiting.
            wait_for(lambda: vote_count(w) == 12 and all(server.count(x, m) == 1 for x in ("W007", "W008")
                                                          for m in MODELS["expensive"]),
                     "12 votes recorded and the slow works asked")
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate()
            killed.append(True)
        before = server.counts()
        report = finish(start_run(w["root"]))
        after = server.counts()
    recorded_before = {f"W{i:03d}" for i in range(1, 7)}
    for (work, model), n in after.items():
        if work in recorded_before:
            assert n == 1, f"{work} was asked again by {model} though its vote was recorded"
        else:
            assert n == before.get((work, model), 0) + 1, f"{work}/{model} asked {n} times"
    assert set(verdicts(w, "expensive")) == {f"W{i:03d}" for i in range(1, 13)}
    [tier] = [t for t in report["tiers"] if t["tier"] == "expensive"]
    assert tier["screened"] == 6 and tier["recovered"] == 0
    assert db_rows(w, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)]
    assert_every_raw_reply_is_a_vote(w)


@pytest.mark.parametrize("nth", [1, 3])
def test_a_runner_killed_between_its_raw_lines_and_its_vote_rows_loses_nothing(tmp_path, nth):
    """Killed right after its N-th batch's raw lines: the replies are on disk, their vote rows are not; the re-run adopts them."""
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=6, screen=6, batch_size=3, concurrency=2)
        server.titles = w["titles"]
        killed = start_run(w["root"], kill_at=nth)
        killed.communicate(timeout=WAIT_SECONDS)
        assert killed.returncode == -signal.SIGKILL
        on_disk = {(short(r.work_id), r.model) for r in orphans(w["root"] / "state" / "raw", {})}
        assert on_disk, "the kill came after raw lines were written"
        if nth == 1:
            assert db_rows(w, "SELECT COUNT(*) FROM votes") == [(0,)], "killed before its first vote row"
        before = server.counts()
        report = finish(start_run(w["root"]))
        counts = server.counts()
    # A reply on disk is adopted, never asked again; a request the kill cut before its reply came is asked once more.
    asked_again = {k: counts[k] - before.get(k, 0) for k in counts}
    not_asked = {k for k, n in asked_again.items() if n == 0}
    assert on_disk <= not_asked
    # Each answer is on disk on its own, so one voter's include can be adopted while the other's request was cut:
    # the cheap tier passes such a work on with that one include, and its other voter is not needed any more.
    other = {m: n for pair in MODELS.values() for m, n in (pair, pair[::-1])}
    assert all(m in MODELS["cheap"] and (x, other[m]) in on_disk for x, m in not_asked - on_disk)
    assert all(n == 1 for k, n in asked_again.items() if k not in not_asked)
    cheap = {x for x, k in w["kinds"].items() if k == "cheap"}
    assert set(counts) == {(x, m) for x in cheap for m in MODELS["cheap"]} | {
        (x, m) for x in w["kinds"] for m in MODELS["expensive"]}, "every work asked once by each of its voters"
    assert sum(t["recovered"] for t in report["tiers"]) >= 1
    assert len(verdicts(w, "cheap")) == 6 and len(verdicts(w, "expensive")) == 12
    assert_every_raw_reply_is_a_vote(w)
