"""The digest's page models: one archived page per published week, the week index, the home summary.

Built from a week's decisions.json (docs/digest.md) and, when the build
checked the week's KEEPs against the citation graph as it published the
week, that week's `novelty.jsonl` beside it: nothing else. No templates here.

A week page is archived like a release page: once published it is never
rewritten (the writer refuses; `--rerender-archive` keeps the old file
beside the new one). So it shows only what its own folder holds and what
existed when it was published: links to the paper pages are built from the
ids alone, and the prior weeks it names were published before it. How it
groups its papers (REVIEW by why, DROP by cause and rationale) is
digest_groups.py.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..digest.archive import (DEFAULT_TOPIC, GRAPH_FILE, ArchivedWeek, Decision, MergeEntry, RejectedEntry, archived_weeks,
                              read_week)
from ..isoweek import week_start
from ..money import dollars
from ..novelty.results import ResultLine, load_novelty_results, result_lines
from ..plurals import count
from .charts import Bar, Chart, Label, Legend, fmt
from .digest_close import close_view
from .digest_lists import lists_view
from .digest_groups import by_rationale, cap_ranks, drop_groups, ranking, review_groups
from .links import GLOSSARY, HOME, Href, href, paper_href
from .models import (CandidateRow, DigestIndexPage, DigestSummary, DigestWeekPage, DriftConcept, DriftEntry,
                     DisagreementRow, DropGroup, DropReason, DropRow, JudgeSpendRow, JudgeView, Link, ListedAgainView, MergeView, PaperRow, PaperView, ReviewGroup, Row,
                     WeekSummary)
from .digest_views import (DIGEST, RELEVANCE_NOTE, fallback_note, folded, index_path, keyed, paper_anchor,
                           quality_view, shown_title, topic_root, week_heading, week_path)
from .novelty_page import novelty_page
from .page_parts import meta
from .paper_text import authors_line, snippet

FEED = "digest/feed.xml"

REVIEW_IN_FULL = 5
"""The first REVIEWs of each group the week page shows in full (authors, abstract, axes, rationale); the rest of
the group a line each, so a week of 2,000 papers stays a page (docs/digest.md, "Pages and feed")."""
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

@dataclass(frozen=True)
class DigestWeek:
    """One week to render: its decisions as published (or as a build is about to publish them)."""

    archived: ArchivedWeek
    """The week as the archive's reader reads it: its decisions, what it was decided from, its sha256 (the
    feed entry's identity)."""
    graph: tuple[ResultLine, ...] | None
    """The novelty results lines of its KEEPs, or None when the week was published without a graph check."""
    root: str = DIGEST
    """The site folder of its digest's pages: `digest`, or a named topic's `digest/topics/NAME`."""

    @property
    def week(self) -> str:
        """The ISO week."""
        return self.archived.week


def week_dates(week: str) -> str:
    """Monday to Sunday of an ISO week: `11–17 May 2026`, `27 Apr – 3 May 2026`, `28 Dec 2026 – 3 Jan 2027`."""
    first = week_start(week)
    last = first + dt.timedelta(days=6)
    end = f"{last.day} {MONTHS[last.month - 1]} {last.year}"
    if first.month == last.month:
        return f"{first.day}–{end}"
    if first.year == last.year:
        return f"{first.day} {MONTHS[first.month - 1]} – {end}"
    return f"{first.day} {MONTHS[first.month - 1]} {first.year} – {end}"


# Reading ------------------------------------------------------------------------------------------------


def digest_week(data: bytes, source: str, graph: Sequence[dict[str, Any]] | None = None,
                root: str = DIGEST) -> DigestWeek:
    """A week from its decisions.json bytes (as published, or as a build will publish them); checked."""
    return _shown(read_week(data, source), graph, root)


def load_digest_weeks(archive: Path, root: str = DIGEST) -> list[DigestWeek]:
    """Every published week of an archive, oldest first, with its graph verdicts when it has them."""
    weeks = []
    for week in archived_weeks(Path(archive)):
        graph_file = Path(archive) / week.week / GRAPH_FILE
        weeks.append(_shown(week, load_novelty_results(graph_file) if graph_file.is_file() else None, root))
    return weeks


def _shown(week: ArchivedWeek, graph: Sequence[dict[str, Any]] | None, root: str = DIGEST) -> DigestWeek:
    """A week with its graph verdicts read (the results file's checks apply), or None when unchecked."""
    return DigestWeek(week, None if graph is None else
                      result_lines(graph, str(Path(week.source).with_name(GRAPH_FILE))), root)


# Page models ----------------------------------------------------------------------------------------------


def build_week_page(week: DigestWeek, published: Sequence[str] = ()) -> DigestWeekPage:
    """The archived page of one week (`published`: the weeks whose pages exist, for the prior links)."""
    w, ds, root = week.week, week.archived.decisions, week.root
    page = week_path(w, root)
    verdicts = _verdicts(week)
    settings = week.archived.head.settings
    ranks = cap_ranks(ds.decisions)
    keep = tuple(_paper(d, verdicts, ranking(d, ranks), _also(page, week.archived, d.id))
                 for d in ds.decisions if d.decision == "KEEP")
    review = tuple(ReviewGroup(
        g.key, f"review-{g.key}", g.label, g.meaning, len(g.decisions),
        tuple(_paper(d, None, _ranked(d, ranks), _also(page, week.archived, d.id)) for d in g.decisions[:REVIEW_IN_FULL]),
        tuple(_row(d, _ranked(d, ranks)) for d in g.decisions[REVIEW_IN_FULL:]))
        for g in review_groups(ds.decisions, settings))
    dropped = tuple(DropGroup(g.key, f"drop-{g.key}", g.label, g.meaning, len(g.decisions), tuple(
        DropReason(rationale, len(papers), tuple(DropRow(d.id, shown_title(d), _href(d)) for d in papers))
        for rationale, papers in by_rationale(g.decisions))) for g in drop_groups(ds.decisions))
    # A merged paper links to its entry, or for a DROP (listed without an anchor) to its cause.
    anchors = {d.id: f"drop-{d.cause}" if d.decision == "DROP" else paper_anchor(d.id) for d in ds.decisions}
    keep_at, review_at = settings.keep_threshold, settings.review_threshold
    cal = ds.calibration
    drift = week.archived.drift
    return DigestWeekPage(
        meta=meta(page, week_heading(week.archived), [("Home", HOME), ("Weekly digests", index_path(root))],
                  archived=True),
        week=w, dates=week_dates(w),
        keep=keep, kept_total=len(keep), review=review, review_total=sum(g.count for g in review),
        dropped=dropped, dropped_total=sum(g.count for g in dropped),
        counts=(Row("kept", fmt(cal.kept), "c-kept"), Row("for review", fmt(cal.review), "c-review"),
                Row("dropped", fmt(cal.dropped), "c-dropped"),
                Row("dropped as already covered (novelty 0.0)", fmt(cal.force_dropped_already_covered), "c-covered"),
                Row("demoted to REVIEW for the cap", fmt(cal.demoted_for_cap), "c-demoted"),
                Row("stricter criteria pass applied", "yes" if cal.stricter_pass_applied else "no", "c-stricter")),
        histogram=histogram_chart(w, cal.histogram, keep_at, review_at),
        bands=(*(Row(_band(i), fmt(n), f"h-{i}") for i, n in enumerate(cal.histogram)),
               Row("KEEP from score", fmt(keep_at), "t-keep"), Row("REVIEW from score", fmt(review_at), "t-review")),
        graph_note=_graph_note(week),
        drift_note=drift.note or "surfaced, never applied: the watchlist is not changed by the tool",
        drift_entries=tuple(_drift_entry(e) for e in drift.rejected),
        drift_concepts=tuple(DriftConcept(k.concept, k.missed, k.ids) for k in drift.missed),
        merges=tuple(_merge(page, m, anchors) for m in week.archived.merges),
        judge=_judge(page, week, anchors),
        listed_again=tuple(ListedAgainView(Link(a.id, paper_href((a.id,))), Link(a.week, href(page, week_path(a.week, root))),
                                           a.decision) for a in week.archived.listed_again),
        listed_again_folded=folded(page, week.archived, root),
        relevance_note=RELEVANCE_NOTE if keyed(week.archived) else "",
        glossary_relevance=href(page, GLOSSARY, "term-relevance") if keyed(week.archived) else None,
        prior=tuple(Link(p, href(page, week_path(p, root)) if p in published else None) for p in ds.prior_weeks),
        inputs=_inputs(week),
        index=href(page, index_path(root)),
        close=close_view(page, week.archived, {d.id: paper_anchor(d.id) for d in ds.decisions
                                               if d.decision == "REVIEW"}),
        topic=week.archived.head.settings.topic[1] if week.archived.head.settings.topic else "",
        topic_line=(f"Topic: {week.archived.head.settings.topic[1]}, one of this workspace's digests, each decided "
                    f"on its own watchlist and criteria." if week.archived.head.settings.topic else ""),
        lists=lists_view(week.archived, lambda w: href(page, week_path(w, root)) if w in published else None),
    )


def build_index_page(weeks: Sequence[DigestWeek], quality: dict | None = None, root: str = DIGEST,
                     title: str = "") -> DigestIndexPage:
    """Every published week, newest first (rebuilt at every build); `quality`: what the reader's marks measure
    (`reporter.digest.feedback.measure`, handed over by the build), None before the first mark; `root` and
    `title`: a named topic's folder and title."""
    index = index_path(root)
    return DigestIndexPage(
        meta=meta(index, f"Weekly digests: {title}" if title else "Weekly digests", [("Home", HOME)], archived=False),
        weeks=tuple(week_summary(w, index) for w in reversed(weeks)),
        feed=Href("feed.xml", "feed.xml"), quality=quality_view(quality, root) if quality else None)


def digest_summary(weeks: Sequence[DigestWeek], from_page: str = HOME,
                   topics: tuple[Link, ...] = ()) -> DigestSummary | None:
    """The home page's digest part: the latest week and where the rest are; None without a week."""
    if not weeks:
        return None
    root = weeks[-1].root
    feed = _rel(from_page, f"{root}/feed.xml")
    return DigestSummary(latest=week_summary(weeks[-1], from_page), weeks=len(weeks),
                         index=href(from_page, index_path(root)), feed=Href(feed, feed), topics=topics)


def week_summary(week: DigestWeek, from_page: str) -> WeekSummary:
    """A week's counts and KEEP titles, linked from `from_page`."""
    ds, cal = week.archived.decisions, week.archived.decisions.calibration
    target = week_path(week.week, week.root)
    return WeekSummary(
        week=week.week, dates=week_dates(week.week), href=href(from_page, target),
        kept=cal.kept, review=cal.review, dropped=cal.dropped, covered=cal.force_dropped_already_covered,
        demoted=cal.demoted_for_cap,
        keeps=tuple(Link(shown_title(d), href(from_page, target, paper_anchor(d.id))) for d in ds.kept()))


def histogram_chart(week: str, histogram: Sequence[int], keep_at: int, review_at: int) -> Chart:
    """Papers per score band as columns over the 0-100 score axis, the two thresholds drawn as lines.

    Every number drawn carries the data-key of the table cell with the same number (`h-<band>`,
    `t-keep`, `t-review`).
    """
    x0, unit, top_y, plot_h = 40, 6, 58, 150
    base = top_y + plot_h
    most = max(list(histogram) + [1])
    bars, labels = [], []
    for i, n in enumerate(histogram):
        h = round(plot_h * n / most, 2)
        x = x0 + 10 * i * unit
        bars.append(Bar(x + 4, round(base - h, 2), 10 * unit - 8, h, "s-main", f"scores {_band(i)}: {fmt(n)} papers"))
        labels.append(Label(x + 5 * unit, round(base - h - 5, 2), fmt(n), "middle", "num", key=f"h-{i}"))
        labels.append(Label(x + 5 * unit, base + 16, _band(i), "middle", "lbl"))
    for row, (name, at, key) in enumerate((("KEEP from", keep_at, "t-keep"), ("REVIEW from", review_at, "t-review"))):
        x, y = x0 + unit * at, 16 + 16 * row
        bars.append(Bar(x - 1, y - 12, 2, base - y + 12, "s-no_text", f"{name} score {at}"))
        if at >= 20:  # the name left of the line, the number right of it
            labels += [Label(x - 5, y, name, "end", "note"), Label(x + 5, y, fmt(at), "start", "num", key=key)]
        else:  # too near the left edge: both right of the line
            labels += [Label(x + 5, y, name, "start", "note"),
                       Label(x + 5 + 7 * len(name) + 6, y, fmt(at), "start", "num", key=key)]
    labels.append(Label(x0 + 50 * unit, base + 34, "score", "middle", "note"))
    return Chart("histogram", f"Papers per score band, {week}", "The same numbers are in a table on this page.",
                 "histogram-table", 680, base + 42, tuple(bars), tuple(labels),
                 (Legend("s-main", "papers per score band"), Legend("s-no_text", "the KEEP and REVIEW thresholds")))


# Pieces ---------------------------------------------------------------------------------------------------


def _band(i: int) -> str:
    return f"{10 * i}–{10 * i + 9}" if i < 9 else "90–100"


def _paper(d: Decision, verdicts: dict[str, CandidateRow] | None, rank: str,
           also: tuple[Link, ...] = ()) -> PaperView:
    """A paper in full; `verdicts` are the checked KEEPs' (None: the week was not checked), `rank` its ranking."""
    graph = verdicts.get(d.id) if verdicts is not None and d.decision == "KEEP" else None
    note = ""
    if verdicts is not None and d.decision == "KEEP" and graph is None:
        note = "not checked: no DOI, arXiv or OpenAlex id to look it up by"
    start = snippet(d.abstract)
    return PaperView(
        anchor=paper_anchor(d.id), id=d.id, title=shown_title(d), href=_href(d),
        authors=authors_line(d.authors), published=d.published or "", venue=d.venue or "",
        categories=", ".join(d.categories), decision=d.decision, score=d.score, match=f"{d.axes.match:.2f}",
        criteria=f"{d.axes.criteria:.2f}", novelty=f"{d.axes.novelty:.2f}", ranking=rank, tags=d.tags,
        rationale=d.rationale, matched_terms=d.matched_terms, merged_ids=d.merged_ids, snippet=start,
        abstract=d.abstract if d.abstract and start != d.abstract else "", graph=graph, graph_note=note,
        key=d.key or "", also_in=also)


def _also(page: str, week: ArchivedWeek, paper: str) -> tuple[Link, ...]:
    """The other topics that kept `paper` this week, linked to its entry on their week page."""
    return tuple(Link(title, href(page, week_path(week.week, DIGEST if name == DEFAULT_TOPIC else topic_root(name)),
                                  paper_anchor(paper)))
                 for name, title in week.also_in.get(paper, ()))


def _row(d: Decision, rank: str) -> PaperRow:
    """A REVIEW on one line."""
    return PaperRow(anchor=paper_anchor(d.id), id=d.id, title=shown_title(d), href=_href(d),
                    authors=authors_line(d.authors), score=d.score, ranking=rank, key=d.key or "")


def _href(d: Decision) -> Href | None:
    """The paper's own page, from its id, else from the first merged id that gives one."""
    return paper_href((d.id, *d.merged_ids))


def _ranked(d: Decision, ranks: dict[str, str]) -> str:
    """A REVIEW's ranking: shown over the cap, where the rank and the relevance explain it."""
    return ranking(d, ranks) if d.id in ranks else ""


def _verdicts(week: DigestWeek) -> dict[str, CandidateRow] | None:
    """The checked KEEPs' verdicts by paper id (the results file's checks apply), or None when unchecked."""
    if week.graph is None:
        return None
    return {r.id: r for r in novelty_page(week.graph).candidates if r.id is not None}


def _graph_note(week: DigestWeek) -> str:
    if week.graph is None:
        return ("The KEEPs of this week were not checked against a citation graph: the week was published "
                "without one.")
    graphs = sorted({(r.graph.events_jsonl, r.graph.sha256[:12]) for r in week.graph})
    against = ", ".join(f"{path} (sha256 {sha})" for path, sha in graphs) or "the workspace's graph"
    return (f"Each KEEP was checked against the citation graph {against} when this week was published; the "
            f"verdict and its evidence stand beside the paper. A verdict is evidence, never a score: it changed "
            f"no decision.")


def _drift_entry(e: RejectedEntry) -> DriftEntry:
    return DriftEntry(
        phrase=e.phrase, matched=e.matched, rejected=e.rejected, dropped=e.dropped,
        causes=", ".join(f"{k} {fmt(v)}" for k, v in e.causes),
        lines="; ".join(f"{k} ({fmt(v)})" for k, v in e.criteria_lines), ids=e.ids)


def _judge(page: str, week: DigestWeek, anchors: dict[str, str]) -> JudgeView | None:
    """The criteria judge's week as the page shows it, None without a judge."""
    judge = week.archived.judge
    if judge is None:
        return None

    def fit(name: str, lines: tuple[int, ...]) -> str:
        return name + (f" (line{'s' if len(lines) > 1 else ''} {', '.join(str(n) for n in lines)})" if lines else "")

    rows = None if judge.disagreements is None else tuple(DisagreementRow(
        Link(d.id, href(page, page, anchors[d.id]) if d.id in anchors else None), d.decision,
        fit(d.keyword_fit, d.keyword_lines), fit(d.judge_fit, d.judge_lines)) for d in judge.disagreements)
    return JudgeView(
        cost=dollars(judge.cost_usd), generation=judge.generation,
        judges=tuple(JudgeSpendRow(j.voter, j.model, fmt(j.answered), fmt(j.failed), fmt(j.missing),
                                   f"{fmt(j.input_tokens)} in, {fmt(j.output_tokens)} out", dollars(j.cost_usd))
                     for j in judge.judges),
        disagreements=rows, note=judge.note,
        silent=(f"{count(judge.keyword_silent, 'paper')} where only the judge speaks, "
                f"{count(judge.judge_silent, 'paper')} where only the keyword rule does: counted, not listed"),
        fallback=fallback_note(week.archived, judge.judges, judge.generation))


def _merge(page: str, m: MergeEntry, anchors: dict[str, str]) -> MergeView:
    return MergeView(
        survivor=Link(m.survivor, href(page, page, anchors[m.survivor]) if m.survivor in anchors else None),
        merged=m.merged_ids, reason=m.reason, similarity="" if m.similarity is None else f"{m.similarity:.4f}",
        where=m.where)


def _inputs(week: DigestWeek) -> tuple[Row, ...]:
    head = week.archived.head
    rows = [Row(name, f"{f.file} (sha256 {f.sha256[:12]})", f"in-{name}") for name, f in head.files()]
    rows += [Row(f"prior {w}", f"decisions.json (sha256 {sha[:12]})", f"in-prior-{w}") for w, sha in head.prior]
    rows += [Row("prior", head.settings.prior, "in-prior"),
             Row("max_kept", "" if head.settings.max_kept is None else str(head.settings.max_kept), "in-max_kept"),
             Row("scoring rules", head.rules, "in-rules"),
             Row("decisions.json", f"sha256 {week.archived.sha256[:12]}", "in-decisions")]
    return tuple(rows)


def _rel(from_page: str, target: str) -> str:
    """A relative link to a file that is not a page (the feed)."""
    return posixpath.relpath(target, posixpath.dirname(from_page) or ".")


__all__ = ["DigestWeek", "REVIEW_IN_FULL", "build_index_page", "build_week_page", "digest_summary",
           "digest_week", "histogram_chart", "load_digest_weeks", "paper_href", "week_dates", "week_path"]
