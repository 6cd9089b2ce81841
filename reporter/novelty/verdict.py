"""The verdict: rules 1-4 of novelty.md, in order, first that applies wins.

1. exact key match (papers) / normalised statement match (claims): duplicate
2. a shared read or claim-bearing reference (holdout slice when a holdout is
   given, else in-sample): neighborhood
3. a read or claim-bearing node of the graph not covered: insufficient_edges
4. otherwise: novel (against the graph as read)

A needed lookup that failed (live, or stored against the candidate itself)
turns anything short of a duplicate into lookup_failed / unknown. The result
is a verdict with its evidence, never a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .candidate import Candidate
from .graph import Graph, normalize_statement
from .keys import key_aliases, parse_lookup
from .resolvers import Lookup, Resolver

STATUSES = ("ok", "lookup_failed", "incomparable", "insufficient_edges")
VERDICTS = ("duplicate", "neighborhood", "novel", "unknown")


@dataclass(frozen=True)
class NoveltyResult:
    """The output object of novelty.md, field for field."""

    status: str
    """`ok`, `lookup_failed` or `insufficient_edges` (`incomparable` is reserved)."""
    lom_id: str
    """The candidate's lom_id; the matched paper's when rule 1 matched a paper."""
    verdict: str
    """`duplicate`, `neighborhood`, `novel` or `unknown`."""
    matched_lom_id: str | None
    """Rule 1's match: the paper's lom_id, or for a claim the matched claim's about_lom_id."""
    shared: tuple[str, ...]
    """In-sample shared nodes: references that are read or claim-bearing, sorted."""
    holdout_shared: tuple[str, ...]
    """The shared nodes outside holdout_lom_ids, sorted."""
    coverage_gap: tuple[str, ...]
    """Uncovered read or claim-bearing nodes; empty unless rule 3 decided."""
    ingest_errors_blocking: tuple[Mapping[str, Any], ...]
    """Failed lookups (live or stored) that the verdict needed, sorted."""
    holdout_applied: bool
    """True when holdout_lom_ids was given."""

    def to_json(self) -> dict[str, Any]:
        """The output object exactly as novelty.md shows it."""
        return {
            "status": self.status,
            "lom_id": self.lom_id,
            "verdict": self.verdict,
            "exact_key_match": {"hit": self.matched_lom_id is not None,
                                "matched_lom_id": self.matched_lom_id},
            "citation_overlap": {
                "in_sample": {"n_shared": len(self.shared), "shared_lom_ids": list(self.shared)},
                "holdout": {"n_shared": len(self.holdout_shared),
                            "shared_lom_ids": list(self.holdout_shared)}},
            "coverage_gap": list(self.coverage_gap),
            "ingest_errors_blocking": [dict(e) for e in self.ingest_errors_blocking],
            "embedding": {"used": False},
            "holdout_applied": self.holdout_applied,
            "not_a_ranker": True,
        }


def match_paper(keys: Mapping[str, str], graph: Graph) -> str | None:
    """Rule 1 for papers: the ingested paper whose lom_id or a key equals one of these keys."""
    for alias in key_aliases(dict(keys)):  # doi, arxiv, openalex, s2: the lom_id's scheme comes first
        hit = graph.aliases.get(alias)
        if hit is not None:
            return hit
    return None


def match_claim(statement: str, graph: Graph) -> str | None:
    """Rule 1 for claims: the about_lom_id of the first ingested claim with the same normalised statement."""
    claims = graph.claims_by_statement.get(normalize_statement(statement))
    return claims[0].about_lom_id if claims else None


def lookup_matters(resolver: Resolver, known: Mapping[str, str], wanted: frozenset[str],
                   resolvers: Sequence[Resolver]) -> bool:
    """True when the resolver can supply a wanted key, or a key that lets another resolver ask for one."""
    if resolver.provides & wanted:
        return True
    unlocked = {**{s: "?" for s in resolver.provides}, **known}
    return any(other is not resolver and other.provides & wanted and other.query_for(known) is None
               and other.query_for(unlocked) is not None for other in resolvers)


def resolve_keys(keys: Mapping[str, str], graph: Graph, resolvers: Sequence[Resolver]
                 ) -> tuple[str | None, dict[str, str], list[Lookup]]:
    """Ask the resolvers for missing keys the graph could match on, until a match or nothing new.

    Returns (the matched lom_id or None, the keys known after the lookups,
    the failed lookups that still matter: their service could have supplied
    a key the graph matches on, directly or by unlocking the other service).
    """
    known = dict(keys)
    failures: list[tuple[Resolver, Lookup]] = []
    asked: set[tuple[str, str]] = set()
    progress = True
    while progress:
        progress = False
        for resolver in resolvers:
            wanted = graph.key_schemes - known.keys()
            if not lookup_matters(resolver, known, wanted, resolvers):
                continue
            query = resolver.query_for(known)
            if query is None or (resolver.scheme, query) in asked:
                continue
            asked.add((resolver.scheme, query))
            outcome = resolver.lookup(query)
            if not outcome.failed and any(known.get(s, v) != v for s, v in outcome.found.items()):
                # The answer contradicts a key we hold: trust neither, fill nothing.
                outcome = Lookup(outcome.scheme, outcome.lookup, outcome.http_status, error="conflict")
            if outcome.failed:
                failures.append((resolver, outcome))
                continue
            new = {s: v for s, v in outcome.found.items() if s not in known}
            if new:
                known.update(new)
                progress = True
                hit = match_paper(known, graph)
                if hit is not None:
                    return hit, known, []
    wanted = graph.key_schemes - known.keys()
    return None, known, [lookup for resolver, lookup in failures
                         if lookup_matters(resolver, known, wanted, resolvers)]


def stored_errors_on(node_ids: set[str], graph: Graph) -> list[dict[str, Any]]:
    """Stored ingest errors about the candidate itself (by lom_id or by the id looked up)."""
    out = []
    for error in graph.ingest_errors:
        named = parse_lookup(error.lookup) if error.lookup else None
        if error.lom_id in node_ids or (named is not None and graph.canonical(named) in node_ids):
            out.append(error.entry())
    return out


def _sort_entries(entries: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    unique = {(e["scheme"], e["lookup"] or "", -1 if e["http_status"] is None else e["http_status"]): e
              for e in entries}
    return tuple(unique[k] for k in sorted(unique))


def check_candidate(candidate: Candidate, graph: Graph,
                    resolvers: Sequence[Resolver] = ()) -> NoveltyResult:
    """Apply rules 1-4 of novelty.md to one candidate against one graph."""
    keys = candidate.key_map()
    blocking: list[dict[str, Any]] = []
    if candidate.kind == "claim":
        # Rule 1 for a claim compares statements only: no key lookup can change it.
        matched = match_claim(candidate.statement or "", graph)
        lom_id = candidate.lom_id
    else:
        matched = match_paper(keys, graph)
        if matched is None and resolvers:
            matched, keys, failed = resolve_keys(keys, graph, resolvers)
            blocking.extend(lookup.entry() for lookup in failed)
        lom_id = matched or candidate.lom_id

    node_ids = {graph.canonical(a) for a in [lom_id, candidate.lom_id, *key_aliases(keys)]}
    if candidate.kind == "paper" and matched is None:
        blocking.extend(stored_errors_on(node_ids, graph))

    # Rule 2: the candidate's references (given, and edges from its node) that are read or claim-bearing.
    refs = {graph.canonical(r) for r in candidate.references}
    for node in node_ids:
        refs.update(graph.out_edges.get(node, ()))
    refs -= node_ids
    shared = tuple(sorted(r for r in refs if graph.is_read(r) or r in graph.claim_bearing))
    holdout_ids = {graph.canonical(h) for h in candidate.holdout_lom_ids or ()}
    holdout_shared = tuple(r for r in shared if r not in holdout_ids)
    applied = candidate.holdout_lom_ids is not None
    deciding = holdout_shared if applied else shared

    gap: tuple[str, ...] = ()
    if matched is not None:
        status, verdict = "ok", "duplicate"
        blocking = []
    elif blocking:
        status, verdict = "lookup_failed", "unknown"
    elif deciding:
        status, verdict = "ok", "neighborhood"
    elif graph.coverage_gap:
        status, verdict, gap = "insufficient_edges", "unknown", graph.coverage_gap
    else:
        status, verdict = "ok", "novel"
    return NoveltyResult(status=status, lom_id=lom_id, verdict=verdict,
                         matched_lom_id=matched,
                         shared=shared, holdout_shared=holdout_shared, coverage_gap=gap,
                         ingest_errors_blocking=_sort_entries(blocking), holdout_applied=applied)
