"""The archived release page and rule pages: the flow, piles, rules, domains, overlaps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..charts import Chart
from ..links import Href
from .common import Count, Download, PageMeta, ReleaseName, Row, Sample

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
    """Works in it (from the release's statistics)."""
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
    """When the pool is generated example data: its seed and rows in words, from the generator's marker in the
    release's manifest ("" when the marker has no such fields); None: not generated."""
    generated_command: str | None
    """The command that makes such a pool (from the marker's seed and rows), or None."""
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
    generated_note: str = "The pool of this release was made by a seeded generator; its works are invented."
    """The generated-example notice: what generated means for the pool."""
    scope_note: str = "This page shows only what the release's six inputs determine."
    """What this page shows (and so never changes)."""
    release_id_note: str = ("The release id is the sha256 of these six digests: the pool's content, the overlay's "
                            "content, the rule specs (canonical JSON), the piles and the title-only policy, the text "
                            "normalisation settings, and the engine (package and routing-algorithm version). Same six,"
                            " same routing; any change mints a new release.")
    """The identity section's note: what the release id digests."""
    no_domains: str = "No rule of this release declares a domain."
    """The domains section's line when no rule declares one."""
    flow_note: str = ("From the pool down, each step takes out what it names beside it, and why: the rule, or no rule, "
                      "or no text; what waits (pending, set aside) is drawn apart from what left. Every number is "
                      "written out, so a small step reads as clearly as the pool.")
    """What the flow diagram shows (both twins say it above the diagram or its table)."""
    piles_note: str = ("Each pile holds exactly the works its rules won; pending works are those no rule matched or "
                       "that lacked text.")
    """What the piles table shows."""
    rules_note: str = ("Each work a rule matched either went to its pile, was held back for lack of text, or was won "
                       "by a rule of higher precedence. The identity column says whether that holds (won + no_text + "
                       "outranked = matched).")
    """What the rules table's identity means (after its formula, in bold)."""
    shadows_note: str = ("Shadow rules are scored on every work but never win. The forecast says what each would do "
                         "if it alone were promoted at its precedence.")
    """What the shadow rules' table shows."""
    domains_note: str = ("A miss is a work inside a rule's domain that the rule did not match and that still went to a "
                         "paying pile: what the rule failed to govern, and who bought it a screen. Matched in domain "
                         "counts the domain's works only; the rules table's matched counts the whole pool.")
    """What a domain miss is, and why the table's matched differs from the rules table's."""
    samples_note: str = ("Seeded samples drawn while routing; every matched text is marked in the normalised field, "
                         "and each title links to the paper's own page.")
    """What the samples are."""
    totals_note: str = ("Every work has at most one winner, so the wins and no_text downgrades of all rules plus the "
                        "unrouted works add up to the pool.")
    """Why the identity across rules holds."""


@dataclass(frozen=True)
class RulePage:
    """The archived page of one rule in one release."""

    TEMPLATE: ClassVar[str] = "rule"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """The release as the page names it: its label (given name) with its short id, and its date (the full id is
    `name.release_id`)."""
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
    shadow_note: str = "A shadow rule wins nothing, so there is nothing to sample."
    """The samples section's line for a shadow rule."""
    domain_note: str = ("Matched here counts the works of the domain only; the counts above (and the rules table's "
                        "matched) count every work of the pool the rule matched.")
    """Why the domain's matched differs from the rule's matched."""
    no_outranked: str = "No rule of higher precedence won a work this rule matched."
    """The outranked section's line when no rule outranked this one."""
