"""One task's claim-ask-record loop (a screen tier, the judge over a week), the part of a run that sends requests
and drains their replies.

`TierLoop.run` claims a batch whenever the voters could take more work and
asks each claimed work's missing voters (at once; `ChatVoter` bounds each
voter's concurrency). Each voter's answer (or failure) goes to the committer
the moment it arrives, whatever the job's other voter does, and the committer
group-commits what came meanwhile through the run (`runner._Run.commit_batch`:
raw lines fsynced, then vote rows, failures and, with a job's last answer, its
verdict). So a reply that was paid for is on disk as soon as it is read: a
second voter that fails, stalls or is killed costs the first voter nothing. A
voter failing FAILURES_IN_A_ROW requests in a row stops the run. The run itself
(registering, recovery, the heartbeat, the budget, closing) is `runner.py`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InputError
from ..money import dollars
from ..progress import Progress
from .config import VoterSettings
from .run_report import format_duration
from .votes import AnswerSchema

PROGRESS_SECONDS = 5.0
"""How often the progress line is redrawn while no answer comes (its retries and 429s say why)."""
FAILURES_IN_A_ROW = 5
"""A voter that fails this many requests in a row (after the client's own retries) stops the run."""

PROGRESS_RECOUNT_SECONDS = 1.0
"""How often the progress line recounts the tier's works done from the state database (every runner's verdicts);
between recounts it adds this runner's own."""


@dataclass
class Asked:
    """One claimed work after its missing voters were asked."""

    job: Any
    """The store's Job (work id and the votes it already had)."""
    replies: dict[str, Any] = field(default_factory=dict)
    """Voter name -> Reply received."""
    failed: dict[str, str] = field(default_factory=dict)
    """Voter name -> why the request failed after retries."""
    waiting: int = 0
    """Voters asked whose answer has not come back yet."""


@dataclass
class Answered:
    """One voter's outcome on one claimed work, handed to the committer as soon as it is known."""

    asked: Asked
    """The job it belongs to (its other voters' outcomes come in their own Answered)."""
    voter: str
    """The voter's name."""
    reply: Any = None
    """The Reply received (None: the request failed or was never sent)."""
    failure: str | None = None
    """Why the request failed after retries."""
    unsent: bool = False
    """Counted as sent but never sent (the run stopped, or the budget refused it, while it waited for a slot)."""
    last: bool = False
    """The job's last outcome: the committer records the job's verdict with it (all its answers are in)."""


@dataclass
class Tally:
    """Running counts of one tier."""

    screened: int = 0
    votes: int = 0
    recovered: int = 0
    refused: int = 0
    failures: int = 0
    spend: float = 0.0
    stopped: bool = False
    invalid: Counter = field(default_factory=Counter)
    """Invalid answers recorded, by cause (paid for, recorded, not an answer: each is a failure of its voter)."""


@dataclass(frozen=True)
class Work:
    """One work (a paper) as a voter is shown it."""

    work_id: str
    """Its id (the store's `work_id`)."""
    title: str
    """The title, verbatim (empty when it has none)."""
    abstract: str | None
    """The abstract, or None when it has none: the title-only prompt."""
    title_only: bool
    """Judged on its title alone whatever the abstract (the title-only prompt)."""


class Scope(Protocol):
    """What one step asks about: the works of one scope (the store's `scope` rows under `release_id`)."""

    release_id: str
    """The scope's key in the store's `scope` table (a release id; the digest's judge: a week)."""
    work_ids: tuple[str, ...]
    """The works, in order."""
    note: str
    """How the scope came about, in a sentence (what the run report says), or empty."""


@dataclass(frozen=True)
class StepScope:
    """A scope that is only its key, its works and a note (a `Scope`; the screen's tiers have their own)."""

    release_id: str
    """The scope's key (the digest's judge: the week)."""
    work_ids: tuple[str, ...]
    """The works, in order."""
    note: str = ""
    """How the scope came about, or empty."""


class Tier:
    """One task being run over one scope (a screen tier of a release; the judge over a week): its voters,
    generation, scope and texts, and what is the task's own (its answer, its gate, its names)."""

    def __init__(self, name: str, voters: tuple[VoterSettings, ...], prompt: Any, generation: Any,
                 scope: Scope | None, works: dict[str, Any], todo: int = 0, *, answer: AnswerSchema,
                 gate: Callable[[Sequence[Any]], str], label: str, table: str, unit: str = "works",
                 load_texts: Callable[[list[str]], dict[str, Any]] | None = None) -> None:
        self.name, self.voters, self.prompt, self.generation = name, voters, prompt, generation
        self.scope, self.works, self.todo = scope, works, todo
        """The scope (None: only the task's current generation, for recovery) and the texts of its works
        (work id -> a `Work`-like object: `title`, `abstract`, `title_only`)."""
        self.by_name = {v.name: v for v in voters}
        self.answer = answer
        """The AnswerSchema its replies are read against."""
        self.gate = gate
        """The voters' votes (configured order; None missing, FAILED failed) -> a verdict or `incomplete`."""
        self.label = label
        """What the progress line calls it."""
        self.table = table
        """The table its voters are configured in (messages name it)."""
        self.unit = unit
        """What it asks about, for the progress line."""
        self.load_texts = load_texts
        """Work ids -> their texts, for claimed works the runner has none for."""


class TierLoop:
    """The claim-ask-record loop of one tier."""

    def __init__(self, run: Any, tier: Tier, voters: list[Any], tally: Tally, bar: Progress) -> None:
        # `run` is the run this tier belongs to (runner._Run): its database thread, store, spend and commit
        self.run_, self.tier, self.voters, self.tally, self.bar = run, tier, voters, tally, bar
        self.pending: list[Answered] = []
        self.wake = asyncio.Event()
        self.closing = False
        self.in_a_row = {v.name: 0 for v in tier.voters}
        self.abort: InputError | None = None
        self.started = time.monotonic()
        self.recounted = self.started
        self.done_before: int | None = None
        """The scope's works with a verdict when this loop started (the database's count, every runner's)."""
        self.batch = run.settings.batch_size
        self.capacity = max(v.max_concurrency for v in tier.voters) + self.batch

    async def run(self) -> None:
        await self._recount()
        committer = asyncio.create_task(self._committer())
        tasks: set[asyncio.Task] = set()
        try:
            exhausted = False
            while self.abort is None:
                room = self.capacity - len(tasks)
                claiming = (not self.tally.stopped and not self.run_.interrupted
                            and ((not exhausted and room >= self.batch) or not tasks))
                if claiming:
                    await self.run_.load_spend()  # what other runners spent meanwhile (the workspace's budget)
                    # a spent budget stops a run with work left (a run with none is done, not stopped); the
                    # reservation before each request still holds if the count of work left was stale
                    if self.tier.todo > self.tally.screened and self._over_budget():
                        self.tally.stopped, claiming = True, False
                if claiming:
                    jobs = await self.run_.db(self.run_.store.claim, self.tier.scope.release_id, self.tier.name,
                                              self.tier.generation.id, self.run_.runner, min(self.batch, room),
                                              self.run_.settings.lease_seconds)
                    await self._texts(jobs)
                    # Counted before they are sent: after a kill, sent minus answered is what was in flight.
                    await self.run_.db(self.run_.store.note_requests, self.run_.runner,
                                       sent=sum(len(self._missing(job)) for job in jobs))
                    tasks |= {asyncio.create_task(self._ask(job)) for job in jobs}
                    exhausted = not jobs
                if not tasks:
                    break
                done, tasks = await asyncio.wait(tasks | {committer}, return_when=asyncio.FIRST_COMPLETED)
                tasks.discard(committer)
                errors = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
                if errors:
                    raise errors[0]  # a failed ask or commit (a full disk, a lost database) ends the run here
                if not tasks:
                    exhausted = False  # one more claim: claims of others may have expired meanwhile
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.closing = True
            self.wake.set()
            await committer
        await self._recount()  # the line's last word: every runner's verdicts, not this runner's share

    async def _texts(self, jobs: list[Any]) -> None:
        """Read the text of claimed works this runner's scope lacks (works another runner's cheap tier passed on)."""
        missing = [job.work_id for job in jobs if job.work_id not in self.tier.works]
        if missing:
            self.tier.works.update(await self.run_.db(self.tier.load_texts, missing))

    def _over_budget(self) -> bool:
        return self.run_.budget.exhausted()

    async def _ask(self, job: Any) -> None:
        work = self.tier.works[job.work_id]
        messages = tier_messages(self.tier, work)
        missing = self._missing(job)
        asked = Asked(job, waiting=len(missing))
        await asyncio.gather(*(self._ask_one(asked, voter, messages) for voter in missing))

    async def _ask_one(self, asked: Asked, voter: Any, messages: list[dict]) -> None:
        """Ask one voter and hand its outcome to the committer at once (the job's other voter may take long)."""
        from .provider import NotSent, VoterFailure
        out = Answered(asked, voter.name)
        try:
            out.reply = await voter.ask(messages)
        except NotSent:
            out.unsent = True
            if self.run_.budget.refused:
                self.tally.stopped = True  # the next request's worst case would pass --max-cost
        except VoterFailure as exc:
            out.failure = asked.failed[voter.name] = str(exc.cause)
            self.in_a_row[voter.name] += 1
            if self.in_a_row[voter.name] >= FAILURES_IN_A_ROW and self.abort is None:
                self.abort = voter_down(self.tier.by_name[voter.name], self.tier.table,
                                         self.in_a_row[voter.name], out.failure)
        else:
            asked.replies[voter.name] = out.reply
            self.in_a_row[voter.name] = 0
            self.tally.spend += out.reply.cost_usd
        asked.waiting -= 1
        out.last = asked.waiting == 0
        self.pending.append(out)
        self.wake.set()

    def _missing(self, job: Any) -> list[Any]:
        """The voters a claimed job still needs (only those are asked)."""
        return [v for v in self.voters if v.name not in job.votes]

    async def _committer(self) -> None:
        while True:
            if not self.pending:
                if self.closing:
                    return
                try:  # nothing answered for a while (429s, a rate limit): the line still says why
                    await asyncio.wait_for(self.wake.wait(), PROGRESS_SECONDS)
                except asyncio.TimeoutError:
                    self._show(self.bar.done)
                self.wake.clear()
                continue
            batch, self.pending = self.pending, []
            before = self.tally.screened
            await self.run_.db(self.run_.commit_batch, self.tier, batch, self.tally)
            if time.monotonic() - self.recounted >= PROGRESS_RECOUNT_SECONDS:
                await self._recount()
            else:
                self._show(self.bar.done + self.tally.screened - before)

    async def _recount(self) -> None:
        """Set the progress line to the works of the tier's scope decided since this runner started, by every
        runner (the state database's count): several runners each show the tier's whole remaining work."""
        counts = await self.run_.db(self.run_.store.counts, self.tier.scope.release_id, self.tier.name,
                                    self.tier.generation.id)
        self.recounted = time.monotonic()
        if self.done_before is None:
            self.done_before = counts.done
        self._show(counts.done - self.done_before)

    def _show(self, done: int) -> None:
        """Move the progress line to `done` works (never back, never past the tier's remaining work)."""
        done = max(min(done, self.tier.todo), self.bar.done)
        self.bar.label = f"{self.tier.label} {self._detail(done)}"
        self.bar.advance(done - self.bar.done)

    def _detail(self, done: int) -> str:
        """Votes, spend, rate and time left (every runner's pace over the tier's whole remaining work)."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        left = self.tier.todo - done
        eta = "?" if not done else format_duration(left * elapsed / done)
        traffic = self.run_.traffic.progress_words()
        return (f"({self.tally.votes:,} votes, {dollars(self.tally.spend, tenths=True)}, "
                f"{done / elapsed:,.1f} {self.tier.unit}/s, {eta} left{'; ' + traffic if traffic else ''})")


def tier_messages(tier: Tier, work: Any) -> list[dict]:
    from .prompt import messages_for
    return messages_for(tier.prompt, work.title, work.abstract, work.title_only)


def voter_down(voter: VoterSettings, table: str, n: int, cause: str) -> InputError:
    key = (f"the key in ${voter.api_key_env}" if voter.api_key_env else
           "whether it wants a key (no key variable set: this voter has no api_key_env, so no key is sent)")
    return InputError(f"{table} voter {voter.name!r} at {voter.base_url} (model {voter.model!r}) failed "
                      f"{n} requests in a row after retries; last cause: {cause}. The run stopped: check that the "
                      f"server runs and serves this model, and {key}; what "
                      f"was answered is recorded, and the works without a verdict are claimable again")
