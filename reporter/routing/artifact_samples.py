"""The records of samples.json: the works a release's pages show one by one (artifacts.py reads them).

Each `from_doc` takes the file's JSON once artifact_checks.py has passed it; a
field an engine before routing.5 did not write (`contexts`) reads as empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .artifact_records import frozen


@dataclass(frozen=True)
class Evidence:
    """The span of the winner's evidence, as routing.parquet holds it (its text cut to 160 characters)."""

    field: str
    """`title` or `abstract`."""
    start: int
    """Character offset into the normalised field."""
    end: int
    """End offset (exclusive)."""
    text: str | None
    """The matched text."""


@dataclass(frozen=True)
class Context:
    """One evidence span in its context: a window of the normalised field."""

    field: str
    """`title` or `abstract`."""
    before: str
    """Up to context_chars characters before the match."""
    match: str
    """The match (its first 160 characters when `match_cut`)."""
    after: str
    """Up to context_chars characters after it (empty when `match_cut`)."""
    match_cut: bool
    """The match was longer than routing keeps."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Context:
        """The record of one context window."""
        return cls(doc["field"], doc["before"], doc["match"], doc["after"], bool(doc.get("match_cut")))


@dataclass(frozen=True)
class SampleWork:
    """One sampled work: its ids, title, fate and evidence in context."""

    work_id: str
    """The work's id."""
    source: str | None
    """Its source (`arxiv`, `pubmed`), or None."""
    title: str | None
    """Its title as in the pool after the overlay, or None."""
    pile: str
    """The pile it went to."""
    pending_reason: str | None
    """Why it is pending (`unrouted`, `no_text`), or None."""
    winner: str | None
    """The rule that won it, or None."""
    title_only: bool
    """Screened on its title alone."""
    evidence: Evidence | None
    """The winner's evidence span, or None."""
    context: Context | None
    """The evidence span in its context, or None."""
    contexts: tuple[Context, ...]
    """A window per span of the winner's text conditions, `context` first (empty before engine routing.5)."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> SampleWork:
        """The record of one sampled work."""
        title, evidence, context = doc.get("title"), doc.get("evidence"), doc.get("context")
        return cls(work_id=doc["work_id"], source=doc.get("source"), title=title if isinstance(title, str) else None,
                   pile=doc["pile"], pending_reason=doc.get("pending_reason"), winner=doc.get("winner"),
                   title_only=bool(doc.get("title_only")),
                   evidence=None if evidence is None else Evidence(evidence["field"], evidence["start"],
                                                                   evidence["end"], evidence.get("text")),
                   context=Context.from_doc(context) if context else None,
                   contexts=tuple(Context.from_doc(c) for c in doc.get("contexts") or ()))

    def windows(self) -> tuple[Context, ...]:
        """Every matched span in context: `contexts` when samples.json has them, else the one `context`."""
        return self.contexts or ((self.context,) if self.context is not None else ())


@dataclass(frozen=True)
class RuleSamples:
    """A rule's samples: works it won, and works of its domain it missed."""

    wins: tuple[SampleWork, ...]
    """Works the rule won (a live rule)."""
    domain_misses: tuple[SampleWork, ...]
    """Works of its domain it missed that reached a paying pile."""


@dataclass(frozen=True)
class Samples:
    """samples.json: seeded samples drawn while routing."""

    seed: int
    """The sample seed."""
    k: int
    """Works sampled per pile at most."""
    rule_k: int | None
    """Works sampled per rule list at most (None when not recorded)."""
    context_chars: int
    """Characters of the field kept either side of a match."""
    piles: Mapping[str, tuple[SampleWork, ...]]
    """Sampled works per pile."""
    rules: Mapping[str, RuleSamples]
    """Sampled works per rule id."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any], context_chars: int) -> Samples:
        """The record of a checked samples.json, with its context window (artifact_checks.context_chars)."""
        def works(items: list[Mapping[str, Any]]) -> tuple[SampleWork, ...]:
            return tuple(SampleWork.from_doc(w) for w in items)
        return cls(seed=doc["seed"], k=doc["k"], rule_k=doc.get("rule_k"), context_chars=context_chars,
                   piles=frozen({pile: works(items) for pile, items in doc["piles"].items()}),
                   rules=frozen({rule: RuleSamples(works(lists.get("wins", [])), works(lists.get("domain_misses", [])))
                                 for rule, lists in doc["rules"].items()}))

    def works(self) -> tuple[SampleWork, ...]:
        """Every sampled work, pile samples first, then each rule's wins and domain misses (a work may repeat)."""
        out = [w for works in self.piles.values() for w in works]
        for lists in self.rules.values():
            out += [*lists.wins, *lists.domain_misses]
        return tuple(out)
