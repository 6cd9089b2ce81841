"""The strata a certificate is about: what routing or the screen set aside in one release, by name.

A stratum is named by what `--pile` (and `--rule`) say, and the name is
written on every row of its sheet and in its certificate:

| name | `reporter certify` | the works |
| --- | --- | --- |
| `discard` | `--pile discard` | every work routing put in the pile (any pile of the release) |
| `discard/rule:ID` | `--pile discard --rule ID` | the works rule ID won into that pile |
| `domain-misses/rule:ID` | `--pile domain-misses --rule ID` | rule ID's domain misses (in its domain, not |
|  |  | matched by it, routed to a paying pile: the release page's count) |
| `screen:discarded` | `--pile screen:discarded` | the works the expensive screen discarded, current generation |
| `screen_cheap:discarded` | `--pile screen_cheap:discarded` | the works the cheap tier discarded, current generation |

A pile's name never holds `/` (the rule book refuses it), so the names
cannot be confused; `domain-misses`, `screen:discarded` and
`screen_cheap:discarded` are kept for these strata (a pile so named would
have to be renamed to be certified). The works come in release (pool) order,
read through the stages' own readers: the release's statistics, manifest and
routing table through routing's (`routing.artifacts.read_stats`,
`read_manifest`, `routing.routing_table.read_routing`: only the columns
needed, as pyarrow), the domain through `routing.diagnose.select_rows` with
the rule book the release was routed with, the screen's verdicts through
`screening.report.tier_discards`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from ..errors import InputError
from ..routing.artifacts import RuleStat, RuleStats, read_manifest, read_stats
from ..routing.routing_table import read_routing, routing_file
from ..screening.scope import check_text_inputs
from .config import CertifyWorkspace

RULE_PART = "/rule:"
"""Joins a pile (or `domain-misses`) and a rule id in a stratum's name."""
DOMAIN_MISSES = "domain-misses"
"""`--pile domain-misses --rule ID`: a rule's domain misses."""
SCREEN_STRATA = {"screen_cheap:discarded": "cheap", "screen:discarded": "expensive"}
"""The screen's strata and the tier whose discards each holds."""
JOINT = "discarded"
"""`--pile discarded`: the joint stratum, everything the release and the screen's current generations discarded
(every discard pile, `screen_cheap:discarded`, `screen:discarded`): one simple sample of it bounds all that was
not handed on."""


@dataclass(frozen=True)
class Stratum:
    """One stratum of a release, as named on a sheet."""

    name: str
    """The name (`discard`, `discard/rule:ID`, `domain-misses/rule:ID`, `screen:discarded`, ...)."""
    kind: str
    """`pile`, `wins`, `domain-misses`, `screen` or `joint`."""
    pile: str | None = None
    """The routing pile (`pile` and `wins`)."""
    rule: str | None = None
    """The rule (`wins` and `domain-misses`)."""
    tier: str | None = None
    """The screening tier (`screen`): `expensive` or `cheap`."""
    origin: str | None = field(default=None, compare=False)
    """Where the name was read when a sheet names it (`SHEET: row 2`), else None (the command's flags)."""

    def refused(self, flag: str, value: str | None, why: str, fix: str = "") -> InputError:
        """The error for a stratum the release cannot have, blamed on where the name came from: the flag
        (`--pile 'x': ...`), or the sheet's stratum cell, which a person edited (`SHEET: row 2: stratum ...`)."""
        shown = "" if value is None else f" {value!r}"
        if self.origin is None:
            return InputError(f"{flag}{shown}{why}{'; ' + fix if fix else ''}")
        return InputError(f"{self.origin}: stratum {self.name!r}: its {flag.lstrip('-')}{shown}{why}; the sheet's "
                          f"stratum cell was edited (every row says the stratum the sheet was drawn from): put it "
                          f"back, or draw a new sheet")


@dataclass(frozen=True)
class StratumWorks:
    """The works of a stratum in one release, now."""

    stratum: Stratum
    """Which stratum."""
    release_id: str
    """The release."""
    work_ids: tuple[str, ...]
    """Its works, in release (pool) order."""
    generation: str | None = None
    """For the screen's strata: the tier's generation whose verdicts these are (else None)."""
    parts: tuple[str, ...] = ()
    """For the joint stratum: the discarding strata it is the union of (else empty)."""


def stratum_named(pile: str, rule: str | None = None, origin: str | None = None) -> Stratum:
    """The stratum `--pile PILE [--rule ID]` names (checked against a release by `stratum_works`); `origin`:
    where a sheet names it (`SHEET: row 2`), for the messages."""
    if not pile:
        raise InputError("--pile: name a pile of the release, domain-misses (with --rule), screen:discarded or "
                         "screen_cheap:discarded")
    if pile == JOINT:
        if rule is not None:
            raise Stratum(f"{pile}{RULE_PART}{rule}", "joint", origin=origin).refused(
                "--rule", rule, f" goes with a routing pile or domain-misses, not with {pile}: the joint stratum "
                f"is every discard at once")
        return Stratum(pile, "joint", origin=origin)
    if pile in SCREEN_STRATA:
        if rule is not None:
            raise Stratum(f"{pile}{RULE_PART}{rule}", "screen", origin=origin).refused(
                "--rule", rule, f" goes with a routing pile or domain-misses, not with {pile}: the screen's "
                f"discards are certified whole")
        return Stratum(pile, "screen", tier=SCREEN_STRATA[pile], origin=origin)
    if pile == DOMAIN_MISSES:
        if rule is None:
            raise Stratum(pile, "domain-misses", origin=origin).refused(
                "--pile", pile, " needs --rule ID: the domain misses of which rule?")
        return Stratum(f"{DOMAIN_MISSES}{RULE_PART}{rule}", "domain-misses", rule=rule, origin=origin)
    if rule is None:
        return Stratum(pile, "pile", pile=pile, origin=origin)
    return Stratum(f"{pile}{RULE_PART}{rule}", "wins", pile=pile, rule=rule, origin=origin)


def parse_stratum(name: str, where: str) -> Stratum:
    """The stratum a sheet names (`where`: the file and row, for the messages)."""
    base, sep, rule = name.partition(RULE_PART)
    if not base or (sep and not rule):
        raise InputError(f"{where}: stratum {name!r} is not a stratum's name (discard, discard/rule:ID, "
                         f"domain-misses/rule:ID, screen:discarded, screen_cheap:discarded); the sheet's stratum "
                         f"cell was edited")
    return stratum_named(base, rule if sep else None, origin=where)


def stratum_works(ws: CertifyWorkspace, release_dir: Path, stratum: Stratum, *, store: Any = None) -> StratumWorks:
    """The works of `stratum` in the release now (the screen's state read-only; `store` when already open)."""
    stats = read_stats(release_dir)
    release_id = stats.release_id
    piles = {p.name: p for p in stats.pile_order}
    if stratum.kind == "joint":
        return joint_works(ws, release_dir, store=store)
    if stratum.kind == "screen":
        from ..screening.report import tier_discards
        found = tier_discards(ws, release_dir, stratum.tier, store=store)
        if found.generation is None:
            raise InputError(f"{ws.file}: [screen] configures no {stratum.tier} voters, so {stratum.name} is "
                             f"empty; certify a pile, or configure the tier")
        return StratumWorks(stratum, release_id, found.work_ids, found.generation)
    if stratum.kind == "domain-misses":
        return StratumWorks(stratum, release_id, _domain_misses(ws, release_dir, stratum, stats))
    if stratum.pile not in piles:
        raise stratum.refused("--pile", stratum.pile, f": release {release_id[:12]} has no such pile; its piles: "
                              f"{', '.join(piles)} (or domain-misses with a rule, screen:discarded, "
                              f"screen_cheap:discarded)")
    routing = read_routing(release_dir, ["work_id", "pile", "winner"])
    chosen = pc.equal(routing["pile"], stratum.pile)
    if stratum.kind == "wins":
        rule = _rule(stats, stratum, release_id)
        if rule.shadow:
            raise stratum.refused("--rule", stratum.rule, " is a shadow rule: it wins nothing", "certify its pile")
        if rule.pile != stratum.pile:
            raise stratum.refused("--rule", stratum.rule, f" wins into {rule.pile!r}, not {stratum.pile!r}",
                                  f"name --pile {rule.pile}")
        chosen = pc.and_(chosen, pc.equal(routing["winner"], stratum.rule))
    ids = routing["work_id"].filter(pc.fill_null(chosen, False))
    return StratumWorks(stratum, release_id, tuple(ids.to_pylist()))


def discarding_parts(ws: CertifyWorkspace, release_dir: Path, *, store: Any = None) -> tuple[StratumWorks, ...]:
    """The release's discarding strata: its piles of kind `discard` that hold works, then what each configured
    screening tier discarded in its current generation, when it discarded anything."""
    stats = read_stats(release_dir)
    found = [stratum_works(ws, release_dir, stratum_named(p.name)) for p in stats.pile_order
             if p.kind == "discard" and stats.piles.get(p.name)]
    if ws.screen is None:
        return tuple(found)
    if store is None:
        from ..panel.readonly import open_readonly
        from ..screening.config import WHERE
        with open_readonly(ws.screen.database, WHERE) as opened:
            return tuple(found) + _screen_parts(ws, release_dir, opened)
    return tuple(found) + _screen_parts(ws, release_dir, store)


def _screen_parts(ws: CertifyWorkspace, release_dir: Path, store: Any) -> tuple[StratumWorks, ...]:
    parts = []
    for name, tier in SCREEN_STRATA.items():
        if getattr(ws.screen, tier):
            works = stratum_works(ws, release_dir, stratum_named(name), store=store)
            if works.work_ids:
                parts.append(works)
    return tuple(parts)


def joint_works(ws: CertifyWorkspace, release_dir: Path, *, store: Any = None,
                parts: tuple[StratumWorks, ...] | None = None) -> StratumWorks:
    """The joint stratum `discarded`: the union of the discarding strata's works (`parts` when already read), in
    release order (a work is in one of them at most: routing's discards never reach the screen)."""
    parts = discarding_parts(ws, release_dir, store=store) if parts is None else parts
    wanted = {w for part in parts for w in part.work_ids}
    ids = read_routing(release_dir, ["work_id"])["work_id"].to_pylist()
    return StratumWorks(stratum_named(JOINT), read_stats(release_dir).release_id,
                        tuple(w for w in ids if w in wanted), parts=tuple(p.stratum.name for p in parts))


def _rule(stats: RuleStats, stratum: Stratum, release_id: str) -> RuleStat:
    rule = next((r for r in stats.rules if r.id == stratum.rule), None)
    if rule is None:
        raise stratum.refused("--rule", stratum.rule, f": release {release_id[:12]} has no such rule")
    return rule


def _domain_misses(ws: CertifyWorkspace, release_dir: Path, stratum: Stratum, stats: RuleStats) -> tuple[str, ...]:
    """The rule's domain misses, its domain evaluated over the pool with the release's own rule book."""
    from ..routing.diagnose import select_rows
    from ..routing.specs import load_rulebook
    rule_id = stratum.rule
    rule = _rule(stats, stratum, stats.release_id)
    if rule.domain is None:
        raise stratum.refused("--rule", rule_id, " has no domain, so it has no domain misses")
    book = load_rulebook(ws.specs)
    inputs = read_manifest(release_dir).inputs
    piles = [(p.name, p.kind, p.tier) for p in stats.pile_order]
    if book.specs_digest() != inputs["specs"] or [(p.name, p.kind, p.tier) for p in book.piles] != piles:
        raise InputError(f"{ws.specs}: the rule book differs from the one release {stats.release_id[:12]} was "
                         f"routed with, so its domains would not be the release's; certify the newest release "
                         f"(reporter build), or restore the book")
    check_text_inputs(ws, release_dir)
    rows = select_rows(routing_file(release_dir), book, rule=rule_id, kind="domain-misses", pool=ws.pool,
                       overlay=ws.overlay)
    ids = read_routing(release_dir, ["work_id"])["work_id"]
    return tuple(ids.take(rows).to_pylist()) if len(rows) else ()
