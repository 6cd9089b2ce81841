"""The release diff: how many works moved from which pile to which, and by which rule.

The one place the site reads a routing table, through routing's reader
(`Release.read_routing`, its bytes checked against the release's manifest
first): four columns of each of the two releases (work_id, pile,
pending_reason, winner), the last three read dictionary-encoded and turned
into small integer codes at once. When both
releases routed the same pool (work_id columns equal, row for row) the
diff is a bincount over aligned rows; otherwise the two are joined on a
64-bit hash of work_id (on the strings themselves if two ids share a hash).
Memory is a few tens of bytes per row. Samples of moved works are seeded
(the newer release's sample seed) and drawn in the newer release's row
order (works that left the pool: in the earlier release's), so they are
reproducible. Every moved work (in both releases, pile changed) is listed
for the CSV beside the page; new works and works that left are counted per
pile and sampled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import InputError
from ..routing.artifacts import STATS_FILE, Release

ABSENT = "(not in release)"
COLUMNS = ["work_id", "pile", "pending_reason", "winner"]
SAMPLE_K = 20
GROUP_K = 10
"""Works sampled per pile of the new works and of the works that left the pool."""
TOP_MOVES = 20


@dataclass(frozen=True)
class MovedWork:
    """One sampled work that changed pile."""

    work_id: str
    """The work's id."""
    before: str
    """Its state in the previous release (pile, or pending/<reason>)."""
    after: str
    """Its state in this release."""
    before_winner: str | None
    """The rule that decided it before (None when unrouted)."""
    after_winner: str | None
    """The rule that decides it now."""


@dataclass(frozen=True)
class DiffData:
    """Everything the diff page shows, computed from the two routing tables."""

    states: tuple[str, ...]
    """Every state in display order: piles, pending split by reason, then ABSENT."""
    transitions: dict[tuple[str, str], int]
    """(before, after) -> works; ABSENT marks a work only one release holds."""
    moves_by_rule: tuple[tuple[str, str, str | None, str | None, int], ...]
    """(before, after, winner before, winner now, works) for the largest moves of works in both, most first."""
    paying: tuple[str, ...]
    """The states that are paying piles (kind screen) in either release."""
    into_paying: tuple[int, tuple[MovedWork, ...]]
    """Works that moved into a paying pile: the count and a seeded sample."""
    out_of_paying: tuple[int, tuple[MovedWork, ...]]
    """Works that moved out of a paying pile: the count and a seeded sample."""
    new: tuple[tuple[str, int, tuple[MovedWork, ...]], ...]
    """Works only this release holds, per state now: (state, works, seeded sample), in state order."""
    left: tuple[tuple[str, int, tuple[MovedWork, ...]], ...]
    """Works only the earlier release holds, per state before: (state, works, seeded sample)."""
    moved: pa.Table
    """Every work in both releases whose state changed, in this release's row order (the CSV's rows):
    work_id, before, before_rule, after, after_rule."""
    handed: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Rule -> (works it took from another rule, works it gave to another rule) that stayed in the same state
    (pile): a rule's wins change without a work changing pile when another rule of the pile takes them."""


def state_names(release: Release) -> list[str]:
    """A release's states in pile order, `pending` split into its reasons."""
    out = []
    for pile in release.stats.pile_order:
        if pile.kind == "pending":  # whatever piles.json names it, its states are pending/<reason>
            out += [f"pending/{r}" for r in _reasons(release.stats.pending)]
        else:
            out.append(pile.name)
    return out


def state_counts(release: Release) -> dict[str, int]:
    """Works per state, from the release's statistics."""
    pending = {p.name for p in release.stats.pile_order if p.kind == "pending"}
    counts = {name: n for name, n in release.stats.piles.items() if name not in pending}
    counts.update({f"pending/{r}": n for r, n in release.stats.pending.items()})
    return counts


def paying_states(release: Release) -> set[str]:
    """The paying piles (kind screen) of a release."""
    return {p.name for p in release.stats.pile_order if p.kind == "screen"}


@dataclass
class _Side:
    work_id: pa.ChunkedArray
    state: np.ndarray   # int16 code into the shared state vocabulary
    winner: np.ndarray  # int32 code into the shared rule vocabulary, -1 for none


def compute_diff(previous: Release, current: Release, *, seed: int, k: int = SAMPLE_K) -> DiffData:
    """Count the moves between two releases and sample the works that moved in or out of a paying pile."""
    states = _vocabulary(previous, current)
    rules: list[str] = sorted({r.id for rel in (previous, current) for r in rel.stats.rules})
    old, new = _read(previous, states, rules), _read(current, states, rules)
    absent = states.index(ABSENT)
    if len(old.work_id) == len(new.work_id) and old.work_id.equals(new.work_id):
        before, after = old.state, new.state            # the same pool: rows align
        before_winner, after_winner = old.winner, new.winner
        rows = np.arange(len(after), dtype=np.int64)
        old_rows = rows
    else:
        before, after, before_winner, after_winner, rows, old_rows = _join(old, new, absent)
    n = len(states)
    grid = np.bincount(before.astype(np.int64) * n + after, minlength=n * n).reshape(n, n)
    transitions = {(states[i], states[j]): int(grid[i, j]) for i, j in zip(*np.nonzero(grid))}
    _check_totals(transitions, previous, current)

    moved = (before != after) & (before != absent) & (after != absent)
    r1 = len(rules) + 1
    key = ((before[moved].astype(np.int64) * n + after[moved]) * r1 + (before_winner[moved] + 1)) * r1 \
        + (after_winner[moved] + 1)
    keys, counts = np.unique(key, return_counts=True)
    order = sorted(range(len(keys)), key=lambda i: (-counts[i], int(keys[i])))[:TOP_MOVES]
    moves = []
    name = lambda code: rules[code - 1] if code else None  # noqa: E731
    for i in order:
        rest, aw = divmod(int(keys[i]), r1)
        pair, bw = divmod(rest, r1)
        b, a = divmod(pair, n)
        moves.append((states[b], states[a], name(bw), name(aw), int(counts[i])))

    same = (before == after) & (before != absent) & (before_winner != after_winner)
    took = np.bincount(after_winner[same] + 1, minlength=r1)  # slot 0: no rule
    gave = np.bincount(before_winner[same] + 1, minlength=r1)
    handed = {rules[c - 1]: (int(took[c]), int(gave[c])) for c in range(1, r1) if took[c] or gave[c]}

    paying = paying_states(previous) | paying_states(current)
    is_paying = np.array([s in paying for s in states])
    into = moved & is_paying[after] & ~is_paying[before]
    out = moved & is_paying[before] & ~is_paying[after]
    pick = _Picker(new.work_id, old.work_id, states, rules, before, after, before_winner, after_winner, rows,
                   old_rows)
    ordered = [s for s in states if grid[states.index(s)].sum() or grid[:, states.index(s)].sum()]
    shown = tuple(s for s in ordered if s != ABSENT)

    def per_state(side: np.ndarray, other: np.ndarray, salt: int) -> tuple:
        """Works one release alone holds, per state of that release: counts and a seeded sample each."""
        alone = other == absent
        out = []
        for i, state in enumerate(shown):
            mask = alone & (side == states.index(state))
            total, works = pick.sample(mask, seed + salt + i, GROUP_K)
            if total:
                out.append((state, total, works))
        return tuple(out)

    return DiffData(
        states=shown + ((ABSENT,) if ABSENT in ordered else ()),
        transitions=transitions, moves_by_rule=tuple(moves),
        paying=tuple(s for s in states if s in paying),
        into_paying=pick.sample(into, seed, k), out_of_paying=pick.sample(out, seed + 1, k),
        new=per_state(after, before, 100), left=per_state(before, after, 200),
        moved=pick.every(moved), handed=handed)


def _vocabulary(previous: Release, current: Release) -> list[str]:
    states: list[str] = []
    for name in state_names(current) + state_names(previous):
        if name not in states:
            states.append(name)
    return states + [ABSENT]


def _read(release: Release, states: list[str], rules: list[str]) -> _Side:
    path = release.routing
    table = release.read_routing(COLUMNS, dictionary=COLUMNS[1:]).unify_dictionaries()
    pile, pile_names = _codes(table.column("pile"))
    reason, reason_names = _codes(table.column("pending_reason"))
    winner, winner_names = _codes(table.column("winner"))
    # a small lookup from (pile code, reason code) to the shared state code
    lookup = np.full((len(pile_names) + 1, len(reason_names) + 1), -1, np.int16)
    for i, p in enumerate(pile_names):
        for j, r in enumerate([None] + reason_names):
            name = f"pending/{r}" if r is not None else p
            lookup[i, j] = states.index(name) if name in states else -1
    state = lookup[pile, reason + 1]
    if (state < 0).any() or (pile < 0).any():
        raise InputError(f"{path}: holds a pile or pending reason that {STATS_FILE} does not list")
    rule_code = np.array([rules.index(w) if w in rules else -2 for w in winner_names] + [-1], np.int32)
    win = rule_code[winner]  # -1 (the appended slot) for null
    if (win == -2).any():
        raise InputError(f"{path}: names a winner that {STATS_FILE} does not list")
    return _Side(table.column("work_id"), state, win)


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dictionary indices as int32 (-1 for null) and the dictionary's values."""
    if column.num_chunks == 0:
        return np.zeros(0, np.int32), []
    names = column.chunk(0).dictionary.to_pylist()
    parts = [c.indices.fill_null(-1).to_numpy().astype(np.int32) for c in column.chunks]
    return np.concatenate(parts), names


def _join(old: _Side, new: _Side, absent: int):
    """Align two releases that routed different pools: full join on work_id."""
    def frame(side: _Side, prefix: str) -> pl.DataFrame:
        ids = pl.Series("id", side.work_id)
        return pl.DataFrame({"key": ids.hash(seed=0), "id": ids, f"{prefix}_state": side.state,
                             f"{prefix}_winner": side.winner, f"{prefix}_row": np.arange(len(side.state))})
    a, b = frame(old, "b"), frame(new, "a")
    key = "key" if a["key"].n_unique() == a.height and b["key"].n_unique() == b.height else "id"
    j = a.drop("id" if key == "key" else "key").join(b.drop("id" if key == "key" else "key"), on=key,
                                                     how="full", coalesce=True)
    j = j.with_columns(pl.col("b_state").fill_null(absent), pl.col("a_state").fill_null(absent),
                       pl.col("b_winner").fill_null(-1), pl.col("a_winner").fill_null(-1),
                       pl.col("a_row").fill_null(-1), pl.col("b_row").fill_null(-1))
    return (j["b_state"].to_numpy(), j["a_state"].to_numpy(), j["b_winner"].to_numpy(),
            j["a_winner"].to_numpy(), j["a_row"].to_numpy().astype(np.int64),
            j["b_row"].to_numpy().astype(np.int64))


class _Picker:
    """Seeded samples of works, in the newer release's row order (then the earlier's, for works that left)."""

    def __init__(self, work_id, old_work_id, states, rules, before, after, before_winner, after_winner, rows,
                 old_rows):
        self.work_id, self.old_work_id, self.states, self.rules = work_id, old_work_id, states, rules
        self.before, self.after, self.bw, self.aw = before, after, before_winner, after_winner
        self.rows, self.old_rows = rows, old_rows

    def _order(self, where: np.ndarray) -> np.ndarray:
        """Row positions sorted by the newer release's row, works that left after them by the earlier's."""
        return where[np.lexsort((self.old_rows[where], self.rows[where] < 0, self.rows[where]))]

    def _works(self, chosen: np.ndarray) -> list[MovedWork]:
        new_ids = self.work_id.take(pa.array(np.maximum(self.rows[chosen], 0))).to_pylist() if len(self.work_id) \
            else [None] * len(chosen)
        old_ids = self.old_work_id.take(pa.array(np.maximum(self.old_rows[chosen], 0))).to_pylist() \
            if len(self.old_work_id) else [None] * len(chosen)
        name = lambda code: self.rules[code] if code >= 0 else None  # noqa: E731
        return [MovedWork(new if self.rows[i] >= 0 else old, self.states[self.before[i]], self.states[self.after[i]],
                          name(self.bw[i]), name(self.aw[i]))
                for new, old, i in zip(new_ids, old_ids, chosen)]

    def sample(self, mask: np.ndarray, seed: int, k: int) -> tuple[int, tuple[MovedWork, ...]]:
        """How many rows the mask holds, and a seeded sample of up to k of them, by work id."""
        where = self._order(np.nonzero(mask)[0])
        if len(where) == 0:
            return 0, ()
        chosen = where[np.sort(np.random.default_rng(seed).choice(len(where), size=min(k, len(where)),
                                                                   replace=False))]
        return len(where), tuple(sorted(self._works(chosen), key=lambda w: w.work_id))

    def every(self, mask: np.ndarray) -> pa.Table:
        """Every row the mask holds (works in this release), in its row order: work_id, before, before_rule,
        after, after_rule."""
        where = self._order(np.nonzero(mask)[0])
        states = pa.array(self.states)
        rules = pa.array(self.rules + [None], pa.string())  # code -1 reads the null at the end
        return pa.table({
            "work_id": self.work_id.take(pa.array(self.rows[where])) if len(where) else pa.array([], pa.string()),
            "before": states.take(pa.array(self.before[where].astype(np.int64))),
            "before_rule": rules.take(pa.array(np.where(self.bw[where] < 0, len(self.rules), self.bw[where]))),
            "after": states.take(pa.array(self.after[where].astype(np.int64))),
            "after_rule": rules.take(pa.array(np.where(self.aw[where] < 0, len(self.rules), self.aw[where]))),
        })


def _check_totals(transitions: dict[tuple[str, str], int], previous: Release, current: Release) -> None:
    for release, side in ((previous, 0), (current, 1)):
        seen: dict[str, int] = {}
        for pair, n in transitions.items():
            seen[pair[side]] = seen.get(pair[side], 0) + n
        seen.pop(ABSENT, None)
        expected = {s: n for s, n in state_counts(release).items() if n}
        if seen != expected:
            raise InputError(f"{release.routing}: its piles {dict(sorted(seen.items()))} disagree with "
                             f"{STATS_FILE} {dict(sorted(expected.items()))}")


def _reasons(pending: Mapping[str, int]) -> list[str]:
    known = [r for r in ("unrouted", "no_text") if r in pending]
    return known + sorted(r for r in pending if r not in known)
