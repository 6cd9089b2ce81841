"""The routing engine: one record batch in, its routing rows and partial counts out.

Per batch (the rule book compiled for the pool's schema, plan.py, in
hand): normalise title and abstract once, scan each with one
Aho-Corasick pass for every literal of the book, evaluate every rule's
`match` and `domain` as numpy boolean vectors (regexes only on rows where
they can still change the predicate's value), pick winners by marking
rules in reverse precedence, apply the no_text policy, and count (the
count table and the counting are in stats.py). Counts are sums over
batches, so batches may run in any number of workers. FieldText (the
normalised field and its boundary-checked literal hits) is also what
`match_phrases` (phrases.py) runs on, so the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .evidence import FIELDS, find_evidence, spans_text
from .fieldtext import FieldText
from .plan import Plan
from .predicates import All, Always, AnyOf, ColumnIn, Empty, Not, Phrase, Predicate, Regex
from .routing_table import EVIDENCE_TYPE, ROUTING_SCHEMA
from .samples import batch_samples, id_hashes
from .stats import REASONS, Decisions, count_batch


def _cost(pred: Predicate) -> int:
    if isinstance(pred, Regex):
        return 10
    if isinstance(pred, Phrase):
        return 1
    if isinstance(pred, (All, AnyOf)):
        return max(_cost(c) for c in pred.children)
    if isinstance(pred, Not):
        return _cost(pred.child)
    return 0


class Evaluator:
    """Evaluates predicates on one batch; leaf results are cached per batch."""

    def __init__(self, plan: Plan, batch: pa.RecordBatch, fields: dict[str, FieldText]):
        self.plan, self.batch, self.fields = plan, batch, fields
        self.n = batch.num_rows
        self.cache: dict[object, np.ndarray] = {}

    def eval(self, pred: Predicate, care: np.ndarray | None = None) -> np.ndarray:
        """Boolean vector, exact on the rows in `care` (all rows when None)."""
        if isinstance(pred, All):
            acc = np.ones(self.n, dtype=bool)
            for child in sorted(pred.children, key=_cost):
                sub = acc if care is None else (acc & care)
                if not sub.any():
                    return np.zeros(self.n, dtype=bool)
                acc &= self.eval(child, sub)
            return acc
        if isinstance(pred, AnyOf):
            acc = np.zeros(self.n, dtype=bool)
            for child in sorted(pred.children, key=_cost):
                sub = ~acc if care is None else (care & ~acc)
                if not sub.any():
                    break
                acc |= self.eval(child, sub)
            return acc
        if isinstance(pred, Not):
            return ~self.eval(pred.child, care)
        if isinstance(pred, Regex):
            return self._regex(pred, care)
        key = pred
        if key not in self.cache:
            self.cache[key] = self._leaf(pred)
        return self.cache[key]

    def _fields(self, name: str) -> list[FieldText]:
        return [self.fields[f] for f in FIELDS] if name == "text" else [self.fields[name]]

    def _leaf(self, pred: Predicate) -> np.ndarray:
        if isinstance(pred, Always):
            return np.ones(self.n, dtype=bool)
        if isinstance(pred, Empty):
            out = np.ones(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                out &= ft.blank
            return out
        if isinstance(pred, ColumnIn):
            col = self.batch.column(pred.column)
            vs = self.plan.value_sets[(pred.column, pred.values)]
            return pc.fill_null(pc.is_in(col, value_set=vs), False).to_numpy(zero_copy_only=False)
        if isinstance(pred, Phrase):
            out = np.zeros(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                for lit, prefix in pred.phrases:
                    idx = ft.good_hits(self.plan.lit_index[lit], prefix)
                    out[ft.hits.row[idx]] = True
            return out
        raise TypeError(pred)

    def _regex_any(self, name: str, pattern: str) -> np.ndarray:
        """Rows of a field where some regex without a literal matches (one pass, cached per batch)."""
        key = ("regex_any", name)
        if key not in self.cache:
            self.cache[key] = self.fields[name].regex_rows(pattern, False)
        return self.cache[key]

    def _regex(self, pred: Regex, care: np.ndarray | None) -> np.ndarray:
        key = ("regex", pred)
        if key in self.cache:
            return self.cache[key]
        out = np.zeros(self.n, dtype=bool)
        lits = self.plan.regex_literals.get(pred)
        if lits is not None:
            seen = np.zeros(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                for lit in lits:
                    seen[ft.hits.row[ft.hit_index(self.plan.lit_index[lit])]] = True
            care = seen if care is None else (care & seen)
            key = None  # the result is exact only where the literal occurs: never cache it
        rows = None if care is None or care.mean() > 0.5 else np.flatnonzero(care)
        for name in (FIELDS if pred.field == "text" else (pred.field,)):
            ft = self.fields[name]
            if pred in self.plan.regex_wide:
                # Every match holds a non-ASCII character, and a plain-ASCII row stays so when normalised.
                wide = ~ft.ascii if rows is None else (care & ~ft.ascii)  # exact on every row when cached
                out |= ft.regex_rows(pred.pattern, not pred.case_sensitive, np.flatnonzero(wide), keep_spans=True)
                continue
            pattern, group = self.plan.regex_any[name]
            if lits is not None or rows is not None or pattern is None:
                out |= ft.regex_rows(pred.pattern, not pred.case_sensitive, rows, keep_spans=True)
                continue
            # A regex without a literal would read every row: read them once for all such regexes of the
            # field, then each only where the combination matched.
            maybe = self._regex_any(name, pattern)
            out |= maybe if len(group) == 1 else ft.regex_rows(pred.pattern, not pred.case_sensitive,
                                                               np.flatnonzero(maybe), keep_spans=True)
        if rows is None and key is not None:
            self.cache[key] = out
        return out


@dataclass
class BatchResult:
    """The routing rows of one batch and its partial counts."""

    table: pa.Table
    """The routing rows, in batch order."""
    counts: dict[str, np.ndarray]
    """Partial counts, summed over batches by the caller."""
    samples: dict[str, list[tuple[float, str, int, dict]]] = field(default_factory=dict)
    """Per sample group: (key, work_id, row, payload) candidates."""
    id_hashes: np.ndarray | None = None
    """The batch's work_id hashes (samples.id_hashes with the sample seed): the duplicate check's input."""


def route_batch(plan: Plan, batch: pa.RecordBatch, sample_seed: int = 0,
                sample_k: int = 20, rule_sample_k: int = 10,
                high: dict[str, np.ndarray] | None = None,
                bounds: dict[str, float] | None = None) -> BatchResult:
    """Route one record batch: every rule on every row, one pile per row, partial counts.

    `high`: per text field, where the reader found its high bytes (`FieldBuffer.high_bytes` of the
    batch's own column), so that they are not looked for twice. `bounds`: per sample group, a key
    above which no row can be sampled any more (`batch_samples`).
    """
    n = batch.num_rows
    high = high or {}
    fields = {f: FieldText(batch.column(f), plan.scanners[f], high.get(f)) for f in FIELDS}
    M, D, has_domain = _evaluate_rules(plan, Evaluator(plan, batch, fields), n)
    winner = _winners(plan, M)
    policy = NoTextPolicy(plan, batch, fields)
    won_any = winner >= 0
    pile, downgraded, title_only = policy.final_pile(winner, won_any)
    reason = np.where(~won_any, 1, np.where(downgraded, 2, 0))
    counts, miss_masks = count_batch(plan, Decisions(
        matched=M, domain=D, has_domain=has_domain, winner=winner, pile=pile, reason=reason,
        downgraded=downgraded, title_only=title_only, has_title=policy.has_title,
        has_abstract=policy.has_abstract, final_pile=lambda j, rows: policy.final_pile(np.full(n, j), rows)[0]))

    evidence = find_evidence(plan, fields, winner, n)
    table = _routing_table(plan, fields, batch.column("work_id"), pile, reason, winner, M, evidence, title_only)
    hashes = id_hashes(batch.column("work_id"), sample_seed)
    samples = batch_samples(plan, batch, fields, table, evidence, sample_seed, sample_k, rule_sample_k,
                            pile, winner, downgraded, miss_masks, hashes, bounds)
    return BatchResult(table=table, counts=counts, samples=samples, id_hashes=hashes)


def _evaluate_rules(plan: Plan, ev: Evaluator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, R) matrices of every rule's match and domain, and which rules have a domain."""
    R = len(plan.rule_ids)
    # Column-major: every step after this reads one rule's column at a time.
    M = np.zeros((n, R), dtype=bool, order="F")
    D = np.zeros((n, R), dtype=bool, order="F")
    has_domain = np.zeros(R, dtype=bool)
    for j, rule in enumerate(plan.book.rules):
        M[:, j] = ev.eval(rule.match)
        if rule.domain is not None:
            has_domain[j] = True
            D[:, j] = ev.eval(rule.domain)
    return M, D, has_domain


def _winners(plan: Plan, M: np.ndarray) -> np.ndarray:
    """Per row: the highest-precedence non-shadow rule that matched, -1 for none."""
    # Rules are sorted highest first, so marking from the lowest up leaves the highest.
    winner = np.full(len(M), -1, dtype=np.int64)
    for j in np.flatnonzero(~plan.shadow)[::-1]:
        winner[M[:, j]] = j
    return winner


class NoTextPolicy:
    """Where a win sends a row: the rule's pile, unless a paying pile would screen it without text."""

    def __init__(self, plan: Plan, batch: pa.RecordBatch, fields: dict[str, FieldText]):
        self.plan = plan
        self.has_abstract = ~fields["abstract"].blank
        self.has_title = ~fields["title"].blank
        title_only_src = pc.fill_null(pc.is_in(batch.column("source"), value_set=plan.title_only_sources),
                                      False).to_numpy(zero_copy_only=False)
        self.exempt = title_only_src & self.has_title

    def final_pile(self, rule_idx: np.ndarray, matched: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pile index, downgraded, title_only) for rows won by rule_idx where matched (elsewhere: pending)."""
        plan = self.plan
        pile = np.full(len(matched), plan.pending_index, dtype=np.int64)
        pile[matched] = plan.rule_pile[rule_idx[matched]]  # no rule is indexed where none matched (a book may be empty)
        paying_win = matched & plan.paying[pile]
        no_text = paying_win & ~self.has_abstract
        downgraded = no_text & ~self.exempt
        pile = np.where(downgraded, plan.pending_index, pile)
        return pile, downgraded, no_text & self.exempt


def _routing_table(plan, fields, work_id, pile, reason, winner, M, evidence, title_only) -> pa.Table:
    n = len(pile)
    pile_arr = pa.array(plan.pile_names, pa.string()).take(pa.array(pile))
    reason_arr = pa.array(list(REASONS), pa.string()).take(pa.array(reason))
    ids_with_null = pa.array(list(plan.rule_ids) + [None], pa.string())
    winner_arr = ids_with_null.take(pa.array(np.where(winner < 0, len(plan.rule_ids), winner)))
    live = np.flatnonzero(~plan.shadow)
    shadow = np.flatnonzero(plan.shadow)

    def lists(cols: np.ndarray) -> pa.Array:
        sub = M[:, cols]
        # Only the rows some rule matched, in row order (most rows have none): a fifth of the time.
        hit = np.flatnonzero(sub.any(axis=1))
        part = sub[hit]
        _, which = np.nonzero(part)
        per_row = np.zeros(n, dtype=np.int64)
        per_row[hit] = part.sum(axis=1)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(per_row, out=offsets[1:])
        values = pa.array([plan.rule_ids[c] for c in cols], pa.string()).take(pa.array(which)) \
            if len(cols) else pa.array([], pa.string())
        return pa.ListArray.from_arrays(pa.array(offsets), values)

    ev = evidence
    span_rows = np.repeat(np.arange(n), np.diff(ev.offsets))
    spans = _spans(fields, ev.field, span_rows, ev.start, ev.end)
    evidence_arr = spans.take(pa.array(ev.best, mask=ev.best < 0))
    evidence_all = pa.ListArray.from_arrays(pa.array(ev.offsets.astype(np.int32)), spans)
    return pa.Table.from_arrays(
        [work_id, pile_arr, reason_arr, winner_arr, lists(live), lists(shadow), evidence_arr,
         pa.array(title_only), evidence_all], schema=ROUTING_SCHEMA)


def _spans(fields: dict, field: np.ndarray, rows: np.ndarray, start: np.ndarray, end: np.ndarray) -> pa.StructArray:
    """Evidence structs {field, start, end, text} of the given spans (field index, row, character offsets)."""
    return pa.StructArray.from_arrays(
        [pa.array(list(FIELDS), pa.string()).take(pa.array(field, pa.int64())), pa.array(start.astype(np.int32)),
         pa.array(end.astype(np.int32)), spans_text(fields, field, rows, start, end)], fields=list(EVIDENCE_TYPE))
