"""A voter's answer (`Vote`), what a task asks a voter to answer (`AnswerSchema`), and a failed request (`FAILED`).

A `Vote` is any voter's reply read against its task's `AnswerSchema` (the
screen's `label` and `reason`, `reporter.screening.answer`; the digest's
criteria judge: `fit`, `criteria_lines`, `reason`). Which answers and causes
a vote may hold is its schema's; how votes become a verdict is the task's
gate (`tier_loop.Tier.gate`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

DONE: Final = "done"
"""The verdict of a task whose job is done once every voter has answered (the digest's judge); the store's
schema allows it for every task but `cheap` and `expensive` (`store_sql.OUTCOME_CHECK`)."""


@dataclass(frozen=True)
class Vote:
    """One voter's reply to one work: a valid answer, or an invalid reply with its cause."""

    answer: str | None
    """The schema's answer (the screen's: include, exclude or cannot_be_determined); None for an invalid reply."""
    invalid_cause: str | None = None
    """For an invalid reply: why (the screen's: one of INVALID_CAUSES)."""
    reason: str = ""
    """The voter's one-sentence reason (for an invalid reply: what was wrong, shortened)."""
    detail: str | None = None
    """The answer's other fields as canonical JSON (the judge's `{"criteria_lines": [...]}`); None for the
    screen's votes, whose answer is the label and the reason alone."""

    def __post_init__(self) -> None:
        if (self.answer is None) == (self.invalid_cause is None):
            raise ValueError("a vote has either an answer or an invalid cause, never both or neither")
        for name, value in (("answer", self.answer), ("invalid cause", self.invalid_cause)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"unknown {name} {value!r}")

    @property
    def valid(self) -> bool:
        """True for a reply with one of the schema's answers."""
        return self.answer is not None


@dataclass(frozen=True)
class AnswerSchema:
    """What a voter is asked to answer, and how its reply is read into a `Vote` (checked in our code, whatever the
    server did with `response_format`)."""

    name: str
    """The schema's name in `response_format` (`screening_vote`)."""
    schema: Mapping[str, Any]
    """The JSON schema of the answer object."""
    read: Callable[[dict], Vote]
    """A decoded JSON object as a Vote: a valid answer, or an invalid one with its cause (never a guess). The
    reply's envelope (refusal, truncated, unparseable) is read before, the same for every schema."""


class Failed:
    """The provider failed after its retries: no vote was recorded (the cheap tier passes the work on)."""

    _instance: Failed | None = None

    def __new__(cls) -> Failed:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "FAILED"


FAILED: Final = Failed()
"""A provider failure after retries (never a recorded vote)."""
