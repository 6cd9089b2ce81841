"""`reporter screen --status`: where the screen of a release stands across every runner, read from the state database.

The operator's one view (the same on the status page): per tier of the
release, in its current generation, the works done (admitted and
discarded), those whose last request failed, those leased (by which runner,
on which host, since and until when; a lease that ran out is reclaimable:
the next `--run` takes its works), those no runner holds; what each voter
has spent in the generation, against `[screen] budget`; each runner's
requests sent and answered; the pace of the last ten minutes and the time
left at it. Only reads: the database is opened read-only and never created.

`export_blockers` is what `reporter export` refuses on (works leased or not
claimed yet, unless `--partial`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..money import dollars
from ..panel.readonly import open_readonly
from ..panel.run_report import format_duration
from .config import TIERS, WHERE, ScreenWorkspace
from .plan import TIER_NAMES, generations, scopes, tier_voters
from .prompt import load_prompt

PACE_WINDOW_SECONDS = 600.0
"""The pace (and the time left) is of the verdicts recorded in the last ten minutes, by every runner."""

PASSED = {"cheap": "proceed", "expensive": "admit"}
"""The outcome `admitted` counts: the screen's admit, the cheap tier's proceed (passed on to the screen)."""


@dataclass(frozen=True)
class Lease:
    """Works of one tier held by one runner: all with their lease running, or all run out (reclaimable)."""

    runner: str
    host: str
    since: float | None
    """When the runner started (it has held them since then at most)."""
    until: float
    """When the last of these leases runs out (ran out, for reclaimable ones)."""
    works: int
    reclaimable: bool
    """True when the leases ran out: the runner stopped heart-beating (killed, or its machine lost); the next
    `--run` anywhere takes these works over."""


@dataclass(frozen=True)
class VoterSpend:
    voter: str
    model: str
    votes: int
    """Votes recorded in the generation (every release)."""
    spend: float
    """What they cost, dollars."""


@dataclass(frozen=True)
class TierState:
    """One tier of the release, in its current generation."""

    tier: str
    configured: bool
    generation: str | None
    scope: int
    """Works the release sends to the tier now."""
    done: int
    """Of those, works with a verdict (admitted plus discarded)."""
    admitted: int
    """Admitted (the cheap tier: passed on to the screen)."""
    discarded: int
    failed: int
    """Works without a verdict whose last request failed after retries (also counted as leased or unclaimed)."""
    leased: tuple[Lease, ...]
    unclaimed: int
    """Works without a verdict that no runner holds (never claimed, or released): the next `--run` claims them."""
    voters: tuple[VoterSpend, ...]
    rate_per_minute: float | None
    """Verdicts a minute over the last ten minutes, every runner together (None: none recorded in that time)."""

    @property
    def spend(self) -> float:
        return sum((v.spend for v in self.voters), 0.0)

    @property
    def remaining(self) -> int:
        return self.scope - self.done

    @property
    def leased_works(self) -> int:
        return sum(lease.works for lease in self.leased)

    @property
    def seconds_left(self) -> float | None:
        """At the current pace (None: no pace to go by)."""
        if not self.remaining:
            return 0.0
        return None if not self.rate_per_minute else 60.0 * self.remaining / self.rate_per_minute


@dataclass(frozen=True)
class RunnerState:
    runner: str
    host: str
    pid: int
    started: float
    heartbeat: float | None
    """Its last heartbeat (every lease / 3 while it runs)."""
    finished: float | None
    state: str
    """`running`, `ended`, `killed` (its raw file here is unlocked), or `silent` (on another machine, its heartbeats
    stopped: presumed dead; `panel.store_status.runner_state`)."""
    sent: int
    answered: int


@dataclass(frozen=True)
class ScreenStatus:
    release_id: str
    now: float
    tiers: tuple[TierState, ...]
    budget: float | None
    """`[screen] budget`, dollars (None: none set)."""
    runners: tuple[RunnerState, ...]

    @property
    def spend(self) -> float:
        return sum((t.spend for t in self.tiers), 0.0)


def screen_status(ws: ScreenWorkspace, release_dir: Path, *, store: Any = None) -> ScreenStatus:
    """Where the screen of `release_dir` stands (the database read-only; none yet: nothing done)."""
    from .scope import release_id_of
    prompt = load_prompt(ws.screen)
    gens = generations(ws, prompt)
    voters = tier_voters(ws)
    with open_readonly(ws.screen.database, WHERE, store) as db:
        scope = scopes(ws, release_dir, gens, db)
        now = db.clock() if db is not None else datetime.now(timezone.utc).timestamp()
        tiers = tuple(_tier(tier, scope[tier].work_ids, gens[tier], voters[tier], db) for tier in TIERS)
        rows = db.runner_rows() if db is not None else []
    holding = {lease.runner for t in tiers for lease in t.leased}
    return ScreenStatus(release_id_of(release_dir), now, tiers, _budget(ws),
                        _runners(rows, holding, Path(ws.screen.raw_dir), ws.screen.lease_seconds, now))


def _budget(ws: ScreenWorkspace) -> float | None:
    """`[screen] budget` in dollars, or None where the workspace sets none."""
    return ws.screen.budget


def _tier(tier: str, ids: Sequence[str], generation: str | None, voters: tuple, db: Any) -> TierState:
    if not voters or generation is None:
        # Nothing is claimed or decided by a tier without voters (the cheap tier's works go straight on).
        unclaimed = len(ids) if tier == "expensive" else 0
        return TierState(tier, False, None, len(ids) if tier == "expensive" else 0, 0, 0, 0, 0, (), unclaimed,
                         (), None)
    in_scope = set(ids)
    verdicts = db.verdicts(tier, generation, list(ids)) if db is not None and ids else {}
    claims = [c for c in db.open_claims(tier, generation) if c.work_id in in_scope] if db is not None else []
    now = db.clock() if db is not None else 0.0
    failed = ({f.work_id for f in db.failures(tier, generation)} & in_scope) - set(verdicts) if db is not None else set()
    spent = db.spend_by_voter(tier, generation) if db is not None else {}
    groups: dict[tuple[str, bool], list[Any]] = {}
    for c in claims:
        groups.setdefault((c.runner, c.until < now), []).append(c)
    leased = tuple(Lease(runner, cs[0].host, cs[0].since, max(c.until for c in cs), len(cs), expired)
                   for (runner, expired), cs in sorted(groups.items()))
    rate = None
    if db is not None:
        n, first, at = db.recent_verdicts(tier, generation, PACE_WINDOW_SECONDS)
        if n and first is not None:
            rate = 60.0 * n / max(at - first, 1.0)
    admitted = sum(o == PASSED[tier] for o in verdicts.values())
    return TierState(tier, True, generation, len(ids), len(verdicts), admitted, len(verdicts) - admitted,
                     len(failed), leased, len(ids) - len(verdicts) - len(claims),
                     tuple(VoterSpend(v.name, v.model, *spent.get(v.name, (0, 0.0))) for v in voters), rate)


def _runners(rows: Sequence[Any], holding: set[str], raw_dir: Path, lease_seconds: float,
             now: float) -> tuple[RunnerState, ...]:
    """The runners worth showing: those holding works, those running, those with requests never answered (cut
    by a kill), and each host's newest run."""
    from ..panel.store_status import runner_state
    newest = {r.host: r.runner for r in rows}  # oldest first: the last one per host wins
    out = []
    for r in rows:
        state = runner_state(r, raw_dir, lease_seconds, now)
        if r.runner in holding or state == "running" or r.sent > r.answered or newest.get(r.host) == r.runner:
            out.append(RunnerState(r.runner, r.host, r.pid, r.started_at, r.heartbeat_at, r.finished_at, state,
                                   r.sent, r.answered))
    return tuple(out)


def export_blockers(status: ScreenStatus) -> list[str]:
    """Why a hand-off now would be incomplete: per tier, works leased or not claimed yet ([] when none)."""
    out = []
    for t in status.tiers:
        if t.leased_works or t.unclaimed:
            reclaimable = sum(lease.works for lease in t.leased if lease.reclaimable)
            out.append(f"{TIER_NAMES[t.tier]}: {t.leased_works:,} works leased"
                       + (f" ({reclaimable:,} of them reclaimable: their runner's lease ran out)" if reclaimable else "")
                       + f", {t.unclaimed:,} not claimed yet"
                       + (f", {t.failed:,} of them failed after retries" if t.failed else ""))
    return out


# --- outputs ---------------------------------------------------------------------------------------------


def when(t: float | None) -> str | None:
    """An epoch time as ISO 8601 UTC to the second (`2026-12-04T21:40:00Z`)."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _money(value: float) -> float:
    return round(value, 6)


def status_json(status: ScreenStatus) -> dict[str, Any]:
    """The contract's JSON: `tiers` by name (done, admitted, discarded, failed, leased, unclaimed, spend), top-level
    `spend` and `budget` in dollars; and the release, the clock, each tier's voters and pace, the runners."""
    tiers = {}
    for t in status.tiers:
        tiers[t.tier] = {
            "configured": t.configured, "generation": t.generation, "scope": t.scope, "done": t.done,
            "admitted": t.admitted, "discarded": t.discarded, "failed": t.failed,
            "leased": [{"runner": x.runner, "host": x.host, "since": when(x.since), "until": when(x.until),
                        "works": x.works, "reclaimable": x.reclaimable} for x in t.leased],
            "unclaimed": t.unclaimed, "spend": _money(t.spend),
            "voters": [{"voter": v.voter, "model": v.model, "votes": v.votes, "spend": _money(v.spend)}
                       for v in t.voters],
            "rate_per_minute": None if t.rate_per_minute is None else round(t.rate_per_minute, 3),
            "seconds_left": None if t.seconds_left is None else round(t.seconds_left, 1)}
    return {"release_id": status.release_id, "now": when(status.now), "tiers": tiers,
            "spend": _money(status.spend), "budget": status.budget,
            "runners": [{"runner": r.runner, "host": r.host, "pid": r.pid, "started": when(r.started),
                         "heartbeat": when(r.heartbeat), "finished": when(r.finished), "state": r.state, "sent": r.sent, "answered": r.answered}
                        for r in status.runners]}


def format_status(status: ScreenStatus) -> str:
    """The status for a terminal."""
    lines = [f"screen of release {status.release_id[:12]}, as of {when(status.now)}"]
    for t in status.tiers:
        head = TIER_NAMES[t.tier]
        if not t.configured:
            lines.append(f"{head}: not configured" + (f" ({t.unclaimed:,} works wait for it)" if t.unclaimed else ""))
            continue
        passed = "passed on" if t.tier == "cheap" else "admitted"
        lines.append(f"{head} (generation {t.generation[:12]}): {t.done:,} of {t.scope:,} done ({t.admitted:,} "
                     f"{passed}, {t.discarded:,} discarded), {t.failed:,} failed, {t.leased_works:,} leased, "
                     f"{t.unclaimed:,} unclaimed")
        for x in t.leased:
            state = ("lease ran out at " + str(when(x.until)) + ": reclaimable, the next --run takes them"
                     if x.reclaimable else f"until {when(x.until)}")
            lines.append(f"  leased: {x.works:,} works by {x.runner} on {x.host or '?'} since {when(x.since) or '?'}, "
                         f"{state}")
        spent = ", ".join(f"{v.voter} {dollars(v.spend, tenths=True)}" for v in t.voters)
        pace = ("no verdict in the last ten minutes" if t.rate_per_minute is None else
                f"{t.rate_per_minute:,.1f} works/min over the last ten minutes")
        left = "" if t.seconds_left is None else f", {format_duration(math.ceil(t.seconds_left))} left"
        lines.append(f"  spend {dollars(t.spend, tenths=True)} ({spent}); {pace}{left}")
    budget = (f" of the budget {dollars(status.budget, tenths=True)}" if status.budget is not None
              else " (no [screen] budget set)")
    lines.append(f"spend {dollars(status.spend, tenths=True)} in all{budget}")
    for r in status.runners:
        beat = f", last heartbeat {when(r.heartbeat)}" if r.state in ("running", "silent") and r.heartbeat else ""
        lines.append(f"runner {r.runner} on {r.host} (pid {r.pid}, {r.state}, started {when(r.started)}{beat}): "
                     f"{r.sent:,} requests sent, {r.answered:,} answered")
    blockers = export_blockers(status)
    lines.append("not complete: " + "; ".join(blockers) if blockers else
                 "complete: every work in scope has its verdict")
    return "\n".join(lines) + "\n"
