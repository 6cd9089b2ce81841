"""A voter's answer and the two gates that turn two answers into one verdict, each defined once.

A `Vote` is any voter's reply read against an `AnswerSchema`: the screen's
(`label` and `reason`, `provider.SCREEN_ANSWER`) or another task's (the
digest's criteria judge: `fit`, `criteria_lines`, `reason`). Which answers
and causes a vote may hold is its schema's: the screen's are `ANSWERS` and
`INVALID_CAUSES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

ANSWERS: Final = ("include", "exclude", "cannot_be_determined")
"""The answers of the answer schema (its JSON field is `label`)."""

INVALID_CAUSES: Final = ("unparseable", "unknown_label", "schema", "refusal", "truncated")
"""Why a reply that was paid for is not a valid vote."""

TIER_OUTCOMES: Final = {"cheap": ("discard", "proceed"), "expensive": ("admit", "discard")}
"""The verdicts each tier stores; `incomplete` is never stored (it is the absence of a verdict)."""

DONE: Final = "done"
"""The verdict a task other than the screen's tiers stores (the digest's judge: every judge has answered)."""

GateOutcome = Literal["admit", "discard", "incomplete"]
CheapOutcome = Literal["discard", "proceed", "incomplete"]


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

    @property
    def is_exclude(self) -> bool:
        """True only for a valid, explicit exclude."""
        return self.answer == "exclude"


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


class _Failed:
    """The provider failed after its retries: no vote was recorded (the cheap tier passes the work on)."""

    _instance: _Failed | None = None

    def __new__(cls) -> _Failed:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "FAILED"


FAILED: Final = _Failed()
"""A provider failure after retries (never a recorded vote)."""


def screen_gate(a: Vote | None, b: Vote | None) -> GateOutcome:
    """The screen's gate: `incomplete` while a vote is missing, `discard` on two valid excludes, else `admit`.

    A missing vote (not asked yet, or the provider failed after its retries) leaves
    the work claimable again. An invalid reply that was paid for is final and, like
    an include or a cannot_be_determined, refers the work onward.
    """
    if a is None or b is None or a is FAILED or b is FAILED:
        return "incomplete"
    if a.is_exclude and b.is_exclude:
        return "discard"
    return "admit"


def cheap_gate(a: Vote | _Failed | None, b: Vote | _Failed | None) -> CheapOutcome:
    """The cheap tier's gate: it may only discard, and only on two explicit excludes.

    A vote that can no longer make a discard (a valid include or
    cannot_be_determined, an invalid reply, a provider failure) passes the work
    on to the expensive screen at once (`proceed`, which never admits); a
    missing vote otherwise leaves it `incomplete`.
    """
    for v in (a, b):
        if v is FAILED or (isinstance(v, Vote) and not v.is_exclude):
            return "proceed"
    if isinstance(a, Vote) and isinstance(b, Vote):
        return "discard"
    return "incomplete"


def tier_gate(tier: str, a: Vote | _Failed | None, b: Vote | _Failed | None) -> str:
    """The gate of `tier` ('cheap' or 'expensive')."""
    if tier == "cheap":
        return cheap_gate(a, b)
    if tier == "expensive":
        return screen_gate(a, b)  # type: ignore[arg-type]
    raise ValueError(f"unknown tier {tier!r}")
