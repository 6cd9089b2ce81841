"""The state authority: scope, claims with leases, votes, verdicts and failures, in SQLite or PostgreSQL.

One schema and one `Store` whose logic is written once; the two dialects
differ only in the small SQL pieces of `Dialect` (placeholders, the clock,
how a write transaction starts, row locks, a table of ids from one
parameter). SQLite (the default, one file, several processes on one machine)
runs in WAL mode and starts every write with `BEGIN IMMEDIATE`, so writers
take turns and readers never wait; PostgreSQL (several machines) claims with
`SELECT ... FOR UPDATE SKIP LOCKED`, so two runners never wait for, nor take,
the same job. Lease times come from the database's clock, so machines need
not agree on the time.

A vote or verdict is written only by the runner that still holds the job's
claim: a runner whose lease ran out and was taken over writes nothing (its
raw responses stay on disk for the record). Verdicts and votes of old
generations are never deleted.

The store is called from worker threads by one runner: one connection,
guarded by a lock (`store_session.StoreSession`, the plumbing beneath `Store`:
statements, write transactions retried on deadlock, the schema made or checked).

Every text is stored whatever its code points: a reply is hostile, and a
lone surrogate (legal JSON: `"\\ud800"`) cannot be encoded as UTF-8 for
either database, nor can PostgreSQL's text hold a NUL. So every string
parameter goes in through `store_text` and every string read comes out
through `stored_text` (the same on both backends): NUL, the surrogates and
the marker U+FFFE itself are written as U+FFFE and four hex digits, and read
back as they were. Text without them (all ordinary text) is stored as is.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..hashing import canonical_json
from .store_connect import connect_postgres, connect_sqlite, is_postgres, redact_url, scrub
from .store_rows import FailureRow, Job, Recorded, RunRow, ScopeCounts, VerdictRow, VoteRow
from .store_status import StatusReads
from .store_sql import POSTGRES, SQLITE, VOTE_COLUMNS
from .votes import Vote


def open_store(database: str, *, readonly: bool = False, where: str) -> Store | None:
    """The store at `database` (a SQLite path or a postgresql:// URL), with its schema made when absent.

    `readonly` never creates or writes anything: it returns None when the SQLite
    file does not exist or the database holds no screening schema yet (a dry
    run must not create it). A database holding another schema version, or one
    that cannot be reached, raises `InputError` naming it (never its password) as `where` says it (the setting:
    `[screen] database`, `[digest.judge] database`).
    """
    setting = where
    if is_postgres(database):
        conn, dialect, where = connect_postgres(database, readonly, setting), POSTGRES, redact_url(database)
    else:
        if readonly and not Path(database).is_file():
            return None
        conn, dialect, where = connect_sqlite(database, readonly, setting), SQLITE, database
    store = Store(conn, dialect, where, setting)
    try:
        if readonly:
            if not store._has_schema():
                store.close()
                return None
            store._check_version()
        else:
            store._create_schema()
    except Exception as exc:
        store.close()
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{setting} {where}: cannot be used as the screening state "
                         f"({scrub(str(exc), database)}); name another database") from None
    return store


# --- the store ------------------------------------------------------------------------------------

class Store(StatusReads):
    """One interface over the state database; every method is one transaction and safe from any thread."""

    # -- runners and generations

    def register_runner(self, runner: str, host: str, pid: int) -> None:
        """Note a runner as started (its id is unique per run)."""
        now = self._d.now
        self._write(lambda: self._run(
            f"INSERT INTO runners (runner, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, {now}, {now}) "
            f"ON CONFLICT (runner) DO UPDATE SET host = excluded.host, pid = excluded.pid, "
            f"started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, finished_at = NULL",
            (runner, host, pid)))

    def note_requests(self, runner: str, *, sent: int = 0, answered: int = 0) -> None:
        """Count requests a runner sends (before it sends them, so a kill leaves them counted) or had answered.

        `answered` outside `record`: the replies of an ended runner that another
        runner adopted from its raw file (they were answered, only not recorded).
        """
        if sent > 0 or answered > 0:
            self._write(lambda: self._add_requests(runner, sent, answered))

    def _add_requests(self, runner: str, sent: int, answered: int) -> None:
        self._run("INSERT INTO requests (runner, sent, answered) VALUES (?, ?, ?) ON CONFLICT (runner) DO UPDATE "
                  "SET sent = requests.sent + excluded.sent, answered = requests.answered + excluded.answered",
                  (runner, int(sent), int(answered)))

    def runs(self) -> list[RunRow]:
        """Every runner the database knows, oldest first, with its request counts (none in an older database)."""
        counted = self._read(self._d.has_table, ("requests",))[0][0]
        if counted:
            rows = self._read("SELECT r.runner, r.host, r.pid, r.started_at, r.finished_at, q.sent, q.answered "
                              "FROM runners r LEFT JOIN requests q ON q.runner = r.runner "
                              "ORDER BY r.started_at, r.runner")
        else:
            rows = [(*r, None, None) for r in self._read(
                "SELECT runner, host, pid, started_at, finished_at FROM runners ORDER BY started_at, runner")]
        return [RunRow(runner, host, int(pid), float(started), None if finished is None else float(finished),
                       int(sent or 0), int(answered or 0), sent is not None)
                for runner, host, pid, started, finished, sent, answered in rows]

    def finish_runner(self, runner: str) -> None:
        """Note a runner as finished (its claims are released separately, by `release`); nothing of it is in
        flight any more: requests counted as sent that it never saw answered (cut by an abort or a voter-down
        stop) are taken off `sent`, so no list keeps counting requests of a runner that ended."""
        def work() -> None:
            self._run(f"UPDATE runners SET finished_at = {self._d.now} WHERE runner = ?", (runner,))
            self._run("UPDATE requests SET sent = answered WHERE runner = ? AND sent > answered", (runner,))

        self._write(work)

    def register_generation(self, generation: str, tier: str, definition: dict) -> None:
        """Store what a generation is (insert if absent: a generation's definition never changes)."""
        self._write(lambda: self._run(
            f"INSERT INTO generations (generation, tier, definition, created_at) VALUES (?, ?, ?, {self._d.now}) "
            f"ON CONFLICT (generation) DO NOTHING", (generation, tier, canonical_json(definition))))

    # -- scope and claims

    def seed_scope(self, release_id: str, tier: str, generation: str, work_ids: Sequence[str]) -> int:
        """Record which works the release sends to the tier and make their jobs; returns the jobs created.

        Idempotent. A new job's `seq` continues after the generation's last one
        in the release's order, so claims follow the scope's order and works a
        release inherited from an earlier one come first.
        """
        ids = list(dict.fromkeys(work_ids))
        if not ids:
            return 0
        packed = self._ids(ids)

        def work() -> tuple[int, int]:
            scoped = self._run(f"INSERT INTO scope (release_id, tier, work_id, seq) SELECT ?, ?, i.work_id, i.pos "
                               f"FROM {self._d.ids} i WHERE 1 = 1 ON CONFLICT DO NOTHING", (release_id, tier, packed))
            base = self._run("SELECT COALESCE(MAX(seq) + 1, 0) FROM jobs WHERE tier = ? AND generation = ?",
                             (tier, generation)).fetchone()[0]
            cur = self._run(f"INSERT INTO jobs (tier, generation, work_id, seq, done) "
                            f"SELECT ?, ?, i.work_id, ? + i.pos, 0 FROM {self._d.ids} i WHERE 1 = 1 "
                            f"ON CONFLICT DO NOTHING", (tier, generation, int(base), packed))
            return max(scoped.rowcount, 0), max(cur.rowcount, 0)

        scoped, created = self._write(work)
        if scoped or created:
            self._analyze("scope, jobs")
        return created

    def claim(self, release_id: str, tier: str, generation: str, runner: str, limit: int,
              lease_seconds: float) -> list[Job]:
        """Claim up to `limit` jobs of the release's scope without a verdict, unclaimed or with an expired lease.

        In seeding order (the scope's order). Each job comes with the votes it
        already has in the generation, so only the missing voters are asked.
        """
        if limit <= 0:
            return []
        d = self._d

        def work() -> list[Job]:
            ids = [r[0] for r in self._run(
                f"SELECT j.work_id FROM jobs j WHERE j.tier = ? AND j.generation = ? AND j.done = 0 "
                f"AND (j.claimed_by IS NULL OR j.lease_until < {d.now}) "
                f"AND EXISTS (SELECT 1 FROM scope s WHERE s.release_id = ? AND s.tier = j.tier "
                f"AND s.work_id = j.work_id) ORDER BY j.seq, j.work_id LIMIT ?{d.claim_lock}",
                (tier, generation, release_id, int(limit))).fetchall()]
            if not ids:
                return []
            self._run(f"UPDATE jobs SET claimed_by = ?, lease_until = {d.now} + ? WHERE tier = ? AND generation = ? "
                      f"AND {d.among_ids}",
                      (runner, float(lease_seconds), tier, generation, self._ids(ids)))
            return self._jobs(tier, generation, ids)

        return self._write(work)

    def claim_work(self, tier: str, generation: str, work_id: str, runner: str,
                   lease_seconds: float) -> Job | None:
        """Claim one job (recovery of a reply whose vote row is missing).

        None when the job has a verdict, is held by another runner whose lease
        has not run out, or does not exist. A runner may re-claim its own job.
        """
        d = self._d

        def work() -> Job | None:
            cur = self._run(
                f"UPDATE jobs SET claimed_by = ?, lease_until = {d.now} + ? WHERE tier = ? AND generation = ? "
                f"AND work_id = ? AND done = 0 AND (claimed_by IS NULL OR claimed_by = ? OR lease_until < {d.now})",
                (runner, float(lease_seconds), tier, generation, work_id, runner))
            return self._jobs(tier, generation, [work_id])[0] if cur.rowcount == 1 else None

        return self._write(work)

    def _jobs(self, tier: str, generation: str, ids: list[str]) -> list[Job]:
        have = self._vote_rows(tier, generation, ids)
        return [Job(w, {voter: row.vote for voter, row in have.get(w, {}).items()}) for w in ids]

    def heartbeat(self, runner: str, lease_seconds: float) -> int:
        """Extend the lease of every job the runner holds; returns how many it holds."""
        d = self._d

        def work() -> int:
            cur = self._run(f"UPDATE jobs SET lease_until = {d.now} + ? WHERE claimed_by = ? AND done = 0",
                            (float(lease_seconds), runner))
            held = max(cur.rowcount, 0)
            self._run(f"UPDATE runners SET heartbeat_at = {d.now} WHERE runner = ?", (runner,))
            return held

        return self._write(work)

    def release(self, runner: str) -> int:
        """Clear the runner's claims on jobs without a verdict (it stops); returns how many."""
        return self.free_claims_of([runner])

    def free_claims_of(self, runners: Sequence[str]) -> int:
        """Make the claims of runners known to be dead claimable now, without waiting for their leases."""
        return self._write(lambda: self._many(
            "UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ? AND done = 0",
            [(r,) for r in dict.fromkeys(runners)]))

    # -- recording

    def record(self, runner: str, votes: Sequence[VoteRow] = (), verdicts: Sequence[VerdictRow] = (),
               failures: Sequence[FailureRow] = (), answered: int = 0, unsent: int = 0) -> Recorded:
        """Write votes, verdicts and failures in one transaction.

        `answered`: how many of the runner's sent requests (`note_sent`) these
        rows answer, counted in the same transaction (a reply whose vote is
        refused was answered all the same); `unsent`: requests counted as sent
        that were never sent after all (taken off the sent count).

        A vote or verdict is written only while its job is claimed by `runner`
        and has no verdict; otherwise its work id is in `refused`. Votes are
        inserted if absent, never overwritten. A verdict marks its job done and
        clears the claim. Failures are always recorded (they are not votes).
        """
        d = self._d

        def work() -> Recorded:
            held = {tuple(r) for r in self._run(
                f"SELECT tier, generation, work_id FROM jobs WHERE claimed_by = ? AND done = 0{d.row_lock}",
                (runner,)).fetchall()}
            refused: dict[str, None] = {}

            def keep(rows: Sequence[Any]) -> list[Any]:
                kept = [r for r in rows if (r.tier, r.generation, r.work_id) in held]
                refused.update((r.work_id, None) for r in rows if (r.tier, r.generation, r.work_id) not in held)
                return kept

            kept_votes, kept_verdicts = keep(votes), keep(verdicts)
            n_votes = self._many(
                f"INSERT INTO votes ({VOTE_COLUMNS}, runner, recorded_at) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {d.now}) ON CONFLICT DO NOTHING",
                [(v.tier, v.generation, v.work_id, v.voter, v.vote.answer, v.vote.invalid_cause, v.vote.reason,
                  v.input_tokens, v.output_tokens, float(v.cost_usd), v.raw_file, int(v.raw_offset), runner)
                 for v in kept_votes])
            self._many("INSERT INTO vote_details (tier, generation, work_id, voter, detail) VALUES (?, ?, ?, ?, ?) "
                       "ON CONFLICT DO NOTHING",
                       [(v.tier, v.generation, v.work_id, v.voter, v.vote.detail) for v in kept_votes
                        if v.vote.detail is not None])
            n_verdicts = self._many(
                f"INSERT INTO verdicts (tier, generation, work_id, outcome, runner, recorded_at) "
                f"VALUES (?, ?, ?, ?, ?, {d.now}) ON CONFLICT DO NOTHING",
                [(v.tier, v.generation, v.work_id, v.outcome, runner) for v in kept_verdicts])
            self._many("UPDATE jobs SET done = 1, claimed_by = NULL, lease_until = NULL "
                       "WHERE tier = ? AND generation = ? AND work_id = ?",
                       [(v.tier, v.generation, v.work_id) for v in kept_verdicts])
            self._many(f"INSERT INTO failures (tier, generation, work_id, voter, cause, runner, at) "
                       f"VALUES (?, ?, ?, ?, ?, ?, {d.now})",
                       [(f.tier, f.generation, f.work_id, f.voter, f.cause, runner) for f in failures])
            if answered > 0 or unsent > 0:
                self._add_requests(runner, -unsent, answered)
            return Recorded(votes=n_votes, verdicts=n_verdicts, refused=tuple(refused))

        recorded = self._write(work)
        self._grew(recorded.votes + recorded.verdicts)
        return recorded

    # -- reading

    def raw_positions(self) -> dict[str, int]:
        """raw_file -> the largest raw_offset a vote row names (where reading a raw file for lost replies starts)."""
        return {f: int(o) for f, o in self._read("SELECT raw_file, MAX(raw_offset) FROM votes GROUP BY raw_file")}

    def _vote_rows(self, tier: str, generation: str,
                   work_ids: Sequence[str] | None) -> dict[str, dict[str, VoteRow]]:
        where = "WHERE tier = ? AND generation = ?"
        params: list[Any] = [tier, generation]
        if work_ids is not None:
            if not work_ids:
                return {}
            where += f" AND {self._d.among_ids}"
            params.append(self._ids(list(work_ids)))
        details = self._vote_details(f"SELECT work_id, voter, detail FROM vote_details {where}", params)
        out: dict[str, dict[str, VoteRow]] = {}
        for (t, g, w, voter, answer, cause, reason, tin, tout, cost, raw_file, raw_offset) in \
                self._run(f"SELECT {VOTE_COLUMNS} FROM votes {where}", params).fetchall():
            out.setdefault(w, {})[voter] = VoteRow(
                tier=t, generation=g, work_id=w, voter=voter,
                vote=Vote(answer, cause, reason, details.get((w, voter))),
                input_tokens=tin, output_tokens=tout, cost_usd=float(cost), raw_file=raw_file,
                raw_offset=int(raw_offset))
        return out

    def _vote_details(self, sql: str, params: Sequence[Any]) -> dict[tuple[str, str], str]:
        """(work_id, voter) -> detail, by the same query as the votes' over vote_details ({} without the table)."""
        if not self._details:
            self._details = bool(self._run(self._d.has_table, ("vote_details",)).fetchone()[0])
            if not self._details:
                return {}
        return {(w, voter): detail for w, voter, detail in self._run(sql, params).fetchall()}

    def votes(self, tier: str, generation: str,
              work_ids: Sequence[str] | None = None) -> dict[str, dict[str, VoteRow]]:
        """work_id -> voter -> recorded vote in the generation (all works, or those named), in one query."""
        with self._lock:
            return self._vote_rows(tier, generation, work_ids)

    def verdicts(self, tier: str, generation: str, work_ids: Sequence[str] | None = None) -> dict[str, str]:
        """work_id -> stored outcome in the generation (all works, or those named), in one query."""
        sql = "SELECT work_id, outcome FROM verdicts WHERE tier = ? AND generation = ?"
        params: list[Any] = [tier, generation]
        if work_ids is not None:
            if not work_ids:
                return {}
            sql += f" AND {self._d.among_ids}"
            params.append(self._ids(list(work_ids)))
        return dict(self._read(sql, params))

    def counts(self, release_id: str, tier: str, generation: str) -> ScopeCounts:
        """How many of the release's works for the tier are scoped, done, held live, and claimable now."""
        now = self._d.now
        scoped, done, live, claimable = self._read(
            f"SELECT COUNT(*), "
            f"COALESCE(SUM(CASE WHEN j.done = 1 THEN 1 ELSE 0 END), 0), "
            f"COALESCE(SUM(CASE WHEN j.done = 0 AND j.claimed_by IS NOT NULL AND j.lease_until >= {now} "
            f"THEN 1 ELSE 0 END), 0), "
            f"COALESCE(SUM(CASE WHEN j.done = 0 AND (j.claimed_by IS NULL OR j.lease_until < {now}) "
            f"THEN 1 ELSE 0 END), 0) "
            f"FROM scope s LEFT JOIN jobs j ON j.tier = s.tier AND j.generation = ? AND j.work_id = s.work_id "
            f"WHERE s.release_id = ? AND s.tier = ?", (generation, release_id, tier))[0]
        return ScopeCounts(scoped=int(scoped), done=int(done), claimed_live=int(live), claimable=int(claimable))

    def failures(self, tier: str, generation: str) -> list[FailureRow]:
        """Every provider failure recorded in the generation, oldest first."""
        return [FailureRow(*r) for r in self._read(
            "SELECT tier, generation, work_id, voter, cause FROM failures WHERE tier = ? AND generation = ? "
            "ORDER BY at, work_id, voter, cause", (tier, generation))]

    def spend(self, tier: str, generation: str) -> list[tuple[str, str, float]]:
        """What the generation's recorded replies cost: `(runner, voter, dollars)`, one row per pair that has votes
        (the budget's spend across runs, `budget.py`; per voter for a status)."""
        return [(runner, voter, float(usd)) for runner, voter, usd in self._read(
            "SELECT runner, voter, SUM(cost_usd) FROM votes WHERE tier = ? AND generation = ? "
            "GROUP BY runner, voter ORDER BY runner, voter", (tier, generation))]
