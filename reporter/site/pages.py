"""Build the page models of the release pages from a loaded release: no templates here."""

from __future__ import annotations

import json
import posixpath
from typing import Any

from . import compute
from .charts import fmt, funnel_chart, stacked_chart, Stack
from .links import (HOME, Href, href, isolated, release_path, rule_anchor, rule_path, slug, status_path,
                    diff_path, work_anchor)
from .load import INPUT_NAMES, Release
from .models import (Context, Count, Crumb, DomainRow, FunnelRow, Link, Overlap, PageMeta,
                     PileRow, ReleasePage, Row, RulePage, RuleRow, Sample, WorkView)

TITLE_CHARS = 300
RULE_SERIES = (("s-won", "won"), ("s-no_text", "no_text"), ("s-outranked", "outranked"))


def short_id(release_id: str) -> str:
    """The first 12 characters of a release id, as shown in headings."""
    return release_id[:12]


def meta(path: str, title: str, crumbs: list[tuple[str, str]], archived: bool) -> PageMeta:
    """The common part of every page: title, breadcrumbs and the twin link."""
    name = posixpath.basename(path)
    return PageMeta(title=title, path=path,
                    crumbs=tuple(Crumb(label, href(path, target)) for label, target in crumbs),
                    twin=Href(html=name + ".md", md=name + ".html"), archived=archived)


def rule_link(page: str, release_id: str, rule_id: str | None, known: set[str]) -> Link | None:
    """A link to a rule's page (no link for a rule the release does not have)."""
    if rule_id is None:
        return None
    return Link(rule_id, href(page, rule_path(release_id, rule_id)) if rule_id in known else None)


def rule_count(page: str, release_id: str, item: dict[str, Any], known: set[str]) -> Count:
    """`{"rule", "rows"}` from rule_stats.json as a linked count."""
    link = rule_link(page, release_id, item["rule"], known)
    return Count(item["rule"], item["rows"], link.href if link else None)


def rule_row(page: str, release_id: str, r: dict[str, Any]) -> RuleRow:
    """One rule of rule_stats.json as the tables show it."""
    return RuleRow(
        id=r["id"], anchor=rule_anchor(r["id"]), key=f"r-{slug(r['id'])}", href=href(page, rule_path(release_id, r["id"])),
        description=r.get("description") or "", file=r.get("file") or "", pile=r["pile"],
        precedence=r["precedence"], shadow=r["shadow"], matched=r["matched"], won=r["won"],
        no_text=r["no_text"], outranked=r["outranked"],
        parts_sum=r["won"] + r["no_text"] + r["outranked"],
        would_win=r["would_win"], would_move=r["would_move"])


def domain_row(page: str, release_id: str, r: dict[str, Any], known: set[str]) -> DomainRow:
    """A rule's domain and what it failed to govern."""
    return DomainRow(
        id=r["id"], href=href(page, rule_path(release_id, r["id"])), pile=r["pile"],
        domain=json.dumps(r["domain"], ensure_ascii=False, separators=(", ", ": ")),
        domain_rows=r["domain_rows"] or 0, domain_matched=r["domain_matched"] or 0,
        domain_miss=r["domain_miss"] or 0,
        winners=tuple(rule_count(page, release_id, w, known) for w in r["domain_miss_winners"]))


def work_view(page: str, release_id: str, w: dict[str, Any], known: set[str], window: int) -> WorkView:
    """A sampled work from samples.json, its title shortened and its match in context.

    `window` is samples.json's `context_chars`: the characters routing kept
    either side of the match (a side that long may have been cut from a longer field).
    """
    title = w.get("title")
    if isinstance(title, str) and len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1] + "…"
    ctx = w.get("context")
    state = f"pending/{w['pending_reason']}" if w.get("pending_reason") else w["pile"]
    return WorkView(
        work_id=w["work_id"], anchor=work_anchor(w["work_id"]), source=w.get("source") or "",
        title=title, state=state, winner=rule_link(page, release_id, w.get("winner"), known),
        title_only=bool(w.get("title_only")),
        context=Context(ctx["field"], ctx["before"], ctx["match"], ctx["after"],
                        len(ctx["before"]) >= window, len(ctx["after"]) >= window,
                        bool(ctx.get("match_cut"))) if ctx else None)


def sample(page: str, release_id: str, name: str, anchor: str, total: int,
           works: list[dict[str, Any]], seed: int, known: set[str], window: int) -> Sample:
    """A sample with the sentence saying what it is."""
    views = tuple(work_view(page, release_id, w, known, window) for w in sorted(works, key=lambda w: w["work_id"]))
    if total == 0:
        note = "no works"
    elif len(views) >= total:
        note = f"all {fmt(total)} works" if total != 1 else "the one work"
    else:
        note = f"a seeded sample of {fmt(len(views))} of {fmt(total)} works (seed {seed})"
    return Sample(name=name, anchor=anchor, total=total, works=views, note=note)


def build_release_page(rel: Release) -> ReleasePage:
    """The archived release page: the six inputs, the funnel, the rules, the samples."""
    rid, stats, man = rel.release_id, rel.stats, rel.manifest
    page = release_path(rid)
    known = {r["id"] for r in stats["rules"]}
    steps = compute.funnel_steps(stats)
    funnel = []
    for s in steps:
        funnel.append(FunnelRow(s.key, s.label, s.count, False))
        funnel += [FunnelRow(key, what, n, True) for key, what, n in s.removed]
    live = [r for r in stats["rules"] if not r["shadow"]]
    rules = tuple(rule_row(page, rid, r) for r in live)
    totals = compute.identity_totals(stats)
    pairs, n_pairs = compute.overlap_pairs(stats)
    matched = {r["id"]: r["matched"] for r in stats["rules"]}
    seed, window = rel.samples["seed"], rel.samples["context_chars"]
    return ReleasePage(
        meta=meta(page, f"Release {short_id(rid)}", [("Home", HOME)], archived=True),
        release_id=rid, engine_version=str(man["engine_version"]), rows=stats["rows"],
        generated_pool=man.get("generated_pool"),
        inputs=tuple(Row(n, str(man["inputs"][n]), f"input-{n}") for n in INPUT_NAMES),
        normalisation=tuple(Row(k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                            for k, v in sorted((man.get("normalisation") or {}).items())),
        pool=_pool_rows(stats),
        funnel=tuple(funnel),
        funnel_chart=funnel_chart("funnel-chart", "funnel-table", "The routing funnel", steps),
        piles=_pile_rows(stats),
        rules=rules,
        totals=(
            Row("Σ matched over rules", fmt(totals["matched"]), "t-matched"),
            Row("Σ won", fmt(totals["won"]), "t-won"),
            Row("Σ no_text", fmt(totals["no_text"]), "t-no_text"),
            Row("Σ outranked", fmt(totals["outranked"]), "t-outranked"),
            Row("unrouted (no rule matched)", fmt(totals["unrouted"]), "t-unrouted"),
            Row("Σ won + Σ no_text + unrouted", fmt(totals["won"] + totals["no_text"] + totals["unrouted"]),
                "t-sum"),
            Row("works in the pool", fmt(totals["rows"]), "t-rows"),
        ),
        rule_chart=stacked_chart("rule-chart", "rule-table", "What each rule's matches became",
                                 RULE_SERIES, [Stack(isolated(r.id), r.key, (r.won, r.no_text, r.outranked))
                                               for r in rules]),
        shadows=tuple(rule_row(page, rid, r) for r in stats["rules"] if r["shadow"]),
        domains=tuple(domain_row(page, rid, r, known) for r in stats["rules"] if r["domain"] is not None),
        overlaps=tuple(Overlap(Count(a, matched.get(a, 0), href(page, rule_path(rid, a)) if a in known else None),
                               Count(b, matched.get(b, 0), href(page, rule_path(rid, b)) if b in known else None), n)
                       for a, b, n in pairs),
        overlap_note=(f"{fmt(n_pairs)} pairs of rules matched some of the same works"
                      + (f"; the {fmt(len(pairs))} largest are shown." if n_pairs > len(pairs) else ".")),
        samples=tuple(sample(page, rid, p["name"], f"pile-{slug(p['name'])}", stats["piles"][p["name"]],
                             rel.samples["piles"].get(p["name"], []), seed, known, window)
                      for p in stats["pile_order"]),
        status=href(page, status_path(rid)),
        diff=href(page, diff_path(rid)),
    )


def _pool_rows(stats: dict[str, Any]) -> tuple[Row, ...]:
    pool, ov = stats["pool"], stats["overlay"]
    overlay = (Row("overlay", "none given", "overlay-rows"),) if ov is None else (
        Row("overlay rows", fmt(ov.get("rows", 0)), "overlay-rows"),
        Row("abstracts the overlay filled", fmt(ov.get("abstracts_filled", 0)), "overlay-abstracts_filled"),
        Row("titles the overlay filled", fmt(ov.get("titles_filled", 0)), "overlay-titles_filled"),
        Row("overlay rows for unknown works", fmt(ov.get("unknown_ids", 0)), "overlay-unknown_ids"))
    return (
        Row("works in the pool", fmt(pool.get("rows", stats["rows"])), "pool-rows"),
        Row("with a title", fmt(pool.get("with_title", 0)), "pool-with_title"),
        Row("with an abstract", fmt(pool.get("with_abstract", 0)), "pool-with_abstract"),
        Row("text with non-UTF-8 bytes replaced", fmt(pool.get("utf8_replaced", 0)), "pool-utf8_replaced"),
        *overlay,
        Row("screened on the title alone (title_only)", fmt(stats.get("title_only", 0)), "title_only"),
    )


def _pile_rows(stats: dict[str, Any]) -> tuple[PileRow, ...]:
    rows = []
    for p in stats["pile_order"]:
        name, n = p["name"], stats["piles"][p["name"]]
        anchor = f"pile-{slug(name)}"
        if p["kind"] == "pending":
            rows.append(PileRow(name, p["kind"], n, compute.share(n, stats["rows"]), None, anchor))
            for reason, m in stats["pending"].items():
                rows.append(PileRow(f"pending/{reason}", "pending", m, compute.share(m, stats["rows"]), None, anchor))
            continue
        won = sum(r["won"] for r in stats["rules"] if not r["shadow"] and r["pile"] == name)
        rows.append(PileRow(name, p["kind"] + (f" ({p['tier']})" if p.get("tier") else ""), n,
                            compute.share(n, stats["rows"]), won, anchor))
    return tuple(rows)


def build_rule_pages(rel: Release) -> list[RulePage]:
    """One archived page per rule (shadow rules included)."""
    rid, stats = rel.release_id, rel.stats
    known = {r["id"] for r in stats["rules"]}
    seed, window = rel.samples["seed"], rel.samples["context_chars"]
    pages = []
    for r in stats["rules"]:
        page = rule_path(rid, r["id"])
        row = rule_row(page, rid, r)
        lists = rel.samples["rules"].get(r["id"], {})
        if r["shadow"]:
            counts = (Row("matched (forecast)", fmt(r["matched"]), "c-matched"),
                      Row("would win if promoted", fmt(r["would_win"] or 0), "c-would_win"),
                      Row("would move to another pile", fmt(r["would_move"] or 0), "c-would_move"))
            chart = None
        else:
            counts = (Row("matched", fmt(r["matched"]), "c-matched"),
                      Row("won", fmt(r["won"]), "c-won"),
                      Row("no_text", fmt(r["no_text"]), "c-no_text"),
                      Row("outranked", fmt(r["outranked"]), "c-outranked"),
                      Row("won + no_text + outranked", fmt(row.parts_sum), "c-sum"))
            chart = stacked_chart("rule-chart", "count-table", f"What the matches of {isolated(r['id'])} became",
                                  RULE_SERIES, [Stack(isolated(r["id"]), "c", (r["won"], r["no_text"], r["outranked"]))])
        samples = []
        if not r["shadow"]:
            samples.append(sample(page, rid, "wins", "wins", r["won"], lists.get("wins", []), seed, known, window))
        if r["domain"] is not None:
            samples.append(sample(page, rid, "domain misses", "domain-misses", r["domain_miss"] or 0,
                                  lists.get("domain_misses", []), seed, known, window))
        pages.append(RulePage(
            meta=meta(page, f"Rule {isolated(r['id'])}", [("Home", HOME), (f"Release {short_id(rid)}", release_path(rid))],
                      archived=True),
            release_id=rid, rule=row,
            spec=r.get("spec_text") or json.dumps(r["spec"], indent=2, ensure_ascii=False),
            counts=counts, chart=chart,
            outranked_by=tuple(rule_count(page, rid, o, known) for o in r["outranked_by"]),
            domain=domain_row(page, rid, r, known) if r["domain"] is not None else None,
            samples=tuple(samples),
            release=href(page, release_path(rid), rule_anchor(r["id"])),
            status=href(page, status_path(rid)),
        ))
    return pages
