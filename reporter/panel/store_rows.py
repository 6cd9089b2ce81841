"""What the state store returns and records: jobs, vote, verdict and failure rows, runs, scope counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .votes import Vote


@dataclass(frozen=True)
class Job:
    """A claimed job: one work to screen in one tier and generation."""

    work_id: str
    """The work."""
    votes: Mapping[str, Vote]
    """Votes already recorded for it in this generation, by voter name (only the missing voters are asked)."""


@dataclass(frozen=True)
class VoteRow:
    """One recorded vote, with what it cost and where its raw response is."""

    tier: str
    """cheap or expensive."""
    generation: str
    """The tier's generation hash the vote was asked under."""
    work_id: str
    """The work."""
    voter: str
    """The voter's name."""
    vote: Vote
    """The reply, valid or invalid."""
    input_tokens: int | None
    """Prompt tokens the provider reported (None when it reported none)."""
    output_tokens: int | None
    """Completion tokens the provider reported."""
    cost_usd: float
    """What the reply cost, from the usage and the configured prices."""
    raw_file: str
    """The raw-response JSONL file holding the reply."""
    raw_offset: int
    """Byte offset of the reply's line in raw_file."""


@dataclass(frozen=True)
class VerdictRow:
    """A gate's verdict on one work (`incomplete` is never stored)."""

    tier: str
    """cheap or expensive."""
    generation: str
    """The tier's generation."""
    work_id: str
    """The work."""
    outcome: str
    """admit/discard (expensive) or discard/proceed (cheap)."""


@dataclass(frozen=True)
class FailureRow:
    """A provider failure after its retries: counted, never a vote."""

    tier: str
    """cheap or expensive."""
    generation: str
    """The tier's generation."""
    work_id: str
    """The work."""
    voter: str
    """The voter whose request failed."""
    cause: str
    """What failed (short text, never a key)."""


@dataclass(frozen=True)
class Recorded:
    """What one `record` call wrote."""

    votes: int
    """Vote rows written (a vote already recorded is never overwritten and not counted)."""
    verdicts: int
    """Verdict rows written."""
    refused: tuple[str, ...]
    """Work ids whose votes or verdicts were not written: the runner no longer holds their claim."""


@dataclass(frozen=True)
class RunRow:
    """One runner (one `screen --run`) and its requests."""

    runner: str
    """The runner id (its raw file is raw_dir/<runner>.jsonl)."""
    host: str
    """The machine it ran on."""
    pid: int
    """Its process id."""
    started_at: float
    """When it started (the database's clock, epoch seconds)."""
    finished_at: float | None
    """When it ended normally (None: still running, or killed)."""
    sent: int
    """Requests it sent (counted before sending)."""
    answered: int
    """Of those, the ones whose reply or failure it recorded."""
    counted: bool
    """False when the runner ran before requests were counted (no numbers for it)."""

    @property
    def in_flight(self) -> int:
        """Requests sent and never answered: still in flight, or cut by a kill (a later run asks them again)."""
        return max(self.sent - self.answered, 0)


@dataclass(frozen=True)
class ScopeCounts:
    """Where a release's scope of one tier stands in one generation."""

    scoped: int
    """Works the release sends to the tier."""
    done: int
    """Of those, works with a verdict in the generation."""
    claimed_live: int
    """Works held by a runner whose lease has not run out."""
    claimable: int
    """Works without a verdict that nobody holds (or whose lease ran out)."""
