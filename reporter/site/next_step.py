"""What a page says to do next, where there is something to do: today, the screen of the newest release.

The home page and the newest release's status page say it in one line
(`NextStep`): what the screen would send and cost now, and the command that
runs it; once nothing is left to send, the hand-off and its command. Both
read the one `ScreenReport` a build gathered (`gather_screening`); nothing
here reads state.
"""

from __future__ import annotations

from ..money import dollars
from ..screening.report import ScreenReport
from .charts import fmt
from .models import NextStep

RUN = "reporter screen --run"
EXPORT = "reporter export --out state/handoff.csv"


def screen_next_step(report: ScreenReport | None) -> NextStep | None:
    """The screen's next step for one release (None without a report: nothing configured, no workspace)."""
    if report is None:
        return None
    plans = [p for p in report.plan if p.configured]
    if not any(p.tier == "expensive" for p in plans):
        return NextStep("Nothing can be admitted until the screen has voters: add two [[screen.expensive.voters]] "
                        "to reporter.toml (docs/screening.md), and the next build says what it would cost", "")
    works = sum(p.works for p in plans)
    if works == 0:
        admitted = report.funnel.hand_off
        if not admitted:
            return NextStep("Every work in the screen's scope is decided and none was admitted: there is nothing to "
                            "hand on", "")
        wait = "work waits" if admitted == 1 else "works wait"
        return NextStep(f"Every work in the screen's scope is decided: {fmt(admitted)} admitted {wait} to be handed "
                        f"on", EXPORT)
    cost = dollars(sum(p.total_cost_usd for p in plans))
    estimate = " (an estimate)" if any(v.estimate for p in plans for v in p.voters) else ""
    begun = report.database_exists and any(t.screened or any(v.votes for v in t.voters) for t in report.tiers)
    if begun:
        waits = "work still waits" if works == 1 else "works still wait"
        return NextStep(f"{fmt(works)} {waits} for the screen; finishing would cost {cost}{estimate}", RUN)
    return NextStep(f"Nothing is screened yet: the screen would send {fmt(works)} work{'s' * (works != 1)} and "
                    f"would cost {cost}{estimate}", RUN)
