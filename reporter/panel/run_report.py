"""What a run did (`run_tasks`' RunReport, one TierReport per step: a screen tier, a judged week), as text and JSON."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..money import dollars


@dataclass(frozen=True)
class TierReport:
    """What one step of a run did (a screen tier; the judge over a week): the one report of a step's run."""

    tier: str
    """The step's task (the store's `tier` column: cheap, expensive, judge)."""
    generation: str | None
    """The task's generation hash (None when the task is not configured)."""
    scope: int
    """Works in the step's scope."""
    screened: int
    """Works this run gave a verdict."""
    votes: int
    """Replies this run received and recorded (invalid replies included)."""
    recovered: int
    """Replies of ended runners adopted from their raw files instead of being asked again."""
    refused: int
    """Rows the store refused because another runner had taken the claim over (their raw lines stay on disk)."""
    failures: int
    """Requests that failed after the client's retries (no vote; the cheap tier passes such works on)."""
    spend_usd: float
    """What this run's replies cost, from their usage and the configured prices."""
    stopped_by_max_cost: bool
    """True when a spending limit (--max-cost, or the workspace's budget: `RunReport.stopped_by` says which)
    stopped the claiming."""
    note: str = ""
    """Why the tier did nothing, or what remains (works left to other runners, cheap verdicts pending)."""
    invalid: dict[str, int] = field(default_factory=dict)
    """Replies recorded that are not a valid answer, by cause (refusal, unparseable, ...): paid for and recorded
    (among `votes`), and failures of their voters all the same."""
    leased_elsewhere: int = 0
    """Works of the scope without a verdict that other runners held when this one found nothing more to claim
    (their lease running, or run out since): the step is not done, and the run exits EXIT_LEASED_ELSEWHERE."""

    @property
    def failed(self) -> int:
        """Every failure: requests that failed and replies that were no valid answer."""
        return self.failures + sum(self.invalid.values())


@dataclass(frozen=True)
class RunReport:
    """What `run_tasks` did, per step."""

    runner: str
    """This runner's id (its raw file is raw_dir/<runner>.jsonl)."""
    release_id: str
    """What it ran on (`Tasks.report_id`: the release screened, the weeks judged)."""
    tiers: tuple[TierReport, ...]
    """One report per step run, in order."""
    max_cost: float | None
    """The --max-cost given."""
    interrupted: bool = False
    """True when Ctrl-C (SIGINT) or SIGTERM stopped the claiming: what was in flight was answered and recorded."""
    signal: str = ""
    """The signal that stopped it (`SIGINT`, `SIGTERM`), or empty."""
    budget: float | None = None
    """The workspace's budget for the current generations (`[screen] budget`), or None."""
    budget_spent: float = 0.0
    """What the current generations cost over all their runs, this one included (with a budget)."""
    stopped_by: str = ""
    """`max_cost` or `budget` when a spending limit stopped the sending, else empty."""
    stop_message: str = ""
    """Why it stopped: the spend, the limit, how to raise it (`Budget.stop_message`), or empty."""
    requests: dict[str, int] = field(default_factory=dict)
    """The run's traffic (`ratelimit.Traffic.counts`): `requests.sent`, `.answered`, `.retries`, `.429`, `.5xx`,
    `.rate_limit_waits`."""

    @property
    def spend_usd(self) -> float:
        """Spend of the whole run."""
        return sum(t.spend_usd for t in self.tiers)

    @property
    def stopped(self) -> bool:
        """True when a spending limit (--max-cost or the budget) stopped the run."""
        return any(t.stopped_by_max_cost for t in self.tiers)

    @property
    def stopped_by_max_cost(self) -> bool:
        """True when --max-cost stopped the run."""
        return self.stopped and self.stopped_by != "budget"

    @property
    def stopped_by_budget(self) -> bool:
        """True when the workspace's budget stopped the run."""
        return self.stopped and self.stopped_by == "budget"


@dataclass(frozen=True)
class RunWords:
    """How a run's report names what it ran on and what it did (each task its own words)."""

    subject: str
    """What `RunReport.release_id` is (`release`)."""
    done: str
    """Jobs given a verdict (`works screened`)."""
    votes: str
    """Replies recorded (`votes`)."""
    scope: str
    """A step's scope (`works in scope`)."""
    claimed: str
    """What is claimed (`works`)."""


def format_run(report: RunReport, words: RunWords, heads: Sequence[str] | None = None) -> str:
    """The run's report as text lines; `heads` names each step (default: its tier)."""
    lines = [f"runner {report.runner}, {words.subject} {report.release_id}"]
    for k, t in enumerate(report.tiers):
        head = f"{t.tier if heads is None else heads[k]}: "
        if t.generation is None:
            lines.append(head + (t.note or "not configured"))
            continue
        lines.append(f"{head}{t.screened:,} {words.done}, {t.votes:,} {words.votes}, {t.recovered:,} recovered "
                     f"from ended runners, {failures_text(t, words)}, {t.refused:,} refused, "
                     f"{dollars(t.spend_usd, tenths=True)} "
                     f"(generation {t.generation[:12]}, {t.scope:,} {words.scope})")
        if t.note:
            lines.append(f"  {t.note}")
    lines.append(f"spend {dollars(report.spend_usd, tenths=True)}"
                 + (f" of --max-cost {dollars(report.max_cost, tenths=True)}" if report.max_cost is not None else "")
                 + (f"; the current generations {dollars(report.budget_spent, tenths=True)} of their budget "
                    f"{dollars(report.budget, tenths=True)} over all runs" if report.budget is not None else ""))
    if report.stopped:
        lines.append(report.stop_message or "stopped at --max-cost: the next request's worst case would have "
                                             "passed it; what was in flight was answered and recorded")
    if report.interrupted:
        lines.append(interrupted_note(report, words))
    elif note := leased_note(report, words):
        lines.append(note)
    return "\n".join(lines)


def failures_text(t: TierReport, words: RunWords) -> str:
    """`N failures`, and when some replies were no valid answer, what the failures are."""
    text = f"{t.failed:,} failures"
    if t.invalid:
        causes = ", ".join(f"{n:,} {cause}" for cause, n in sorted(t.invalid.items()))
        text += (f" ({sum(t.invalid.values()):,} invalid {words.votes}: {causes}; {t.failures:,} requests failed "
                 f"after retries)")
    return text


def interrupted_note(report: RunReport, words: RunWords) -> str:
    """What an interrupted run recorded and spent, and how to resume."""
    votes = sum(t.votes + t.recovered for t in report.tiers)
    screened = sum(t.screened for t in report.tiers)
    said = "Ctrl-C" if report.signal in ("", "SIGINT") else report.signal
    return (f"interrupted ({said}): stopped claiming new {words.claimed}; the requests already sent were answered "
            f"and recorded. This run recorded {votes:,} {words.votes} and {screened:,} verdicts and spent "
            f"{dollars(report.spend_usd, tenths=True)}. To resume, run the same command again: the {words.claimed} without a "
            f"verdict were released, and only their missing {words.votes} are asked")


EXIT_LEASED_ELSEWHERE = 3
"""The run found nothing more to claim while works of its scope were leased by other runners: not done, yet
nothing to do here now (`leased_note`). Distinct from 0 (done), 1 (internal), 2 (bad input), 4 (a budget stopped
it), 130/143 (a signal)."""
EXIT_BUDGET = 4
"""The exit status of a run a spending limit stopped (--max-cost, the workspace's budget): work is left."""


def run_exit_code(report: RunReport) -> int:
    """0; after a signal drained the run 128 plus its number as a shell says it (130 SIGINT, 143 SIGTERM);
    EXIT_BUDGET (4) when --max-cost or the workspace's budget stopped it; EXIT_LEASED_ELSEWHERE (3) when works are
    left leased by other runners."""
    if report.interrupted:
        return 143 if report.signal == "SIGTERM" else 130
    if report.stopped:
        return EXIT_BUDGET
    if any(t.leased_elsewhere for t in report.tiers):
        return EXIT_LEASED_ELSEWHERE
    return 0


def leased_note(report: RunReport, words: RunWords) -> str:
    """What a run that left works leased by other runners says (empty when it left none)."""
    held = [(t.tier, t.leased_elsewhere) for t in report.tiers if t.leased_elsewhere]
    if not held:
        return ""
    where = ", ".join(f"{n:,} {words.claimed} of {tier}" for tier, n in held)
    return (f"not done: nothing more was claimable here, and {where} are leased by other runners "
            f"(reporter screen --status shows which, on which host and until when). When such a runner ended "
            f"without releasing them, its leases run out and the next --run takes them over; exit status "
            f"{EXIT_LEASED_ELSEWHERE}")


def run_json(report: RunReport) -> dict[str, Any]:
    """The run's report as JSON-ready data."""
    return {"runner": report.runner, "release_id": report.release_id, "max_cost": report.max_cost,
            "spend_usd": round(report.spend_usd, 6), "stopped_by_max_cost": report.stopped_by_max_cost,
            "stopped_by_budget": report.stopped_by_budget, "budget": report.budget,
            "budget_spent_usd": round(report.budget_spent, 6) if report.budget is not None else None,
            "stop_message": report.stop_message or None,
            "requests": {k.removeprefix("requests."): v for k, v in report.requests.items()},
            "interrupted": report.interrupted, "signal": report.signal or None,
            "tiers": [{**asdict(t), "spend_usd": round(t.spend_usd, 6), "failed": t.failed} for t in report.tiers]}


def format_duration(seconds: float) -> str:
    """A time left as `1h05m`, `3m07s` or `42s` (`?` when not finite)."""
    if not math.isfinite(seconds):
        return "?"
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
