"""The status page of a release, rebuilt at every build: label findings, lost includes and the screen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..money import dollars
from ..naming import disclosure_page_path
from ..routing.artifacts import LabelRule, LostInclude, Release
from ..screening.report import Calibration, ReleaseScreen, ScreenReport, TierPlan, TierStatus
from . import compute
from .certified import Certified, certificate_parts
from .charts import Stack, flow_chart, fmt, stacked_chart
from .disclosure_page import KeptDisclosure, kept_words
from .links import HOME, href, paper_href, release_path, rule_path, slug, status_path, work_anchor
from .models import (CalibrationView, Fragment, Grid, GridCell, GridColumn, GridRow, KeptDisclosureView, LabelRow,
                     Link, LostView, LostWork, PlanView, Row, ScreeningSection, StatusPage, TierView)
from .next_step import screen_next_step
from .page_parts import flow_rows, meta, release_name, rule_link, short_id
from .titles import PoolRef, Titles, shorten

LOST_SHOWN = 100


NOT_CONFIGURED = ("Screening is not configured for this workspace. To configure it, add a [screen] table to "
                  "reporter.toml: database (a SQLite path or a postgresql:// URL), raw_dir, criteria (your "
                  "inclusion and exclusion criteria) and two [[screen.expensive.voters]] entries (name, base_url, "
                  "model, api_key_env, prices), plus two [[screen.cheap.voters]] for the discard-only tier "
                  "(docs/screening.md). The next build shows here what the screen would send and cost; "
                  "reporter screen --run screens.")
"""The screening section's note when the workspace has no [screen] table."""


NO_WORKSPACE = ("This page was rendered without its workspace, so it shows no screening: reporter build, or "
                "reporter render --workspace DIR, reads the workspace's [screen] table and its state.")
"""The note when the site was rendered from a releases folder alone."""


@dataclass(frozen=True)
class ScreeningStatus:
    """What the status pages show of the screen: one release's report, and a note for every other page."""

    release_id: str | None
    """The release the report is of (None: no report)."""
    report: ScreenReport | None
    """The report of that release."""
    note: str
    """What the other releases' status pages say (screening not configured, no workspace, see the newest)."""
    pool: PoolRef | None = None
    """The workspace's pool and overlay, where the rebuilt pages read titles no sample holds (None: no workspace)."""

    def for_release(self, release_id: str) -> tuple[ScreenReport | None, str]:
        """(report, note) for one release's status page."""
        if self.report is not None and release_id == self.release_id:
            return self.report, ""
        return None, self.note


def screening_status(screen: ReleaseScreen, pool: PoolRef | None = None) -> ScreeningStatus:
    """The status pages' screening for a workspace (`gather_screening`): the report of its release on that
    release's page, a pointer to it elsewhere; `pool` is the workspace's, for titles."""
    if screen.problem is not None:
        return ScreeningStatus(None, None, f"The screen of the newest release is not shown: {screen.problem}", pool)
    if not screen.configured:
        return ScreeningStatus(None, None, NOT_CONFIGURED, pool)
    return ScreeningStatus(screen.release_id, screen.report,
                           f"Screening is reported on the status page of the newest release, "
                           f"{short_id(screen.release_id)}: verdicts follow a work across releases, and a run "
                           f"screens the newest release.", pool)


def build_status_page(rel: Release, screening: ScreenReport | None = None, note: str = NO_WORKSPACE,
                      titles: Titles | None = None, certified: Certified | None = None,
                      disclosures: Sequence[KeptDisclosure] | None = None) -> StatusPage:
    """Label findings, the flow through screening, and the screen of one release (`screening`), or `note`;
    the release's certificates of `certified` (None: rendered without a workspace) on the flow and listed; the
    methods disclosures kept at its hand-offs (`disclosures`; None: rendered without a workspace), linked."""
    rid, stats = rel.release_id, rel.stats
    page = status_path(rid)
    titles = titles if titles is not None else Titles()
    known = stats.rule_ids()
    labels = rel.labels
    label_rows: tuple[Row, ...] = ()
    label_rules: tuple[LabelRow, ...] = ()
    lost_total, lost = 0, ()
    if labels is not None:
        label_rows = (
            Row("labels in the file", fmt(labels.labels), "l-labels"),
            Row("labelled works in the pool", fmt(labels.labels_in_pool), "l-in_pool"),
            Row("labelled includes in the pool", fmt(labels.includes_in_pool), "l-includes"),
            Row("labels file digest", str(labels.labels_digest), "l-digest"),
        )
        label_rules = tuple(_label_row(page, rid, r, known) for r in labels.rules)
        lost_total = labels.lost_includes.count
        lost = tuple(LostWork(w.work_id, work_anchor(w.work_id), paper_href([w.work_id]),
                              *titles.lookup(w.work_id),
                              rule_link(page, rid, w.rule, known) or Link("—", None))
                     for w in lost_works(rel))
    paying = compute.paying_piles(stats)
    funnel = [Row("works in the pool", fmt(stats.rows), "s-pool"),
              Row("routed to a paying pile with text", fmt(sum(stats.piles[p] for p in paying)), "s-paying")]
    funnel += [Row(f"in {p}", fmt(stats.piles[p]), f"s-{slug(p)}") for p in paying]
    funnel += screen_funnel(screening)
    steps, certificates, certify_note, gate, rescued = certificate_parts(
        page, rel, compute.flow_steps(stats, screening.funnel if screening is not None else None), screening, certified)
    name = release_name(page, rel)
    return StatusPage(
        meta=meta(page, f"Status of release {name.name}",
                  [("Home", HOME), (f"Release {name.name}", release_path(rid))], archived=False),
        name=name, flow=flow_chart("status-flow", "status-flow-table", "Where the works went, through screening"
                                   if screening is not None else "Where the works went", steps),
        flow_rows=flow_rows(steps), certificates=certificates, certify_note=certify_note,
        hand_off=gate.words if gate is not None else "", hand_off_tone=gate.tone if gate is not None else "neutral",
        rescued=rescued, labels=label_rows,
        label_rules=label_rules, lost_total=lost_total, lost=lost, funnel=tuple(funnel),
        screening=screening_section(screening, note), next_step=screen_next_step(screening),
        disclosures=tuple(KeptDisclosureView(short_id(k.id), href(page, disclosure_page_path(rid, k.id)),
                                             kept_words(k), k.counts()) for k in disclosures or ()),
        **({"no_disclosure": NO_WORKSPACE_DISCLOSURES} if disclosures is None else {}),
        flow_note=(f"Routing, and {'on through the screen to the hand-off' if screening is not None else 'the screen when it is shown below'}: "
                   f"each step takes out what it names beside it; what waits (pending, set aside, not decided yet) "
                   f"is drawn apart from what left."))


NO_WORKSPACE_DISCLOSURES = ("Rendered without a workspace: the methods disclosures kept at its hand-offs, in the "
                            "workspace's state, are not read (reporter build, or reporter render --workspace DIR).")
"""What the disclosures section says when the site was rendered without a workspace."""


def lost_works(rel: Release) -> list[LostInclude]:
    """The labelled includes in discard the status page lists: the first LOST_SHOWN by work id."""
    if rel.labels is None:
        return []
    return sorted(rel.labels.lost_includes.works, key=lambda w: w.work_id)[:LOST_SHOWN]


def _label_row(page: str, rid: str, r: LabelRule, known: set[str]) -> LabelRow:
    if r.precision is None:
        precision = "—"
    else:
        precision = f"{r.precision:.2f} ({r.wilson_low:.2f}–{r.wilson_high:.2f})"
    return LabelRow(
        id=r.id, href=href(page, rule_path(rid, r.id)) if r.id in known else None, pile=r.pile,
        includes_matched=r.includes_matched, includes_won=r.includes_won,
        includes_to_discard=r.includes_to_discard, won_labelled=r.won_labelled,
        won_correct=r.won_correct, precision=precision, flagged=r.flagged)


# --- the screening section of the status page -------------------------------------------------------


TIER_HEADINGS = {"cheap": "Cheap tier (discard-only)", "expensive": "Expensive screen"}


IDLE_NOTE = ("Nothing is screened in this generation yet, so there are no gate outcomes, votes, agreement or "
             "calibration to show: the dry run below says what reporter screen --run would send and cost.")
"""What a configured tier says while it has screened nothing (instead of tables of zeros)."""


KAPPA_NOTE = ("Invalid replies are left out of kappa (it is computed over the three labels, on works both voters "
              "answered validly) and shown in the table's last row and column.")


def screen_funnel(report: ScreenReport | None) -> list[Row]:
    """The funnel rows past routing: the cheap tier, the screen, the hand-off (dashes without a report)."""
    if report is None:
        return [Row("cheap tier (discard-only screen)", "—", "s-sc-cheap"),
                Row("two-voter screen", "—", "s-sc-screen"),
                Row(compute.HANDED_OFF, "—", "s-sc-handoff")]
    f = report.funnel
    if f.cheap_configured:
        cheap = [Row("cheap tier: discarded", fmt(f.cheap_discarded), "s-sc-cheap-discard"),
                 Row("cheap tier: passed on to the screen", fmt(f.cheap_proceeded), "s-sc-cheap-proceed"),
                 Row("cheap tier: not decided yet", fmt(f.cheap_undecided), "s-sc-cheap-incomplete")]
    else:
        cheap = [Row("cheap tier not configured: passed straight to the screen", fmt(f.cheap), "s-sc-cheap-proceed")]
    return [*cheap,
            Row("two-voter screen: works in scope", fmt(f.screen), "s-sc-screen"),
            Row("two-voter screen: admitted", fmt(f.admitted), "s-sc-screen-admit"),
            Row("two-voter screen: discarded", fmt(f.discarded), "s-sc-screen-discard"),
            Row("two-voter screen: incomplete (no verdict yet)", fmt(f.incomplete), "s-sc-screen-incomplete"),
            Row(compute.HANDED_OFF, fmt(f.hand_off), "s-sc-handoff")]


def screening_section(report: ScreenReport | None, note: str) -> ScreeningSection:
    """The section's model: the report laid out per tier, or the note alone."""
    if report is None:
        return ScreeningSection(shown=False, note=note, tiers=(), prompt_hash="", fragments=(), example=())
    state = (f"State read from {report.database}" if report.database_exists else
             f"The state database {report.database} does not exist yet: nothing has been screened")
    plans = {p.tier: p for p in report.plan}
    unanswered = sum(r.in_flight for r in report.in_flight)
    in_flight = (f" {fmt(unanswered)} request{'s' * (unanswered != 1)} of {fmt(len(report.in_flight))} "
                 f"run{'s' * (len(report.in_flight) != 1)} were sent and never answered (in flight when a run was "
                 f"killed, or running now); a later run asks them again, and reporter screen lists the runs."
                 if unanswered else "")
    return ScreeningSection(
        shown=True,
        note=(f"{state}. A build only reads it and never sends or spends anything; reporter screen --run "
              f"screens and the next build shows what it did. Counts are of the current generation of each tier."
              f"{in_flight}{_leases(report.status)}"),
        tiers=tuple(_tier_view(t, plans[t.tier], report.labels) for t in report.tiers),
        prompt_hash=report.prompt_hash, fragments=tuple(Fragment(n, t) for n, t in report.fragments),
        example=tuple(Fragment(role, text) for role, text in report.example))


def _leases(status: object) -> str:
    """What `reporter screen --status` says of leases and the budget, as sentences ('' when nothing is leased and no
    budget is set): which runner on which host holds how many works until when, and whether it can be taken over."""
    if status is None:
        return ""
    out = []
    for t in status.tiers:
        for x in t.leased:
            until = _utc(x.until)
            state = (f"its lease ran out at {until}, so the next reporter screen --run takes them over"
                     if x.reclaimable else f"leased until {until}")
            out.append(f" {TIER_HEADINGS[t.tier]}: {fmt(x.works)} work{'s' * (x.works != 1)} held by runner "
                       f"{x.runner} on {x.host or 'an unknown host'} since {_utc(x.since)}; {state}.")
    if status.budget is not None:
        out.append(f" Spent {dollars(status.spend, tenths=True)} of the budget "
                   f"{dollars(status.budget, tenths=True)} ([screen] budget).")
    return "".join(out)


def _utc(t: float | None) -> str:
    from datetime import datetime, timezone
    return "?" if t is None else datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _tier_view(t: TierStatus, plan: TierPlan, labels: bool) -> TierView:
    key = f"sc-{t.tier}"
    s = t.scope
    counts = [Row("routed to it now", fmt(len(s.work_ids)), f"{key}-routed")]
    if not t.configured:  # nothing is claimed or decided by a tier without voters
        return TierView(tier=t.tier, name=TIER_HEADINGS[t.tier], anchor=f"screen-{t.tier}", configured=False,
                        generation=None, note=plan.note, counts=tuple(counts), outcomes=(), votes=None,
                        invalid=None, failures=None, agreement=None, kappa="", plan=_plan_view(key, plan),
                        calibration=None)
    if t.tier == "expensive":
        counts += [Row("of which from its own piles", fmt(s.direct), f"{key}-direct"),
                   Row("of which passed on from the cheap piles", fmt(s.from_cheap), f"{key}-from-cheap"),
                   Row("cheap-tier works not decided yet (may still come)", fmt(s.pending_cheap), f"{key}-pending")]
    counts += [Row("claimable", fmt(t.claimable), f"{key}-claimable"),
               Row("claimed by a live runner", fmt(t.claimed), f"{key}-claimed"),
               Row("screened (with a verdict)", fmt(t.screened), f"{key}-screened"),
               Row("provider failures (no vote recorded)", fmt(t.failures), f"{key}-failures")]
    voters = t.voters
    votes = invalid = agreement = None
    if voters:
        answers = [answer for answer, _n in voters[0].answers]
        votes = _grid(f"{key}-votes", "Votes by voter and label, and what they cost", "voter",
                      [("model", False), *((answer, True) for answer in answers), ("provider failures", True),
                       ("input tokens", True), ("output tokens", True), ("cost", True)],
                      [(v.voter, (v.model, *(n for _a, n in v.answers), sum(n for _c, n in v.failures),
                                  v.input_tokens, v.output_tokens, dollars(v.cost_usd, tenths=True))) for v in voters])
        invalid = _grid(f"{key}-invalid", "Invalid votes by cause", "voter", [(c, True) for c, _n in voters[0].invalid],
                        [(v.voter, tuple(n for _c, n in v.invalid)) for v in voters])
    failed = [(v.voter, (cause, n)) for v in voters for cause, n in v.failures]
    failures = (_grid(f"{key}-failures", "Provider failures after retries, by voter and cause", "voter",
                      [("cause", False), ("failures", True)], failed, [f"{key}-failures-{i}" for i in range(len(failed))])
                if failed else None)
    kappa = ""
    if voters and not any(v.votes for v in voters):  # nothing asked yet: no causes or agreement to show
        invalid = None
        kappa = "No vote is recorded in this generation yet."
    elif t.agreement is not None:
        a = t.agreement
        answers = [answer for answer, _cells in a.table]
        agreement = _grid(f"{key}-agreement", f"{a.voters[0]} (rows) against {a.voters[1]} (columns)",
                          f"{a.voters[0]} \\ {a.voters[1]}", [(x, True) for x in answers], list(a.table))
        if a.valid == 0:
            kappa = f"No work has two valid votes yet, so there is no kappa. {KAPPA_NOTE}"
        elif a.kappa is None:
            kappa = (f"On the {fmt(a.valid)} works with two valid votes the voters agree on {a.observed:.0%}; kappa is "
                     f"undefined (both gave one and the same label throughout). {KAPPA_NOTE}")
        else:
            kappa = (f"Cohen's kappa {a.kappa:.2f} on the {fmt(a.valid)} works with two valid votes (observed "
                     f"agreement {a.observed:.0%}); {fmt(a.both)} works have both votes. {KAPPA_NOTE}")
    if not (t.screened or t.claimed or failed or any(v.votes for v in voters)):  # tables of zeros: said in a line
        return TierView(tier=t.tier, name=TIER_HEADINGS[t.tier], anchor=f"screen-{t.tier}", configured=True,
                        generation=t.generation, note=_sentence(s.note), counts=tuple(counts), outcomes=(),
                        votes=None, invalid=None, failures=None, agreement=None, kappa="", plan=_plan_view(key, plan),
                        calibration=None, idle_note=IDLE_NOTE)
    return TierView(
        tier=t.tier, name=TIER_HEADINGS[t.tier], anchor=f"screen-{t.tier}", configured=t.configured,
        generation=t.generation, note=_sentence(s.note), counts=tuple(counts),
        outcomes=tuple(Row(o, fmt(n), f"{key}-{o}") for o, n in t.outcomes), votes=votes, invalid=invalid,
        failures=failures, agreement=agreement, kappa=kappa, plan=_plan_view(key, plan),
        calibration=_calibration_view(key, t.calibration) if labels and t.calibration is not None else None)


def _sentence(text: str) -> str:
    """A note as a sentence: capitalised (its full stop is the template's)."""
    return text[:1].upper() + text[1:]


def _grid(gid: str, caption: str, corner: str, columns: list[tuple[str, bool]], rows: list[tuple[str, tuple]],
          row_keys: list[str] | None = None) -> Grid:
    """A Grid; each row's data-key prefix is `<gid>-<label slug>` unless `row_keys` names them."""
    keys = row_keys if row_keys is not None else [f"{gid}-{slug(label)}" for label, _cells in rows]
    column_keys = [slug(c.replace(" ", "-")) for c, _n in columns]
    return Grid(id=gid, caption=caption, corner=corner, columns=tuple(GridColumn(c, n) for c, n in columns),
                rows=tuple(GridRow(label, tuple(GridCell(v, n, f"{k}-{ck}" if k else "")
                                                for v, (_c, n), ck in zip(cells, columns, column_keys)))
                           for (label, cells), k in zip(rows, keys)))


def _plan_view(key: str, p: TierPlan) -> PlanView:
    counts = [Row("works that would be sent now", fmt(p.works), f"{key}-plan-works"),
              Row("in scope", fmt(p.routed), f"{key}-plan-routed"),
              Row("already decided in this generation (never sent again)", fmt(p.decided), f"{key}-plan-decided")]
    if p.tier == "expensive" and p.may_come:
        counts.append(Row("cheap-tier works that may still come", fmt(p.may_come), f"{key}-plan-may-come"))
    tokens: tuple[Row, ...] = ()
    histogram = chart = costs = None
    if p.tokens is not None:
        t = p.tokens
        tokens = tuple(Row(name, fmt(v), f"{key}-tok-{name}")
                       for name, v in (("min", t.min), ("median", t.median), ("p90", t.p90), ("p99", t.p99),
                                       ("max", t.max)))
        bands = [(f"{fmt(lo)}–{fmt(hi)} tokens", n) for lo, hi, n in t.histogram]
        histogram = _grid(f"{key}-tokens", "Works per band of input tokens", "input tokens", [("works", True)],
                          [(band, (n,)) for band, n in bands], [f"{key}-tok-{i}" for i in range(len(bands))])
        chart = stacked_chart(f"{key}-tokens-chart", f"{key}-tokens", f"Works per band of input tokens, "
                              f"{TIER_HEADINGS[p.tier].lower()}", (("s-main", "works"),),
                              [Stack(band, f"{key}-tok-{i}", (n,)) for i, (band, n) in enumerate(bands)])
    if p.voters:
        costs = _grid(f"{key}-costs", "What the dry run would cost, per voter", "voter",
                      [("model", False), ("works", True), ("input tokens", True), ("output tokens (expected)", True),
                       ("$ per M input", True), ("$ per M output", True), ("cost", True)],
                      [(v.voter, (v.model, v.works, v.input_tokens, v.output_tokens_estimate,
                                  f"{v.price_in_per_mtok:g}", f"{v.price_out_per_mtok:g}",
                                  dollars(v.cost_usd) + (" (estimate)" if v.estimate else "")))
                       for v in p.voters])
    estimated = any(v.estimate for v in p.voters)
    notes = [p.tokenizer_note] if p.tokens is not None else []
    notes += [f"Output of {v.voter}: {v.output_basis}." for v in p.voters]
    if p.tier == "expensive" and p.may_come:
        notes.append(f"If all {fmt(p.may_come)} cheap-tier works still undecided came to the screen they would add "
                     f"about {dollars(p.may_come_cost_usd)}.")
    return PlanView(counts=tuple(counts), tokens=tokens, histogram=histogram, chart=chart, costs=costs,
                    total=dollars(p.total_cost_usd) + (" (an estimate)" if estimated else ""), notes=tuple(notes))


def _share(r: tuple[float, float, float] | None) -> str:
    return "—" if r is None else f"{r[0]:.2f} ({r[1]:.2f}–{r[2]:.2f})"


def _calibration_view(key: str, c: Calibration) -> CalibrationView:
    captions = [f"{x.name}: answers against the labels" for x in c.voters] + ["The gate's outcomes against the labels"]
    confusions = tuple(_grid(f"{key}-cal-{i}", caption, "label", [(col, True) for col in x.columns], list(x.rows))
                       for i, (x, caption) in enumerate(zip((*c.voters, c.gate), captions)))
    rates = _grid(f"{key}-cal-rates", "Recall and work saved against the labels (Wilson 95%)", "who",
                  [("recall", False), ("includes counted", True), ("work saved", False), ("labelled works counted", True)],
                  [(x.name, (_share(x.recall), x.includes, _share(x.saved), x.judged)) for x in (*c.voters, c.gate)])
    lost = tuple(LostView(w.work_id, work_anchor(w.work_id), shorten(w.title), paper_href([w.work_id]))
                 for w in c.lost)
    note = (f"{fmt(c.labelled)} labelled works are in this tier's scope, {fmt(c.includes)} of them includes. "
            f"Recall is the share of labelled includes not discarded (for a voter: not answered exclude), over "
            f"the includes answered or decided; work saved is the share of labelled works discarded, over those "
            f"answered or decided.")
    return CalibrationView(note=note, confusions=confusions, rates=rates, lost=lost, lost_total=c.lost_total)
