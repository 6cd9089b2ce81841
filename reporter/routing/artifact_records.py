"""The records of release.json, rule_stats.json and labels.json (artifacts.py reads them; docs/release-format.md).

Each `from_doc` takes a file's JSON once artifact_checks.py has passed it, and
fills the defaults the format allows (a field an older engine did not write).
samples.json's records are in artifact_samples.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


def frozen(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of a JSON object, in its order (its values as they are)."""
    return MappingProxyType(dict(doc))


# --- release.json ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    """release.json: what the release was routed from, and the digest of every other file."""

    release_id: str
    """The 64-hex id: the sha256 of the canonical JSON of `inputs`."""
    inputs: Mapping[str, str]
    """The six input digests by name (artifact_checks.INPUT_NAMES); the overlay's is `none` without one."""
    engine_version: str
    """The engine that routed it (`0.1.0+routing.5`)."""
    rows: int
    """Pool rows routed."""
    normalisation: Mapping[str, Any]
    """The normalisation settings whose digest is inputs.normalisation, as written (empty when absent)."""
    generated_pool: str | None
    """The pool's `reporter.generated` marker (seeded example data, not real works), or None."""
    files: Mapping[str, str]
    """The sha256 of every other release file by name; empty for engines before routing.3."""
    schema_version: int = 1
    """The file's schema version."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Manifest:
        """The record of a checked release.json."""
        return cls(release_id=doc["release_id"], inputs=frozen({n: str(d) for n, d in doc["inputs"].items()}),
                   engine_version=str(doc["engine_version"]), rows=doc["rows"],
                   normalisation=frozen(doc.get("normalisation") or {}), generated_pool=doc.get("generated_pool"),
                   files=frozen(doc.get("files") or {}), schema_version=doc.get("schema_version", 1))


# --- rule_stats.json ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pile:
    """One entry of pile_order: a pile as piles.json declares it."""

    name: str
    """The pile's name."""
    kind: str
    """`discard`, `hold`, `screen` or `pending` (the one engine-owned pile)."""
    tier: str | None
    """A screening pile's tier (`cheap`, `expensive`), else None."""


@dataclass(frozen=True)
class PoolCounts:
    """rule_stats.json `pool`: what the pool held."""

    rows: int
    """Works in the pool."""
    with_title: int
    """Works with a non-blank title."""
    with_abstract: int
    """Works with a non-blank abstract."""
    utf8_replaced: int
    """Text values whose non-UTF-8 bytes were replaced."""


@dataclass(frozen=True)
class OverlayCounts:
    """rule_stats.json `overlay`: what the text overlay did."""

    rows: int
    """Overlay rows."""
    abstracts_filled: int
    """Abstracts the overlay filled."""
    titles_filled: int
    """Titles the overlay filled."""
    unknown_ids: int
    """Overlay rows for works the pool does not hold."""


@dataclass(frozen=True)
class OverlapMatrix:
    """rule_stats.json `overlap`: rows matched by both of two rules."""

    rules: tuple[str, ...]
    """Rule ids, in the matrix's order."""
    matrix: tuple[tuple[int, ...], ...]
    """[i][j]: rows both rules[i] and rules[j] matched (the diagonal is matched)."""


@dataclass(frozen=True)
class RuleRows:
    """Rows of a rule that another rule took: `{"rule", "rows"}`."""

    rule: str
    """The other rule's id."""
    rows: int
    """How many rows."""


@dataclass(frozen=True)
class RuleStat:
    """One rule of rule_stats.json: what it matched and what became of its matches."""

    id: str
    """The rule's id."""
    description: str
    """Its description ("" without one)."""
    file: str
    """The rule book file it is written in ("" when not recorded)."""
    pile: str
    """The pile it sends its wins to."""
    precedence: int
    """Higher decides first."""
    shadow: bool
    """A shadow rule is scored but never wins."""
    matched: int
    """Rows it matched; for a live rule matched = won + no_text + outranked."""
    won: int
    """Rows it won that went to its pile (0 for a shadow rule)."""
    no_text: int
    """Rows it won that were held back for lack of text (pending/no_text)."""
    outranked: int
    """Rows it matched that a rule of higher precedence won."""
    would_win: int | None
    """A shadow rule's rows it would win if promoted (None for a live rule)."""
    would_move: int | None
    """Of those, rows whose pile would change (None for a live rule)."""
    domain: Any
    """The rule's domain as its spec declares it (JSON), or None."""
    domain_rows: int | None
    """Rows in its domain (None without a domain)."""
    domain_matched: int | None
    """Rows in its domain it matched."""
    domain_miss: int | None
    """Rows in its domain it missed that reached a paying pile."""
    domain_miss_winners: tuple[RuleRows, ...]
    """The rules that won those misses, most rows first."""
    outranked_by: tuple[RuleRows, ...]
    """The rules that outranked it, most rows first."""
    spec: Mapping[str, Any]
    """The rule as parsed (JSON)."""
    spec_text: str
    """The rule as JSON in its file's key order (releases before spec_text: the parsed spec, indented)."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> RuleStat:
        """The record of one checked rule."""
        return cls(id=doc["id"], description=doc.get("description") or "", file=doc.get("file") or "",
                   pile=doc["pile"], precedence=doc["precedence"], shadow=doc["shadow"], matched=doc["matched"],
                   won=doc["won"], no_text=doc["no_text"], outranked=doc["outranked"], would_win=doc["would_win"],
                   would_move=doc["would_move"], domain=doc["domain"], domain_rows=doc["domain_rows"],
                   domain_matched=doc["domain_matched"], domain_miss=doc["domain_miss"],
                   domain_miss_winners=_rule_rows(doc["domain_miss_winners"]),
                   outranked_by=_rule_rows(doc["outranked_by"]), spec=doc["spec"],
                   spec_text=doc.get("spec_text") or json.dumps(doc["spec"], indent=2, ensure_ascii=False))


@dataclass(frozen=True)
class RuleStats:
    """rule_stats.json: every count the release page shows, checked (artifact_checks.check_stats)."""

    release_id: str
    """The release's id."""
    rows: int
    """Works routed."""
    identity_holds: bool
    """Every live rule's matched = won + no_text + outranked (always true once read)."""
    piles: Mapping[str, int]
    """Works per pile, pending included, in piles.json order."""
    pile_order: tuple[Pile, ...]
    """Every pile as piles.json declares it, in its order."""
    pending: Mapping[str, int]
    """Works per pending reason (`unrouted`, `no_text`)."""
    title_only: int
    """Works screened on their title alone."""
    pool: PoolCounts
    """What the pool held."""
    overlay: OverlayCounts | None
    """What the overlay did, or None without one."""
    title_only_sources: tuple[str, ...]
    """Sources whose works are screened on the title alone."""
    sources: Mapping[str, int] | None
    """Works per source, by name (engines from routing.4), else None."""
    rules: tuple[RuleStat, ...]
    """Every rule, shadow rules included, highest precedence first."""
    overlap: OverlapMatrix
    """Rows matched by both of two rules."""
    schema_version: int = 1
    """The file's schema version."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> RuleStats:
        """The record of a checked rule_stats.json."""
        pool, overlay = doc["pool"], doc["overlay"]
        return cls(
            release_id=doc["release_id"], rows=doc["rows"], identity_holds=doc["identity_holds"],
            piles=frozen(doc["piles"]),
            pile_order=tuple(Pile(p["name"], p["kind"], p.get("tier")) for p in doc["pile_order"]),
            pending=frozen(doc["pending"]), title_only=doc["title_only"],
            pool=PoolCounts(pool.get("rows", doc["rows"]), pool.get("with_title", 0), pool.get("with_abstract", 0),
                            pool.get("utf8_replaced", 0)),
            overlay=None if overlay is None else OverlayCounts(
                overlay.get("rows", 0), overlay.get("abstracts_filled", 0), overlay.get("titles_filled", 0),
                overlay.get("unknown_ids", 0)),
            title_only_sources=tuple(doc.get("title_only_sources") or ()),
            sources=frozen(doc["sources"]) if doc.get("sources") is not None else None,
            rules=tuple(RuleStat.from_doc(r) for r in doc["rules"]),
            overlap=OverlapMatrix(tuple(doc["overlap"]["rules"]),
                                  tuple(tuple(row) for row in doc["overlap"]["matrix"])),
            schema_version=doc.get("schema_version", 1))

    def live(self) -> tuple[RuleStat, ...]:
        """The rules that can win (not shadow), in precedence order."""
        return tuple(r for r in self.rules if not r.shadow)

    def rule_ids(self) -> set[str]:
        """The ids of every rule of the release (shadow rules included)."""
        return {r.id for r in self.rules}


def _rule_rows(items: list[Mapping[str, Any]]) -> tuple[RuleRows, ...]:
    return tuple(RuleRows(item["rule"], item["rows"]) for item in items)


# --- labels.json -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelRule:
    """What the review labels say of one rule."""

    id: str
    """The rule's id."""
    pile: str
    """Its pile."""
    shadow: bool
    """A shadow rule."""
    includes_matched: int
    """Labelled includes it matched."""
    includes_won: int
    """Labelled includes it won."""
    includes_to_discard: int
    """Labelled includes it sent to discard."""
    includes_to_hold: int
    """Labelled includes it set aside (hold)."""
    won_labelled: int
    """Labelled works it won in a judged pile (screen or discard)."""
    won_correct: int
    """Of those, the ones the labels agree with."""
    precision: float | None
    """won_correct / won_labelled, or None without labelled wins."""
    wilson_low: float | None
    """The Wilson 95% interval's low end, or None."""
    wilson_high: float | None
    """Its high end, or None."""
    flagged: bool
    """It sent a labelled include to discard."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> LabelRule:
        """The record of one rule of labels.json."""
        return cls(id=doc["id"], pile=doc["pile"], shadow=bool(doc.get("shadow")),
                   includes_matched=doc.get("includes_matched", 0), includes_won=doc.get("includes_won", 0),
                   includes_to_discard=doc.get("includes_to_discard", 0),
                   includes_to_hold=doc.get("includes_to_hold", 0), won_labelled=doc.get("won_labelled", 0),
                   won_correct=doc.get("won_correct", 0), precision=doc.get("precision"),
                   wilson_low=doc.get("wilson_low"), wilson_high=doc.get("wilson_high"),
                   flagged=bool(doc.get("flagged")))


@dataclass(frozen=True)
class LostInclude:
    """A labelled include that went to discard."""

    work_id: str
    """The work's id."""
    rule: str | None
    """The rule that discarded it."""


@dataclass(frozen=True)
class LostIncludes:
    """labels.json `lost_includes`: every labelled include in discard."""

    count: int
    """How many there are."""
    works: tuple[LostInclude, ...]
    """The first 1,000 of them, by work id."""


@dataclass(frozen=True)
class LabelFindings:
    """labels.json: how each rule treats the review labels' known includes (not a release input)."""

    labels_digest: str | None
    """The sha256 of the labels file (None: an empty file; "" when not recorded)."""
    labels: int
    """Labels in the file."""
    labels_in_pool: int
    """Labelled works in the pool."""
    includes_in_pool: int
    """Labelled includes in the pool."""
    rules: tuple[LabelRule, ...]
    """Per rule, in precedence order."""
    lost_includes: LostIncludes
    """Labelled includes in discard."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> LabelFindings:
        """The record of a checked labels.json (or of routing.labels.label_stats_for's findings, before writing)."""
        lost = doc["lost_includes"]
        return cls(labels_digest=doc.get("labels_digest", ""), labels=doc.get("labels", 0),
                   labels_in_pool=doc.get("labels_in_pool", 0), includes_in_pool=doc.get("includes_in_pool", 0),
                   rules=tuple(LabelRule.from_doc(r) for r in doc["rules"]),
                   lost_includes=LostIncludes(lost["count"], tuple(LostInclude(w["work_id"], w["rule"])
                                                                   for w in lost["works"])))
