"""The rule language's predicates: the frozen predicate types, their parser, and where a validation error happened.

A rule's `match` and `domain` are predicates (leaves: phrase, any_phrase, regex, column+in, empty, always;
combinators: all, any, not). The rule book (specs.py) parses each through `parse_predicate`; the engine compiles and evaluates
the parsed tree. Every validation failure names the file, the rule id and the JSON path (`Where`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

from ..errors import InputError
from .normalise import phrase_literal
from .regexchars import byte_escape
from .regexlit import regex_error

TEXT_FIELDS = ("title", "abstract", "text")
MAX_DEPTH = 32
"""Predicates nested inside one another (the rule's `match` or `domain` is depth 1)."""

# ---------------------------------------------------------------- predicates

@dataclass(frozen=True)
class Phrase:
    """Literal phrases (any of them) with word boundaries, in a text field."""

    field: str
    """title, abstract or text (title and abstract, each on its own)."""
    phrases: tuple[tuple[str, bool], ...]
    """(normalised phrase, prefix) pairs; prefix means a trailing `*` lets the last word go on."""


@dataclass(frozen=True)
class Regex:
    """An RE2 regex against a normalised (not lower-cased) text field."""

    field: str
    """title, abstract or text."""
    pattern: str
    """The regex as written."""
    case_sensitive: bool
    """False (the default) matches case-insensitively."""


@dataclass(frozen=True)
class ColumnIn:
    """An exact value test on a pool column; a null never matches."""

    column: str
    """The pool column."""
    values: tuple[Any, ...]
    """The accepted values."""


@dataclass(frozen=True)
class Empty:
    """The field is null or blank (for text: both title and abstract are)."""

    field: str
    """title, abstract or text."""


@dataclass(frozen=True)
class Always:
    """True for every work: the match of a catch-all rule (`{"always": true}`), below the others by precedence."""


@dataclass(frozen=True)
class All:
    """True when every child is true."""

    children: tuple["Predicate", ...]


@dataclass(frozen=True)
class AnyOf:
    """True when at least one child is true."""

    children: tuple["Predicate", ...]


@dataclass(frozen=True)
class Not:
    """True when the child is false."""

    child: "Predicate"


Predicate = Union[Phrase, Regex, ColumnIn, Empty, Always, All, AnyOf, Not]


def predicate_columns(pred: Predicate) -> set[str]:
    """Columns named by `column` leaves under a predicate."""
    if isinstance(pred, ColumnIn):
        return {pred.column}
    if isinstance(pred, (All, AnyOf)):
        return set().union(*(predicate_columns(c) for c in pred.children))
    if isinstance(pred, Not):
        return predicate_columns(pred.child)
    return set()


# ---------------------------------------------------------------- parsing

class Where:
    """Where a validation error happened: file, rule id, JSON path."""

    def __init__(self, file: str, rule_id: str | None, path: str):
        self.file, self.rule_id, self.path = file, rule_id, path

    def at(self, part: str) -> "Where":
        return Where(self.file, self.rule_id, self.path + part)

    def fail(self, message: str) -> InputError:
        rule = f" rule {self.rule_id!r}:" if self.rule_id else ""
        return InputError(f"{self.file}:{rule} {self.path}: {message}")


LEAF_SHAPES = {
    "phrase": {"field", "phrase"},
    "any_phrase": {"field", "any_phrase"},
    "regex": {"field", "regex", "case"},
    "in": {"column", "in"},
    "empty": {"empty"},
    "always": {"always"},
    "all": {"all"},
    "any": {"any"},
    "not": {"not"},
}


def parse_predicate(raw: Any, where: Where, depth: int = 1) -> Predicate:
    """Parse one predicate of the rule language (leaves and combinators) at a nesting depth."""
    if depth > MAX_DEPTH:
        raise where.fail(f"predicates nest more than {MAX_DEPTH} levels deep; flatten the all/any/not nesting")
    if not isinstance(raw, dict):
        raise where.fail("a predicate must be a JSON object")
    shapes = [k for k in ("phrase", "any_phrase", "regex", "in", "empty", "always", "all", "any", "not") if k in raw]
    if len(shapes) != 1:
        raise where.fail("a predicate needs exactly one of: phrase, any_phrase, regex, column+in, "
                         f"empty, always, all, any, not (got keys {sorted(raw)})")
    shape = shapes[0]
    extra = sorted(set(raw) - LEAF_SHAPES[shape])
    if extra:
        raise where.at(f".{extra[0]}").fail(
            f"unknown key for a {shape!r} predicate; allowed: {', '.join(sorted(LEAF_SHAPES[shape]))}")
    if shape in ("all", "any"):
        items = raw[shape]
        if not isinstance(items, list) or not items:
            raise where.at(f".{shape}").fail("must be a non-empty list of predicates")
        children = tuple(parse_predicate(c, where.at(f".{shape}[{i}]"), depth + 1) for i, c in enumerate(items))
        return All(children) if shape == "all" else AnyOf(children)
    if shape == "not":
        return Not(parse_predicate(raw["not"], where.at(".not"), depth + 1))
    if shape == "always":
        if raw["always"] is not True:
            raise where.at(".always").fail(f"must be true (a catch-all: every work matches), not "
                                           f"{json.dumps(raw['always'], ensure_ascii=False)}")
        return Always()
    if shape == "empty":
        field = raw["empty"]
        _check_field(field, where.at(".empty"))
        return Empty(field)
    if shape == "in":
        column, values = raw.get("column"), raw["in"]
        if not isinstance(column, str) or not column:
            raise where.at(".column").fail("must be a column name")
        if not isinstance(values, list) or not values:
            raise where.at(".in").fail("must be a non-empty list of values")
        if any(isinstance(v, (dict, list)) or v is None for v in values):
            raise where.at(".in").fail("values must be strings, numbers or booleans (a null never matches)")
        kinds = {"booleans" if isinstance(v, bool) else "numbers" if isinstance(v, (int, float)) else "strings"
                 for v in values}
        if len(kinds) > 1:
            raise where.at(".in").fail(f"values must be all strings, all numbers or all booleans (one column "
                                       f"holds one type); got {' and '.join(sorted(kinds))} in "
                                       f"{json.dumps(values, ensure_ascii=False)}")
        return ColumnIn(column, tuple(values))
    if "field" not in raw:
        raise where.fail(f"a {shape!r} predicate needs 'field' (one of {', '.join(TEXT_FIELDS)})")
    _check_field(raw["field"], where.at(".field"))
    if shape == "regex":
        pattern, case = raw["regex"], raw.get("case", "insensitive")
        if not isinstance(pattern, str) or not pattern:
            raise where.at(".regex").fail("must be a non-empty RE2 pattern")
        if case not in ("sensitive", "insensitive"):
            raise where.at(".case").fail(f"must be 'sensitive' or 'insensitive', got {case!r}")
        problem = regex_error(pattern, case == "sensitive")  # compiled exactly as routing compiles it
        if problem is None and byte_escape(pattern):
            problem = r"\C (any one byte) is not allowed: a rule matches characters; use . (any one character)"
        if problem is not None:
            raise where.at(".regex").fail(f"invalid RE2 regex {pattern!r}: {problem}")
        return Regex(raw["field"], pattern, case == "sensitive")
    items = [raw["phrase"]] if shape == "phrase" else raw["any_phrase"]
    if shape == "any_phrase" and (not isinstance(items, list) or not items):
        raise where.at(".any_phrase").fail("must be a non-empty list of phrases")
    phrases = []
    for i, item in enumerate(items):
        w = where.at(".phrase" if shape == "phrase" else f".any_phrase[{i}]")
        try:
            phrases.append(phrase_literal(item))
        except (TypeError, ValueError) as exc:
            raise w.fail(str(exc)) from None
    return Phrase(raw["field"], tuple(dict.fromkeys(phrases)))


def _check_field(field: Any, where: Where) -> None:
    if field not in TEXT_FIELDS:
        raise where.fail(f"unknown field {field!r}; allowed: {', '.join(TEXT_FIELDS)}")
