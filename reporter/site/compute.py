"""Numbers the pages show that are not stored as such: the flow, plain names, identity sums, overlaps.

Pure functions of a release's statistics (routing's record, `RuleStats`); no template and no table library here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..plurals import count
from ..routing.artifacts import RuleStats
from .charts import FlowBox, FlowLine, FlowNote, FlowStep
from .links import slug

OVERLAP_TOP = 50


def paying_piles(stats: RuleStats) -> list[str]:
    """Pile names of kind screen (the piles that cost money), in pile order."""
    return [p.name for p in stats.pile_order if p.kind == "screen"]


PLAIN_KINDS = {"discard": "discarded by a rule", "hold": "set aside by a rule (hold)"}
PLAIN_TIERS = {"cheap": "to the cheap screen (discard-only)", "expensive": "to the two-voter screen"}
PLAIN_PENDING = {"unrouted": "no rule matched", "no_text": "no text to screen"}
HANDED_OFF = "handed off to full-text review (Stage 3)"
"""What the admitted works become: Stage 3 reads each screened work in full, from the export's list."""
FLOW_SOURCES = 8
"""Sources named in the pool's box; the rest are one line."""
FLOW_RULES = 10
"""Rules named in the box of works a rule discarded or set aside; the rest are one line per pile."""


def plain_name(state: str, stats: RuleStats) -> str:
    """What a pile or pending/<reason> means in plain words (`no rule matched` for pending/unrouted)."""
    if state.startswith("pending/"):
        reason = state.split("/", 1)[1]
        return PLAIN_PENDING.get(reason, f"pending: {reason}")
    pile = next((p for p in stats.pile_order if p.name == state), None)
    if pile is None:
        return "not in that release" if state.startswith("(") else state
    if pile.kind == "screen":
        return PLAIN_TIERS.get(pile.tier or "expensive", "to screening")
    return PLAIN_KINDS.get(pile.kind, "not decided yet" if pile.kind == "pending" else pile.kind)


def flow_steps(stats: RuleStats, screen: Any = None) -> list[FlowStep]:
    """Routing as a flow diagram, in the order works travel: each box, and beside it what left it and why.

    pool (per source when the statistics count them; out: no rule matched)
    -> matched by a rule (out: discarded or set aside, per pile and rule) ->
    sent on to be screened (out: no text) -> with text to screen, split into
    the screening piles. With `screen` (a ScreenFunnel of the status page's
    report) the flow goes on through the cheap tier and the two-voter screen
    to the hand-off. Each box holds the one above it less what left it and
    what still waits in it.
    """
    rows = stats.rows
    pending = stats.pending
    unrouted = pending.get("unrouted", 0)
    no_text = pending.get("no_text", 0)
    others = [(r, n) for r, n in sorted(pending.items()) if r not in ("unrouted", "no_text")]
    paying = paying_piles(stats)
    parked = [p.name for p in stats.pile_order if p.kind != "pending" and p.name not in paying]
    routed = rows - unrouted - sum(n for _r, n in others)
    to_paying = routed - sum(stats.piles[p] for p in parked)
    with_text = to_paying - no_text
    sources = sorted((stats.sources or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    source_lines = [FlowLine(name, n, f"fl-source-{slug(name)}") for name, n in sources[:FLOW_SOURCES]]
    if len(sources) > FLOW_SOURCES:
        rest = sources[FLOW_SOURCES:]
        source_lines.append(FlowLine(f"{len(rest)} more sources", sum(n for _s, n in rest), "fl-source-more"))
    text_box = FlowBox("With text to screen", with_text, "fl-text",
                       tuple(FlowLine(f"{p}: {plain_name(p, stats)}", stats.piles[p], f"fl-to-{slug(p)}")
                             for p in paying))
    kinds = {p.name: p.kind for p in stats.pile_order}
    discards = [p for p in parked if kinds[p] == "discard"]
    holds = [p for p in parked if kinds[p] != "discard"]  # set aside: they wait for a person, they did not leave
    # Pending works (no rule matched, no text) and held ones wait: drawn apart, never as having left the flow.
    steps = [
        FlowStep(FlowBox("Works in the pool", rows, "fl-pool", tuple(source_lines)),
                 waiting=FlowBox("Pending: no rule matched", rows - routed, "fl-out-unrouted",
                                 tuple(FlowLine(f"pending: {r}", n, f"fl-pending-{slug(r)}") for r, n in others))),
        FlowStep(FlowBox("Matched by a rule", routed, "fl-routed"),
                 FlowBox("Discarded by a rule", sum(stats.piles[p] for p in discards), "fl-out-discard",
                         _parked_lines(stats, discards)),
                 FlowBox("Set aside by a rule (hold)", sum(stats.piles[p] for p in holds), "fl-wait-hold",
                         _parked_lines(stats, holds)) if holds else None),
        FlowStep(FlowBox("Sent on to be screened", to_paying, "fl-paying"),
                 waiting=FlowBox("Pending: no text to screen (no abstract)", no_text, "fl-out-no_text")),
    ]
    if screen is None:
        return steps + [FlowStep(text_box)]
    return steps + _screen_steps(text_box, screen)


def _parked_lines(stats: RuleStats, parked: list[str]) -> tuple[FlowLine, ...]:
    """Each discard and hold pile with its rules, most wins first (at most FLOW_RULES rules named)."""
    lines: list[FlowLine] = []
    named = 0
    for pile in parked:
        lines.append(FlowLine(f"{pile}: {plain_name(pile, stats)}", stats.piles[pile], f"fl-pile-{slug(pile)}"))
        rules = sorted(((r.id, r.won) for r in stats.live() if r.pile == pile and r.won), key=lambda x: (-x[1], x[0]))
        room = max(FLOW_RULES - named, 0)
        lines += [FlowLine(rule, n, f"fl-rule-{slug(rule)}", indent=True) for rule, n in rules[:room]]
        named += min(room, len(rules))
        if len(rules) > room:
            rest = rules[room:]
            lines.append(FlowLine(count(len(rest), "more rule"), sum(n for _r, n in rest), f"fl-more-{slug(pile)}",
                                  indent=True))
    return tuple(lines)


def _screen_steps(text_box: FlowBox, f: Any) -> list[FlowStep]:
    """The flow past routing, from the status page's screen funnel (reporter.screening.report.ScreenFunnel).

    From the works with text, the cheap screen discards some and has not
    decided others yet (they wait, and may still reach the screen); the
    two-voter screen discards some of what reaches it, has no verdict on
    others yet, and admits the rest; the admitted are handed off.
    """
    if f.cheap_configured:
        into = (FlowLine("from the screen piles", f.screen - f.cheap_proceeded, "fl-sc-direct"),
                FlowLine("passed on by the cheap screen", f.cheap_proceeded, "fl-sc-cheap-proceed"))
        text = FlowStep(text_box, FlowBox("Discarded by the cheap screen", f.cheap_discarded,
                                          "fl-sc-cheap-discard"),
                        FlowBox("Not decided yet by the cheap screen", f.cheap_undecided, "fl-sc-cheap-incomplete"))
    else:
        into = (FlowLine("from the screen piles", f.screen - f.cheap, "fl-sc-direct"),
                FlowLine("from the cheap piles (no cheap screen configured)", f.cheap, "fl-sc-cheap-proceed"))
        text = FlowStep(text_box)
    return [text,
            FlowStep(FlowBox("Two-voter screen: works in scope", f.screen, "fl-sc-screen", into),
                     FlowBox("Discarded by the two-voter screen", f.discarded, "fl-sc-screen-discard"),
                     FlowBox("No verdict yet from the screen", f.incomplete, "fl-sc-screen-incomplete")),
            FlowStep(FlowBox("Admitted by the two-voter screen", f.admitted, "fl-sc-screen-admit")),
            FlowStep(FlowBox(HANDED_OFF[0].upper() + HANDED_OFF[1:], f.hand_off, "fl-sc-handoff"))]


TIER_DISCARDS = {"cheap": "fl-sc-cheap-discard", "expensive": "fl-sc-screen-discard"}
"""The key of the box of what each screening tier discarded."""


def box_of(steps: list[FlowStep], pile: str | None, tier: str | None) -> FlowBox | None:
    """The box holding a pile's works (the box with the pile's line) or a tier's discards; None when none does."""
    wanted = {f"fl-pile-{slug(pile)}", f"fl-to-{slug(pile)}"} if pile is not None else {TIER_DISCARDS.get(tier or "")}
    for step in steps:
        for box in (step.main, step.side, step.waiting):
            if box is not None and (box.key in wanted or any(line.key in wanted for line in box.lines)):
                return box
    return None


def with_notes(steps: list[FlowStep], notes: Mapping[str, tuple[FlowNote, ...]]) -> list[FlowStep]:
    """The steps with each box's notes (`notes`: box key -> its notes) written in it."""
    def noted(box: FlowBox) -> FlowBox:
        return dataclasses.replace(box, notes=notes[box.key]) if box.key in notes else box
    return [FlowStep(noted(s.main), None if s.side is None else noted(s.side),
                     None if s.waiting is None else noted(s.waiting)) for s in steps]


@dataclass(frozen=True)
class IdentityTotals:
    """Sums over the live (non-shadow) rules: won + no_text + unrouted = rows."""

    matched: int
    """Σ matched."""
    won: int
    """Σ won."""
    no_text: int
    """Σ no_text."""
    outranked: int
    """Σ outranked."""
    unrouted: int
    """Works no rule matched (pending/unrouted)."""
    rows: int
    """Works in the pool."""


def identity_totals(stats: RuleStats) -> IdentityTotals:
    """Sums over the non-shadow rules that must add up to the pool: won + no_text + unrouted = rows."""
    live = stats.live()
    return IdentityTotals(matched=sum(r.matched for r in live), won=sum(r.won for r in live),
                          no_text=sum(r.no_text for r in live), outranked=sum(r.outranked for r in live),
                          unrouted=stats.pending.get("unrouted", 0), rows=stats.rows)


def overlap_pairs(stats: RuleStats, top: int = OVERLAP_TOP) -> tuple[list[tuple[str, str, int]], int]:
    """The pairs of different rules that matched the same rows, most first; and how many pairs overlap."""
    ids, matrix = stats.overlap.rules, stats.overlap.matrix
    pairs = [(ids[i], ids[j], matrix[i][j]) for i in range(len(ids)) for j in range(i + 1, len(ids))
             if matrix[i][j]]
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs[:top], len(pairs)


def share(part: int, whole: int) -> str:
    """A percentage with one decimal, '—' of nothing."""
    return f"{100 * part / whole:.1f}%" if whole else "—"
