"""The status page: label findings, lost includes and the screen per tier."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..charts import Chart
from ..links import Href
from .certificate import RescuedWork
from .common import Fragment, Link, NextStep, PageMeta, ReleaseName, Row
from .disclosure import KeptDisclosureView
from .release import FlowRow

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
    idle_note: str = ""
    """Said instead of the outcome, vote, agreement and calibration tables (all zeros) while nothing is screened in
    this generation; empty once something is."""


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
class CertificateView:
    """A certificate of a stratum of the release (`reporter certify`), as the status page lists it."""

    stratum: str
    """The stratum's name (`discard`, `discard/rule:ID`, `domain-misses/rule:ID`, `screen:discarded`, ...)."""
    anchor: str
    """Fragment id of its row (`cert-<stratum slug>`)."""
    rule: Link | None
    """The rule of a rule's wins or domain misses, linked to its page; None for a pile or the screen's discards."""
    summary: str
    """The certificate in one line: `18,375 works; 400 sampled, 0 relevant: at most 135 relevant (0.73%), 95%`."""
    standing: str
    """Against [certify]'s target, in words: meets it, misses it (and why: partial, stale, ...), or no target."""
    tone: str
    """The class that colours the standing (`ok`, `bad`, `neutral`): it repeats the words, never replaces them."""
    labelled: str
    """How many of the sheet's rows are labelled (and its seed); for a partial sheet, what its bound holds for."""
    recall_low: str
    """The lower bound on the screen's recall against this stratum's losses, or a dash without labels or verdicts."""
    sheet: str
    """The sheet certified (relative to the workspace when inside it)."""
    sheet_sha256: str
    """The sheet's sha256."""
    shown_on: str
    """The title of the flow diagram's box it is drawn in, or `not on the diagram`."""
    certificate: str
    """Its id, shortened to 12 hex."""
    page: Href
    """Its own archived page."""
    role: str
    """Whether it gates the hand-off, in words (`gates the hand-off`, `diagnosis only: ...`)."""
    kept: str
    """How many certificates of the stratum are kept, and which one this supersedes."""


@dataclass(frozen=True)
class StatusPage:
    """The release's status page: what accrues after the release was cut; rebuilt every build."""

    TEMPLATE: ClassVar[str] = "status"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """The release: id, label, first-written date, its archived page."""
    flow: Chart
    """The flow diagram through routing and, when the screen is shown, on through its tiers to the hand-off; each
    certificate of the release written in the box of its stratum."""
    flow_rows: tuple[FlowRow, ...]
    """The diagram's numbers as a table."""
    certificates: tuple[CertificateView, ...]
    """Every certificate of this release in the workspace's state, by stratum name (each also drawn on its box)."""
    certify_note: str
    """Why no certificate is listed (none yet, or no workspace); empty when some are."""
    hand_off: str
    """The hand-off's certification, whole, in words (empty without a workspace)."""
    hand_off_tone: str
    """The class that colours it: `ok`, `bad` or `neutral`."""
    rescued: tuple[RescuedWork, ...]
    """The relevant works certification samples found, under their stratum and rule: they join the hand-off."""
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
    disclosures: tuple[KeptDisclosureView, ...] = ()
    """The methods disclosures kept at this release's hand-offs, oldest first (each with its archived page)."""
    disclosure_note: str = ("reporter export keeps the release's methods disclosure (PRISMA-trAIce, RAISE) with each "
                            "hand-off: drafted from the run records, every sentence naming its record, what no record "
                            "says marked as the author's. Each kept one has its own archived page; reporter disclose "
                            "drafts it now, without keeping it (docs/disclosure.md).")
    """What the disclosures section lists, and how to draft one."""
    no_disclosure: str = "No hand-off of this release has been exported yet, so no disclosure is kept."
    """What the disclosures section says when none is kept."""
    flow_note: str = ""
    """What the flow diagram shows: routing, and on through the screen when it is shown (both twins say it)."""
    next_step: NextStep | None = None
    """What to do next for this release (the screen's cost and command; the hand-off once all is decided), at the
    top of the page; None when there is nothing to say (no workspace, not the newest release, not configured)."""
    certificate_note: str = ("A certificate bounds, from a labelled random sample of a stratum of this release (a "
                             "pile, a rule's wins or domain misses, what a screening tier discarded), how many "
                             "relevant works the stratum can still hold, exactly and at the confidence it names "
                             "(reporter certify, docs/certify.md). It says nothing of works never in the pool. Each is"
                             " also written in the flow diagram's box of its stratum and has its own archived page; "
                             "certificates arrive after a release is published, so the release's own archived pages "
                             "do not show them.")
    """The certificates section's note: what a certificate bounds and where else it is shown."""
    rescued_note: str = ("Relevant works a certification sample found among the discards: each joins the hand-off "
                         "(reporter export, column rescued_by_certificate) and counts as found.")
    """What happens to the rescued works listed."""
    precision_note: str = ("A won work is correct when it is an include in a paying pile or an exclude in discard; "
                           "hold is not judged. Precision is shown with its 95% Wilson interval.")
    """The label findings' note: when a won work counts as correct, and the interval shown."""
    labels_note: str = ("Labels are not a routing input, so their findings live here and this page is rebuilt at every"
                        " build.")
    """Why label findings live on this page and not the release's."""
