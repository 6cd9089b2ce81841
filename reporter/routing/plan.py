"""A rule book compiled against a pool schema: the Plan every worker shares read-only.

Compiling checks each `in` leaf's values against its column's type, gathers every literal of the book (phrases,
regexes' required literals) into one index and one multi-pattern scanner per text field, and sorts the regexes
by how they may be run (behind a literal, together in one combined pattern, or only on rows with a non-ASCII
character). The engine (engine.py) routes record batches with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .evidence import FIELDS
from .predicates import All, AnyOf, ColumnIn, Not, Phrase, Predicate, Regex
from .regexlit import any_pattern, needs_non_ascii, required_literals
from .specs import RuleBook
from .textscan import Scanner


@dataclass(frozen=True)
class Plan:
    """A rule book compiled against a pool schema, shared read-only by the workers."""

    book: RuleBook
    """The rule book, rules highest precedence first."""
    lit_index: dict[str, int]
    """Every distinct lower-cased literal (phrases, regexes' required literals) and its index in hits."""
    scanners: dict[str, Scanner]
    """Per text field, one multi-pattern automaton over the literals of the predicates that read the field."""
    value_sets: dict[tuple[str, tuple], pa.Array]
    """Per (column, values) leaf: the value set cast to the column's type."""
    columns: tuple[str, ...]
    """Pool columns read per batch."""
    rule_ids: tuple[str, ...]
    """Rule ids, highest precedence first (the column order of every matrix)."""
    shadow: np.ndarray
    """Per rule: shadow."""
    rule_pile: np.ndarray
    """Pile index of each rule."""
    pile_names: tuple[str, ...]
    """Piles in piles.json order."""
    paying: np.ndarray
    """Per pile: kind screen."""
    pending_index: int
    """Index of the pending pile."""
    title_only_sources: pa.Array
    """Sources screened on their title when they have no abstract."""
    positive_text: tuple[tuple, ...]
    """Per rule: its text leaves not under a `not` (for evidence)."""
    regex_literals: dict
    """Per regex leaf: literals one of which every match contains (the regex runs only where one occurs)."""
    regex_any: dict[str, tuple[str | None, tuple[Regex, ...]]]
    """Per text field: the regexes without a literal that read it, and one pattern matching where any does."""
    regex_wide: frozenset
    """Regex leaves every match of which holds a non-ASCII character: they run only on rows that hold one."""


def compile_plan(book: RuleBook, schema: pa.Schema, engine: str | None = None) -> Plan:
    """Compile a rule book for a pool schema (column types checked here); `engine` scans the literals (None:
    this process's default_engine)."""
    literals: dict[str, int] = {}
    lit_fields: dict[str, set[str]] = {}
    value_sets: dict[tuple[str, tuple], pa.Array] = {}
    regex_literals: dict[Regex, tuple[str, ...]] = {}

    def add(lit: str, field: str) -> None:
        literals.setdefault(lit, len(literals))
        lit_fields.setdefault(lit, set()).update(FIELDS if field == "text" else (field,))

    def walk(pred: Predicate, rule_id: str, file: str) -> None:
        if isinstance(pred, Phrase):
            for lit, _ in pred.phrases:
                add(lit, pred.field)
        elif isinstance(pred, Regex):
            lits = required_literals(pred.pattern)
            if lits:
                for lit in lits:
                    add(lit, pred.field)
                regex_literals[pred] = lits
        elif isinstance(pred, ColumnIn):
            ftype = schema.field(pred.column).type
            if pa.types.is_list(ftype) or pa.types.is_large_list(ftype) or pa.types.is_struct(ftype):
                raise InputError(f"{file}: rule {rule_id!r}: column {pred.column!r} has type {ftype}; "
                                 "`in` tests columns of single values")
            try:
                vs = pa.array(list(pred.values)).cast(ftype if not pa.types.is_dictionary(ftype) else ftype.value_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise InputError(f"{file}: rule {rule_id!r}: the values {list(pred.values)!r} cannot be "
                                 f"compared with column {pred.column!r} of type {ftype}") from None
            value_sets[(pred.column, pred.values)] = vs
        elif isinstance(pred, (All, AnyOf)):
            for c in pred.children:
                walk(c, rule_id, file)
        elif isinstance(pred, Not):
            walk(pred.child, rule_id, file)

    for rule in book.rules:
        walk(rule.match, rule.id, rule.file)
        if rule.domain is not None:
            walk(rule.domain, rule.id, rule.file)
    wide = frozenset(r for r in _regex_leaves(book) if r not in regex_literals and needs_non_ascii(r.pattern))
    pile_names = tuple(p.name for p in book.piles)
    lit_list = list(literals)
    scanners = {}
    for name in FIELDS:
        mine = [lit for lit in lit_list if name in lit_fields[lit]]
        scanners[name] = Scanner(mine, engine, ids=[literals[lit] for lit in mine], n=len(lit_list))
    columns = ["work_id", "source", "title", "abstract"]
    for c in sorted(book.columns()):
        if c not in columns:
            columns.append(c)
    return Plan(
        book=book, lit_index=dict(literals), scanners=scanners,
        value_sets=value_sets, columns=tuple(columns),
        rule_ids=tuple(r.id for r in book.rules),
        shadow=np.array([r.shadow for r in book.rules], dtype=bool),
        rule_pile=np.array([pile_names.index(r.pile) for r in book.rules], dtype=np.int64),
        pile_names=pile_names,
        paying=np.array([p.paying for p in book.piles], dtype=bool),
        pending_index=pile_names.index(book.pending.name),
        title_only_sources=pa.array(list(book.title_only_sources), pa.string()),
        positive_text=tuple(tuple(_positive_text(r.match)) for r in book.rules),
        regex_literals=regex_literals,
        regex_any=_regex_any(book, regex_literals, wide),
        regex_wide=wide,
    )


def _regex_leaves(book: RuleBook) -> list[Regex]:
    """Every distinct regex leaf of the book, in rule order."""
    leaves: list[Regex] = []

    def walk(pred: Predicate) -> None:
        if isinstance(pred, Regex) and pred not in leaves:
            leaves.append(pred)
        elif isinstance(pred, (All, AnyOf)):
            for c in pred.children:
                walk(c)
        elif isinstance(pred, Not):
            walk(pred.child)

    for rule in book.rules:
        walk(rule.match)
        if rule.domain is not None:
            walk(rule.domain)
    return leaves


def _regex_any(book: RuleBook, regex_literals: dict,
               wide: frozenset) -> dict[str, tuple[str | None, tuple[Regex, ...]]]:
    """Per field, the regexes without a literal that read it and their one combined pattern (None if RE2
    refuses the combination, e.g. too large: each then runs on its own). The regexes in `wide` are left
    out: they read only the rows that hold a non-ASCII character."""
    leaves = [r for r in _regex_leaves(book) if r not in regex_literals and r not in wide]
    out = {}
    for name in FIELDS:
        group = tuple(r for r in leaves if r.field in (name, "text"))
        pattern = any_pattern([(r.pattern, r.case_sensitive) for r in group]) if group else None
        if pattern is not None:
            try:
                pc.match_substring_regex(pa.array(["x"], pa.string()), pattern)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pattern = None
        out[name] = (pattern, group)
    return out


def _positive_text(pred: Predicate) -> list:
    if isinstance(pred, (Phrase, Regex)):
        return [pred]
    if isinstance(pred, (All, AnyOf)):
        return [leaf for c in pred.children for leaf in _positive_text(c)]
    return []
