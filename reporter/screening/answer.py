"""The screen's task as the panel is told it: what a voter answers (`SCREEN_ANSWER`) and what a verdict is (the gates).

A voter answers `{"label", "reason"}` (`ANSWER_SCHEMA`), read into a `Vote` by
`read_vote` whatever the server did with `response_format`. Two votes become a
verdict through the tier's gate: the expensive screen admits unless both voters
explicitly exclude (`screen_gate`); the cheap tier may only discard, on two
explicit excludes, and passes every other work on (`cheap_gate`).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ..panel.replies import invalid_vote
from ..panel.votes import FAILED, AnswerSchema, Failed, Vote

ANSWERS: Final = ("include", "exclude", "cannot_be_determined")
"""The answers of the answer schema (its JSON field is `label`)."""

INVALID_CAUSES: Final = ("unparseable", "unknown_label", "schema", "refusal", "truncated")
"""Why a reply that was paid for is not a valid vote."""

TIER_OUTCOMES: Final = {"cheap": ("discard", "proceed"), "expensive": ("admit", "discard")}
"""The verdicts each tier stores; `incomplete` is never stored (it is the absence of a verdict)."""

ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(ANSWERS)},
        "reason": {"type": "string"},
    },
    "required": ["label", "reason"],
    "additionalProperties": False,
}
"""The JSON schema of a voter's answer (sent as `response_format` and checked in our code either way)."""

GateOutcome = Literal["admit", "discard", "incomplete"]
CheapOutcome = Literal["discard", "proceed", "incomplete"]


def read_vote(obj: dict) -> Vote:
    """A decoded object checked against the screen's answer schema (its `label` first: it says the most)."""
    answer = obj.get("label")
    if not isinstance(answer, str):
        return invalid_vote("schema", "no label" if answer is None else f"label is not a string: {answer!r}")
    if answer not in ANSWERS:
        return invalid_vote("unknown_label", f"label {answer!r} is not one of {', '.join(ANSWERS)}")
    extra = sorted(set(obj) - {"label", "reason"})
    if extra:
        return invalid_vote("schema", f"keys outside the schema: {', '.join(map(str, extra))}")
    reason = obj.get("reason")
    if not isinstance(reason, str):
        return invalid_vote("schema", "no reason" if reason is None else f"reason is not a string: {reason!r}")
    return Vote(answer=answer, reason=reason)


SCREEN_ANSWER = AnswerSchema("screening_vote", ANSWER_SCHEMA, read_vote)
"""The screen's answer: `{"label", "reason"}` (prompt.ANSWER_SCHEMA), read by `read_vote`."""


SCREEN_ANSWER = AnswerSchema("screening_vote", ANSWER_SCHEMA, read_vote)
"""The screen's answer: `{"label", "reason"}` (ANSWER_SCHEMA), read by `read_vote`."""


def is_exclude(vote: Vote) -> bool:
    """True only for a valid, explicit exclude."""
    return vote.answer == "exclude"


def screen_gate(a: Vote | None, b: Vote | None) -> GateOutcome:
    """The screen's gate: `incomplete` while a vote is missing, `discard` on two valid excludes, else `admit`.

    A missing vote (not asked yet, or the provider failed after its retries) leaves
    the work claimable again. An invalid reply that was paid for is final and, like
    an include or a cannot_be_determined, refers the work onward.
    """
    if a is None or b is None or a is FAILED or b is FAILED:
        return "incomplete"
    if is_exclude(a) and is_exclude(b):
        return "discard"
    return "admit"


def cheap_gate(a: Vote | Failed | None, b: Vote | Failed | None) -> CheapOutcome:
    """The cheap tier's gate: it may only discard, and only on two explicit excludes.

    A vote that can no longer make a discard (a valid include or
    cannot_be_determined, an invalid reply, a provider failure) passes the work
    on to the expensive screen at once (`proceed`, which never admits); a
    missing vote otherwise leaves it `incomplete`.
    """
    for v in (a, b):
        if v is FAILED or (isinstance(v, Vote) and not is_exclude(v)):
            return "proceed"
    if isinstance(a, Vote) and isinstance(b, Vote):
        return "discard"
    return "incomplete"


def tier_gate(tier: str, a: Vote | Failed | None, b: Vote | Failed | None) -> str:
    """The gate of `tier` ('cheap' or 'expensive')."""
    if tier == "cheap":
        return cheap_gate(a, b)
    if tier == "expensive":
        return screen_gate(a, b)  # type: ignore[arg-type]
    raise ValueError(f"unknown tier {tier!r}")
