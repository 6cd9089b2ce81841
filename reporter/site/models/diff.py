"""The release diff page: inputs, rules and works that changed, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..charts import Chart
from ..links import Href
from .common import Count, Download, Link, PageMeta, ReleaseName

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
    same_pile: str = ""
    """Works whose winner changed to or from this rule while they stayed in their pile (another rule of the pile
    took them or gave them up), in words (`took 5, gave up 12`); "" when none did."""


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
    join_note: str = "Works are joined on their id; pending works are split by reason."
    """How the two releases' works are compared."""
    spec_diff_note: str = "Each diff compares the spec as written in the rule's file, the earlier release first."
    """The spec changes section's note: what each diff compares."""
    transitions_note: str = ("Rows: where a work was before; columns: where it is now. The diagonal stayed put; “(not "
                             "in release)” counts the works only one release holds.")
    """The transitions table's note: how to read it."""
    rule_changes_note: str = ("A rule's wins can change while no work changes pile: another rule of the same pile "
                              "takes its works (or gives them up), for instance when a rule is added, edited or "
                              "moved in precedence. The last column (kept their pile, other rule) counts those "
                              "works; the moves below count the works that changed pile.")
    """Why a rule's wins may change without any work moving, and where the table says so."""
    moves_note: str = "The largest moves, each with the rule that decided it before and the rule that decides it now."
    """The moved works section's note."""
