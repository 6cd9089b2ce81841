"""Several `reporter screen --run` processes at once against one state database (SQLite, PostgreSQL).

Every work must be asked exactly once per voter (the fake server counts
each request) and end with exactly one verdict. So that the runners really
overlap, the fake server holds every answer until each runner holds claims
of its own; from then on they race over the rest.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time

import pytest
from support.fake_openai import Answer, FakeOpenAI
from test_screen_crash import WAIT_SECONDS, finish_together, start_run
from test_screen_run import MODELS, make_workspace, short


class Gated:
    """A fake-server action: wait until the gate opens, then answer."""

    def __init__(self, gate: threading.Event, then) -> None:
        self.gate, self.then = gate, then

    async def _reply(self, exchange) -> None:
        while not self.gate.is_set():
            await asyncio.sleep(0.01)
        await self.then._reply(exchange)


def query(database: str, sql: str) -> list[tuple]:
    """Rows from the state database, SQLite file or PostgreSQL URL ([] before its schema exists)."""
    try:
        if database.startswith("postgresql://"):
            import psycopg
            with psycopg.connect(database, autocommit=True) as conn:
                return [tuple(r) for r in conn.execute(sql).fetchall()]
        conn = sqlite3.connect(database)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()
    except Exception:  # the first runner is still making the schema
        return []


def run_at_once(tmp_path, runners: int, database: str | None) -> None:
    gate = threading.Event()

    def script(work: str, model: str, attempt: int):
        label = "exclude" if work in {"W002", "W004", "W010"} else "include"  # W002, W004: two cheap excludes
        return Answer(label) if gate.is_set() else Gated(gate, Answer(label))

    with FakeOpenAI(script) as server:
        # A held answer must not time out (the client would ask again) however long the runners take to start.
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=8, screen=24, batch_size=3, concurrency=2,
                           timeout=10 * WAIT_SECONDS, **({"database": database} if database else {}))
        server.titles = w["titles"]
        db = database or str(w["root"] / "state" / "screen.db")
        procs = [start_run(w["root"]) for _ in range(runners)]
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while len(query(db, "SELECT DISTINCT claimed_by FROM jobs WHERE claimed_by IS NOT NULL")) < runners:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    for p in procs:
                        p.kill()
                    raise AssertionError("the runners never all held claims: " + " | ".join(
                        p.communicate()[1][-1500:] for p in procs))
                time.sleep(0.05)
            gate.set()
            reports = [json.loads(out) for out, _ in finish_together(procs)]
        finally:
            gate.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        counts = server.counts()
    cheap = [x for x, k in w["kinds"].items() if k == "cheap"]
    passed = [x for x in cheap if x not in ("W002", "W004")]
    expected = {(x, m): 1 for x in cheap for m in MODELS["cheap"]}
    expected |= {(x, m): 1 for x in passed + [x for x, k in w["kinds"].items() if k == "screen"]
                 for m in MODELS["expensive"]}
    assert counts == expected, {k: n for k, n in counts.items() if n != 1}
    verdicts = query(db, "SELECT tier, work_id, outcome FROM verdicts")
    assert sorted((t, short(x)) for t, x, _ in verdicts) == sorted(
        [("cheap", x) for x in cheap] + [("expensive", x) for x in passed]
        + [("expensive", x) for x, k in w["kinds"].items() if k == "screen"]), "exactly one verdict per work"
    assert {short(x): o for t, x, o in verdicts if t == "cheap" and o == "discard"} == {"W002": "discard",
                                                                                       "W004": "discard"}
    assert len(query(db, "SELECT DISTINCT runner FROM votes")) == runners, "every runner recorded votes"
    assert query(db, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)]
    assert sum(t["votes"] for r in reports for t in r["tiers"]) == len(expected)


@pytest.mark.slow
@pytest.mark.parametrize("runners", [2, 4])
def test_runners_at_once_on_one_sqlite_file(tmp_path, runners):
    run_at_once(tmp_path, runners, None)


@pytest.mark.slow
@pytest.mark.parametrize("runners", [2, 4])
def test_runners_at_once_on_postgresql(tmp_path, runners, postgres_url):
    run_at_once(tmp_path, runners, postgres_url)


def test_works_held_by_a_live_runner_are_left_to_it_and_taken_over_once_its_lease_ran_out(tmp_path):
    from reporter.panel.prompt import generation_for
    from reporter.screening.prompt import load_prompt
    from reporter.panel.store import open_store
    from test_screen_run import screen

    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=6, cheap_voters=False, lease_seconds=1)
        server.titles = w["titles"]
        settings = w["ws"].screen
        generation = generation_for("expensive", settings.expensive, load_prompt(settings)).id
        release_id = json.loads((w["release_dir"] / "release.json").read_text())["release_id"]
        ids = [f"t:W00{i}" for i in range(1, 7)]
        store = open_store(settings.database, where="[screen] database")
        try:
            # A runner on another machine (no raw file here) claims two works with a long lease.
            store.seed_scope(release_id, "expensive", generation, ids)
            held = store.claim(release_id, "expensive", generation, "elsewhere", 2, 3600)
            assert [j.work_id for j in held] == ids[:2]
            first = screen(w, tiers=("expensive",))
            assert first.tiers[0].screened == 4
            assert {short(x) for x, _ in server.counts()} == {"W003", "W004", "W005", "W006"}
            # Its lease runs out (the database's clock decides): the next runner takes the works over.
            store.heartbeat("elsewhere", 0.01)
            deadline = time.monotonic() + WAIT_SECONDS
            while store.counts(release_id, "expensive", generation).claimable < 2:
                assert time.monotonic() < deadline
                time.sleep(0.02)
            second = screen(w, tiers=("expensive",))
        finally:
            store.close()
    assert second.tiers[0].screened == 2
    assert all(n == 1 for n in server.counts().values()) and len(server.counts()) == 12
