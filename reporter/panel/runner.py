"""The run: claim works, ask the voters whose vote is missing, record, and never pay twice.

`run_tasks` runs the steps of a `Tasks` (what is asked of whom) as one
runner among any number (on this machine or others, through one state
database). A task describes itself to it (`Tasks`: its voters, its answer
schema, its prompt and generation, its scope, its gate); the screen of a
release runs it tier by tier (`reporter.screening.run`), the digest's
criteria judge over weeks (`reporter.digest.judge.run`):

1. register the runner, open its raw file (locked for its life);
2. per step (a tier; a judged week): the prompt and the generation (registered), the scope (seeded);
3. recovery: runners whose raw file nobody holds have ended; their claims
   are freed, and their replies of this generation that never got a vote
   row are adopted (claimed and recorded from the raw line), so a reply
   that was paid for is never asked again (`recovery.py`);
4. the loop (`tier_loop.py`): claim a batch whenever the voters could take more work, ask
   each claimed work's missing voters (both at once; `ChatVoter` bounds each
   voter's concurrency), and group-commit each answer as soon as it came back,
   whatever the job's other voter does: the raw lines are appended and
   fsynced, then one `store.record` writes the votes, the failures and every
   verdict the gate can now give. A heartbeat extends the claims every
   lease/3. `--max-cost` and the workspace's budget (`budget.py`) reserve each
   request's worst case before it is sent and stop sending when the next one
   would pass either (the budget's spend is read from the database, over runs).
5. once every step found nothing more to claim, the works of each step's scope that other runners still hold
   are counted (`TierReport.leased_elsewhere`: the run is not done, exit 3);
6. at the end, however it ends, the claims without a verdict are released, the runner's requests never answered
   stop counting as in flight, and a raw file nothing was written to is removed.

SIGINT (Ctrl-C) and SIGTERM (`timeout`, systemd, `docker stop`) both drain:
nothing more is claimed or sent, what was sent is answered and recorded; the
same signal again aborts at once.

All database calls run on one worker thread, so the event loop keeps
reading replies while a commit waits for the disk.

The crash tests' seam (documented in docs/screening.md): `run_tasks`'s
`after_raw_written` is called with the batch count right after a batch's raw
lines are fsynced and before their vote rows are written, the one moment a
crash test cannot otherwise aim at; the command never passes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Protocol

from ..errors import Aborted, InputError
from ..progress import Progress
from ..runs import FileRef, ModelUse, RunStart, host_of, settings_json
from .config import VoterSettings
from .budget import Budget, budget_name
from .ratelimit import Traffic
from .rawlog import open_raw_log, raw_line, reply_usage
from .recovery import recover
from .run_report import RunReport, TierReport
from .tier_loop import Answered, Asked, Tally, Tier, TierLoop
from .votes import FAILED, AnswerSchema, Vote

SPEND_READ_SHARE = 0.05
"""With a workspace budget, the most of its time the database thread spends reading the other runners' spend
(before a claim): a read taking q seconds waits q / SPEND_READ_SHARE before the next, except near the budget's end
(`Budget.near_limit`), where every claim reads it. The sum took 0.14 s at 100,000 votes: every 2.8 s then; a small
screen reads it at every claim."""


def new_runner_id() -> str:
    """A runner id unique across machines and runs: host, pid and random bits."""
    host = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname())[:40] or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(4)}"


class Tasks(Protocol):
    """What one run asks of whom: its steps in order, each a task's claim-ask-record loop over a scope.

    A task is what the state database's `tier` column names (`cheap`, `expensive`, the digest's `judge`);
    a step is one scope of one task (a tier of a release; the judge over one week).
    """

    settings: Any
    """The `database`, `raw_dir`, `lease_seconds`, `batch_size` and `budget` of the run ([screen],
    [digest.judge])."""
    where: str
    """How messages name the database (`[screen] database`)."""
    steps: tuple[str, ...]
    """The steps to run, in order."""

    def voters(self) -> Mapping[str, Sequence[VoterSettings]]:
        """Task -> the voters asked in its steps (made before anything is written: a missing key stops the run)."""

    def answer(self, task: str) -> AnswerSchema:
        """What the task's voters answer and how a reply is read."""

    def current(self) -> list[Tier]:
        """Every task of the database at its current generation (scope None): whose orphan replies are adopted."""

    def prepare(self, step: str, store: Any) -> Tier | TierReport:
        """The step's task, generation (registered) and scope (seeded), or a report of why it runs nothing."""

    def report_id(self) -> str:
        """What the run's report names as what it ran on (a release id, a range of weeks)."""


def run_tasks(tasks: Tasks, *, max_cost: float | None = None, environ: Mapping[str, str], progress: bool = True,
              runner_id: str | None = None, after_raw_written: Callable[[int], None] | None = None,
              record: RunStart | None = None, kind: str = "screen", inputs: Sequence[FileRef] = ()) -> RunReport:
    """Run the steps of `tasks` in order as one runner: claim, ask the missing voters, record (the module doc).

    With `record` (a command's), the run's record of `kind` is written at its end (`write_panel_run`): done,
    stopped by --max-cost, interrupted, or failed once the state database was opened."""
    if max_cost is not None and not (max_cost > 0 and math.isfinite(max_cost)):
        raise InputError(f"--max-cost {max_cost}: give a positive, finite number of US dollars (leave the flag out "
                         f"for no cap)")
    run = _Run(tasks, runner_id or new_runner_id(), environ, max_cost, progress, after_raw_written)
    try:
        report = asyncio.run(run.main())
    except asyncio.CancelledError:
        # a second SIGINT or SIGTERM: aborted at once, with the exit code of the first signal
        if record is not None and run.store is not None:
            write_panel_run(record, kind, tasks, run, None, inputs, "interrupted")
        raise Aborted(signal.Signals[run.interrupted or "SIGINT"]) from None
    except Exception:
        if record is not None and run.store is not None:
            write_panel_run(record, kind, tasks, run, None, inputs, "failed")
        raise
    if record is not None:
        status = "interrupted" if report.interrupted else "stopped" if report.stopped else "done"
        write_panel_run(record, kind, tasks, run, report, inputs, status)
    return report


def write_panel_run(record: RunStart, kind: str, tasks: Tasks, run: _Run, report: RunReport | None,
                    inputs: Sequence[FileRef], status: str) -> None:
    """The run record of a panel's run (the screen's, the judge's): its voters with each step's prompt and
    generation, per step its counts (`<step>.<count>`), what it spent."""
    counts: dict[str, int] = dict(run.traffic.counts())
    for t in report.tiers if report is not None else ():
        for name in ("scope", "screened", "votes", "recovered", "refused", "failures"):
            counts[f"{t.tier}.{name}"] = counts.get(f"{t.tier}.{name}", 0) + getattr(t, name)
        counts[f"{t.tier}.invalid"] = counts.get(f"{t.tier}.invalid", 0) + sum(t.invalid.values())
    settings = {"tasks": settings_json(tasks.settings), "max_cost": run.max_cost, "steps": list(tasks.steps),
                "runner": run.runner, "ran_on": report.release_id if report is not None else tasks.report_id()}
    record.write(kind, status, inputs=inputs, settings=settings, models=run.models, counts=counts,
                 cost_usd=report.spend_usd if report is not None else run.budget.spent)


# --- the run ---------------------------------------------------------------------------------------------


class _Run:
    def __init__(self, tasks: Tasks, runner: str, environ: Mapping[str, str], max_cost: float | None,
                 progress: bool, after_raw_written: Callable[[int], None] | None = None) -> None:
        self.tasks, self.settings, self.runner = tasks, tasks.settings, runner
        self.environ, self.max_cost, self.show = environ, max_cost, progress
        self.after_raw_written = after_raw_written
        self.budget = Budget(max_cost, getattr(self.settings, "budget", None), budget_name(tasks.where))
        """What this run and the generations spent, and the worst cases of its requests in flight (--max-cost,
        the workspace's budget)."""
        self.traffic = Traffic()
        """The run's requests sent and answered, retries, 429s and 5xx (its record's `requests.*` counts)."""
        self._current: list[tuple[str, str]] | None = None
        """Each task's current (name, generation): whose spend counts against the workspace's budget."""
        self._spend_read = self._spend_cost = 0.0
        self.batches = 0
        self.voters: list[Any] = []
        self.interrupted: str | None = None
        """Set by the first SIGINT or SIGTERM (its name): claim nothing more, let what was sent be answered and
        recorded."""
        self._db = ThreadPoolExecutor(1, thread_name_prefix="panel-db")
        self.store: Any = None
        self.raw: Any = None
        self.models: list[ModelUse] = []
        """Each step's voters, with its prompt and generation (the run's record)."""
        self.scopes: dict[str, str] = {}
        """Step -> the scope key it ran over (its release id), for the count of works leased elsewhere."""

    async def db(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a database (or raw-file) call on the one database thread."""
        return await asyncio.get_running_loop().run_in_executor(self._db, lambda: fn(*args, **kwargs))

    async def main(self) -> RunReport:
        from .provider import ChatVoter
        from .store import open_store
        # Every voter first: a key missing from the environment stops the run before anything is written.
        voters = {task: [ChatVoter(v, self.environ, answer=self.tasks.answer(task), budget=self.budget,
                                   traffic=self.traffic) for v in vs]
                  for task, vs in self.tasks.voters().items()}
        self.voters = [v for vs in voters.values() for v in vs]
        reports: list[TierReport] = []
        watching = self._watch_signals()
        try:
            self.store = await self.db(open_store, self.settings.database, where=self.tasks.where)
            await self.db(self.store.register_runner, self.runner, socket.gethostname(), os.getpid())
            self.raw = open_raw_log(self.settings.raw_dir, self.runner)
            recovered = await self.db(recover, self)
            await self.load_spend()  # what earlier runs of the generations spent (the workspace's budget)
            heart = asyncio.create_task(self._heartbeat())
            try:
                for step in self.tasks.steps:
                    if self.interrupted:
                        break
                    report = await self._run_step(step, voters, recovered)
                    reports.append(report)
                    if report.stopped_by_max_cost:
                        break
                if not (self.interrupted or any(r.stopped_by_max_cost for r in reports)):
                    reports = await self._leased_elsewhere(reports)
            finally:
                heart.cancel()
                await asyncio.gather(heart, return_exceptions=True)
        finally:
            await asyncio.gather(*(v.aclose() for vs in voters.values() for v in vs), return_exceptions=True)
            await self._close()
            for signum in watching:
                asyncio.get_running_loop().remove_signal_handler(signum)
        return RunReport(self.runner, self.tasks.report_id(), tuple(reports), self.max_cost,
                         interrupted=self.interrupted is not None, signal=self.interrupted or "",
                         budget=self.budget.limit, budget_spent=self.budget.workspace_spent,
                         stopped_by=self.budget.refused_by or "", stop_message=self.budget.stop_message(),
                         requests=self.traffic.counts())

    def _watch_signals(self) -> list[int]:
        """The first SIGINT or SIGTERM stops the claiming (what was sent is answered and recorded); a second aborts
        at once. The signals handled ([] when signals cannot be handled here, not the main thread: they then act as
        usual)."""
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def on_signal(name: str) -> None:
            said = "Ctrl-C" if name == "SIGINT" else name
            if self.interrupted:
                print(f"\nsecond {said}: aborting now; replies not yet recorded are asked again by the next run",
                      file=sys.stderr, flush=True)
                if task is not None:
                    task.cancel()
                return
            self.interrupted = name
            for voter in self.voters:
                voter.halted = True  # requests waiting for a slot are not sent
            print(f"\n{said}: claiming no more works; the requests already sent are being answered and recorded "
                  f"({said} again to abort at once)", file=sys.stderr, flush=True)

        watching = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, on_signal, signal.Signals(signum).name)
            except (ValueError, RuntimeError, NotImplementedError):
                break
            watching.append(signum)
        return watching

    async def _close(self) -> None:
        """Release this runner's claims without a verdict, note it finished, close its file (whatever happened)."""
        try:
            if self.store is not None:
                await self.db(self.store.release, self.runner)
                await self.db(self.store.finish_runner, self.runner)
                await self.db(self.store.close)
        finally:
            if self.raw is not None:
                self.raw.close(keep_empty=False)
            self._db.shutdown(wait=True)

    async def load_spend(self) -> None:
        """Read the current generations' recorded spend into the budget (only with a workspace budget): at the
        run's start, then before a claim as often as SPEND_READ_SHARE allows, and before every claim near the
        budget's end (this run's own spend is counted as it comes; a read adds what other runners recorded)."""
        if self.budget.limit is None:
            return
        start = time.monotonic()
        if self._current is not None and start - self._spend_read < self._spend_cost / SPEND_READ_SHARE \
                and not self.budget.near_limit():
            return
        if self._current is None:
            self._current = [(t.name, t.generation.id) for t in self.tasks.current()]
        tiers = self._current
        rows = await self.db(lambda: [r for name, gen in tiers for r in self.store.spend(name, gen)])
        self.budget.load(rows, self.runner)
        self._spend_read = time.monotonic()
        self._spend_cost = self._spend_read - start

    async def _heartbeat(self) -> None:
        every = max(self.settings.lease_seconds / 3, 0.05)
        while True:
            await asyncio.sleep(every)
            await self.db(self.store.heartbeat, self.runner, self.settings.lease_seconds)

    # --- one step ---

    async def _run_step(self, step: str, voters: Mapping[str, list[Any]], recovered: dict[str, int]) -> TierReport:
        prepared = await self.db(self.tasks.prepare, step, self.store)
        if isinstance(prepared, TierReport):
            return prepared
        tier, tally = prepared, Tally(recovered=recovered.pop(prepared.name, 0))
        for v in tier.voters:
            use = ModelUse(tier.name, v.name, v.model, host_of(v.base_url), tier.prompt.hash, tier.generation.id)
            if use not in self.models:
                self.models.append(use)
        bar = Progress(tier.label, total=tier.todo, unit=tier.unit, enabled=self.show)
        loop = TierLoop(self, tier, voters[tier.name], tally, bar)
        try:
            await loop.run()
        finally:
            bar.close()
        if loop.abort is not None:
            raise loop.abort
        self.scopes[step] = tier.scope.release_id
        return TierReport(tier.name, tier.generation.id, len(tier.scope.work_ids), tally.screened, tally.votes,
                          tally.recovered, tally.refused, tally.failures, tally.spend, tally.stopped,
                          note=tier.scope.note, invalid=dict(sorted(tally.invalid.items())))

    async def _leased_elsewhere(self, reports: list[TierReport]) -> list[TierReport]:
        """Each step run, once every step found nothing more to claim: the works of its scope without a verdict that
        other runners hold (their lease running or run out). Counted at the run's end, so works another runner
        finished meanwhile do not count."""
        out = []
        for step, report in zip(self.tasks.steps, reports):
            if step in self.scopes and report.generation is not None:
                n = await self.db(self.store.leased_elsewhere, self.scopes[step], report.tier, report.generation,
                                  self.runner)
                report = dataclasses.replace(report, leased_elsewhere=n)
            out.append(report)
        return out

    def commit_batch(self, tier: Tier, batch: list[Answered], tally: Tally) -> None:
        """Group commit of the answers that came since the last one: their raw lines appended and fsynced, then
        their vote rows, the failures and the verdicts of the jobs whose last answer is among them, one transaction."""
        from .store_rows import FailureRow, VoteRow
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        got = [a for a in batch if a.reply is not None]
        lines = [raw_line(tier=tier.name, generation=tier.generation.id, work_id=a.asked.job.work_id, voter=a.voter,
                          model=tier.by_name[a.voter].model, at=at, status=a.reply.status,
                          usage=reply_usage(a.reply), body=a.reply.body) for a in got]
        where = self.raw.append(lines)
        self.batches += 1
        if self.after_raw_written is not None:
            self.after_raw_written(self.batches)
        rows = [VoteRow(tier.name, tier.generation.id, a.asked.job.work_id, a.voter, a.reply.vote,
                        a.reply.input_tokens, a.reply.output_tokens, a.reply.cost_usd, file, offset)
                for a, (file, offset) in zip(got, where)]
        failures = [FailureRow(tier.name, tier.generation.id, a.asked.job.work_id, a.voter, a.failure)
                    for a in batch if a.failure is not None]
        recorded = self.record(tier, [a.asked for a in batch if a.last], rows, failures, tally,
                                answered=len(rows) + len(failures), unsent=sum(a.unsent for a in batch))
        tally.votes += recorded.votes

    def record(self, tier: Tier, complete: list[Asked], rows: list[Any], failures: list[Any], tally: Tally,
                answered: int = 0, unsent: int = 0) -> Any:
        """Write vote rows, failures, and the verdicts of the `complete` jobs (every voter asked has come back)."""
        from .store_rows import VerdictRow
        verdicts = []
        for a in complete:
            outcome = _gate(tier, a)
            if outcome != "incomplete":
                verdicts.append(VerdictRow(tier.name, tier.generation.id, a.job.work_id, outcome))
        recorded = self.store.record(self.runner, rows, verdicts, failures, answered=answered, unsent=unsent)
        tally.screened += recorded.verdicts
        tally.refused += len(recorded.refused)
        tally.failures += len(failures)
        tally.invalid.update(row.vote.invalid_cause for row in rows if row.vote.invalid_cause is not None)
        return recorded


def _gate(tier: Tier, asked: Asked) -> str:
    """The task's gate over the votes the job had and the ones just received (FAILED: the provider failed after
    its retries, which the cheap tier passes on and the other gates leave incomplete)."""
    votes: list[Any] = []
    for voter in tier.voters:
        if voter.name in asked.replies:
            votes.append(asked.replies[voter.name].vote)
        elif voter.name in asked.job.votes:
            votes.append(_vote_of(asked.job.votes[voter.name]))
        elif voter.name in asked.failed:
            votes.append(FAILED)
        else:
            votes.append(None)
    return tier.gate(votes)


def _vote_of(value: Any) -> Vote:
    """A job's existing vote: a Vote, or a row holding one."""
    return value if isinstance(value, Vote) else value.vote
