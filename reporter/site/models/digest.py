"""The digest's week page and its index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..charts import Chart
from ..links import Href
from .close import CloseView
from .common import Link, PageMeta, Row
from .home import WeekSummary
from .lists import ListsView
from .novelty import CandidateRow
from .quality import QualityView

@dataclass(frozen=True)
class PaperView:
    """A KEEP, or a REVIEW among the first of its group, as the week page shows it in full."""

    anchor: str
    """Fragment id of its entry (`p-<id>`)."""
    id: str
    """The surviving id (scheme-prefixed)."""
    title: str
    """The title (shortened to 300 characters)."""
    href: Href | None
    """The paper's own page, built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex); None for
    another scheme or an id that is not well-formed for its scheme."""
    authors: str
    """The first three authors and "et al." when there are more; empty when the record named none."""
    published: str
    """The record's date (`YYYY-MM-DD`: when it first appeared), or empty."""
    venue: str
    """The record's journal, server or listing, or empty."""
    categories: str
    """The record's subject categories (arXiv's, the primary first), comma-separated, or empty."""
    decision: str
    """KEEP, REVIEW or DROP."""
    score: int
    """0-100."""
    match: str
    """Axis 1, two decimals."""
    criteria: str
    """Axis 2, two decimals."""
    novelty: str
    """Axis 3, two decimals."""
    ranking: str
    """Where the order is explained: a KEEP's or an over-the-cap REVIEW's rank when the cap applied and its
    relevance (`rank 26 of 148 · relevance 3.1416`), a KEEP's relevance alone otherwise; empty for the rest."""
    tags: tuple[str, ...]
    """The decision's tags."""
    rationale: str
    """The one-line rationale, as decisions.json states it."""
    matched_terms: tuple[str, ...]
    """The watchlist entries that matched."""
    merged_ids: tuple[str, ...]
    """Other ids the cross-source merge folded into this paper."""
    snippet: str
    """The start of the abstract (cut at a word, an ellipsis where it was cut), the whole abstract when it is
    short; empty when the record has none."""
    abstract: str
    """The whole abstract when the snippet is only its start (the page shows it one click away), else empty."""
    graph: CandidateRow | None
    """The citation graph's verdict and evidence for a KEEP checked when its week was published, else None."""
    graph_note: str
    """Why a KEEP of a checked week has no verdict (no key to look it up by), else empty."""
    key: str = ""
    """The paper's short key, what a reader types to mark it (`reporter feedback --wanted KEY`); empty for a
    week decided before keys were recorded (rules `digest.3` and older), whose page stays as it was published."""
    also_in: tuple[Link, ...] = ()
    """The other topics of the workspace that kept it this week, each linked to its entry there (`also_in`;
    docs/digest.md, "Topics"); () without topics."""


@dataclass(frozen=True)
class PaperRow:
    """A REVIEW after the first of its group, on one line."""

    anchor: str
    """Fragment id of its entry (`p-<id>`)."""
    id: str
    """The surviving id (scheme-prefixed): shown when it gives no link (the link and the anchor carry it)."""
    title: str
    """The title (shortened to 300 characters)."""
    href: Href | None
    """The paper's own page, built from its id alone; None when its id gives none."""
    authors: str
    """The first three authors and "et al."; empty when the record named none."""
    score: int
    """0-100."""
    ranking: str
    """Its rank and relevance when it is over the cap (`rank 40 of 148 · relevance 2.0172`), else empty."""
    key: str = ""
    """The paper's short key (`reporter feedback --wanted KEY`); empty for a week decided before keys."""


@dataclass(frozen=True)
class DropRow:
    """A DROP on one line, under its rationale: its title linked to its page (its id when it has none)."""

    id: str
    """The surviving id (scheme-prefixed): shown when it gives no link."""
    title: str
    """The title (shortened to 300 characters)."""
    href: Href | None
    """The paper's own page, built from its id alone; None when its id gives none."""


@dataclass(frozen=True)
class ReviewGroup:
    """The REVIEWs of one reason (why a paper waits for a reader), in the order of decisions.json."""

    reason: str
    """`over-cap`, `rescued`, `no-abstract`, `criteria-silent`, `fails-required`, `look-alike-trap`,
    `earlier-version`, `near-threshold` or `other` (REVIEW_REASONS)."""
    anchor: str
    """Fragment id of the group's heading (`review-<reason>`)."""
    label: str
    """The reason in words (`Over the cap`)."""
    meaning: str
    """What the reason means for this week, in a sentence or two (the cap, the thresholds, the last kept)."""
    count: int
    """The group's papers: those in full and those on a line."""
    papers: tuple[PaperView, ...]
    """The first of the group (REVIEW_IN_FULL), in full: authors, abstract, axes, rationale."""
    more: tuple[PaperRow, ...]
    """The rest of the group, a line each."""


@dataclass(frozen=True)
class DropReason:
    """The DROPs of one cause that share one rationale, word for word."""

    rationale: str
    """The rationale, as decisions.json states it for each of them."""
    count: int
    """Its papers."""
    papers: tuple[DropRow, ...]
    """The papers, in the order of decisions.json (score, high first, then relevance, then id). No anchor each:
    most of a week's papers are DROPs, and the page stays light (docs/digest.md, "Pages and feed")."""


@dataclass(frozen=True)
class DropGroup:
    """The dropped papers of one cause (DROP_CAUSES order)."""

    cause: str
    """The cause as decisions.json names it (`look-alike-trap`)."""
    anchor: str
    """Fragment id of the group's heading (`drop-<cause>`)."""
    label: str
    """The cause in words (`Look-alike trap`)."""
    meaning: str
    """What the cause means, in a sentence."""
    count: int
    """Its papers, under all its rationales."""
    reasons: tuple[DropReason, ...]
    """Its papers by rationale, the rationale of the highest-scored paper first."""


@dataclass(frozen=True)
class DriftEntry:
    """A watchlist entry whose papers the criteria keep rejecting (surfaced, never applied)."""

    phrase: str
    """The watchlist entry."""
    matched: int
    """Papers it matched this week."""
    rejected: int
    """Of those, papers the criteria scored 0.0."""
    dropped: int
    """Of those, papers dropped."""
    causes: str
    """The criteria's causes with their counts (`look-alike-trap 2`)."""
    lines: str
    """The criteria lines that rejected them, with their counts."""
    ids: tuple[str, ...]
    """Up to five of the rejected papers."""


@dataclass(frozen=True)
class DriftConcept:
    """An In scope concept that matched papers no watchlist entry matched (surfaced, never applied)."""

    concept: str
    """The concept as a rationale cites it (`criteria.md:8 "..."`)."""
    missed: int
    """Papers it matched that the watchlist missed."""
    ids: tuple[str, ...]
    """Up to five of them."""


@dataclass(frozen=True)
class JudgeSpendRow:
    """One criteria judge's week: what it answered and what that cost."""

    voter: str
    """The judge's name."""
    model: str
    """Its model."""
    answered: str
    """Papers it gave a fit."""
    failed: str
    """Papers whose reply was a failure (the keyword rule decided them)."""
    missing: str
    """Papers it had not answered (decided with --keyword-fallback)."""
    tokens: str
    """Prompt and completion tokens of its recorded replies, e.g. "12,000 in, 900 out"."""
    cost: str
    """In US dollars."""


@dataclass(frozen=True)
class DisagreementRow:
    """A paper where the keyword rule's reading and the judge's fit are two or more steps apart (never applied)."""

    paper: Link
    """The paper, linked to its entry on the page."""
    decision: str
    """What the judge's answer made of it: KEEP, REVIEW or DROP."""
    keyword: str
    """The keyword rule's fit and the criteria lines it matched, e.g. "in_scope (lines 11, 12)"."""
    judge: str
    """The judge's deciding fit and the lines it cited."""


@dataclass(frozen=True)
class JudgeView:
    """The criteria judge's part of the week: its cost, per judge, and where it and the keyword rule disagree."""

    cost: str
    """The week's judge cost, in US dollars."""
    generation: str
    """The judge's generation the week was decided with."""
    judges: tuple[JudgeSpendRow, ...]
    """Per judge, in configured order."""
    disagreements: tuple[DisagreementRow, ...] | None
    """None when the criteria document has no keyword terms (no table)."""
    note: str
    """What the table is for (surfaced, never applied)."""
    silent: str
    """The papers counted, not listed: where only one of the two speaks."""
    fallback: str = ""
    """For a week decided with `--keyword-fallback` (rules `digest.4`): which papers the keyword rule decided
    because no judge had answered, said instead of "Axis 2 came from the judges' recorded answers"; empty
    otherwise (and for an older week, whose archived page stays as published)."""


@dataclass(frozen=True)
class ListedAgainView:
    """A paper the week lists again in the version a prior week decided: not decided again (docs/digest.md)."""

    paper: Link
    """The paper's id, linked to its own page (doi.org, arxiv.org, ...) when its id gives one."""
    week: Link
    """The prior week that decided it, linked to that week's page."""
    decision: str
    """What that week decided: REVIEW or DROP."""


@dataclass(frozen=True)
class ListedAgainFold:
    """The papers a week lists again from one prior week, counted (a week that lists many again: folded)."""

    week: Link
    """The prior week that decided them, linked to its page (where each is)."""
    summary: str
    """`240 papers: DROP 200, REVIEW 40`."""


@dataclass(frozen=True)
class MergeView:
    """Records the cross-source merge folded into one paper."""

    survivor: Link
    """The surviving paper, linked to its entry on the page."""
    merged: tuple[str, ...]
    """The ids folded into it."""
    reason: str
    """same id, doi, related_ids or title+author."""
    similarity: str
    """The title similarity (title+author), else empty."""
    where: tuple[str, ...]
    """Where the merged records were read (papers file and line)."""


@dataclass(frozen=True)
class DigestWeekPage:
    """One published week of the digest: archived, never rewritten."""

    TEMPLATE: ClassVar[str] = "digest_week"
    meta: PageMeta
    """Title, path, twin link."""
    week: str
    """The ISO week, `YYYY-Www`."""
    dates: str
    """Its Monday to Sunday."""
    keep: tuple[PaperView, ...]
    """The KEEPs, in the order of decisions.json (score, high first, then relevance, then id)."""
    kept_total: int
    """The KEEPs."""
    review: tuple[ReviewGroup, ...]
    """Every REVIEW, grouped by why it waits for a reader (REVIEW_REASONS order; only reasons with papers)."""
    review_total: int
    """The REVIEWs in all groups."""
    dropped: tuple[DropGroup, ...]
    """Every DROP, grouped by cause (only causes with papers), then by rationale."""
    dropped_total: int
    """The DROPs in all groups."""
    counts: tuple[Row, ...]
    """The calibration: kept, review, dropped, already covered, demoted for the cap, the stricter pass."""
    histogram: Chart
    """Papers per score band with the KEEP and REVIEW thresholds drawn."""
    bands: tuple[Row, ...]
    """The histogram's numbers (papers per band, then the two thresholds), keys shared with the chart."""
    graph_note: str
    """Whether and against which graph the KEEPs were checked when the week was published."""
    drift_note: str
    """The watchlist-drift section's note (surfaced, never applied)."""
    drift_entries: tuple[DriftEntry, ...]
    """Watchlist entries the criteria keep rejecting."""
    drift_concepts: tuple[DriftConcept, ...]
    """In scope concepts the watchlist keeps missing."""
    merges: tuple[MergeView, ...]
    """What the cross-source merge folded together."""
    judge: JudgeView | None
    """The criteria judge's week (cost, disagreements), None when the week was decided without a judge."""
    listed_again: tuple[ListedAgainView, ...]
    """The papers listed again in the version a prior week decided, with that week and its decision."""
    prior: tuple[Link, ...]
    """The weeks whose KEEPs were the novelty prior (linked when their page exists)."""
    inputs: tuple[Row, ...]
    """The week's inputs and settings: files with their sha256, max_kept, the rules version."""
    index: Href
    """The week index."""
    # The section prose both twins write (issue 31, item 7): one field each, so the HTML page and its Markdown twin
    # say the same words (tests/test_site_twins.py fails when a sentence is written in both templates again).
    no_review: str = "No paper is waiting for review this week."
    """The review section's line when no paper waits for review."""
    no_merges: str = "No records were merged this week."
    """The merges section's line when nothing was merged."""
    no_listed_again: str = "No paper of an earlier week was listed again."
    """The listed-again section's line when none was."""
    relevance_note: str = ""
    """For a week with keys (rules digest.4): what the relevance beside each paper is (the glossary has the rest);
    empty for an older week, whose archived page stays as published."""
    glossary_relevance: Href | None = None
    """The glossary's entry for relevance (with `relevance_note`)."""
    listed_again_folded: tuple[ListedAgainFold, ...] = ()
    """When more than LISTED_AGAIN_SHOWN are listed again in a week with keys (rules digest.4; arXiv relists a
    weekend's papers by the hundred): them counted per prior week, shown instead of one line each; () otherwise."""
    listed_again_folded_note: str = ("Counted per week that decided them (arXiv lists many papers again, weekend "
                                     "relistings among them); each is on that week's page, with its decision.")
    """The folded list's note."""
    listed_again_note: str = ("Papers listed again in the version one of the four prior weeks decided: not decided "
                              "again, shown with that week's decision (a prior KEEP is decided again and dropped as "
                              "already covered).")
    """The listed-again section's note: what listed again means."""
    no_keep: str = "No paper was kept this week."
    """The kept section's line when no paper was kept."""
    dropped_note: str = ("Every dropped paper, grouped by the cause its rationale names first, then by its rationale: "
                         "each rationale once, above the papers it dropped.")
    """The dropped section's note: how the dropped papers are grouped."""
    no_dropped: str = "No paper was dropped this week."
    """The dropped section's line when no paper was dropped."""
    close: CloseView | None = None
    """Close in meaning, missed by the watchlist (after the KEEPs); None for a week decided without meaning."""
    topic: str = ""
    """The title of the named topic the week was decided for (docs/digest.md, "Topics"); empty otherwise."""
    topic_line: str = ""
    """For a named topic's week, the line that says which digest this is; empty otherwise."""
    lists: ListsView | None = None
    """The watchlist and criteria lines changed since the week before; None for a week that did not record them."""


@dataclass(frozen=True)
class DigestIndexPage:
    """Every published digest week, newest first; rebuilt at every build."""

    TEMPLATE: ClassVar[str] = "digest_index"
    meta: PageMeta
    """Title, path, twin link."""
    weeks: tuple[WeekSummary, ...]
    """Every published week, newest first."""
    feed: Href
    """The Atom feed (feed.xml beside this page)."""
    intro: str = ("Every published week of the digest, newest first. Each week's page is archived: published once and "
                  "never rewritten.")
    """What the index lists, and that each week's page is archived."""
    quality: QualityView | None = None
    """The measured quality from the reader's marks; None before the first mark."""
