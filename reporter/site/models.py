"""The page models: one frozen dataclass per page, every field documented.

A template sees exactly the fields of its page (tests/test_site_models.py
checks that each template uses only these names and that the HTML page and
its Markdown twin together use all of them). Everything a template shows is
already computed and formatted as data here; templates only lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .charts import Chart
from .links import Href


@dataclass(frozen=True)
class Crumb:
    """One step of the breadcrumb trail."""

    label: str
    """What the linked page is."""
    href: Href
    """Where it is."""


@dataclass(frozen=True)
class PageMeta:
    """What every page has: its title, where it is, and how to get home."""

    title: str
    """The page's <title> and <h1>."""
    path: str
    """Site-relative path without extension (`releases/<id>/index`)."""
    crumbs: tuple[Crumb, ...]
    """Breadcrumbs from the home page to the parent of this page."""
    twin: Href
    """From the HTML page: its Markdown twin (`html`); from the twin: the HTML page (`md`)."""
    archived: bool
    """Whether the page is archived (never rewritten) or rebuilt at every build."""
    glossary: Href
    """The glossary page, where every word of ours a page uses (pile, pending, Stage 3, ...) is explained."""


@dataclass(frozen=True)
class Link:
    """A named link (a rule, a pile, a page)."""

    label: str
    """What is linked."""
    href: Href | None
    """Where it is, or None when there is no page for it."""


@dataclass(frozen=True)
class Count:
    """A rule (or pile) and a number of works, with a link when there is a page for it."""

    name: str
    """Rule id or pile name."""
    rows: int
    """Works."""
    href: Href | None
    """The rule's page, or None."""


@dataclass(frozen=True)
class Context:
    """The matched text in its context, from the normalised field."""

    field: str
    """title or abstract."""
    before: str
    """Text before the match (at most samples.json's `context_chars` characters)."""
    match: str
    """The matched text (highlighted)."""
    after: str
    """Text after the match (at most samples.json's `context_chars` characters)."""
    cut_before: bool
    """The field goes on before the window (an ellipsis is shown)."""
    cut_after: bool
    """The field goes on after the window."""
    cut_match: bool = False
    """The match itself was longer than routing keeps (samples.json `match_cut`); an ellipsis follows it."""


@dataclass(frozen=True)
class ReleaseName:
    """How the pages name a release: its label and first-written date (published.json) when it has them."""

    release_id: str
    """Full id."""
    short_id: str
    """First 12 hex."""
    label: str | None
    """The label it was routed with (`2026-W27`), or None."""
    written: str | None
    """The date it was first written (`2026-07-06`), or None when published.json does not say."""
    name: str
    """What headings call it: `2026-W27 (3f2a9c1b2d4e)` with a label, else the short id."""
    href: Href
    """Its release page."""


@dataclass(frozen=True)
class Download:
    """A CSV file beside a table: the table's columns and rows (or the full list where the page shows a sample)."""

    href: Href
    """The CSV file (the same file from both twins)."""
    rows: int
    """Data rows in it."""
    note: str
    """What it holds, e.g. `the same rows as the table` or `all 421 moved works`."""


@dataclass(frozen=True)
class WorkView:
    """One sampled work as pages show it."""

    work_id: str
    """Scheme-prefixed id."""
    anchor: str
    """Fragment id of the work on this page."""
    href: Href | None
    """The paper's own page built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex, OSF), or None."""
    source: str
    """Where the pool got it."""
    title: str | None
    """The title (shortened to 300 characters), or None when it has none."""
    state: str
    """Its pile, or pending/<reason>."""
    winner: Link | None
    """The rule that decided it, linked; None when unrouted."""
    title_only: bool
    """Screened on its title alone (title-only source)."""
    contexts: tuple[Context, ...]
    """Every matched span in its context, one per text predicate that made the win (empty: none matched)."""


@dataclass(frozen=True)
class Sample:
    """A seeded sample of a pile or of a rule's wins or misses."""

    name: str
    """Pile name or list name."""
    anchor: str
    """Fragment id of the sample's heading."""
    total: int
    """Works in the pile or list."""
    works: tuple[WorkView, ...]
    """The sampled works, ordered by work id."""
    note: str
    """`all 3 works` or `a seeded sample of 20 of 1,234 works (seed 0)`."""


@dataclass(frozen=True)
class ReleaseSummary:
    """One release in the home page's archive."""

    release_id: str
    """Full id."""
    short_id: str
    """First 12 hex."""
    label: str | None
    """Its label (published.json), or None: the short id names it."""
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


@dataclass(frozen=True)
class Row:
    """A labelled value (a line of a two-column table)."""

    label: str
    """What the value is."""
    value: str
    """The value as shown."""
    key: str = ""
    """data-key of the cell (for tests and charts)."""


@dataclass(frozen=True)
class FlowRow:
    """One line of the flow diagram's table: a box, or a line inside one."""

    key: str
    """data-key shared with the diagram's number."""
    label: str
    """The box's title (after "left the flow: " or "waiting: " for a box on the diagram's right) or a line's label."""
    rows: int
    """Works."""
    kind: str
    """"" for works at a step, "removed" for what left the flow from it, "waiting" for its works not decided yet."""
    level: int
    """0 for the box itself, 1 for a line inside it (a source, a pile), 2 for a line under such a line (a rule)."""


@dataclass(frozen=True)
class PileRow:
    """A pile of the release."""

    name: str
    """Pile name, or pending/<reason> for the pending split."""
    plain: str
    """What it means in plain words (`no rule matched` for pending/unrouted)."""
    kind: str
    """discard, hold, screen, pending."""
    rows: int
    """Works in it (from rule_stats.json)."""
    share: str
    """Percentage of the pool."""
    won: int | None
    """Works the rules of this pile won (equals rows), None for pending lines."""
    anchor: str
    """Fragment of the pile's sample."""


@dataclass(frozen=True)
class RuleRow:
    """A rule's counts as the rule table shows them."""

    id: str
    """Rule id."""
    anchor: str
    """Fragment id of the rule's row."""
    key: str
    """data-key prefix of its numbers (`<key>-won`), shared with the rule chart."""
    href: Href
    """The rule's page."""
    description: str
    """As written in the spec (may be empty)."""
    file: str
    """The spec file it came from."""
    pile: str
    """Its target pile."""
    precedence: int
    """Higher wins."""
    shadow: bool
    """Shadow rules never win."""
    matched: int
    """Rows its pattern hit."""
    won: int
    """Rows it won that went to its pile."""
    no_text: int
    """Rows it won that went to pending/no_text."""
    outranked: int
    """Rows a higher-precedence rule won."""
    parts_sum: int
    """won + no_text + outranked (equals matched)."""
    identity: str
    """`holds` when parts_sum equals matched, else `broken` (the rule table's identity column)."""
    would_win: int | None
    """Shadow forecast: rows it would win if promoted."""
    would_move: int | None
    """Shadow forecast: of those, rows whose pile would change."""


@dataclass(frozen=True)
class DomainRow:
    """What a rule with a domain failed to govern."""

    id: str
    """Rule id."""
    href: Href
    """The rule's page."""
    pile: str
    """Its pile."""
    domain: str
    """The domain as written (compact JSON)."""
    domain_rows: int
    """Rows inside the domain."""
    domain_matched: int
    """Of those, rows the rule matched."""
    domain_miss: int
    """Rows in the domain it did not match that went to a paying pile."""
    winners: tuple[Count, ...]
    """The rules that won the misses, most first."""


@dataclass(frozen=True)
class Overlap:
    """Two rules that matched the same rows."""

    a: Count
    """One rule (its count is its matched)."""
    b: Count
    """The other."""
    rows: int
    """Rows both matched."""


@dataclass(frozen=True)
class ReleasePage:
    """The archived release page, summary first: only what the six inputs determine (and its name)."""

    TEMPLATE: ClassVar[str] = "release"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """Its id, label and first-written date."""
    engine_version: str
    """Engine that routed it."""
    generated_pool: str | None
    """The generator's note when the pool is generated example data (release.json), else None."""
    rows: int
    """Works in the pool."""
    summary: tuple[Row, ...]
    """The headline: works in the pool, to screening, discarded, set aside, no rule matched, no text."""
    flow: Chart
    """The flow diagram (PRISMA 2020 style): the pool, each step, what left it and why, the screening piles."""
    flow_rows: tuple[FlowRow, ...]
    """The diagram's numbers as a table."""
    piles: tuple[PileRow, ...]
    """Every pile and pending reason, with what it means."""
    rules: tuple[RuleRow, ...]
    """The non-shadow rules, precedence descending."""
    rules_csv: Download
    """The rule table as CSV."""
    rule_chart: Chart
    """won / no_text / outranked per rule, stacked."""
    shadows: tuple[RuleRow, ...]
    """The shadow rules with their forecasts."""
    domains: tuple[DomainRow, ...]
    """Rules with a domain."""
    domains_csv: Download | None
    """The domain-miss table as CSV (None without a domain)."""
    overlaps: tuple[Overlap, ...]
    """The largest overlaps between two rules."""
    overlap_note: str
    """How many pairs overlap and how many are shown."""
    samples: tuple[Sample, ...]
    """A seeded sample per pile."""
    totals: tuple[Row, ...]
    """Appendix: the sums that make the identity visible across rules."""
    inputs: tuple[Row, ...]
    """Appendix: the six input digests."""
    normalisation: tuple[Row, ...]
    """Appendix: the text normalisation settings."""
    pool: tuple[Row, ...]
    """Appendix: pool and overlay counts."""
    status: Href
    """The release's status page."""
    diff: Href
    """The diff against the previous release."""


@dataclass(frozen=True)
class RulePage:
    """The archived page of one rule in one release."""

    TEMPLATE: ClassVar[str] = "rule"
    meta: PageMeta
    """Title, path, twin link."""
    release_id: str
    """Full id of the release."""
    rule: RuleRow
    """The rule's counts."""
    spec: str
    """The rule exactly as written in its file (indented JSON)."""
    counts: tuple[Row, ...]
    """Its counts as a table (keys shared with the chart)."""
    chart: Chart | None
    """won / no_text / outranked as a bar (None for a shadow rule)."""
    outranked_by: tuple[Count, ...]
    """Who outranked it and how often, most first."""
    domain: DomainRow | None
    """Its domain misses and who won them, or None without a domain."""
    samples: tuple[Sample, ...]
    """Its seeded wins and domain misses."""
    release: Href
    """The release page (its row in the rule table)."""
    status: Href
    """The status page (label findings)."""


@dataclass(frozen=True)
class LabelRow:
    """Label findings of one rule (from labels.json)."""

    id: str
    """Rule id."""
    href: Href | None
    """The rule's page, when the rule is in the release."""
    pile: str
    """Its pile."""
    includes_matched: int
    """Labelled includes it matched."""
    includes_won: int
    """Labelled includes it won."""
    includes_to_discard: int
    """Labelled includes it sent to discard."""
    won_labelled: int
    """Labelled rows it won."""
    won_correct: int
    """Of those, correctly routed."""
    precision: str
    """Precision with its Wilson interval, or — without labelled wins."""
    flagged: bool
    """It sent a labelled include to discard."""


@dataclass(frozen=True)
class LostWork:
    """A labelled include that went to discard."""

    work_id: str
    """The work."""
    anchor: str
    """Its fragment id."""
    href: Href | None
    """The paper's own page built from its id, or None."""
    title: str | None
    """Its title (from a release's samples or the workspace's pool), or None when it could not be found."""
    title_note: str
    """Why no title is shown (`not in the workspace's pool`), empty when there is one."""
    rule: Link
    """The rule that discarded it."""


@dataclass(frozen=True)
class GridColumn:
    """A column of a small table of counts."""

    label: str
    """Its header."""
    numeric: bool
    """Right-aligned numbers (True) or text (False)."""


@dataclass(frozen=True)
class GridCell:
    """One cell of a small table of counts."""

    value: int | str
    """A count (the template formats it) or text already formatted (a share, dollars)."""
    numeric: bool
    """Right-aligned (its column holds numbers)."""
    key: str
    """Its data-key (`<row key>-<column key>`), shared with a chart's numbers; empty for none."""


@dataclass(frozen=True)
class GridRow:
    """One row of a small table of counts."""

    label: str
    """What the row counts (a voter, a label, a band of token lengths)."""
    cells: tuple[GridCell, ...]
    """One cell per column."""


@dataclass(frozen=True)
class Grid:
    """A small table with a header row: votes by label, a confusion matrix, a histogram, costs per voter."""

    id: str
    """Element id of the table."""
    caption: str
    """What it shows (its accessible name and caption)."""
    corner: str
    """Header of the row-label column."""
    columns: tuple[GridColumn, ...]
    """Column headers."""
    rows: tuple[GridRow, ...]
    """The rows."""


@dataclass(frozen=True)
class PlanView:
    """A tier's dry run: what `reporter screen --run` would send now and what it would cost."""

    counts: tuple[Row, ...]
    """Works that would be sent, in scope, already decided, and (expensive) still to come from the cheap tier."""
    tokens: tuple[Row, ...]
    """Prompt lengths of the works that would be sent: min, median, p90, p99, max (empty when none)."""
    histogram: Grid | None
    """Prompts per band of input tokens (None when no work would be sent)."""
    chart: Chart | None
    """The same histogram drawn."""
    costs: Grid | None
    """Per voter: model, works, input tokens, output tokens expected, prices and cost (None without voters)."""
    total: str
    """The cost of both voters together, `$1.23`, with `(an estimate)` when any part is estimated."""
    notes: tuple[str, ...]
    """How tokens were counted and output sized, and what the works still to come would add."""


@dataclass(frozen=True)
class LostView:
    """A labelled include a gate discarded."""

    work_id: str
    """The work."""
    anchor: str
    """Its fragment id."""
    title: str
    """Its title as the voters saw it (shortened to 300 characters)."""
    href: Href | None
    """Its own page, built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex), or None."""


@dataclass(frozen=True)
class CalibrationView:
    """A tier's voters and gate against the workspace's labels."""

    note: str
    """How many labelled works and includes are in the tier's scope, and what is counted."""
    confusions: tuple[Grid, ...]
    """Each voter's answers, then the gate's outcomes, per label."""
    rates: Grid
    """Recall and work saved per voter and for the gate, each with its Wilson 95% interval."""
    lost: tuple[LostView, ...]
    """The labelled includes the gate discarded, by work id."""
    lost_total: int
    """How many there are in all (more than listed past the page's bound)."""


@dataclass(frozen=True)
class TierView:
    """One tier of the screen: what it has done in its current generation, and its dry run."""

    tier: str
    """`cheap` or `expensive`."""
    name: str
    """Its heading: `Cheap tier (discard-only)` or `Expensive screen`."""
    anchor: str
    """Fragment id of its heading."""
    configured: bool
    """False when [screen] configures no voters for it."""
    generation: str | None
    """Its current generation (None without voters)."""
    note: str
    """How its scope came about (a dormant tier, works passed on or still to come), or how to configure it."""
    counts: tuple[Row, ...]
    """Routed (with how), claimable, claimed, screened, provider failures."""
    outcomes: tuple[Row, ...]
    """Gate outcomes: admit / discard / incomplete, or discard / proceed / incomplete for the cheap tier."""
    votes: Grid | None
    """Votes by voter and label, provider failures, tokens and cost spent (None without voters)."""
    invalid: Grid | None
    """Invalid votes by voter and cause (None without voters)."""
    failures: Grid | None
    """Provider failures by voter and cause (not votes: the work is asked again); None when there is none."""
    agreement: Grid | None
    """The first voter's answers against the second's on works both answered (None without voters)."""
    kappa: str
    """Cohen's kappa in a sentence, and how invalid votes are treated."""
    plan: PlanView
    """Its dry run."""
    calibration: CalibrationView | None
    """Against the labels, or None without labels or voters."""


@dataclass(frozen=True)
class Fragment:
    """A named piece of text shown as it is: a prompt fragment, or a message of the assembled prompt."""

    name: str
    """The fragment's name, or the message's role."""
    text: str
    """The text, verbatim."""


@dataclass(frozen=True)
class ScreeningSection:
    """The status page's screening section."""

    shown: bool
    """True when a report is shown; False when `note` says why not (not configured, no workspace, another release)."""
    note: str
    """Where the state is read from and that a build never spends; or why nothing is shown and how to change it."""
    tiers: tuple[TierView, ...]
    """The cheap tier, then the expensive screen (empty when not shown)."""
    prompt_hash: str
    """The prompt's hash (empty when not shown)."""
    fragments: tuple[Fragment, ...]
    """Every prompt fragment, in assembly order."""
    example: tuple[Fragment, ...]
    """The assembled prompt for an example work: the system and the user message."""


@dataclass(frozen=True)
class StatusPage:
    """The release's status page: what accrues after the release was cut; rebuilt every build."""

    TEMPLATE: ClassVar[str] = "status"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """The release: id, label, first-written date, its archived page."""
    flow: Chart
    """The flow diagram through routing and, when the screen is shown, on through its tiers to the hand-off."""
    flow_rows: tuple[FlowRow, ...]
    """The diagram's numbers as a table."""
    labels: tuple[Row, ...]
    """Label counts and digest (empty without labels.json)."""
    label_rules: tuple[LabelRow, ...]
    """Per-rule findings, precedence order."""
    lost_total: int
    """Labelled includes in discard."""
    lost: tuple[LostWork, ...]
    """The first of them (at most 100)."""
    funnel: tuple[Row, ...]
    """The funnel continued past routing: routing's end, the cheap tier, the screen, the hand-off."""
    screening: ScreeningSection
    """What the screen has done for this release and what it would do next (or why it is not shown)."""


@dataclass(frozen=True)
class Transition:
    """One row of the pile-to-pile table."""

    before: str
    """State in the earlier release, with its plain name."""
    cells: tuple[tuple[str, int], ...]
    """(data-key, works) per state of this release, in DiffPage.states order."""
    total: int
    """Works in that state before."""


@dataclass(frozen=True)
class StateChange:
    """A state's count before and after."""

    state: str
    """Pile or pending/<reason>."""
    plain: str
    """What it means in plain words."""
    key: str
    """data-key prefix shared with the chart."""
    before: int
    """Works before."""
    after: int
    """Works now."""
    delta: str
    """after - before with its sign."""


@dataclass(frozen=True)
class RuleChange:
    """A rule whose wins changed."""

    rule: Count
    """The rule (rows: its wins now)."""
    before: int
    """Wins in the earlier release (0 when it did not exist)."""
    after: int
    """Wins now."""
    delta: str
    """The change with its sign."""


@dataclass(frozen=True)
class Move:
    """Works present in both releases that moved between two states, with the rules deciding them before and now."""

    before: str
    """State before."""
    after: str
    """State now."""
    before_winner: Link | None
    """The deciding rule before (None: no rule)."""
    winner: Link | None
    """The deciding rule now (None: no rule)."""
    rows: int
    """Works."""


@dataclass(frozen=True)
class MovedView:
    """A sampled work of the diff: moved between piles, new in the pool, or gone from it."""

    work_id: str
    """The work."""
    anchor: str
    """Fragment id."""
    href: Href | None
    """The paper's own page built from its id, or None."""
    title: str | None
    """Its title (from either release's samples, else the workspace's pool), or None when not found."""
    title_note: str
    """Why no title is shown (`not in the workspace's pool`), empty when there is one."""
    before: str
    """State before (`(not in release)` for a new work)."""
    after: str
    """State now (`(not in release)` for a work that left)."""
    before_winner: str
    """Rule before (or —)."""
    after_winner: str
    """Rule now (or —)."""


@dataclass(frozen=True)
class MovedGroup:
    """Works that moved into (or out of) a paying pile."""

    name: str
    """Heading."""
    anchor: str
    """Fragment id of the heading."""
    total: int
    """How many moved."""
    works: tuple[MovedView, ...]
    """A seeded sample (up to 20)."""
    note: str
    """What the sample is."""


@dataclass(frozen=True)
class StateCount:
    """Works of a group in one state."""

    state: str
    """Pile or pending/<reason>."""
    plain: str
    """What it means."""
    key: str
    """data-key of the count."""
    anchor: str
    """Fragment id of the state's sample."""
    rows: int
    """Works."""


@dataclass(frozen=True)
class PoolGroup:
    """Works new in the pool, or works that left it: counts per pile and a seeded sample of each pile's works."""

    name: str
    """Heading."""
    anchor: str
    """Fragment id of the heading."""
    total: int
    """Works in the group."""
    counts: tuple[StateCount, ...]
    """Per pile (now for new works, before for works that left), in pile order."""
    samples: tuple[MovedGroup, ...]
    """A seeded sample per pile with works."""


@dataclass(frozen=True)
class InputChange:
    """One of the six inputs, before and now."""

    name: str
    """pool, overlay, specs, piles, normalisation, engine."""
    what: str
    """What it covers, in plain words."""
    changed: bool
    """Its digest differs."""
    before: str
    """Its digest before (first 12 hex; `none` for no overlay)."""
    after: str
    """Its digest now."""


@dataclass(frozen=True)
class SpecChange:
    """A rule added, removed or edited, with the diff of its spec as written."""

    id: str
    """Rule id."""
    anchor: str
    """Fragment id of its entry."""
    change: str
    """added, removed or edited."""
    rule: Link
    """The rule's page in the release that has it (now; before for a removed rule)."""
    pile: str
    """Its pile, `before → now` when that changed."""
    won: str
    """Its wins, `before → now` (— where it did not exist or is a shadow)."""
    diff: str
    """Unified diff of spec_text, earlier release first (every line `+` for an added rule, `-` for a removed one)."""
    cut: int
    """Diff lines not shown (past the page's bound); 0 when all are shown."""


@dataclass(frozen=True)
class Comparison:
    """An earlier release this release can be compared with."""

    name: str
    """The earlier release's name (label and short id, or short id)."""
    written: str | None
    """The date it was first written, when known."""
    href: Href | None
    """The comparison page, or None when this render did not write it (`reporter render --against ID` does)."""
    current: bool
    """True on the page that is this comparison."""


@dataclass(frozen=True)
class DiffPage:
    """This release against an earlier one (the previous in index.json, or another); rebuilt every build."""

    TEMPLATE: ClassVar[str] = "diff"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """This release."""
    base: ReleaseName | None
    """The release compared with, or None for the first release."""
    previous: bool
    """True when `base` is the previous release in index.json."""
    summary: tuple[str, ...]
    """What changed, and why, in a few sentences: inputs, rules, works new and gone, moves, screening."""
    inputs: tuple[InputChange, ...]
    """The six inputs before and now."""
    specs: tuple[SpecChange, ...]
    """Every rule added, edited or removed, with its spec diff."""
    specs_same: int
    """Rules whose spec is the same in both."""
    new_works: PoolGroup | None
    """Works in this release's pool that the earlier one did not hold (None when there are none)."""
    left_works: PoolGroup | None
    """Works of the earlier release that this one does not hold (None when there are none)."""
    states: tuple[str, ...]
    """Column headers of the transition table (state and plain name)."""
    transitions: tuple[Transition, ...]
    """Rows: state before; columns: state now."""
    column_totals: tuple[tuple[str, int], ...]
    """(data-key, works now) per column."""
    transitions_csv: Download | None
    """The transition table as CSV."""
    changes: tuple[StateChange, ...]
    """Per state: before, now, change."""
    chart: Chart | None
    """The pile-to-pile change drawn (None for the first release)."""
    rule_changes: tuple[RuleChange, ...]
    """The rules whose wins changed most."""
    moves: tuple[Move, ...]
    """The largest moves of works in both releases, with the rules deciding them before and now."""
    moved: tuple[MovedGroup, ...]
    """Into and out of a paying pile, each with a sample."""
    moved_total: int
    """Works in both releases whose pile changed."""
    moved_csv: Download | None
    """Every work in both releases whose pile changed, as CSV (not a sample)."""
    comparisons: tuple[Comparison, ...]
    """Earlier releases to compare with, newest first."""
    compare_note: str
    """Which comparisons are rendered and how to render another."""


@dataclass(frozen=True)
class IdList:
    """Node ids from a results line, shown up to a bound with the full count."""

    n: int
    """How many there are (the count the results file states)."""
    ids: tuple[str, ...]
    """The first of them, as the file sorts them (at most NoveltyPage's bound)."""
    more: int
    """How many are not shown."""


@dataclass(frozen=True)
class CandidateRow:
    """One checked candidate: its verdict next to its evidence, as one results line states them."""

    anchor: str
    """Fragment id of its row (`c-<id>`, or `c-line-<n>` without an id)."""
    line: int
    """Its line in the batch file."""
    id: str | None
    """The caller's id, or None."""
    kind: str
    """`paper` or `claim`."""
    statement: str | None
    """A claim's statement (whitespace collapsed, shortened to 300 characters), None for a paper."""
    lom_id: str
    """The candidate's lom_id (the matched paper's when rule 1 matched a paper)."""
    verdict: str
    """duplicate, neighborhood, novel or unknown."""
    status: str
    """ok, lookup_failed, insufficient_edges (or the reserved incomparable)."""
    exact_match: str | None
    """Rule 1's matched lom_id (a claim's: the matched claim's about_lom_id), or None."""
    holdout_applied: bool
    """False when no holdout was given: the result is in-sample only (labelled so)."""
    holdout_ids: IdList
    """The candidate's holdout_lom_ids (the nodes excluded from the holdout slice)."""
    in_sample: IdList
    """Shared read or claim-bearing references, all of them."""
    holdout: IdList
    """Shared nodes outside the holdout (equal to in_sample when no holdout was given)."""
    coverage_gap: IdList
    """Uncovered read or claim-bearing nodes of the graph (empty unless rule 3 decided)."""
    blocking: tuple[str, ...]
    """Failed lookups the verdict needed, as `scheme lookup: HTTP status` (or `no answer`)."""
    graph: str | None
    """The graph it was checked against (events file as given, sha256 prefix); None when all share one."""


@dataclass(frozen=True)
class GraphUsed:
    """A graph some candidates were checked against."""

    events_jsonl: str
    """The events file as the results line gives it."""
    sha256: str
    """sha256 of its bytes: the graph version the verdicts are against."""
    candidates: int
    """Candidates checked against it."""


@dataclass(frozen=True)
class NoveltyPage:
    """The novelty checks of this build: every candidate with its verdict and evidence; rebuilt every build."""

    TEMPLATE: ClassVar[str] = "novelty"
    meta: PageMeta
    """Title, path, twin link."""
    not_a_ranker: str
    """The sentence saying that a verdict is evidence, never a score (every line says not_a_ranker: true)."""
    candidates: tuple[CandidateRow, ...]
    """Every checked candidate, in the batch file's order (never sorted by anything derived from a verdict)."""
    verdicts: tuple[VerdictCount, ...]
    """Candidates per verdict with what each verdict means, in the fixed order of novelty.md."""
    statuses: tuple[VerdictCount, ...]
    """Candidates per status with what each status means (the reserved `incomparable` only when present)."""
    graphs: tuple[GraphUsed, ...]
    """The graphs the candidates were checked against, in order of first use."""
    shown: int
    """At most this many ids are listed per evidence cell; the count is always shown."""


@dataclass(frozen=True)
class PaperView:
    """One decided paper of a digest week, as the week page shows it."""

    anchor: str
    """Fragment id of its entry (`p-<id>`)."""
    id: str
    """The surviving id (scheme-prefixed)."""
    title: str
    """The title (shortened to 300 characters)."""
    href: Href | None
    """The paper's own page, built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex); None for
    another scheme or an id that is not well-formed for its scheme."""
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
    tags: tuple[str, ...]
    """The decision's tags."""
    rationale: str
    """The one-line rationale, as decisions.json states it."""
    matched_terms: tuple[str, ...]
    """The watchlist entries that matched."""
    merged_ids: tuple[str, ...]
    """Other ids the cross-source merge folded into this paper."""
    graph: CandidateRow | None
    """The citation graph's verdict and evidence for a KEEP checked when its week was published, else None."""
    graph_note: str
    """Why a KEEP of a checked week has no verdict (no key to look it up by), else empty."""


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
    papers: tuple[PaperView, ...]
    """The papers, by score (high first), then id."""


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
    """The KEEPs, by score (high first), then id."""
    review: tuple[PaperView, ...]
    """The REVIEWs, in the same order."""
    dropped: tuple[DropGroup, ...]
    """Every DROP, grouped by cause (only causes with papers)."""
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
    prior: tuple[Link, ...]
    """The weeks whose KEEPs were the novelty prior (linked when their page exists)."""
    inputs: tuple[Row, ...]
    """The week's inputs and settings: files with their sha256, max_kept, the rules version."""
    index: Href
    """The week index."""


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


@dataclass(frozen=True)
class Term:
    """One word of ours and what it means."""

    anchor: str
    """Fragment id of its entry (`term-pending`), which pages link to."""
    word: str
    """The word as pages use it (`pending`, `Stage 3`, `specs`)."""
    meaning: str
    """What it means, in a sentence or two of plain words."""


@dataclass(frozen=True)
class GlossaryPage:
    """The glossary: every internal word a page of this site uses, with its plain meaning."""

    TEMPLATE: ClassVar[str] = "glossary"
    meta: PageMeta
    """Title, path, twin link."""
    groups: tuple[tuple[str, tuple[Term, ...]], ...]
    """Terms by topic (routing, releases, screening, digest, novelty), each group's title first."""
