"""The store's reads for the operator's console (`reporter screen --status`): claims, spend, pace, runners.

`StatusReads` sits between `StoreSession` and `Store` (`Store` inherits it):
each method is one read, on the database's clock, identical on SQLite and
PostgreSQL. What is read is small whatever the scope: the open claims (at
most every runner's batches in flight), one row per voter, one row per
runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .store_session import StoreSession


@dataclass(frozen=True)
class ClaimRow:
    """One job without a verdict that a runner holds, or held until its lease ran out."""

    work_id: str
    """The work."""
    runner: str
    """The runner holding it (`claimed_by`)."""
    host: str
    """The runner's machine ('' when the runner is unknown)."""
    since: float | None
    """When that runner started (the database's clock, epoch seconds): it has held its claims since then at most."""
    until: float
    """When its lease runs out (it ran out when `until < now`: the job is reclaimable)."""


@dataclass(frozen=True)
class RunnerRow:
    """One runner (one `--run`) with its heartbeat and its requests."""

    runner: str
    """The runner id."""
    host: str
    """Its machine."""
    pid: int
    """Its process id."""
    started_at: float
    """When it started."""
    heartbeat_at: float | None
    """Its last heartbeat (None: none yet)."""
    finished_at: float | None
    """When it ended normally (None: still running, or killed)."""
    sent: int
    """Requests it sent (0 in a database without the requests table)."""
    answered: int
    """Of those, the ones whose reply or failure was recorded."""

    @property
    def in_flight(self) -> int:
        """Requests sent and never answered."""
        return max(self.sent - self.answered, 0)


HEARTBEATS_MISSED = 1.5
"""A runner of another machine counts as `silent` once this many heartbeats (one every lease / 3) are missing."""


def runner_state(row: RunnerRow, raw_dir: Path, lease_seconds: float, now: float) -> str:
    """`ended` (it marked itself finished), `killed` (its raw file here is unlocked: it died on this machine),
    `running` (its raw file here is locked, or, for a runner of another machine, a heartbeat came lately), or
    `silent` (another machine's runner that missed its heartbeats: killed, or its machine lost; its leases run out
    `lease_seconds` after its last heartbeat)."""
    from .rawlog import SUFFIX, RUNNER_ID, is_dead
    if row.finished_at is not None:
        return "ended"
    path = Path(raw_dir) / (row.runner + SUFFIX) if RUNNER_ID.fullmatch(row.runner) else None
    if path is not None and path.exists():
        return "killed" if is_dead(path) else "running"
    last = max(row.heartbeat_at or row.started_at, row.started_at)
    return "running" if now - last <= HEARTBEATS_MISSED * lease_seconds / 3 else "silent"


class StatusReads(StoreSession):
    """The console's reads (mixed into `Store`)."""

    def clock(self) -> float:
        """The database's clock now, epoch seconds (what leases are measured against)."""
        return float(self._read(f"SELECT {self._d.now}")[0][0])

    def open_claims(self, tier: str, generation: str) -> list[ClaimRow]:
        """Every job of the generation without a verdict that a runner holds (live or with its lease run out)."""
        return [ClaimRow(w, runner, host or "", None if since is None else float(since), float(until))
                for w, runner, host, since, until in self._read(
                    "SELECT j.work_id, j.claimed_by, r.host, r.started_at, j.lease_until FROM jobs j "
                    "LEFT JOIN runners r ON r.runner = j.claimed_by WHERE j.tier = ? AND j.generation = ? "
                    "AND j.done = 0 AND j.claimed_by IS NOT NULL ORDER BY j.claimed_by, j.seq, j.work_id",
                    (tier, generation))]

    def spend_by_voter(self, tier: str, generation: str) -> dict[str, tuple[int, float]]:
        """voter -> (votes recorded, dollars they cost) in the generation (every release's works)."""
        return {voter: (int(n), float(cost or 0.0)) for voter, n, cost in self._read(
            "SELECT voter, COUNT(*), SUM(cost_usd) FROM votes WHERE tier = ? AND generation = ? GROUP BY voter "
            "ORDER BY voter", (tier, generation))}

    def recent_verdicts(self, tier: str, generation: str, window: float) -> tuple[int, float | None, float]:
        """(verdicts recorded in the last `window` seconds, when the first of them was, now): the pace."""
        n, first, now = self._read(
            f"SELECT COUNT(*), MIN(recorded_at), {self._d.now} FROM verdicts WHERE tier = ? AND generation = ? "
            f"AND recorded_at >= {self._d.now} - ?", (tier, generation, float(window)))[0]
        return int(n), None if first is None else float(first), float(now)

    def runner_rows(self) -> list[RunnerRow]:
        """Every runner, oldest first, with its heartbeat and request counts."""
        counted = self._read(self._d.has_table, ("requests",))[0][0]
        join = ("LEFT JOIN requests q ON q.runner = r.runner" if counted else
                "LEFT JOIN (SELECT NULL AS runner, 0 AS sent, 0 AS answered) q ON q.runner = r.runner")
        return [RunnerRow(runner, host, int(pid), float(started), None if beat is None else float(beat),
                          None if finished is None else float(finished), int(sent or 0), int(answered or 0))
                for runner, host, pid, started, beat, finished, sent, answered in self._read(
                    f"SELECT r.runner, r.host, r.pid, r.started_at, r.heartbeat_at, r.finished_at, q.sent, "
                    f"q.answered FROM runners r {join} ORDER BY r.started_at, r.runner")]

    def leased_elsewhere(self, release_id: str, tier: str, generation: str, runner: str) -> int:
        """Works of the release's scope without a verdict that runners other than `runner` hold (their lease
        running or run out): what a runner that found nothing to claim leaves to others."""
        return int(self._read(
            "SELECT COUNT(*) FROM jobs j WHERE j.tier = ? AND j.generation = ? AND j.done = 0 "
            "AND j.claimed_by IS NOT NULL AND j.claimed_by <> ? AND EXISTS (SELECT 1 FROM scope s "
            "WHERE s.release_id = ? AND s.tier = j.tier AND s.work_id = j.work_id)",
            (tier, generation, runner, release_id))[0][0])
