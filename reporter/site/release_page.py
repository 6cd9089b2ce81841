"""The archived pages of a release: the release page and its rule pages, built from a loaded release."""

from __future__ import annotations

import json
import posixpath
import re

from ..csvcells import csv_bytes
from ..routing.artifacts import INPUT_NAMES, Release, RuleRows, RuleSamples, RuleStat, RuleStats, SampleWork
from . import compute
from .charts import Stack, flow_chart, fmt, stacked_chart
from .links import (HOME, diff_path, href, isolated, paper_href, release_path, rule_anchor, rule_path, slug,
                    status_path, work_anchor)
from .models import Count, DomainRow, Overlap, PileRow, ReleasePage, Row, RulePage, RuleRow, Sample, Snippet, WorkView
from .page_parts import download, flow_rows, meta, release_name, rule_link, short_id
from .titles import shorten

RULES_CSV = "rules.csv"


DOMAINS_CSV = "domain-misses.csv"


RULE_SERIES = (("s-won", "won"), ("s-no_text", "no_text"), ("s-outranked", "outranked"))


_MARKER = re.compile(r"seed=(\d+), rows=(\d+)(?:, without rows (\d+)-(\d+))?")
"""The seed, the rows and the rows left out, as the generator's marker (reporter/example/generate.py) spells them."""


def generated_words(marker: str | None) -> tuple[str | None, str | None]:
    """The generated-pool banner's detail in the page's words, and the command that makes such a pool, from
    the seed and rows fields of the generator's marker.

    The marker is part of the pool's bytes (and so of every release id built on
    it): its text names the generator's first home, a module that is gone, so
    the page reads the fields and says how to make such a pool today. A marker
    without those fields (an older generator's, or a hand-made one) shows no
    detail: ("", None). (None, None): the pool is not generated.
    """
    if not marker:
        return None, None
    found = _MARKER.search(marker)
    if found is None:
        return "", None
    seed, rows = int(found[1]), int(found[2])
    left = "" if found[3] is None else f", leaving out rows {int(found[3]):,} to {int(found[4]):,}"
    flag = "" if found[3] is None else f" --without {found[3]}:{int(found[4]) + 1}"
    return (f"It holds {rows:,} works drawn with seed {seed}{left}.",
            f"python -m reporter.example POOL --rows {rows} --seed {seed}{flag}")


NO_SAMPLES = RuleSamples(wins=(), domain_misses=())
"""The samples of a rule samples.json lists nothing for."""


def rule_count(page: str, release_id: str, item: RuleRows, known: set[str]) -> Count:
    """`{"rule", "rows"}` of the release's statistics (`RuleStats`) as a linked count."""
    link = rule_link(page, release_id, item.rule, known)
    return Count(item.rule, item.rows, link.href if link else None)


def rule_row(page: str, release_id: str, r: RuleStat) -> RuleRow:
    """One rule of the release's statistics (`RuleStat`) as the tables show it."""
    return RuleRow(
        id=r.id, anchor=rule_anchor(r.id), key=f"r-{slug(r.id)}", href=href(page, rule_path(release_id, r.id)),
        description=r.description, file=r.file, pile=r.pile,
        precedence=r.precedence, shadow=r.shadow, matched=r.matched, won=r.won,
        no_text=r.no_text, outranked=r.outranked,
        parts_sum=r.won + r.no_text + r.outranked,
        identity="holds" if r.won + r.no_text + r.outranked == r.matched else "broken",
        would_win=r.would_win, would_move=r.would_move)


def domain_row(page: str, release_id: str, r: RuleStat, known: set[str]) -> DomainRow:
    """A rule's domain and what it failed to govern."""
    return DomainRow(
        id=r.id, href=href(page, rule_path(release_id, r.id)), pile=r.pile,
        domain=json.dumps(r.domain, ensure_ascii=False, separators=(", ", ": ")),
        domain_rows=r.domain_rows or 0, domain_matched=r.domain_matched or 0,
        domain_miss=r.domain_miss or 0,
        winners=tuple(rule_count(page, release_id, w, known) for w in r.domain_miss_winners))


def work_view(page: str, release_id: str, w: SampleWork, known: set[str], window: int) -> WorkView:
    """A sampled work from samples.json, its title shortened and its match in context.

    `window` is samples.json's `context_chars`: the characters routing kept
    either side of the match (a side that long may have been cut from a longer field).
    Every matched span is shown: `contexts` (one per text predicate that made
    the win) when samples.json has it, else the one `context`.
    """
    state = f"pending/{w.pending_reason}" if w.pending_reason else w.pile
    return WorkView(
        work_id=w.work_id, anchor=work_anchor(w.work_id), href=paper_href([w.work_id]),
        source=w.source or "", title=shorten(w.title) if w.title is not None else None, state=state,
        winner=rule_link(page, release_id, w.winner, known), title_only=w.title_only,
        snippets=tuple(Snippet(c.field, c.before, c.match, c.after, len(c.before) >= window,
                               len(c.after) >= window, c.match_cut) for c in w.windows()))


def sample(page: str, release_id: str, name: str, anchor: str, total: int,
           works: tuple[SampleWork, ...], seed: int, known: set[str], window: int) -> Sample:
    """A sample with the sentence saying what it is."""
    views = tuple(work_view(page, release_id, w, known, window) for w in sorted(works, key=lambda w: w.work_id))
    if total == 0:
        note = "no works"
    elif len(views) >= total:
        note = f"all {fmt(total)} works" if total != 1 else "the one work"
    else:
        note = f"a seeded sample of {fmt(len(views))} of {fmt(total)} works (seed {seed})"
    return Sample(name=name, anchor=anchor, total=total, works=views, note=note)


def build_release_page(rel: Release) -> ReleasePage:
    """The archived release page, summary first: the flow, the piles, the rules, samples; the inputs at the end."""
    rid, stats, man = rel.release_id, rel.stats, rel.manifest
    page = release_path(rid)
    known = stats.rule_ids()
    steps = compute.flow_steps(stats)
    live = stats.live()
    rules = tuple(rule_row(page, rid, r) for r in live)
    domains = tuple(domain_row(page, rid, r, known) for r in stats.rules if r.domain is not None)
    totals = compute.identity_totals(stats)
    pairs, n_pairs = compute.overlap_pairs(stats)
    matched = {r.id: r.matched for r in stats.rules}
    seed, window = rel.samples.seed, rel.samples.context_chars
    name = release_name(page, rel)
    generated = generated_words(man.generated_pool)
    return ReleasePage(
        meta=meta(page, f"Release {name.name}", [("Home", HOME)], archived=True),
        name=name, engine_version=man.engine_version, rows=stats.rows,
        generated_pool=generated[0], generated_command=generated[1],
        summary=_summary_rows(stats),
        flow=flow_chart("flow-chart", "flow-table", "Where the works went", steps),
        flow_rows=flow_rows(steps),
        piles=_pile_rows(stats),
        rules=rules,
        rules_csv=download(page, f"releases/{rid}/{RULES_CSV}", len(rules), "the same rows as the table"),
        rule_chart=stacked_chart("rule-chart", "rule-table", "What each rule's matches became",
                                 RULE_SERIES, [Stack(isolated(r.id), r.key, (r.won, r.no_text, r.outranked))
                                               for r in rules]),
        shadows=tuple(rule_row(page, rid, r) for r in stats.rules if r.shadow),
        domains=domains,
        domains_csv=download(page, f"releases/{rid}/{DOMAINS_CSV}", len(domains), "the same rows as the table")
        if domains else None,
        overlaps=tuple(Overlap(Count(a, matched.get(a, 0), href(page, rule_path(rid, a)) if a in known else None),
                               Count(b, matched.get(b, 0), href(page, rule_path(rid, b)) if b in known else None), n)
                       for a, b, n in pairs),
        overlap_note=(f"{fmt(n_pairs)} pairs of rules matched some of the same works"
                      + (f"; the {fmt(len(pairs))} largest are shown." if n_pairs > len(pairs) else ".")),
        samples=tuple(sample(page, rid, p.name, f"pile-{slug(p.name)}", stats.piles[p.name],
                             rel.samples.piles.get(p.name, ()), seed, known, window)
                      for p in stats.pile_order),
        totals=(
            Row("Σ matched over rules", fmt(totals.matched), "t-matched"),
            Row("Σ won", fmt(totals.won), "t-won"),
            Row("Σ no_text", fmt(totals.no_text), "t-no_text"),
            Row("Σ outranked", fmt(totals.outranked), "t-outranked"),
            Row("unrouted (no rule matched)", fmt(totals.unrouted), "t-unrouted"),
            Row("Σ won + Σ no_text + unrouted", fmt(totals.won + totals.no_text + totals.unrouted),
                "t-sum"),
            Row("works in the pool", fmt(totals.rows), "t-rows"),
        ),
        inputs=tuple(Row(n, man.inputs[n], f"input-{n}") for n in INPUT_NAMES),
        normalisation=tuple(Row(k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                            for k, v in sorted(man.normalisation.items())),
        pool=_pool_rows(stats),
        status=href(page, status_path(rid)),
        diff=href(page, diff_path(rid)),
    )


def release_files(page: ReleasePage) -> list[tuple[str, bytes]]:
    """The CSV files beside a release page, from its page model (so each equals the table it sits beside)."""
    folder = posixpath.dirname(page.meta.path)
    files = [(f"{folder}/{RULES_CSV}", csv_bytes(RULE_COLUMNS, [rule_cells(r) for r in page.rules]))]
    if page.domains:
        files.append((f"{folder}/{DOMAINS_CSV}", csv_bytes(DOMAIN_COLUMNS, [domain_cells(d) for d in page.domains])))
    return files


RULE_COLUMNS = ("won", "matched", "no_text", "outranked", "identity", "rule", "pile", "precedence", "description")
"""The rule table's columns, counts first (the HTML table and rules.csv)."""


DOMAIN_COLUMNS = ("misses", "in domain", "matched in domain", "rule", "pile", "misses won by", "domain")
"""The domain-miss table's columns, counts first (the HTML table and domain-misses.csv)."""


def rule_cells(r: RuleRow) -> tuple[str | int, ...]:
    """A rule's row of the rule table, as its CSV row (the HTML cells show the same text)."""
    return (r.won, r.matched, r.no_text, r.outranked, r.identity, r.id, r.pile, r.precedence, r.description)


def domain_cells(d: DomainRow) -> tuple[str | int, ...]:
    """A rule's row of the domain-miss table, as its CSV row."""
    return (d.domain_miss, d.domain_rows, d.domain_matched, d.id, d.pile, winners_text(d), d.domain)


def winners_text(d: DomainRow) -> str:
    """The rules that won a rule's misses as the table shows them: `rule-a (12), rule-b (3)` or —."""
    return ", ".join(f"{w.name} ({fmt(w.rows)})" for w in d.winners) or "—"


def _summary_rows(stats: RuleStats) -> tuple[Row, ...]:
    """The headline: where the pool went, in plain words."""
    rows = stats.rows
    paying = compute.paying_piles(stats)
    kinds = {p.name: p.kind for p in stats.pile_order}

    def line(label: str, n: int, key: str) -> Row:
        return Row(label, f"{fmt(n)} ({compute.share(n, rows)})" if key != "sum-pool" else fmt(n), key)

    return (
        line("works in the pool", rows, "sum-pool"),
        line("to screening (the paying piles)", sum(stats.piles[p] for p in paying), "sum-paying"),
        line("discarded by a rule", sum(n for p, n in stats.piles.items() if kinds[p] == "discard"), "sum-discard"),
        line("set aside by a rule (hold)", sum(n for p, n in stats.piles.items() if kinds[p] == "hold"),
             "sum-hold"),
        line("no rule matched (pending: unrouted)", stats.pending.get("unrouted", 0), "sum-unrouted"),
        line("a rule would send it to screening but it has no text (pending: no_text)",
             stats.pending.get("no_text", 0), "sum-no_text"),
    )


def _pool_rows(stats: RuleStats) -> tuple[Row, ...]:
    pool, ov = stats.pool, stats.overlay
    overlay = (Row("overlay", "none given", "overlay-rows"),) if ov is None else (
        Row("overlay rows", fmt(ov.rows), "overlay-rows"),
        Row("abstracts the overlay filled", fmt(ov.abstracts_filled), "overlay-abstracts_filled"),
        Row("titles the overlay filled", fmt(ov.titles_filled), "overlay-titles_filled"),
        Row("overlay rows for unknown works", fmt(ov.unknown_ids), "overlay-unknown_ids"))
    return (
        Row("works in the pool", fmt(pool.rows), "pool-rows"),
        Row("with a title", fmt(pool.with_title), "pool-with_title"),
        Row("with an abstract", fmt(pool.with_abstract), "pool-with_abstract"),
        Row("text with non-UTF-8 bytes replaced", fmt(pool.utf8_replaced), "pool-utf8_replaced"),
        *overlay,
        Row("screened on the title alone (title_only)", fmt(stats.title_only), "title_only"),
    )


def _pile_rows(stats: RuleStats) -> tuple[PileRow, ...]:
    rows = []
    for p in stats.pile_order:
        name, n = p.name, stats.piles[p.name]
        anchor = f"pile-{slug(name)}"
        if p.kind == "pending":
            rows.append(PileRow(name, "not decided", p.kind, n, compute.share(n, stats.rows), None, anchor))
            for reason, m in stats.pending.items():
                state = f"pending/{reason}"
                rows.append(PileRow(state, compute.plain_name(state, stats), "pending", m,
                                    compute.share(m, stats.rows), None, anchor))
            continue
        won = sum(r.won for r in stats.live() if r.pile == name)
        kind = p.kind + (f" ({p.tier})" if p.tier else "")
        share = compute.share(n, stats.rows)
        rows.append(PileRow(name, compute.plain_name(name, stats), kind, n, share, won, anchor))
    return tuple(rows)


def build_rule_pages(rel: Release) -> list[RulePage]:
    """One archived page per rule (shadow rules included)."""
    rid, stats = rel.release_id, rel.stats
    known = stats.rule_ids()
    seed, window = rel.samples.seed, rel.samples.context_chars
    pages = []
    for r in stats.rules:
        page = rule_path(rid, r.id)
        name = release_name(page, rel)
        row = rule_row(page, rid, r)
        lists = rel.samples.rules.get(r.id, NO_SAMPLES)
        if r.shadow:
            counts = (Row("matched (forecast)", fmt(r.matched), "c-matched"),
                      Row("would win if promoted", fmt(r.would_win or 0), "c-would_win"),
                      Row("would move to another pile", fmt(r.would_move or 0), "c-would_move"))
            chart = None
        else:
            counts = (Row("matched", fmt(r.matched), "c-matched"),
                      Row("won", fmt(r.won), "c-won"),
                      Row("no_text", fmt(r.no_text), "c-no_text"),
                      Row("outranked", fmt(r.outranked), "c-outranked"),
                      Row("won + no_text + outranked", fmt(row.parts_sum), "c-sum"))
            chart = stacked_chart("rule-chart", "count-table", f"What the matches of {isolated(r.id)} became",
                                  RULE_SERIES, [Stack(isolated(r.id), "c", (r.won, r.no_text, r.outranked))])
        samples = []
        if not r.shadow:
            samples.append(sample(page, rid, "wins", "wins", r.won, lists.wins, seed, known, window))
        if r.domain is not None:
            samples.append(sample(page, rid, "domain misses", "domain-misses", r.domain_miss or 0,
                                  lists.domain_misses, seed, known, window))
        pages.append(RulePage(
            meta=meta(page, f"Rule {isolated(r.id)}", [("Home", HOME), (f"Release {name.name}", release_path(rid))],
                      archived=True),
            name=name, rule=row,
            spec=r.spec_text,
            counts=counts, chart=chart,
            outranked_by=tuple(rule_count(page, rid, o, known) for o in r.outranked_by),
            domain=domain_row(page, rid, r, known) if r.domain is not None else None,
            samples=tuple(samples),
            release=href(page, release_path(rid), rule_anchor(r.id)),
            status=href(page, status_path(rid)),
        ))
    return pages
