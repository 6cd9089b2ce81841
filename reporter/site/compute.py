"""Numbers the pages show that are not stored as such: funnel steps, identity sums, overlaps.

Pure functions of rule_stats.json (a dict); no template and no table library here.
"""

from __future__ import annotations

from typing import Any

from .charts import FunnelStep
from .links import isolated

OVERLAP_TOP = 50


def paying_piles(stats: dict[str, Any]) -> list[str]:
    """Pile names of kind screen (the piles that cost money), in pile order."""
    return [p["name"] for p in stats["pile_order"] if p["kind"] == "screen"]


def funnel_steps(stats: dict[str, Any]) -> list[FunnelStep]:
    """Routing as a funnel: every step names what removed rows, and the last splits into paying piles.

    pool -> after the overlay (fills text, removes nothing) -> matched by a
    rule (removes pending/unrouted) -> sent to a paying pile (removes each
    discard and hold pile) -> with usable text (removes pending/no_text),
    which is exactly the sum of the paying piles.
    """
    rows = stats["rows"]
    pending = stats["pending"]
    unrouted = pending.get("unrouted", 0)
    no_text = pending.get("no_text", 0)
    others = [(r, n) for r, n in sorted(pending.items()) if r not in ("unrouted", "no_text")]
    paying = paying_piles(stats)
    parked = [p["name"] for p in stats["pile_order"] if p["kind"] != "pending" and p["name"] not in paying]
    routed = rows - unrouted - sum(n for _r, n in others)
    to_paying = routed - sum(stats["piles"][p] for p in parked)
    with_text = to_paying - no_text
    steps = [
        FunnelStep("f-pool", "pool", rows),
        FunnelStep("f-overlay", "after the overlay (fills text only)", rows),
        FunnelStep("f-routed", "matched by a rule", routed,
                   (("f-unrouted", "pending: unrouted (no rule matched)", unrouted),)
                   + tuple((f"f-pending-{r}", f"pending: {r}", n) for r, n in others)),
        FunnelStep("f-paying", "sent to a paying pile", to_paying,
                   tuple((f"f-pile-{p}", f"{p} (a rule's pile)", stats["piles"][p]) for p in parked)),
        FunnelStep("f-text", "with usable text", with_text,
                   (("f-no_text", "pending: no_text (no abstract)", no_text),)),
    ]
    steps += [FunnelStep(f"f-to-{p}", f"to {isolated(p)}", stats["piles"][p]) for p in paying]
    return steps


def identity_totals(stats: dict[str, Any]) -> dict[str, int]:
    """Sums over the non-shadow rules that must add up to the pool: won + no_text + unrouted = rows."""
    live = [r for r in stats["rules"] if not r["shadow"]]
    return {
        "matched": sum(r["matched"] for r in live),
        "won": sum(r["won"] for r in live),
        "no_text": sum(r["no_text"] for r in live),
        "outranked": sum(r["outranked"] for r in live),
        "unrouted": stats["pending"].get("unrouted", 0),
        "rows": stats["rows"],
    }


def overlap_pairs(stats: dict[str, Any], top: int = OVERLAP_TOP) -> tuple[list[tuple[str, str, int]], int]:
    """The pairs of different rules that matched the same rows, most first; and how many pairs overlap."""
    ids = stats["overlap"]["rules"]
    matrix = stats["overlap"]["matrix"]
    pairs = [(ids[i], ids[j], matrix[i][j]) for i in range(len(ids)) for j in range(i + 1, len(ids))
             if matrix[i][j]]
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs[:top], len(pairs)


def share(part: int, whole: int) -> str:
    """A percentage with one decimal, '—' of nothing."""
    return f"{100 * part / whole:.1f}%" if whole else "—"
