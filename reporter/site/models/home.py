"""The home page's model: the latest release and digest week, the novelty summary, the archive."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..links import Href
from .common import Link, NextStep, PageMeta

@dataclass(frozen=True)
class ReleaseSummary:
    """One release in the home page's archive."""

    release_id: str
    """Full id."""
    short_id: str
    """First 12 hex."""
    given_name: str | None
    """Its given name (published.json), or None: the short id names it."""
    written: str | None
    """The date it was first written (published.json), or None when unknown."""
    changes: str
    """One line: what changed since the previous release (inputs, rules, works new and gone, moves)."""
    href: Href
    """The release page."""
    status: Href
    """The status page."""
    diff: Href
    """The diff page."""
    rows: int
    """Works in the pool."""
    piles: tuple[int | None, ...]
    """Works per pile, aligned with HomePage.piles (None: no such pile)."""
    to_screen: int
    """Works in the paying piles."""
    engine_version: str
    """Engine that routed it."""
    generated: bool
    """The pool is generated example data."""


@dataclass(frozen=True)
class VerdictCount:
    """How many checked candidates got one verdict (or one status), and what it means."""

    name: str
    """The verdict (`duplicate`, `neighborhood`, `novel`, `unknown`) or the status."""
    key: str
    """data-key of the count's cell (`v-<verdict>` or `s-<status>`)."""
    count: int
    """Candidates with it."""
    meaning: str
    """What it says about a candidate, in a sentence or two."""


@dataclass(frozen=True)
class NoveltySummary:
    """The novelty page as the home page mentions it."""

    href: Href
    """The novelty page."""
    candidates: int
    """Candidates checked."""
    verdicts: tuple[VerdictCount, ...]
    """Candidates per verdict, in the fixed verdict order."""


@dataclass(frozen=True)
class WeekSummary:
    """One published digest week as the week index, the home page and the feed list it."""

    week: str
    """The ISO week, `YYYY-Www`."""
    dates: str
    """Its Monday to Sunday, e.g. `11–17 May 2026`."""
    href: Href
    """The week's page."""
    kept: int
    """KEEP decisions."""
    review: int
    """REVIEW decisions."""
    dropped: int
    """DROP decisions."""
    covered: int
    """Papers forced to DROP because a prior week already kept them (calibration's force_dropped_already_covered)."""
    demoted: int
    """KEEPs demoted to REVIEW by the cap (calibration's demoted_for_cap)."""
    keeps: tuple[Link, ...]
    """The KEEP titles, each linked to its entry on the week page, in the page's order."""


@dataclass(frozen=True)
class DigestSummary:
    """The digest as the home page shows it: the latest week, and where the others are."""

    latest: WeekSummary
    """The newest published week."""
    weeks: int
    """Published weeks in all."""
    index: Href
    """The week index page."""
    feed: Href
    """The Atom feed (digest/feed.xml; the same file from both twins)."""
    topics: tuple[Link, ...] = ()
    """The workspace's named digest topics, each linked to its week index (docs/digest.md, "Topics"); ()
    without."""


@dataclass(frozen=True)
class PileShare:
    """A pile of the latest release on the home page: its name, what it means, its works."""

    name: str
    """The pile's name (`discard`, `screen_cheap`, `pending`)."""
    plain: str
    """What the pile means, in plain words."""
    rows: int
    """Works in it."""
    share: str
    """Its share of the pool, as shown (`80.8%`)."""


@dataclass(frozen=True)
class PendingNote:
    """Why most works may be pending: the latest release's pending works and their two reasons."""

    rows: int
    """Pending works."""
    share: str
    """Their share of the pool, as shown."""
    pool: int
    """Works in the pool."""
    unrouted: int
    """Pending because no rule matched them."""
    no_text: int
    """Pending because a rule would send them to screening but they have no abstract."""
    most: bool = True
    """More than half the pool is pending: the note says "Most works are pending" (else it gives the count)."""


@dataclass(frozen=True)
class HomePage:
    """The home page: what the site shows, the latest release, then the archive, newest first."""

    TEMPLATE: ClassVar[str] = "home"
    meta: PageMeta
    """Title, path, twin link."""
    latest: ReleaseSummary | None
    """The newest release (last in index.json), or None when there is none."""
    latest_piles: tuple[PileShare, ...]
    """The newest release's piles in pile order, each with its plain meaning (empty without a release)."""
    pending: PendingNote | None
    """Why works are pending in the newest release, or None when none are (or there is no release)."""
    releases: tuple[ReleaseSummary, ...]
    """Every release, newest first."""
    piles: tuple[str, ...]
    """Pile names, the archive table's count columns."""
    digest: DigestSummary | None = None
    """The latest published digest week, or None when none is published (the page says so)."""
    novelty: NoveltySummary | None = None
    """The novelty checks of this build, or None when the build checked none (nothing is shown)."""
    next_step: NextStep | None = None
    """What to do next for the latest release (the screen's cost and command), or None when there is nothing to
    say (no workspace, screening not configured)."""
    certification: str = ""
    """The latest release's hand-off, certified or not, in one line (empty when rendered without a workspace)."""
    certification_tone: str = "neutral"
    """The class that colours it: `ok`, `bad` or `neutral` (the words say it)."""
    digest_only: bool = False
    """The site has a digest and no release (a digest-only workspace): the page shows the digest alone, with no
    release sections (a site with neither shows them, saying no release has been routed yet)."""
    digest_lead: str = ("This site publishes a weekly digest of papers: every paper of a week is decided KEEP, REVIEW "
                        "or DROP against a watchlist and a written criteria document, and every decision, the dropped "
                        "papers included, carries the reason that made it.")
    """The lead of a site without releases: what the weekly digest is."""
    digest_weeks_note: str = ("The latest digest week and the latest release need not be the same week: a digest week "
                              "is published only once it has ended, so that all of its papers are in, while a release "
                              "is routed whenever the pool is.")
    """Why the latest digest week and the latest release may differ."""
    no_digest: str = "No weekly digest has been published yet."
    """The digest section's line before any week is published."""
    verdict_note: str = "Each verdict is evidence, never a score."
    """The novelty line's reminder of what a verdict is."""
