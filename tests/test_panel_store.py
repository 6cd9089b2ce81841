"""The state authority (reporter/screening/store.py) on a real SQLite file and a real PostgreSQL server.

Every test runs on both: one schema, one interface. Claims are checked for
exclusivity under real contention (threads and processes at once), leases
against the database's clock, and `record` for its one rule: only the
runner that still holds a claim writes, all of a call or nothing.
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from reporter.errors import InputError, InternalError
from reporter.panel.store import open_store
from reporter.panel.store_session import SCHEMA_VERSION
from reporter.panel.store_rows import FailureRow, Job, Recorded, ScopeCounts, VerdictRow, VoteRow
from reporter.panel.votes import Vote

E, G1, G2 = "expensive", "g1", "g2"
LEASE = 300.0
INCLUDE, EXCLUDE = Vote("include", reason="fits"), Vote("exclude", reason="off topic")


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str:
    """A state database: a SQLite file in a folder that does not exist yet, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "state" / "screen.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(database):
    with open_store(database, where="[screen] database") as s:
        yield s


def execute(database: str, sql: str) -> list[tuple]:
    """Run SQL on the database behind the store's back (what another tool, or a newer reporter, would do)."""
    if database.startswith("postgresql://"):
        with psycopg.connect(database, autocommit=True) as conn:
            cur = conn.execute(sql)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def vote(work: str, voter: str = "a", v: Vote = INCLUDE, *, generation: str = G1, raw: str = "raw/r.jsonl",
         offset: int = 0) -> VoteRow:
    return VoteRow(E, generation, work, voter, v, 120, 9, 0.25, raw, offset)


def verdict(work: str, outcome: str = "admit", *, generation: str = G1, tier: str = E) -> VerdictRow:
    return VerdictRow(tier, generation, work, outcome)


def ids(jobs: list[Job]) -> list[str]:
    return [j.work_id for j in jobs]


WORKS = [f"w{i:03d}" for i in range(10)]


# --- opening -------------------------------------------------------------------------------------

def test_the_schema_is_made_once_and_opening_again_is_harmless(database):
    with open_store(database, where="[screen] database") as s:
        assert s.seed_scope("r1", E, G1, WORKS) == 10
    with open_store(database, where="[screen] database") as s:
        assert s.counts("r1", E, G1) == ScopeCounts(scoped=10, done=0, claimed_live=0, claimable=10)
    assert execute(database, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]


def test_stores_opened_at_once_on_a_fresh_database_all_work(database):
    def open_and_seed(i: int) -> int:
        with open_store(database, where="[screen] database") as s:
            return s.seed_scope(f"r{i}", E, G1, WORKS)

    with ThreadPoolExecutor(4) as pool:
        created = list(pool.map(open_and_seed, range(4)))
    assert sorted(created) == [0, 0, 0, 10]  # the jobs are made once, whoever came first
    assert execute(database, "SELECT COUNT(*) FROM meta") == [(1,)]


def _open_when_all_are_ready(path: str, ready) -> str:
    ready.wait()
    try:
        with open_store(path, where="[screen] database"):
            return "opened"
    except InputError as exc:
        return str(exc)


def test_processes_starting_at_once_on_a_new_sqlite_file_all_open_it(tmp_path):
    """Six runners start on a file that does not exist yet, twenty times over: every one opens it.

    Switching a new file to WAL needs it alone for a moment, and SQLite says
    "database is locked" at once instead of waiting: before the switch was
    retried, about one open in twenty-five failed so (4 of 120 expected here).
    """
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager, ctx.Pool(6) as pool:
        for round_ in range(20):
            ready = manager.Barrier(6)
            path = str(tmp_path / f"round{round_}" / "screen.db")
            assert pool.starmap(_open_when_all_are_ready, [(path, ready)] * 6) == ["opened"] * 6


def test_a_database_of_another_schema_version_is_refused_not_altered(database):
    open_store(database, where="[screen] database").close()
    execute(database, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    for readonly in (False, True):
        with pytest.raises(InputError, match="schema version 99") as err:
            open_store(database, readonly=readonly, where="[screen] database")
        assert "[screen] database" in str(err.value)
    assert execute(database, "SELECT value FROM meta") == [("99",)]


def test_readonly_never_creates_a_sqlite_file(tmp_path):
    path = tmp_path / "state" / "screen.db"
    assert open_store(str(path), readonly=True, where="[screen] database") is None
    assert not path.parent.exists()


def test_readonly_on_a_database_without_the_schema_is_none_and_creates_nothing(postgres_url):
    assert open_store(postgres_url, readonly=True, where="[screen] database") is None
    assert execute(postgres_url, "SELECT COUNT(*) FROM information_schema.tables "
                                 "WHERE table_schema = current_schema()") == [(0,)]


def test_readonly_reads_and_never_writes(database):
    with open_store(database, where="[screen] database") as s:
        s.seed_scope("r1", E, G1, WORKS[:2])
        s.claim("r1", E, G1, "A", 1, LEASE)
        s.record("A", [vote(WORKS[0])], [verdict(WORKS[0])])
    with open_store(database, readonly=True, where="[screen] database") as ro:
        assert ro.verdicts(E, G1) == {WORKS[0]: "admit"}
        assert ro.votes(E, G1)[WORKS[0]]["a"].vote == INCLUDE
        with pytest.raises((sqlite3.OperationalError, psycopg.errors.ReadOnlySqlTransaction), match="(?i)read.?only"):
            ro.claim("r1", E, G1, "B", 5, LEASE)
    with open_store(database, where="[screen] database") as s:
        assert s.counts("r1", E, G1) == ScopeCounts(scoped=2, done=1, claimed_live=0, claimable=1)


def test_an_unreachable_server_is_an_input_error_without_the_password():
    with pytest.raises(InputError) as err:
        open_store("postgresql://screen:s3cr3t-pw@127.0.0.1:1/state?password=s3cr3t-pw", where="[screen] database")
    message = str(err.value)
    assert "s3cr3t-pw" not in message
    assert message.startswith("[screen] database postgresql://screen:***@127.0.0.1:1/state")


def test_a_file_that_is_not_sqlite_is_an_input_error(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are notes, not a database\n" * 100)
    with pytest.raises(InputError, match="notes.db"):
        open_store(str(path), where="[screen] database")
    assert path.read_text().startswith("these are notes")


# --- scope and claims ----------------------------------------------------------------------------

def test_seeding_is_idempotent_and_keeps_the_first_order(store):
    assert store.seed_scope("r1", E, G1, ["c", "a", "b", "a"]) == 3
    assert store.seed_scope("r1", E, G1, ["c", "a", "b"]) == 0
    assert store.seed_scope("r1", E, G1, ["d", "a"]) == 1
    assert store.seed_scope("r1", E, G1, []) == 0
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=4, done=0, claimed_live=0, claimable=4)
    assert ids(store.claim("r1", E, G1, "A", 10, LEASE)) == ["c", "a", "b", "d"]


def test_claims_follow_the_scope_order_up_to_the_limit(store):
    order = ["w9", "w1", "w5", "w3", "w7"]
    store.seed_scope("r1", E, G1, order)
    assert store.claim("r1", E, G1, "A", 0, LEASE) == []
    first = store.claim("r1", E, G1, "A", 2, LEASE)
    assert first == [Job("w9", {}), Job("w1", {})]
    assert ids(store.claim("r1", E, G1, "B", 2, LEASE)) == ["w5", "w3"]
    assert ids(store.claim("r1", E, G1, "A", 2, LEASE)) == ["w7"]
    assert store.claim("r1", E, G1, "C", 2, LEASE) == []
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=5, done=0, claimed_live=5, claimable=0)


def _claim_until_empty(store, runner: str, batch: int, release: str = "r1") -> list[str]:
    """Claim and record (votes and a verdict per job) until nothing is left; the claimed ids."""
    got: list[str] = []
    while True:
        jobs = store.claim(release, E, G1, runner, batch, LEASE)
        if not jobs:
            return got
        got += ids(jobs)
        done = store.record(runner, [vote(j.work_id, v) for j in jobs for v in ("a", "b")],
                            [verdict(j.work_id) for j in jobs])
        assert done == Recorded(votes=2 * len(jobs), verdicts=len(jobs), refused=())


MANY = [f"m{i:04d}" for i in range(500)]


def test_four_threads_never_claim_the_same_job(database):
    with open_store(database, where="[screen] database") as s:
        s.seed_scope("r1", E, G1, MANY)
    # Two runners share one store (the runner's worker threads), two have their own connection.
    shared = open_store(database, where="[screen] database")
    stores = [shared, shared, open_store(database, where="[screen] database"), open_store(database, where="[screen] database")]
    barrier = threading.Barrier(4)

    def run(i: int) -> list[str]:
        barrier.wait()
        return _claim_until_empty(stores[i], f"T{i}", batch=3 + i)

    try:
        with ThreadPoolExecutor(4) as pool:
            claimed = list(pool.map(run, range(4)))
    finally:
        for s in set(stores):
            s.close()
    everything = [w for got in claimed for w in got]
    assert sorted(everything) == MANY, "every job claimed exactly once"
    with open_store(database, where="[screen] database") as s:
        assert s.counts("r1", E, G1) == ScopeCounts(scoped=500, done=500, claimed_live=0, claimable=0)
        assert len(s.verdicts(E, G1)) == 500


def _claim_in_process(database: str, runner: str, barrier, out) -> None:
    with open_store(database, where="[screen] database") as s:
        barrier.wait()
        out.put((runner, _claim_until_empty(s, runner, batch=5)))


def test_four_processes_never_claim_the_same_job(database):
    with open_store(database, where="[screen] database") as s:
        s.seed_scope("r1", E, G1, MANY)
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_claim_in_process, args=(database, f"P{i}", barrier, out)) for i in range(4)]
    for p in procs:
        p.start()
    try:
        results = dict(out.get(timeout=120) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert all(p.exitcode == 0 for p in procs)
    everything = [w for got in results.values() for w in got]
    assert sorted(everything) == MANY, "every job claimed exactly once"
    with open_store(database, where="[screen] database") as s:
        assert s.counts("r1", E, G1).done == 500
    runners = {r for (r,) in execute(database, "SELECT DISTINCT runner FROM verdicts")}
    assert runners == {r for r, got in results.items() if got}


# --- leases ----------------------------------------------------------------------------------------

def _past(lease: float) -> None:
    """Wait until a lease of `lease` seconds taken just before has run out (by any clock)."""
    time.sleep(lease + 0.15)


def test_an_expired_lease_is_taken_over_and_the_first_runner_writes_nothing(database):
    a, b = open_store(database, where="[screen] database"), open_store(database, where="[screen] database")
    try:
        a.seed_scope("r1", E, G1, WORKS[:3])
        assert ids(a.claim("r1", E, G1, "A", 2, 0.5)) == WORKS[:2]
        assert ids(b.claim("r1", E, G1, "B", 5, LEASE)) == [WORKS[2]]  # A's claims are live
        assert b.claim_work(E, G1, WORKS[0], "B", LEASE) is None
        _past(0.5)
        assert a.counts("r1", E, G1) == ScopeCounts(scoped=3, done=0, claimed_live=1, claimable=2)
        assert ids(b.claim("r1", E, G1, "B", 5, LEASE)) == WORKS[:2]
        late = a.record("A", [vote(WORKS[0]), vote(WORKS[1])], [verdict(WORKS[0])],
                        [FailureRow(E, G1, WORKS[1], "b", "HTTP 500")])
        assert late == Recorded(votes=0, verdicts=0, refused=(WORKS[0], WORKS[1]))
        assert a.votes(E, G1) == {} and a.verdicts(E, G1) == {}
        assert a.failures(E, G1) == [FailureRow(E, G1, WORKS[1], "b", "HTTP 500")]  # failures are not votes
        assert b.record("B", [vote(WORKS[0], v=EXCLUDE)], [verdict(WORKS[0], "discard")]) == Recorded(1, 1, ())
        assert a.verdicts(E, G1) == {WORKS[0]: "discard"}
    finally:
        a.close()
        b.close()


def test_a_heartbeat_keeps_the_claim_even_past_the_first_lease(database):
    a, b = open_store(database, where="[screen] database"), open_store(database, where="[screen] database")
    try:
        a.seed_scope("r1", E, G1, WORKS[:3])
        a.register_runner("A", "host-a", 101)
        a.claim("r1", E, G1, "A", 2, 0.5)
        _past(0.5)
        assert a.heartbeat("A", LEASE) == 2  # nobody took them over meanwhile: A still holds both
        assert ids(b.claim("r1", E, G1, "B", 5, LEASE)) == [WORKS[2]]
        assert a.heartbeat("A", LEASE) == 2
        assert a.record("A", [vote(WORKS[0])], [verdict(WORKS[0])]) == Recorded(1, 1, ())
        assert a.heartbeat("A", LEASE) == 1  # a verdict ends the claim
        assert a.heartbeat("nobody", LEASE) == 0
        a.finish_runner("A")
    finally:
        a.close()
        b.close()


def test_the_claims_of_a_dead_runner_are_freed_at_once(store):
    store.seed_scope("r1", E, G1, WORKS[:4])
    store.claim("r1", E, G1, "dead", 3, LEASE)
    store.claim("r1", E, G1, "alive", 1, LEASE)
    assert store.claim("r1", E, G1, "B", 5, LEASE) == []
    assert store.free_claims_of(["dead", "dead", "never-ran"]) == 3
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=4, done=0, claimed_live=1, claimable=3)
    assert ids(store.claim("r1", E, G1, "B", 5, LEASE)) == WORKS[:3]
    assert store.record("dead", [vote(WORKS[0])]) == Recorded(0, 0, (WORKS[0],))
    assert store.release("B") == 3
    assert store.release("B") == 0


def test_claim_work_takes_one_job_for_recovery(store):
    store.seed_scope("r1", E, G1, WORKS[:2])
    assert store.claim_work(E, G1, "unknown", "A", LEASE) is None
    assert store.claim_work(E, G1, WORKS[1], "A", LEASE) == Job(WORKS[1], {})
    assert store.claim_work(E, G1, WORKS[1], "A", LEASE) == Job(WORKS[1], {})  # its own claim again
    assert store.claim_work(E, G1, WORKS[1], "B", LEASE) is None  # held live by A
    store.record("A", [vote(WORKS[1], "a")])
    assert store.claim_work(E, G1, WORKS[1], "A", LEASE) == Job(WORKS[1], {"a": INCLUDE})
    store.record("A", [vote(WORKS[1], "b")], [verdict(WORKS[1])])
    assert store.claim_work(E, G1, WORKS[1], "A", LEASE) is None  # done
    assert ids(store.claim("r1", E, G1, "B", 5, LEASE)) == [WORKS[0]]


# --- recording -------------------------------------------------------------------------------------

def test_record_is_all_or_nothing(database, store):
    store.seed_scope("r1", E, G1, WORKS[:2])
    store.claim("r1", E, G1, "A", 2, LEASE)
    # The second verdict is not an outcome of the expensive tier: the database refuses it after the
    # votes and the first verdict went in, and the whole call is rolled back.
    with pytest.raises(Exception, match="(?i)check"):
        store.record("A", [vote(WORKS[0]), vote(WORKS[1])], [verdict(WORKS[0]), verdict(WORKS[1], "proceed")],
                     [FailureRow(E, G1, WORKS[1], "b", "timeout")])
    assert store.votes(E, G1) == {} and store.verdicts(E, G1) == {} and store.failures(E, G1) == []
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=2, done=0, claimed_live=2, claimable=0)
    # The store is still usable, and the claims are still A's.
    assert store.record("A", [vote(WORKS[0])], [verdict(WORKS[0])]) == Recorded(1, 1, ())
    assert execute(database, "SELECT COUNT(*) FROM votes") == [(1,)]


def test_a_closed_store_raises_and_writes_nothing(database, store):
    store.seed_scope("r1", E, G1, WORKS[:1])
    store.claim("r1", E, G1, "A", 1, LEASE)
    store.close()
    store.close()
    with pytest.raises(InternalError, match="after close"):
        store.record("A", [vote(WORKS[0])], [verdict(WORKS[0])])
    assert execute(database, "SELECT COUNT(*) FROM votes") == [(0,)]


def test_votes_are_never_overwritten_and_a_verdict_ends_the_job(store):
    store.seed_scope("r1", E, G1, WORKS[:2])
    store.claim("r1", E, G1, "A", 2, LEASE)
    assert store.record("A", [vote(WORKS[0], "a", INCLUDE, offset=10)]) == Recorded(1, 0, ())
    assert store.record("A", [vote(WORKS[0], "a", EXCLUDE, offset=99)]) == Recorded(0, 0, ())
    kept = store.votes(E, G1)[WORKS[0]]["a"]
    assert (kept.vote, kept.raw_offset, kept.input_tokens, kept.output_tokens, kept.cost_usd) == (
        INCLUDE, 10, 120, 9, 0.25)
    invalid = Vote(None, "truncated", "cut at max_tokens")
    assert store.record("A", [vote(WORKS[0], "b", invalid)], [verdict(WORKS[0])]) == Recorded(1, 1, ())
    assert store.votes(E, G1)[WORKS[0]]["b"].vote == invalid
    # Done: never claimed again, no second verdict, no more votes.
    assert store.record("A", [vote(WORKS[0], "c")], [verdict(WORKS[0], "discard")]) == Recorded(0, 0, (WORKS[0],))
    assert store.verdicts(E, G1) == {WORKS[0]: "admit"}
    store.release("A")
    assert ids(store.claim("r1", E, G1, "B", 5, LEASE)) == [WORKS[1]]
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=2, done=1, claimed_live=1, claimable=0)


def test_a_reclaimed_job_comes_with_the_votes_it_has(store):
    store.seed_scope("r1", E, G1, WORKS[:2])
    store.claim("r1", E, G1, "A", 2, LEASE)
    store.record("A", [vote(WORKS[1], "a", EXCLUDE)])
    store.release("A")
    assert store.claim("r1", E, G1, "B", 5, LEASE) == [Job(WORKS[0], {}), Job(WORKS[1], {"a": EXCLUDE})]


def test_failures_are_recorded_whoever_holds_the_claim(store):
    store.seed_scope("r1", E, G1, WORKS[:1])
    store.record("nobody", failures=[FailureRow(E, G1, WORKS[0], "a", "HTTP 503 after 8 retries")])
    store.record("other", failures=[FailureRow(E, G1, WORKS[0], "b", "timeout")])
    assert store.failures(E, G1) == [FailureRow(E, G1, WORKS[0], "a", "HTTP 503 after 8 retries"),
                                     FailureRow(E, G1, WORKS[0], "b", "timeout")]
    assert store.failures(E, G2) == []
    assert store.counts("r1", E, G1).claimable == 1  # a failure is not a vote: the work stays open


def test_cheap_verdicts_are_their_own(store):
    store.seed_scope("r1", "cheap", G1, WORKS[:2])
    store.claim("r1", "cheap", G1, "A", 2, LEASE)
    assert store.record("A", verdicts=[verdict(WORKS[0], "proceed", tier="cheap"),
                                       verdict(WORKS[1], "discard", tier="cheap")]) == Recorded(0, 2, ())
    assert store.verdicts("cheap", G1) == {WORKS[0]: "proceed", WORKS[1]: "discard"}
    assert store.verdicts(E, G1) == {}
    store.seed_scope("r1", "cheap", G2, WORKS[:1])
    store.claim("r1", "cheap", G2, "A", 1, LEASE)
    with pytest.raises(Exception, match="(?i)check"):  # the cheap tier never admits
        store.record("A", verdicts=[verdict(WORKS[0], "admit", tier="cheap", generation=G2)])
    assert store.verdicts("cheap", G2) == {}


# --- generations, releases, reading ---------------------------------------------------------------

def test_a_new_generation_makes_the_works_claimable_again_and_keeps_the_old_rows(store):
    store.seed_scope("r1", E, G1, WORKS[:2])
    assert _claim_until_empty(store, "A", 5) == WORKS[:2]
    store.register_generation(G1, E, {"prompt": "p1", "voters": ["a", "b"]})
    store.register_generation(G1, E, {"prompt": "changed"})  # insert if absent: a generation never changes
    stored = store._read("SELECT generation, definition FROM generations", ())
    assert [(g, json.loads(d)) for g, d in stored] == [(G1, {"prompt": "p1", "voters": ["a", "b"]})]
    assert store.claim("r1", E, G1, "A", 5, LEASE) == []
    assert store.seed_scope("r1", E, G2, WORKS[:2]) == 2
    assert store.claim("r1", E, G2, "A", 5, LEASE) == [Job(WORKS[0], {}), Job(WORKS[1], {})]
    assert store.verdicts(E, G1) == {WORKS[0]: "admit", WORKS[1]: "admit"}
    assert set(store.votes(E, G1)[WORKS[0]]) == {"a", "b"}
    assert store.verdicts(E, G2) == {} and store.votes(E, G2) == {}
    assert store.counts("r1", E, G2) == ScopeCounts(scoped=2, done=0, claimed_live=2, claimable=0)
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=2, done=2, claimed_live=0, claimable=0)


def test_a_run_claims_only_its_releases_scope_and_a_verdict_follows_the_work(store):
    store.seed_scope("A", E, G1, ["x1", "x2"])
    store.seed_scope("B", E, G1, ["x3"])
    assert ids(store.claim("B", E, G1, "R", 5, LEASE)) == ["x3"]
    assert ids(store.claim("A", E, G1, "R", 5, LEASE)) == ["x1", "x2"]
    store.record("R", [vote("x1")], [verdict("x1")])
    store.release("R")
    # A newer release scoping x1 again finds its verdict; it claims only what is still open.
    assert store.seed_scope("C", E, G1, ["x4", "x1", "x2"]) == 1
    assert store.counts("C", E, G1) == ScopeCounts(scoped=3, done=1, claimed_live=0, claimable=2)
    assert ids(store.claim("C", E, G1, "R", 5, LEASE)) == ["x2", "x4"]  # x2 was seeded first (by A)
    assert store.counts("B", E, G1) == ScopeCounts(scoped=1, done=0, claimed_live=0, claimable=1)


def test_raw_positions_are_the_last_offset_per_raw_file(store):
    assert store.raw_positions() == {}
    store.seed_scope("r1", E, G1, WORKS[:3])
    store.claim("r1", E, G1, "A", 3, LEASE)
    store.record("A", [vote(WORKS[0], "a", raw="raw/A.jsonl", offset=0),
                       vote(WORKS[1], "a", raw="raw/A.jsonl", offset=5120),
                       vote(WORKS[2], "a", raw="raw/A.jsonl", offset=811),
                       vote(WORKS[0], "b", raw="raw/B.jsonl", offset=77)])
    assert store.raw_positions() == {"raw/A.jsonl": 5120, "raw/B.jsonl": 77}


def test_votes_and_verdicts_of_many_works_are_read_at_once(store):
    works = [f"n{i:05d}" for i in range(3000)]
    store.seed_scope("r1", E, G1, works)
    assert len(store.claim("r1", E, G1, "A", 3000, LEASE)) == 3000
    store.record("A", [vote(w, v) for w in works for v in ("a", "b")], [verdict(w) for w in works[::2]])
    votes = store.votes(E, G1, works[1:])
    assert len(votes) == 2999 and works[0] not in votes and set(votes[works[7]]) == {"a", "b"}
    assert store.votes(E, G1, ["not-a-work"]) == {} and store.votes(E, G1, []) == {}
    assert store.verdicts(E, G1, works[:10]) == {w: "admit" for w in works[:10:2]}
    assert len(store.verdicts(E, G1)) == 1500
    assert store.counts("r1", E, G1) == ScopeCounts(scoped=3000, done=1500, claimed_live=1500, claimable=0)


def test_counts_on_an_unknown_release_are_zero(store):
    assert store.counts("nope", E, G1) == ScopeCounts(0, 0, 0, 0)


def test_a_store_serves_a_runners_worker_threads(store):
    store.seed_scope("r1", E, G1, MANY[:200])
    jobs = store.claim("r1", E, G1, "A", 200, LEASE)

    def record_one(job: Job) -> Recorded:
        return store.record("A", [vote(job.work_id, "a"), vote(job.work_id, "b")], [verdict(job.work_id)])

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(record_one, jobs))
    assert all(r == Recorded(2, 1, ()) for r in results)
    assert store.counts("r1", E, G1).done == 200


def test_the_sqlite_store_uses_wal(tmp_path):
    path = tmp_path / "s.db"
    open_store(str(path), where="[screen] database").close()
    assert execute(str(path), "PRAGMA journal_mode") == [("wal",)]
