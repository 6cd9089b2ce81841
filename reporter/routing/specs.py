"""The rule book: specs/rules/*.json and specs/piles.json loaded into frozen objects.

Every validation failure names the file, the rule id and the JSON path, and
nothing is routed on a rule book that failed to load. A rule's `match` and
`domain` are parsed by the rule language's parser (predicates.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..hashing import sha256_json
from ..naming import slug
from .predicates import MAX_DEPTH, Predicate, Where, parse_predicate, predicate_columns

PILE_KINDS = ("discard", "hold", "screen", "pending")
TIERS = ("cheap", "expensive")
RULE_KEYS = {"id", "description", "pile", "precedence", "shadow", "match", "domain", "schema_version"}
REQUIRED_RULE_KEYS = ("id", "pile", "precedence", "match")
DEFAULT_TITLE_ONLY_SOURCES = ("osf",)
MAX_RULES = 2_000
"""Rules a book may hold (shadow rules included). Routing counts rule pairs (the overlap,
outranked_by and domain-miss matrices are rules x rules per record batch), so memory grows
with the square of the rule count; docs/rules.md gives the measured peak at this limit."""


# ---------------------------------------------------------------- rules and piles

@dataclass(frozen=True)
class Rule:
    """One routing rule; it may only route or discard, never admit."""

    id: str
    """Unique id."""
    pile: str
    """The pile a win sends a row to (never pending)."""
    precedence: int
    """Higher wins; unique across the book, shadow rules included."""
    match: Predicate
    """Which rows the rule hits."""
    shadow: bool = False
    """Evaluated and recorded, never wins."""
    domain: Predicate | None = None
    """The rows the rule is about (changes no routing; measures misses)."""
    description: str = ""
    """What the rule is for, in words."""
    file: str = ""
    """The spec file, relative to specs/."""
    spec: Any = None
    """The rule exactly as written (for pages and digests)."""


@dataclass(frozen=True)
class Pile:
    """A pile and its kind."""

    name: str
    """The pile's name."""
    kind: str
    """discard, hold, screen or pending."""
    tier: str | None = None
    """For screen piles: cheap or expensive."""

    @property
    def paying(self) -> bool:
        """A pile of kind screen costs model calls."""
        return self.kind == "screen"


@dataclass(frozen=True)
class RuleBook:
    """The loaded specs folder."""

    rules: tuple[Rule, ...]
    """Every rule, highest precedence first."""
    piles: tuple[Pile, ...]
    """The piles in piles.json order."""
    title_only_sources: tuple[str, ...]
    """Sources whose rows may be screened on a non-empty title alone."""
    root: Path
    """The specs folder."""

    def pile(self, name: str) -> Pile:
        """The pile with this name."""
        return next(p for p in self.piles if p.name == name)

    @property
    def pending(self) -> Pile:
        """The engine-owned pile for rows nothing judged."""
        return next(p for p in self.piles if p.kind == "pending")

    def specs_digest(self) -> str:
        """Release input: the rules as written (keys in their file's order), in file then id order.

        Key order is covered because rule_stats.json shows each spec in its
        file's order (`spec_text`): a release's bytes must follow from its id,
        so reordering a rule's keys mints a new release rather than new bytes
        under an old id. Whitespace and formatting of the file are not covered:
        they change no byte of the release.
        """
        return sha256_json(sorted(([r.file, r.id, json.dumps(r.spec, ensure_ascii=False)] for r in self.rules),
                                  key=lambda x: (x[0], x[1])))

    def piles_digest(self) -> str:
        """Release input: piles and policy."""
        return sha256_json({"piles": [[p.name, p.kind, p.tier] for p in self.piles],
                            "title_only_sources": sorted(self.title_only_sources)})

    def columns(self) -> set[str]:
        """Every pool column a rule or domain tests with `column`."""
        out: set[str] = set()
        for rule in self.rules:
            for pred in (rule.match, rule.domain):
                if pred is not None:
                    out |= predicate_columns(pred)
        return out


# ---------------------------------------------------------------- loading

def _read_json(path: Path, label: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{label}: file not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{label}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{label}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{label}: JSON nested too deeply to read; a predicate may nest at most "
                         f"{MAX_DEPTH} levels") from None


def load_piles(specs: Path) -> tuple[tuple[Pile, ...], tuple[str, ...]]:
    """Read specs/piles.json: the piles and the title-only sources."""
    path = specs / "piles.json"
    label = "piles.json"
    if not path.exists():
        raise InputError(f"{specs}: no piles.json; the rule book needs specs/piles.json naming the piles")
    data = _read_json(path, label)
    where = Where(label, None, "$")
    if not isinstance(data, dict):
        raise where.fail("must be an object with a 'piles' list")
    unknown = set(data) - {"piles", "title_only_sources", "schema_version"}
    if unknown:
        raise where.fail(f"unknown key {sorted(unknown)[0]!r}; allowed: piles, title_only_sources, schema_version")
    if data.get("schema_version", 1) != 1 or type(data.get("schema_version", 1)) is not int:
        raise where.at(".schema_version").fail("only schema_version 1 is known")
    items = data.get("piles")
    if not isinstance(items, list) or not items:
        raise where.at(".piles").fail("must be a non-empty list of {name, kind[, tier]}")
    piles: list[Pile] = []
    for i, item in enumerate(items):
        w = where.at(f".piles[{i}]")
        if not isinstance(item, dict):
            raise w.fail("must be an object {name, kind[, tier]}")
        extra = set(item) - {"name", "kind", "tier", "description"}
        if extra:
            raise w.fail(f"unknown key {sorted(extra)[0]!r}; allowed: name, kind, tier, description")
        name, kind, tier = item.get("name"), item.get("kind"), item.get("tier")
        if not isinstance(name, str) or not name:
            raise w.at(".name").fail("must be a non-empty string")
        if "/" in name:
            raise w.at(".name").fail(f"{name!r} holds '/', which the site keeps for the pending reasons "
                                     "(pending/unrouted, pending/no_text); name the pile without it")
        if kind not in PILE_KINDS:
            raise w.at(".kind").fail(f"{kind!r} is not a pile kind; allowed: {', '.join(PILE_KINDS)}")
        if kind == "screen":
            if tier not in TIERS:
                raise w.at(".tier").fail(f"a screen pile needs tier {' or '.join(TIERS)}, got {tier!r}")
        elif tier is not None:
            raise w.at(".tier").fail("only screen piles have a tier")
        if any(p.name == name for p in piles):
            raise w.at(".name").fail(f"duplicate pile {name!r}")
        piles.append(Pile(name, kind, tier))
    if sum(p.kind == "pending" for p in piles) != 1:
        raise where.at(".piles").fail("exactly one pile must have kind 'pending' (the engine-owned pile)")
    sources = data.get("title_only_sources", list(DEFAULT_TITLE_ONLY_SOURCES))
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise where.at(".title_only_sources").fail("must be a list of source names")
    return tuple(piles), tuple(sorted(set(sources)))


def load_rulebook(specs: Path) -> RuleBook:
    """Load and validate a specs folder (rules/*.json and piles.json)."""
    specs = Path(specs)
    if not specs.is_dir():
        raise InputError(f"{specs}: the rule book folder does not exist")
    piles, title_only = load_piles(specs)
    pile_names = {p.name: p for p in piles}
    rule_dir = specs / "rules"
    files = sorted(rule_dir.glob("*.json")) if rule_dir.is_dir() else []
    if not files:
        raise InputError(f"{rule_dir}: no rule files (*.json); a rule book needs at least one rule")
    rules: list[Rule] = []
    seen_ids: dict[str, str] = {}
    seen_prec: dict[int, tuple[str, str]] = {}
    paths: dict[str, str] = {}
    for path in files:
        label = path.relative_to(specs).as_posix()
        data = _read_json(path, label)
        items = data if isinstance(data, list) else [data]
        for i, raw in enumerate(items):
            base = f"$[{i}]" if isinstance(data, list) else "$"
            if len(rules) == MAX_RULES:
                raise Where(label, None, base).fail(
                    f"the rule book holds more than {MAX_RULES:,} rules (shadow rules included), the most "
                    f"routing supports: it counts every pair of rules, so memory grows with the square of "
                    f"the rule count. Merge rules (any_phrase, any) or split the book")
            rule = _load_rule(raw, Where(label, None, base), pile_names)
            rule = Rule(**{**rule.__dict__, "file": label})
            where = Where(label, rule.id, base)
            if rule.id in seen_ids:
                raise where.at(".id").fail(f"duplicate rule id (also in {seen_ids[rule.id]})")
            seen_ids[rule.id] = label
            if rule.precedence in seen_prec:
                other_file, other_id = seen_prec[rule.precedence]
                raise where.at(".precedence").fail(
                    f"precedence {rule.precedence} is also used by rule {other_id!r} in {other_file}; "
                    "precedences must be unique (shadow rules included) so a promotion is never ambiguous")
            seen_prec[rule.precedence] = (label, rule.id)
            rules.append(rule)
            paths[rule.id] = base
    if not rules:
        raise InputError(f"{rule_dir}: the rule files ({', '.join(p.name for p in files)}) hold no rule; "
                         "a rule book needs at least one rule")
    _check_page_names(rules, paths)
    rules.sort(key=lambda r: -r.precedence)
    return RuleBook(tuple(rules), piles, title_only, specs)


def _check_page_names(rules: list[Rule], paths: dict[str, str]) -> None:
    """Refuse two rule ids the site would give one page (and one anchor), such as `A` and `a-559aead0`."""
    seen: dict[str, Rule] = {}
    for rule in rules:
        name = slug(rule.id)
        other = seen.setdefault(name, rule)
        if other is not rule:
            raise Where(rule.file, rule.id, paths[rule.id]).at(".id").fail(
                f"the site would give this rule the page name {name!r}, which rule {other.id!r} "
                f"(in {other.file}) already has; rename one of them")


def _load_rule(raw: Any, where: Where, piles: dict[str, Pile]) -> Rule:
    if not isinstance(raw, dict):
        raise where.fail("a rule must be a JSON object")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise where.at(".id").fail("every rule needs a non-empty string 'id'")
    where = Where(where.file, rule_id, where.path)
    unknown = sorted(set(raw) - RULE_KEYS)
    if unknown:
        raise where.at(f".{unknown[0]}").fail(f"unknown key; allowed: {', '.join(sorted(RULE_KEYS))}")
    for key in REQUIRED_RULE_KEYS:
        if key not in raw:
            raise where.fail(f"missing required key {key!r}")
    pile = raw["pile"]
    if not isinstance(pile, str):
        raise where.at(".pile").fail(f"must be a pile name (a string), got {pile!r}")
    if pile not in piles:
        raise where.at(".pile").fail(f"unknown pile {pile!r}; piles.json names: {', '.join(piles)}")
    if piles[pile].kind == "pending":
        raise where.at(".pile").fail(f"no rule may target {pile!r}: it is the engine-owned pending pile")
    prec = raw["precedence"]
    if not isinstance(prec, int) or isinstance(prec, bool):
        raise where.at(".precedence").fail(f"must be an integer, got {prec!r}")
    shadow = raw.get("shadow", False)
    if not isinstance(shadow, bool):
        raise where.at(".shadow").fail(f"must be true or false, got {shadow!r}")
    desc = raw.get("description", "")
    if not isinstance(desc, str):
        raise where.at(".description").fail("must be a string")
    if raw.get("schema_version", 1) != 1:
        raise where.at(".schema_version").fail("only schema_version 1 is known")
    match = parse_predicate(raw["match"], where.at(".match"))
    domain = parse_predicate(raw["domain"], where.at(".domain")) if raw.get("domain") is not None else None
    return Rule(id=rule_id, pile=pile, precedence=prec, match=match, shadow=shadow,
                domain=domain, description=desc, spec=raw)



def check_columns(book: RuleBook, columns: set[str], pool_label: str) -> None:
    """Fail (naming file, rule and path) when a rule tests a column the pool lacks."""
    for rule in book.rules:
        for key, pred in (("match", rule.match), ("domain", rule.domain)):
            if pred is None:
                continue
            missing = sorted(predicate_columns(pred) - columns)
            if missing:
                raise Where(rule.file, rule.id, f"$.{key}").fail(
                    f"unknown column {missing[0]!r}: the pool {pool_label} has columns {', '.join(sorted(columns))}")
