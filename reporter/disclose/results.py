"""The checklist's evaluation and result items (M9, R1, R2, D1) and the flow of who decided, from the evidence.

Every figure keeps its review, its date and its sample size: nothing is pooled across reviews or releases.
"""

from __future__ import annotations

from typing import Any

from .evidence import Evidence
from .items import Item, calibrated, m2, m3, m4, m5, m6, m7, m8, model_warnings, n


PENDING = {"unrouted": "no rule matched the work", "no_text": "a rule would screen it, but it has no text"}


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(r: tuple[float, float, float] | None) -> str:
    """`92.0% (95% CI 85.1%-96.0%)` of a (value, low, high) rate."""
    return "n/a" if r is None else f"{pct(r[0])} (95% CI {pct(r[1])}-{pct(r[2])})"


def specificity(gate: Any) -> tuple[float, float, float] | None:
    """The gate's specificity: labelled excludes it discarded, of those it decided (Wilson 95%), from its rows."""
    from ..screening.calibration import rate
    row = dict(gate.rows).get("exclude", ())
    decided = {c: k for c, k in zip(gate.columns, row) if c != "incomplete"}
    return rate(decided.get("discard", 0), sum(decided.values()))


def screen_date(ev: Evidence) -> str:
    runs = ev.of("screen")
    return max(r.ended for _, r in runs)[:10] if runs else ""


def flow(ev: Evidence) -> list[dict[str, Any]]:
    """The boxes of the release's flow, each with who decided it (rule, model, person) and its count: the
    release page's piles (the same numbers), the screen's outcomes per tier, the people's labelled samples."""
    stats, man = ev.release.stats, ev.release.manifest
    route_sources = [ev.release_source, *(p for p, _ in ev.of("route"))]
    boxes: list[dict[str, Any]] = [{"id": "pool", "label": "works in the pool", "decided_by": "rule",
                                    "count": stats.rows, "sources": route_sources,
                                    "detail": f"rule book sha256 {man.inputs.get('specs', '')}"}]
    for p in stats.pile_order:
        if p.kind == "pending":
            for reason, m in stats.pending.items():
                boxes.append({"id": f"pending/{reason}", "label": f"pending ({reason}): no rule decided it",
                              "decided_by": "rule", "count": m, "sources": route_sources,
                              "detail": PENDING.get(reason, "")})
            continue
        won = [(r.id, r.won) for r in stats.live() if r.pile == p.name and r.won]
        boxes.append({"id": f"pile/{p.name}", "label": f"{p.name} ({p.kind}{f', {p.tier}' if p.tier else ''})",
                      "decided_by": "rule", "count": stats.piles[p.name], "sources": route_sources,
                      "detail": "by " + (", ".join(f"{rid} ({w:,})" for rid, w in won) or "no rule")})
    screen_paths = [p for p, _ in ev.of("screen")]
    for t in (ev.screen.tiers if ev.screen is not None and screen_paths else ()):
        if not t.configured or t.generation is None:
            continue
        models = ", ".join(f"{v.voter} ({v.model})" for v in t.voters)
        for outcome, count in t.outcomes:
            if outcome == "incomplete":
                continue
            boxes.append({"id": f"screen/{t.tier}/{outcome}", "label": f"{t.tier} tier: {outcome}",
                          "decided_by": "model", "count": count, "sources": screen_paths,
                          "detail": f"models {models}; generation {t.generation}"})
    for t in calibrated(ev):
        boxes.append({"id": f"labels/{t.tier}", "label": f"labelled works in the {t.tier} tier's scope",
                      "decided_by": "person", "count": t.calibration.labelled, "sources": [ev.labels_source],
                      "detail": f"{t.calibration.includes:,} labelled include"})
    for path, c in ev.certificates:
        boxes.append({"id": f"certificate/{c.stratum}", "label": f"labelled sample of {c.stratum}",
                      "decided_by": "person", "count": c.n_labelled, "sources": [path],
                      "detail": f"{c.k_relevant:,} relevant of {c.n_labelled:,} labelled; stratum of {c.N:,}"})
    return boxes


def r1(ev: Evidence, boxes: list[dict[str, Any]]) -> Item:
    item = Item("R1")
    for b in boxes:
        who = {"rule": "rules", "model": "models", "person": "people"}[b["decided_by"]]
        item.say(f"{b['label'][:1].upper()}{b['label'][1:]}: {b['count']:,} (decided by {who}; {b['detail']}).",
                 *b["sources"])
    return item.settle()


def m9(ev: Evidence) -> Item:
    item = Item("M9")
    for t in calibrated(ev):
        c = t.calibration
        item.say(f"The {t.tier} tier was compared with people's labels of {n(c.labelled, 'work')} in its "
                 f"scope ({c.includes:,} include), as of {screen_date(ev) or 'the last screen'}: recall, "
                 f"specificity and work saved with Wilson 95% intervals, and Cohen's kappa between the two voters.",
                 ev.labels_source, *(p for p, _ in ev.of("screen")))
    for path, c in ev.certificates:
        item.say(f"The {c.stratum} stratum was certified on {c.certified_at[:10]} from a seeded random sample of "
                 f"{c.n_labelled:,} labelled works (seed {c.seed}): an exact hypergeometric upper bound at "
                 f"{pct(c.confidence)} confidence on the relevant works it holds"
                 + (f", relevant as {c.criteria} (sha256 {c.criteria_sha256}) defines it" if c.criteria else "")
                 + ".", path)
    if ev.feedback and ev.feedback.get("keep_marked"):
        weeks = ev.feedback.get("weeks") or []
        marked = n(ev.feedback["keep_marked"], "KEEP")
        item.say(f"The digest's KEEP precision was measured from readers' marks on {marked} "
                 f"over weeks {weeks[0] if weeks else ''} to {weeks[-1] if weeks else ''}, with a Wilson 95% "
                 f"interval.", ev.feedback_source)
    if not item.sentences:
        item.missing.append("no evaluation is on record: no labels, no certificate, no reader feedback")
    return item.settle()


def r2(ev: Evidence) -> Item:
    item = Item("R2")
    for t in calibrated(ev):
        c = t.calibration
        kappa = t.agreement.kappa if t.agreement is not None else None
        item.say(f"{t.tier.capitalize()} tier ({screen_date(ev)}, {n(c.gate.includes, 'labelled include')}, "
                 f"{c.gate.judged:,} labelled works decided): recall {interval(c.gate.recall)}, specificity "
                 f"{interval(specificity(c.gate))}, work saved {interval(c.gate.saved)}, kappa "
                 f"{'n/a' if kappa is None else f'{kappa:.2f}'} on "
                 f"{n(t.agreement.valid if t.agreement else 0, 'work')}; {n(c.lost_total, 'labelled include')} "
                 f"discarded.", ev.labels_source, *(p for p, _ in ev.of("screen")))
    for path, c in ev.certificates:
        bound = f"; recall at least {pct(c.recall_lower_bound)} ({c.found:,} found)" \
            if c.recall_lower_bound is not None and c.found is not None else ""
        if c.joint_confidence != c.confidence:
            bound += f"; with the release's other discarding strata, at {pct(c.joint_confidence)} jointly"
        item.say(f"{c.stratum} ({c.certified_at[:10]}): {c.k_relevant:,} relevant of {c.n_labelled:,} labelled; "
                 f"at most {c.max_relevant:,} of its {c.N:,} works are relevant ({pct(c.max_missed_fraction)}) at "
                 f"{pct(c.confidence)} confidence{bound}.", path)
    fb = ev.feedback
    if fb and fb.get("keep_marked"):
        low, high = fb.get("interval") or (None, None)
        item.say(f"Digest KEEP precision: {pct(fb.get('precision'))} (95% CI {pct(low)}-{pct(high)}), "
                 f"{fb['keep_wanted']:,} wanted of {fb['keep_marked']:,} marked.", ev.feedback_source)
    cost = sum(r.cost_usd for _, r in ev.of("screen", "judge"))
    if ev.of("screen", "judge"):
        item.say(f"The model runs cost ${cost:.4f} in all.", *(p for p, _ in ev.of("screen", "judge")))
    if not item.sentences:
        item.missing.append("no measured performance is on record")
    return item.settle()


def d1(ev: Evidence) -> Item:
    item = Item("D1")
    for path, r in ev.of("screen", "judge"):
        failures = sum(v for k, v in r.counts.items() if k.endswith(".failures"))
        invalid = sum(v for k, v in r.counts.items() if k.endswith(".invalid"))
        item.say(f"The {r.kind} run of {r.started} ended {r.status} with {n(invalid, 'invalid answer')} and "
                 f"{n(failures, 'provider failure')}.", path)
    if ev.screen is not None and ev.screen.funnel.incomplete and ev.of("screen"):
        item.say(f"{n(ev.screen.funnel.incomplete, 'work')} had no verdict of the screen yet.",
                 *(p for p, _ in ev.of("screen")))
    stats = ev.release.stats
    if stats.title_only or stats.pending.get("no_text"):
        item.say(f"{n(stats.title_only, 'work')} were judged on the title alone and "
                 f"{n(stats.pending.get('no_text', 0), 'work')} had no text to screen.", ev.release_source)
    for o in ev.observed:
        for w in model_warnings(o):
            item.say(f"Warning: {w}.", o.source)
    for path, c in ev.certificates:
        if c.partial:
            item.say(f"The {c.stratum} certificate is partial: {c.n_labelled:,} of {c.n_drawn:,} rows labelled.",
                     path)
    item.missing.append("the limitations of the search, of the labels' reliability, and of generalising the "
                        "models' measured performance beyond these samples")
    return item.settle()


def draft(ev: Evidence) -> dict[str, Any]:
    """The disclosure as JSON values: the release, `items` (M2..D1) and `flow`."""
    boxes = flow(ev)
    items = [m2(ev), m3(ev), m4(ev), m5(ev), m6(ev), m7(ev), m8(ev), m9(ev), r1(ev, boxes), r2(ev), d1(ev)]
    rel = ev.release
    name = (rel.published.name if rel.published is not None else None) or rel.release_id[:12]
    return {"disclosure_version": 1, "release_id": rel.release_id, "release": name,
            "release_source": ev.release_source, "items": [i.to_json() for i in items], "flow": boxes}
