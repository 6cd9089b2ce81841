"""The operator's console (issue 34): `reporter screen --status`, a runner killed on another machine, the exit code
of a runner that finds the rest leased elsewhere, progress across runners, export's refusal and `--partial`, and
the hand-off's provenance sidecar.

"Another machine" is a second workspace folder sharing the first one's state database, pool and releases, with
raw files of its own: its runners cannot see the first machine's raw files (or their locks), exactly as on two
hosts, so a killed runner's claims come back only when their leases run out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support.fake_openai import Answer, FakeOpenAI, Slow, Status
from test_screen_crash import WAIT_SECONDS, finish_together, start_run, wait_for
from test_screen_run import KEY, KEY_ENV, PREFIX, db_rows, make_workspace, screen
from test_screen_runners import Gated, query

from reporter.cli import main
from reporter.config import load_workspace
from reporter.panel.store import open_store

CONTRACT_TIER = {"done", "admitted", "discarded", "failed", "leased", "unclaimed", "spend"}
"""The fields every tier of `--status --json` has (issue 34's contract)."""
CONTRACT_LEASE = {"runner", "host", "since", "until", "works"}


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`reporter ...` in its own process."""
    return subprocess.run([sys.executable, "-m", "reporter.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, KEY_ENV: KEY, **(env or {})}, timeout=WAIT_SECONDS)


def status_of(root: Path) -> dict:
    done = cli("screen", "--workspace", root, "--status", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def other_machine(w: dict, where: Path, database: str) -> Path:
    """A second workspace on the same state database, pool and releases, with its own raw folder."""
    text = (w["root"] / "reporter.toml").read_text()
    for name in ("pool.parquet", "specs", "releases"):
        text = text.replace(f'"{name}"', json.dumps(str(w["root"] / name)), 1)
    text = text.replace('database = "state/screen.db"', f"database = {json.dumps(database)}")
    where.mkdir(parents=True)
    (where / "reporter.toml").write_text(text)
    return where


# --- a runner killed on another machine -------------------------------------------------------------


def held_until(event: threading.Event):
    """A fake-server script: every work included, each reply held until `event` is set."""
    def script(work: str, model: str, attempt: int):
        return Answer("include") if event.is_set() else Gated(event, Answer("include"))
    return script


def claim_all_then_kill(w: dict, db: str, works: int) -> str:
    """Start runner A, wait until it holds all `works` (its replies held), SIGKILL it; returns its runner id."""
    a = start_run(w["root"])
    try:
        wait_for(lambda: query(db, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(works,)]
                 or a.poll() is not None, "runner A claimed every work")
        assert a.poll() is None, a.communicate()[1][-2000:]
        a.send_signal(signal.SIGKILL)
        a.wait(WAIT_SECONDS)
    finally:
        if a.poll() is None:
            a.kill()
        a.communicate()
    [(dead,)] = query(db, "SELECT DISTINCT claimed_by FROM jobs WHERE claimed_by IS NOT NULL")
    return dead


def kill_elsewhere_and_survive(tmp_path: Path, database: str | None) -> dict:
    """Runner A claims every work and is SIGKILLed with its requests in flight; runner B, on another machine,
    first finds them leased (exit 3), then, once A's leases ran out, takes them over (exit 0)."""
    answer = threading.Event()
    seen: dict = {}
    with FakeOpenAI(held_until(answer)) as server:
        w = make_workspace(tmp_path / "a", server.base_url, screen=6, cheap_voters=False, batch_size=6,
                           concurrency=4, lease_seconds=3600, **({"database": database} if database else {}))
        server.titles = w["titles"]
        db = database or str(w["root"] / "state" / "screen.db")
        b = other_machine(w, tmp_path / "b", db)
        dead = claim_all_then_kill(w, db, 6)

        first = cli("screen", "--workspace", b, "--run", "--json")
        seen["first"] = first
        seen["leased"] = status_of(b)
        refused = cli("export", "--workspace", b, "--out", tmp_path / "handoff.csv")
        seen["refused"] = refused
        store = open_store(db, where="[screen] database")
        try:
            store.heartbeat(dead, 0.001)  # A's leases run out now (the database's clock), as an hour later
            wait_for(lambda: all(x["reclaimable"] for x in status_of(b)["tiers"]["expensive"]["leased"]),
                     "A's leases ran out")
        finally:
            store.close()
        seen["reclaimable"] = status_of(b)
        answer.set()
        seen["second"] = cli("screen", "--workspace", b, "--run", "--json")
        seen["done"] = status_of(b)
        seen["export"] = cli("export", "--workspace", b, "--out", tmp_path / "handoff.csv")
        seen["counts"] = server.counts()
    seen["dead"] = dead
    seen["b"] = b
    seen["out"] = tmp_path / "handoff.csv"
    return seen


def check_survivor(seen: dict) -> None:
    first = seen["first"]
    assert first.returncode == 3, first.stderr[-2000:]
    report = json.loads(first.stdout)
    [tier] = [t for t in report["tiers"] if t["tier"] == "expensive"]
    assert (tier["screened"], tier["votes"], tier["leased_elsewhere"]) == (0, 0, 6)
    assert "6 works of expensive are leased by other runners" in first.stderr
    assert "reporter screen --status" in first.stderr and "exit status 3" in first.stderr

    status = seen["leased"]
    expensive = status["tiers"]["expensive"]
    assert CONTRACT_TIER <= set(expensive) and CONTRACT_TIER <= set(status["tiers"]["cheap"])
    assert {"spend", "budget"} <= set(status)
    assert (expensive["done"], expensive["admitted"], expensive["discarded"], expensive["failed"],
            expensive["unclaimed"], expensive["spend"]) == (0, 0, 0, 0, 0, 0.0)
    [lease] = expensive["leased"]
    assert CONTRACT_LEASE <= set(lease)
    assert (lease["runner"], lease["works"], lease["reclaimable"]) == (seen["dead"], 6, False)
    assert lease["host"] and lease["since"] <= status["now"] < lease["until"]
    assert status["spend"] == 0.0 and status["budget"] is None

    assert seen["refused"].returncode == 2
    assert ("expensive screen: 6 works leased, 0 not claimed yet" in seen["refused"].stderr
            and "Nothing was written" in seen["refused"].stderr)

    [lease] = seen["reclaimable"]["tiers"]["expensive"]["leased"]
    assert (lease["runner"], lease["works"], lease["reclaimable"]) == (seen["dead"], 6, True)
    assert lease["until"] <= seen["reclaimable"]["now"]

    second = seen["second"]
    assert second.returncode == 0, second.stderr[-2000:]
    assert [t["screened"] for t in json.loads(second.stdout)["tiers"] if t["tier"] == "expensive"] == [6]
    done = seen["done"]["tiers"]["expensive"]
    assert (done["done"], done["admitted"], done["leased"], done["unclaimed"]) == (6, 6, [], 0)
    assert done["spend"] > 0 and seen["done"]["spend"] == done["spend"]
    assert seen["export"].returncode == 0, seen["export"].stderr[-2000:]
    assert json.loads((seen["out"].parent / "handoff.csv.provenance.json").read_text())["partial"] is False


@pytest.mark.slow
def test_a_runner_killed_on_another_machine_sqlite(tmp_path):
    seen = kill_elsewhere_and_survive(tmp_path, None)
    check_survivor(seen)
    assert len(seen["counts"]) == 12 and set(seen["counts"].values()) <= {1, 2}, "asked once more at most: A's, cut"


@pytest.mark.slow
def test_a_runner_killed_on_another_machine_postgresql(tmp_path, postgres_url):
    seen = kill_elsewhere_and_survive(tmp_path, postgres_url)
    check_survivor(seen)
    assert len(seen["counts"]) == 12 and set(seen["counts"].values()) <= {1, 2}


@pytest.mark.slow
def test_a_runner_killed_on_the_same_machine_is_taken_over_at_once(tmp_path):
    """Same raw folder: the survivor finds the dead runner's file unlocked and frees its claims without waiting."""
    answer = threading.Event()
    with FakeOpenAI(held_until(answer)) as server:
        w = make_workspace(tmp_path / "a", server.base_url, screen=6, cheap_voters=False, batch_size=6,
                           concurrency=4, lease_seconds=3600)
        server.titles = w["titles"]
        claim_all_then_kill(w, str(w["root"] / "state" / "screen.db"), 6)
        answer.set()
        survivor = cli("screen", "--workspace", w["root"], "--run", "--json")
        status = status_of(w["root"])
    assert survivor.returncode == 0, survivor.stderr[-2000:]
    tier = status["tiers"]["expensive"]
    assert (tier["done"], tier["leased"], tier["unclaimed"]) == (6, [], 0)
    killed = [r for r in status["runners"] if r["state"] == "killed"]
    assert len(killed) == 1 and killed[0]["sent"] > killed[0]["answered"], "its requests cut by the kill"


# --- status in process, export, provenance ---------------------------------------------------------------


def test_status_counts_failed_and_unclaimed_works_and_spend_per_voter(tmp_path, capsys):
    script = {("W003", "exp-b"): Status(400)}  # W003 keeps one vote: failed, unclaimed
    with FakeOpenAI(script, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=2, screen=3)
        server.titles = w["titles"]
        screen(w)
    assert main(["screen", "--workspace", str(w["root"]), "--status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    cheap, expensive = status["tiers"]["cheap"], status["tiers"]["expensive"]
    assert (cheap["scope"], cheap["done"], cheap["admitted"], cheap["discarded"]) == (2, 2, 2, 0)
    assert (expensive["scope"], expensive["done"], expensive["admitted"], expensive["failed"],
            expensive["leased"], expensive["unclaimed"]) == (5, 4, 4, 1, [], 1)
    [(spent,)] = db_rows(w, "SELECT SUM(cost_usd) FROM votes")
    assert status["spend"] == pytest.approx(spent) and status["spend"] == pytest.approx(
        cheap["spend"] + expensive["spend"])
    assert [(v["voter"], v["votes"]) for v in expensive["voters"]] == [("expensive-a", 5), ("expensive-b", 4)]
    assert expensive["seconds_left"] is None or expensive["seconds_left"] >= 0
    assert main(["screen", "--workspace", str(w["root"]), "--status"]) == 0
    text = capsys.readouterr().out
    assert "expensive screen (generation " in text and "4 of 5 done (4 admitted, 0 discarded), 1 failed" in text
    assert "not complete: expensive screen: 0 works leased, 1 not claimed yet, 1 of them failed" in text
    assert main(["screen", "--workspace", str(w["root"]), "--status", "--run"]) == 2


def test_status_before_anything_ran_creates_no_database(tmp_path, capsys):
    w = make_workspace(tmp_path / "ws", "http://127.0.0.1:9/v1", screen=2, cheap_voters=False)
    assert main(["screen", "--workspace", str(w["root"]), "--status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["tiers"]["expensive"]["unclaimed"] == 2 and status["tiers"]["cheap"]["configured"] is False
    assert not (w["root"] / "state").exists()


def test_the_provenance_sidecar_and_parquet_metadata(tmp_path, capsys):
    script = {("W004", "exp-b"): Status(400)}
    with FakeOpenAI(script, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=1, screen=3)
        server.titles = w["titles"]
        screen(w)
        port = server.base_url.split(":")[2].split("/")[0]
    root = w["root"]
    out = tmp_path / "h.parquet"
    assert main(["export", "--workspace", str(root), "--out", str(out), "--partial"]) == 0
    side = tmp_path / "h.parquet.provenance.json"
    doc = json.loads(side.read_text())
    from reporter import __version__
    from reporter.hashing import sha256_file
    from reporter.screening.prompt import load_prompt
    ws = load_workspace(root)
    [(generation,)] = db_rows(w, "SELECT DISTINCT generation FROM verdicts WHERE tier = 'expensive'")
    release_id = json.loads((w["release_dir"] / "release.json").read_text())["release_id"]
    assert (doc["release_id"], doc["generation"], doc["prompt_hash"], doc["tool_version"]) == (
        release_id, generation, load_prompt(ws.screen).hash, __version__)
    assert doc["voters"] == [
        {"tier": tier, "name": f"{tier}-{x}", "model": model, "base_url": f"http://127.0.0.1:{port}",
         "provider": "openai-chat"}
        for tier, models in (("cheap", ("cheap-a", "cheap-b")), ("expensive", ("exp-a", "exp-b")))
        for x, model in zip("ab", models)]
    assert (doc["partial"], doc["rows"], doc["certificates"], doc["require_certified"]) == (True, 3, [], False)
    assert doc["incomplete"] == ["expensive screen: 0 works leased, 1 not claimed yet, 1 of them failed after "
                                 "retries"]
    assert doc["counts"]["expensive"] == {"scope": 4, "done": 3, "admitted": 3, "discarded": 0, "failed": 1,
                                          "leased": 0, "unclaimed": 1}
    [(spent,)] = db_rows(w, "SELECT SUM(cost_usd) FROM votes")
    assert doc["spend"] == pytest.approx(spent, abs=1e-6)
    assert (doc["file"], doc["sha256"]) == ("h.parquet", sha256_file(out))
    meta = pq.read_metadata(out).metadata
    carried = json.loads(meta[b"reporter.provenance"])
    assert carried == {k: v for k, v in doc.items() if k not in ("file", "sha256")}
    assert KEY not in side.read_text() and KEY.encode() not in out.read_bytes()
    first = (out.read_bytes(), side.read_bytes())
    assert main(["export", "--workspace", str(root), "--out", str(out), "--partial"]) == 0
    assert (out.read_bytes(), side.read_bytes()) == first, "same inputs, same bytes"


def test_a_base_url_is_shown_without_path_query_or_user():
    from reporter.screening.provenance import base_url_host
    assert base_url_host("https://user:sk-secret@api.example.com:8443/v1?key=sk-secret") == \
        "https://api.example.com:8443"
    assert base_url_host("http://[::1]:9/v1") == "http://[::1]:9"
    assert base_url_host("not a url") == ""


def test_exit_codes_are_documented_in_help_and_docs(capsys):
    with pytest.raises(SystemExit):
        main(["screen", "--help"])
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    codes = {words[0]: " ".join(words[1:]) for words in lines if words and words[0].isdigit()}
    assert codes["0"].startswith("done") and codes["1"] == "internal error" and codes["4"].startswith("stopped by --max-cost or [screen] budget")
    assert codes["2"].startswith("bad input") and codes["3"].startswith("not done: nothing more was claimable")
    assert codes["130"].startswith("Ctrl-C; 143 SIGTERM")
    docs = (Path(__file__).resolve().parent.parent / "docs" / "screening.md").read_text()
    assert "### Exit status" in docs and "| 3 |" in docs and "| 4 |" in docs


# --- the runner's end: in-flight cleared, no empty raw file, progress across runners -----------------------


def test_a_voter_down_stop_leaves_nothing_in_flight(tmp_path):
    """The second voter fails every request while the first one's replies are slow: the stop cuts them."""

    def script(work: str, model: str, attempt: int):
        return Status(400) if model == "exp-b" else Slow(1.0, Answer("include"))

    from reporter.errors import InputError
    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=30, cheap_voters=False, batch_size=4,
                           concurrency=4)
        server.titles = w["titles"]
        with pytest.raises(InputError, match="failed 5 requests in a row"):
            screen(w, tiers=("expensive",))
    [(sent, answered)] = db_rows(w, "SELECT sent, answered FROM requests")
    assert sent == answered, "a runner that ended has nothing in flight"
    assert main(["screen", "--workspace", str(w["root"])]) == 0  # the dry run lists no run in flight


def test_a_run_that_asks_nothing_leaves_no_raw_file(tmp_path):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, cheap_voters=False)
        server.titles = w["titles"]
        screen(w)
        raw = sorted(p.name for p in (w["root"] / "state" / "raw").iterdir())
        again = screen(w)
    assert again.tiers[0].screened == 0 and len(raw) == 1
    assert sorted(p.name for p in (w["root"] / "state" / "raw").iterdir()) == raw


@pytest.mark.slow
def test_each_runners_progress_counts_the_whole_tier(tmp_path):
    gate = threading.Event()
    with FakeOpenAI(held_until(gate)) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=12, cheap_voters=False, batch_size=2,
                           concurrency=2, timeout=10 * WAIT_SECONDS)
        server.titles = w["titles"]
        db = str(w["root"] / "state" / "screen.db")
        command = [sys.executable, "-m", "reporter.cli", "screen", "--workspace", str(w["root"]), "--run"]
        procs = [subprocess.Popen(command, env={**os.environ, KEY_ENV: KEY}, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            wait_for(lambda: len(query(db, "SELECT DISTINCT claimed_by FROM jobs WHERE claimed_by IS NOT NULL"))
                     == 2 or any(p.poll() is not None for p in procs), "both runners hold claims")
            gate.set()
            outs = finish_together(procs)
        finally:
            gate.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
    own = [int(out.split("expensive: ")[1].split(" works screened")[0]) for out, _ in outs]
    assert sum(own) == 12 and all(0 < n < 12 for n in own), own
    last = [[line for line in err.splitlines() if line.startswith("screen expensive")][-1] for _, err in outs]
    totals = [line.rsplit(": ", 1)[1].split(" works")[0] for line in last]
    assert all(t.endswith("/12") for t in totals), last
    assert max(int(t.split("/")[0]) for t in totals) == 12, ("the runner that ended last counts every runner's "
                                                              "verdicts, not its own share", last)


def test_a_runner_of_another_machine_is_running_only_while_its_heartbeats_come(tmp_path):
    """The dry run once called a runner killed on another machine "still running" (issue 34): without its raw
    file here, its heartbeats decide."""
    from reporter.panel.rawlog import open_raw_log
    from reporter.panel.store_status import RunnerRow, runner_state

    def row(runner: str, beat: float, finished: float | None = None) -> RunnerRow:
        return RunnerRow(runner, "elsewhere", 1, 1000.0, beat, finished, 4, 2)

    lease = 300  # a heartbeat every 100 s
    assert runner_state(row("far", 1000.0), tmp_path, lease, 1149.0) == "running"
    assert runner_state(row("far", 1000.0), tmp_path, lease, 1151.0) == "silent"
    assert runner_state(row("far", 1000.0, finished=1010.0), tmp_path, lease, 9999.0) == "ended"
    with open_raw_log(tmp_path, "here"):
        assert runner_state(row("here", 0.0), tmp_path, lease, 9999.0) == "running", "its file is locked"
    assert runner_state(row("here", 9999.0), tmp_path, lease, 9999.0) == "killed", "its file is unlocked"
    assert row("far", 0.0).in_flight == 2


def test_the_provenance_names_the_certificates_that_gated_the_export(tmp_path, capsys):
    from test_certify_export import certify
    from test_screen_export import SCRIPT
    from reporter.hashing import sha256_file
    with FakeOpenAI(SCRIPT, default=Answer("include", "Fits.")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=2, screen=5, other=1)
        server.titles = w["titles"]
        screen(w)
    root = w["root"]
    for pile in ("discard", "screen_cheap:discarded", "screen:discarded"):
        certify(capsys, root, pile)
    out = tmp_path / "h.csv"
    assert main(["export", "--workspace", str(root), "--out", str(out), "--require-certified", "--partial"]) == 0
    doc = json.loads((tmp_path / "h.csv.provenance.json").read_text())
    assert doc["require_certified"] is True and doc["partial"] is True
    assert [c["stratum"] for c in doc["certificates"]] == ["discard", "screen_cheap:discarded", "screen:discarded"]
    for c in doc["certificates"]:
        assert not Path(c["file"]).is_absolute() and c["sha256"] == sha256_file(root / c["file"])
