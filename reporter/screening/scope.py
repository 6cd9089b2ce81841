"""Which works of a release each tier screens, and the text the voters see (read-only).

A pile of kind `screen` names its tier (piles.json; the release records it in
its statistics' `pile_order`). The cheap tier screens the works of its
`tier: cheap` piles. The expensive screen screens the works of its `tier:
expensive` piles plus the cheap-tier works whose cheap verdict (current cheap
generation) is `proceed`; with no cheap voters configured the cheap piles'
works go straight to it. The text is the pool's title and abstract with the
overlay applied, read by the pool reader routing uses, so a voter sees what
routing saw. The release's files are read through routing's readers
(`routing.artifacts` for its manifest and statistics,
`routing.routing_table` for the routing table). Nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError
from ..pool.overlay import load_overlay, pool_batches
from ..pool.reader import open_table
from ..routing import routing_table
from ..routing.artifacts import read_manifest, read_stats
from .config import TIERS, ScreenWorkspace


@dataclass(frozen=True)
class TierScope:
    """The works of one release one tier screens (or would, were its voters configured)."""

    tier: str
    """`cheap` or `expensive`."""
    release_id: str
    """The release whose piles decide the scope."""
    work_ids: tuple[str, ...]
    """The works, in release (pool) order."""
    direct: int
    """Works routed to the tier's own piles."""
    from_cheap: int
    """Expensive only: cheap-pile works whose cheap verdict is proceed (all of them without cheap voters)."""
    pending_cheap: int
    """Expensive only: cheap-pile works the cheap tier has not decided yet (they may still reach the screen)."""
    note: str
    """How the scope came about, in a sentence (a dormant tier, works passed on, works still to come)."""


@dataclass(frozen=True)
class ScopeWork:
    """One work as a voter is shown it."""

    work_id: str
    """The scheme-prefixed id."""
    title: str
    """The title as in the pool after the overlay (empty when it has none)."""
    abstract: str | None
    """The abstract after the overlay, or None when it has none (null or blank)."""
    title_only: bool
    """Screened on its title alone (the routing table's `title_only`): the title-only prompt."""


def release_id_of(release_dir: Path) -> str:
    """The release's id as its manifest records it."""
    return read_manifest(release_dir).release_id


def screen_piles(release_dir: Path) -> dict[str, tuple[str, ...]]:
    """Tier -> the release's pile names of kind screen in that tier (piles.json order; empty for none)."""
    piles: dict[str, list[str]] = {tier: [] for tier in TIERS}
    for pile in read_stats(release_dir).pile_order:
        if pile.kind == "screen":
            if pile.tier not in piles:
                raise InputError(f"{release_dir}: the release's screen pile {pile.name!r} has tier {pile.tier!r}; "
                                 f"a screen pile's tier is {' or '.join(TIERS)}")
            piles[pile.tier].append(pile.name)
    return {tier: tuple(names) for tier, names in piles.items()}


def read_routing(release_dir: Path, columns: list[str]) -> pl.DataFrame:
    """Columns of the release's routing table (one row per pool row, pool order) as a polars frame, read by
    routing's reader (`routing_table.read_routing`: only these columns)."""
    return pl.DataFrame(routing_table.read_routing(release_dir, columns))


def pile_works(release_dir: Path, piles: Iterable[str]) -> pl.DataFrame:
    """work_id, pile and title_only of the release's works in `piles`, in release order."""
    return read_routing(release_dir, ["work_id", "pile", "title_only"]).filter(pl.col("pile").is_in(list(piles)))


def tier_scope(ws: ScreenWorkspace, release_dir: Path, tier: str, *, cheap_generation: str | None,
               store: Any) -> TierScope:
    """The works of `release_dir` that `tier` screens now (the store may be None: nothing decided yet)."""
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}")
    piles = screen_piles(release_dir)
    rid = release_id_of(release_dir)
    works = pile_works(release_dir, piles["cheap"] + piles["expensive"])
    cheap_ids = works.filter(pl.col("pile").is_in(list(piles["cheap"])))["work_id"]
    if tier == "cheap":
        ids = tuple(cheap_ids.to_list())
        note = ("dormant: the release routes no work to a cheap pile" if not piles["cheap"] or not ids else
                f"the works of {', '.join(piles['cheap'])}; it may only discard, and only on two excludes")
        return TierScope("cheap", rid, ids, len(ids), 0, 0, note)
    cheap_voters = bool(ws.screen is not None and ws.screen.cheap)
    if not cheap_voters:
        passed = set(cheap_ids.to_list())
        pending = 0
    else:
        decided = (store.verdicts("cheap", cheap_generation, cheap_ids.to_list())
                   if store is not None and cheap_generation is not None and len(cheap_ids) else {})
        passed = {w for w, outcome in decided.items() if outcome == "proceed"}
        pending = len(cheap_ids) - len(decided)
    direct = works.filter(pl.col("pile").is_in(list(piles["expensive"])))
    ids = tuple(works.filter(pl.col("pile").is_in(list(piles["expensive"]))
                             | pl.col("work_id").is_in(list(passed)))["work_id"].to_list())
    if not cheap_voters and len(cheap_ids):
        note = (f"no cheap voters are configured: the {len(cheap_ids):,} works of the cheap pile(s) "
                f"({', '.join(piles['cheap'])}) go straight to the screen")
    elif cheap_voters and pending:
        note = (f"{len(passed):,} works passed on by the cheap tier; {pending:,} cheap-tier works not decided "
                f"yet may still come")
    elif cheap_voters and len(cheap_ids):
        note = f"{len(passed):,} works passed on by the cheap tier, which has decided all of its works"
    else:
        note = "the works of " + (", ".join(piles["expensive"]) or "no screen pile")
    return TierScope("expensive", rid, ids, len(direct), len(passed), pending, note)


def check_text_inputs(ws: ScreenWorkspace, release_dir: Path) -> None:
    """Refuse to read text from a pool or overlay other than the ones the release was routed with."""
    inputs = read_manifest(release_dir).inputs
    pool = open_table(ws.pool, "pool")
    if inputs.get("pool") is not None and pool.digest() != inputs["pool"]:
        raise InputError(f"{ws.pool}: the pool differs from the one release {release_id_of(release_dir)[:12]} "
                         f"was routed with, so its text is not what routing saw; build a new release (reporter build) "
                         f"first")
    overlay = load_overlay(ws.overlay).digest if ws.overlay is not None else "none"
    if inputs.get("overlay") is not None and overlay != inputs["overlay"]:
        raise InputError(f"{ws.overlay or ws.file}: the overlay differs from the one release "
                         f"{release_id_of(release_dir)[:12]} was routed with; build a new release first")


def load_works(ws: ScreenWorkspace, release_dir: Path, work_ids: Iterable[str], *, check: bool = True,
               progress: Any = None) -> dict[str, ScopeWork]:
    """The text routing saw for `work_ids`: the pool's title and abstract with the overlay applied.

    `check` first refuses a pool or overlay that differs from the release's
    inputs (its text would not be what routing saw). `title_only` comes from
    the routing table. A work the pool lacks is refused. `progress` counts the pool rows read (pool_batches).
    """
    wanted = sorted(set(work_ids))
    if not wanted:
        return {}
    if check:
        check_text_inputs(ws, release_dir)
    flags = read_routing(release_dir, ["work_id", "title_only"]).filter(pl.col("work_id").is_in(wanted))
    title_only = dict(zip(flags["work_id"].to_list(), flags["title_only"].to_list()))
    found: dict[str, ScopeWork] = {}
    for batch in pool_batches(ws.pool, ws.overlay, wanted, ("title", "abstract"), progress):
        for wid, title, abstract in zip(*(batch.column(c).to_pylist() for c in ("work_id", "title", "abstract"))):
            found[wid] = ScopeWork(wid, title or "", abstract if abstract and abstract.strip() else None,
                                   bool(title_only.get(wid, False)))
    missing = [w for w in wanted if w not in found]
    if missing:
        raise InputError(f"{ws.pool}: {len(missing):,} work(s) of release {release_id_of(release_dir)[:12]} are "
                         f"not in the pool, e.g. {missing[0]!r}; the pool changed since the release was routed: "
                         f"build a new release")
    return found
