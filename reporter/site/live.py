"""Page models of the pages rebuilt at every build: home, release status, release diff."""

from __future__ import annotations

from typing import Any

from . import compute
from .charts import Stack, fmt, paired_chart
from .diff import ABSENT, DiffData, state_counts
from .links import HOME, diff_path, href, isolated, release_path, rule_path, slug, status_path, work_anchor
from .load import Release
from .models import (Count, DiffPage, DigestSummary, HomePage, LabelRow, Link, LostWork, Move, MovedGroup,
                     MovedView, NoveltySummary, ReleaseSummary, Row, RuleChange, StateChange, StatusPage, Transition)
from .pages import meta, rule_link, short_id

LOST_SHOWN = 100
RULE_CHANGES = 20
DIFF_SERIES = (("s-before", "before"), ("s-after", "now"))


def build_home(releases: tuple[Release, ...], digest: DigestSummary | None = None,
               novelty: NoveltySummary | None = None) -> HomePage:
    """The home page: the latest release and digest week, then every release, newest first (and novelty checks)."""
    piles: list[str] = []
    for rel in reversed(releases):
        for p in rel.stats["pile_order"]:
            if p["name"] not in piles:
                piles.append(p["name"])
    summaries = tuple(_summary(rel, piles) for rel in reversed(releases))
    return HomePage(meta=meta(HOME, "Releases and digests", [], archived=False),
                    latest=summaries[0] if summaries else None, releases=summaries,
                    piles=tuple(piles), digest=digest, novelty=novelty)


def _summary(rel: Release, piles: list[str]) -> ReleaseSummary:
    stats = rel.stats
    return ReleaseSummary(
        release_id=rel.release_id, short_id=short_id(rel.release_id),
        href=href(HOME, release_path(rel.release_id)), status=href(HOME, status_path(rel.release_id)),
        diff=href(HOME, diff_path(rel.release_id)), rows=stats["rows"],
        piles=tuple(stats["piles"].get(p) for p in piles),
        to_screen=sum(stats["piles"][p] for p in compute.paying_piles(stats)),
        engine_version=str(rel.manifest["engine_version"]),
        generated=bool(rel.manifest.get("generated_pool")))


def build_status_page(rel: Release) -> StatusPage:
    """Label findings and screening progress for one release."""
    rid, stats = rel.release_id, rel.stats
    page = status_path(rid)
    known = {r["id"] for r in stats["rules"]}
    labels = rel.labels
    label_rows: tuple[Row, ...] = ()
    label_rules: tuple[LabelRow, ...] = ()
    lost_total, lost = 0, ()
    if labels is not None:
        label_rows = (
            Row("labels in the file", fmt(labels.get("labels", 0)), "l-labels"),
            Row("labelled works in the pool", fmt(labels.get("labels_in_pool", 0)), "l-in_pool"),
            Row("labelled includes in the pool", fmt(labels.get("includes_in_pool", 0)), "l-includes"),
            Row("labels file digest", str(labels.get("labels_digest", "")), "l-digest"),
        )
        label_rules = tuple(_label_row(page, rid, r, known) for r in labels["rules"])
        lost_total = labels["lost_includes"]["count"]
        lost = tuple(LostWork(w["work_id"], work_anchor(w["work_id"]),
                              rule_link(page, rid, w["rule"], known) or Link("—", None))
                     for w in sorted(labels["lost_includes"]["works"], key=lambda w: w["work_id"])[:LOST_SHOWN])
    paying = compute.paying_piles(stats)
    funnel = [Row("works in the pool", fmt(stats["rows"]), "s-pool"),
              Row("routed to a paying pile with text", fmt(sum(stats["piles"][p] for p in paying)), "s-paying")]
    funnel += [Row(f"in {p}", fmt(stats["piles"][p]), f"s-{slug(p)}") for p in paying]
    funnel += [Row("cheap tier (discard-only screen)", "not run yet", "s-cheap"),
               Row("two-voter screen", "not run yet", "s-screen"),
               Row("handed off to Stage 3", "not run yet", "s-handoff")]
    return StatusPage(
        meta=meta(page, f"Status of release {short_id(rid)}",
                  [("Home", HOME), (f"Release {short_id(rid)}", release_path(rid))], archived=False),
        release_id=rid, release=href(page, release_path(rid)), labels=label_rows, label_rules=label_rules,
        lost_total=lost_total, lost=lost, funnel=tuple(funnel),
        screening_note="Screening has not run for this release: no votes, gate outcomes or costs yet.")


def _label_row(page: str, rid: str, r: dict[str, Any], known: set[str]) -> LabelRow:
    if r.get("precision") is None:
        precision = "—"
    else:
        precision = f"{r['precision']:.2f} ({r['wilson_low']:.2f}–{r['wilson_high']:.2f})"
    return LabelRow(
        id=r["id"], href=href(page, rule_path(rid, r["id"])) if r["id"] in known else None, pile=r["pile"],
        includes_matched=r.get("includes_matched", 0), includes_won=r.get("includes_won", 0),
        includes_to_discard=r.get("includes_to_discard", 0), won_labelled=r.get("won_labelled", 0),
        won_correct=r.get("won_correct", 0), precision=precision, flagged=bool(r.get("flagged")))


def build_diff_page(rel: Release, previous: Release | None, data: DiffData | None) -> DiffPage:
    """The diff against the previous release; for the first release, a page saying so."""
    rid = rel.release_id
    page = diff_path(rid)
    page_meta = meta(page, f"Release {short_id(rid)} against the previous release",
                     [("Home", HOME), (f"Release {short_id(rid)}", release_path(rid))], archived=False)
    if previous is None or data is None:
        return DiffPage(meta=page_meta, release_id=rid, release=href(page, release_path(rid)),
                        previous_id=None, previous=None, states=(), transitions=(), column_totals=(),
                        changes=(), chart=None, rule_changes=(), moves=(), moved=())
    known = {r["id"] for r in rel.stats["rules"]}
    keys = {s: f"d-{slug(s)}" for s in data.states}
    transitions = []
    for b in data.states:
        cells = tuple((f"t-{slug(b)}--{slug(a)}", data.transitions.get((b, a), 0)) for a in data.states)
        total = sum(n for _k, n in cells)
        if total:
            transitions.append(Transition(b, cells, total))
    col_totals = tuple((f"t-total--{slug(a)}", sum(data.transitions.get((b, a), 0) for b in data.states))
                       for a in data.states)
    before, after = state_counts(previous), state_counts(rel)
    changes = tuple(StateChange(s, keys[s], before.get(s, 0), after.get(s, 0),
                                f"{after.get(s, 0) - before.get(s, 0):+,}")
                    for s in data.states if s != ABSENT)
    chart = paired_chart("diff-chart", "change-table", "Works per pile before and now", DIFF_SERIES,
                         [Stack(isolated(c.state), c.key, (c.before, c.after)) for c in changes])
    titles = _titles(rel, previous)

    def moved_group(name: str, anchor: str, group: tuple[int, tuple]) -> MovedGroup:
        total, works = group
        views = tuple(MovedView(w.work_id, work_anchor(w.work_id), titles.get(w.work_id), w.before, w.after,
                                w.before_winner or "—", w.after_winner or "—") for w in works)
        note = (f"all {fmt(total)}" if len(views) >= total else
                f"a seeded sample of {fmt(len(views))} of {fmt(total)} (seed {rel.samples['seed']})")
        return MovedGroup(name, anchor, total, views, note + ("" if total == 1 else " works") if total else "none")

    return DiffPage(
        meta=page_meta, release_id=rid, release=href(page, release_path(rid)),
        previous_id=previous.release_id, previous=href(page, release_path(previous.release_id)),
        states=data.states, transitions=tuple(transitions), column_totals=col_totals,
        changes=changes, chart=chart, rule_changes=_rule_changes(page, rel, previous, known),
        moves=tuple(Move(b, a, rule_link(page, rid, w, known), n) for b, a, w, n in data.moves_by_rule),
        moved=(moved_group("Moved into a paying pile", "into-paying", data.into_paying),
               moved_group("Moved out of a paying pile", "out-of-paying", data.out_of_paying)))


def _rule_changes(page: str, rel: Release, previous: Release, known: set[str]) -> tuple[RuleChange, ...]:
    now = {r["id"]: r["won"] for r in rel.stats["rules"] if not r["shadow"]}
    then = {r["id"]: r["won"] for r in previous.stats["rules"] if not r["shadow"]}
    ids = sorted(set(now) | set(then), key=lambda i: (-abs(now.get(i, 0) - then.get(i, 0)), i))
    out = []
    for i in ids[:RULE_CHANGES]:
        delta = now.get(i, 0) - then.get(i, 0)
        if delta == 0:
            break
        link = href(page, rule_path(rel.release_id, i)) if i in known else None
        out.append(RuleChange(Count(i, now.get(i, 0), link), then.get(i, 0), now.get(i, 0), f"{delta:+,}"))
    return tuple(out)


def _titles(*releases: Release) -> dict[str, str]:
    """Titles of every work either release's samples.json shows (the only titles the site holds)."""
    titles: dict[str, str] = {}
    for rel in releases:
        lists = list(rel.samples["piles"].values())
        for per_rule in rel.samples["rules"].values():
            lists += list(per_rule.values())
        for works in lists:
            for w in works:
                if w.get("title") and w["work_id"] not in titles:
                    titles[w["work_id"]] = w["title"][:300]
    return titles
