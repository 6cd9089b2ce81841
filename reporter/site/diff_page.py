"""The diff page's model: what changed between an earlier release and this one, and why.

From the two releases' manifests (which of the six inputs changed),
statistics (every rule added, removed or edited, with the diff of its
spec as written; counts per pile) and the routing diff (reporter/site/diff.py:
works new in the pool and gone from it, per pile; moves of works in both,
with the rules deciding them before and now). Titles come from `Titles`
(samples, else the pool). No templates here.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from ..csvcells import csv_bytes
from ..plurals import count
from ..routing.artifacts import INPUT_NAMES, Release, RuleStat, RuleStats
from . import compute
from .charts import Stack, fmt, paired_chart
from .diff import ABSENT, DiffData, MovedWork, state_counts
from .links import (HOME, Href, against_path, diff_path, href, isolated, paper_href, release_path, rule_path, slug,
                    work_anchor)
from .models import (Comparison, Count, DiffPage, InputChange, Link, Move, MovedGroup, MovedView, PoolGroup, RuleChange,
                     SpecChange, StateChange, StateCount, Transition)
from .page_parts import download, meta, release_name, rule_link, short_id
from .titles import Titles

RULE_CHANGES = 20
SPEC_DIFF_LINES = 200
"""Lines of one rule's spec diff shown on the page; the rest are counted."""
NAMED = 5
"""Rules named in a summary sentence; the rest are counted."""
AGAINST_RECENT = 3
"""Besides its previous release, the newest release is compared with this many releases before that."""
DIFF_SERIES = (("s-before", "before"), ("s-after", "now"))
INPUT_WHAT = {
    "pool": "the works and their text",
    "overlay": "the text overlay",
    "specs": "the rule book: every rule's spec as written",
    "piles": "the piles, the title-only policy and the sample seed",
    "normalisation": "the text normalisation settings",
    "engine": "the routing engine's version",
}
INPUT_SHORT = {"pool": "the works", "overlay": "the text overlay", "specs": "the rule book", "piles": "the piles",
               "normalisation": "text normalisation", "engine": "the routing engine"}
"""Each input in a word or two, for the one-line summaries (its name follows in brackets)."""
MOVED_COLUMNS = ("work", "paper", "before", "decided before by", "now", "decided now by")
"""The columns of the CSV of every moved work."""


@dataclass(frozen=True)
class Pair:
    """A comparison the site renders: a release against an earlier one."""

    release: Release
    """The newer release."""
    base: Release
    """The earlier release."""
    previous: bool
    """`base` is the release before `release` in index.json (its page is diff.html)."""
    data: DiffData
    """The routing diff."""

    @property
    def path(self) -> str:
        """The page's site path (without extension)."""
        rid = self.release.release_id
        return diff_path(rid) if self.previous else against_path(rid, self.base.release_id)


def pairs_to_render(releases: Sequence[Release], against: Sequence[str] = ()) -> list[tuple[int, int]]:
    """(newer, earlier) index pairs: each release and its previous; the newest with AGAINST_RECENT more, and
    with every release `against` names (ids already resolved). The site stays bounded: 2 pages per release
    at most, plus the ones asked for."""
    out = [(i, i - 1) for i in range(1, len(releases))]
    if len(releases) > 2:
        last = len(releases) - 1
        ids = [r.release_id for r in releases]
        wanted = set(range(max(0, last - 1 - AGAINST_RECENT), last - 1)) | {ids.index(a) for a in against}
        out += [(last, j) for j in sorted(wanted, reverse=True) if j < last - 1]
    return out


def resolve_against(releases: Sequence[Release], names: Sequence[str]) -> list[str]:
    """The release ids `--against` names: a full id, a unique prefix of at least 6 hex, or a label."""
    from ..errors import InputError

    out = []
    for name in names:
        hits = [r.release_id for r in releases
                if r.release_id == name or (len(name) >= 6 and r.release_id.startswith(name))
                or (r.published is not None and r.published.name == name)]
        if len(set(hits)) != 1:
            known = ", ".join(short_id(r.release_id) for r in releases[-5:])
            raise InputError(f"--against {name!r}: {'names no' if not hits else 'names more than one'} release of "
                             f"index.json; give a release id, a unique prefix of 6 or more characters, or a label "
                             f"(the newest are {known})")
        if hits[0] == releases[-1].release_id:
            raise InputError(f"--against {name!r} is the newest release; name an earlier one to compare it with")
        out.append(hits[0])
    return out


def shown_ids(data: DiffData) -> set[str]:
    """The works a diff page shows (for the one read of their titles)."""
    ids = {w.work_id for _n, works in (data.into_paying, data.out_of_paying) for w in works}
    for groups in (data.new, data.left):
        ids |= {w.work_id for _state, _n, works in groups for w in works}
    return ids


def state_label(state: str, stats: RuleStats, other: RuleStats) -> str:
    """A state with what it means: `pending/unrouted · no rule matched`."""
    if state == ABSENT:
        return ABSENT
    plain = compute.plain_name(state, stats if any(p.name == state for p in stats.pile_order) else other)
    return state if plain == state else f"{state} · {plain}"


def build_diff_page(rel: Release, pair: Pair | None, titles: Titles,
                    comparisons: tuple[Comparison, ...] = (), compare_note: str = "") -> DiffPage:
    """This release against an earlier one (what changed, and why); for the first release, a page saying so."""
    rid = rel.release_id
    page = pair.path if pair is not None else diff_path(rid)
    name = release_name(page, rel)
    crumbs = [("Home", HOME), (f"Release {name.name}", release_path(rid))]
    if pair is None:
        return DiffPage(meta=meta(page, f"Release {name.name}: the first release", crumbs, archived=False),
                        name=name, base=None, previous=True, summary=(), inputs=(), specs=(), specs_same=0,
                        new_works=None, left_works=None, states=(), transitions=(), column_totals=(),
                        transitions_csv=None, changes=(), chart=None, rule_changes=(), moves=(), moved=(),
                        moved_total=0, moved_csv=None, comparisons=comparisons, compare_note=compare_note)
    base, data = pair.base, pair.data
    base_name = release_name(page, base)
    stats, before_stats = rel.stats, base.stats
    label = lambda s: state_label(s, stats, before_stats)  # noqa: E731
    transitions, col_totals = _transitions(data, label)
    before, after = state_counts(base), state_counts(rel)
    changes = tuple(StateChange(s, label(s), f"d-{slug(s)}", before.get(s, 0), after.get(s, 0),
                                f"{after.get(s, 0) - before.get(s, 0):+,}")
                    for s in data.states if s != ABSENT)
    chart = paired_chart("diff-chart", "change-table", "Works per pile before and now", DIFF_SERIES,
                         [Stack(isolated(c.state), c.key, (c.before, c.after)) for c in changes])
    specs, same = spec_changes(page, rel, base)

    def view(w: MovedWork) -> MovedView:
        title, note = titles.lookup(w.work_id)
        return MovedView(w.work_id, work_anchor(w.work_id), paper_href([w.work_id]), title, note, w.before,
                         w.after, w.before_winner or "—", w.after_winner or "—")

    def group(group_name: str, anchor: str, found: tuple[int, tuple[MovedWork, ...]]) -> MovedGroup:
        total, works = found
        views = tuple(view(w) for w in works)
        if total <= 1:
            note = "the one work" if total else "none"
        elif len(views) >= total:
            note = f"all {fmt(total)} works"
        else:
            note = f"a seeded sample of {fmt(len(views))} of {fmt(total)} works (seed {rel.samples.seed})"
        return MovedGroup(group_name, anchor, total, views, note)

    def pool_group(group_name: str, prefix: str, found: tuple) -> PoolGroup | None:
        if not found:
            return None
        counts = tuple(StateCount(s, label(s), f"{prefix}-{slug(s)}-n", f"{prefix}-{slug(s)}", n) for s, n, _w in found)
        samples = tuple(group(label(s), f"{prefix}-{slug(s)}", (n, works)) for s, n, works in found)
        return PoolGroup(group_name, prefix, sum(c.rows for c in counts), counts, samples)

    moved_total = data.moved.num_rows
    return DiffPage(
        meta=meta(page, f"Release {name.name} against {base_name.name}", crumbs, archived=False),
        name=name, base=base_name, previous=pair.previous,
        summary=summary_lines(rel, base, data, specs, same),
        inputs=tuple(InputChange(n, INPUT_WHAT[n], base.manifest.inputs[n] != rel.manifest.inputs[n],
                                 _digest(base.manifest.inputs[n]), _digest(rel.manifest.inputs[n]))
                     for n in INPUT_NAMES),
        specs=specs, specs_same=same,
        new_works=pool_group("Works new in the pool", "new", data.new),
        left_works=pool_group("Works that left the pool", "left", data.left),
        states=tuple(label(s) for s in data.states), transitions=transitions, column_totals=col_totals,
        transitions_csv=download(page, f"{page}-transitions.csv", len(transitions), "the same rows as the table"),
        changes=changes, chart=chart,
        rule_changes=_rule_changes(page, rel, base, data.handed),
        moves=tuple(Move(b, a, _rule_in(page, base, bw), _rule_in(page, rel, aw), n)
                    for b, a, bw, aw, n in data.moves_by_rule),
        moved=(group("Moved into a paying pile", "into-paying", data.into_paying),
               group("Moved out of a paying pile", "out-of-paying", data.out_of_paying)),
        moved_total=moved_total,
        moved_csv=download(page, f"{page}-moved.csv", moved_total,
                           f"all {fmt(moved_total)} works in both releases that changed pile, not a sample"),
        comparisons=comparisons, compare_note=compare_note)


def _rule_in(page: str, rel: Release, rule_id: str | None) -> Link | None:
    """A rule linked to its page in the release that decided with it (None: no rule)."""
    return rule_link(page, rel.release_id, rule_id, rel.stats.rule_ids())


def _digest(value: str) -> str:
    return value if value == "none" else value[:12]


def _transitions(data: DiffData, label) -> tuple[tuple[Transition, ...], tuple[tuple[str, int], ...]]:
    """The pile-to-pile table: a row per state before, a column per state now, and the column totals."""
    rows = []
    for b in data.states:
        cells = tuple((f"t-{slug(b)}--{slug(a)}", data.transitions.get((b, a), 0)) for a in data.states)
        total = sum(n for _k, n in cells)
        if total:
            rows.append(Transition(label(b), cells, total))
    totals = tuple((f"t-total--{slug(a)}", sum(data.transitions.get((b, a), 0) for b in data.states))
                   for a in data.states)
    return tuple(rows), totals


TRANSITION_CORNER = "before ↓ / now →"


def transition_table(page: DiffPage) -> tuple[tuple[str, ...], list[tuple[str | int, ...]]]:
    """The transition table's header and rows as the page shows them (rows, then the totals now)."""
    header = (TRANSITION_CORNER, *page.states, "total before")
    rows: list[tuple[str | int, ...]] = [(t.before, *(n for _k, n in t.cells), t.total) for t in page.transitions]
    rows.append(("total now", *(n for _k, n in page.column_totals), ""))
    return header, rows


def diff_files(page: DiffPage, data: DiffData | None) -> list[tuple[str, bytes]]:
    """The CSV files beside a diff page: its transition table, and every moved work (not only the sample)."""
    if page.base is None or data is None:
        return []
    header, rows = transition_table(page)
    moved = data.moved
    ids = moved.column("work_id").to_pylist()
    cols = [moved.column(c).to_pylist() for c in ("before", "before_rule", "after", "after_rule")]
    lines = ((wid, (paper_href([wid]) or Href("", "")).html, b, br or "—", a, ar or "—")
             for wid, b, br, a, ar in zip(ids, *cols))
    return [(f"{page.meta.path}-transitions.csv", csv_bytes(header, rows)),
            (f"{page.meta.path}-moved.csv", csv_bytes(MOVED_COLUMNS, lines))]


def spec_changes(page: str, rel: Release, base: Release) -> tuple[tuple[SpecChange, ...], int]:
    """Every rule added, edited or removed between base and rel, with its spec diff; and how many are the same."""
    now = {r.id: r for r in rel.stats.rules}
    then = {r.id: r for r in base.stats.rules}
    out, same = [], 0
    for change, ids in (("added", sorted(set(now) - set(then))),
                        ("edited", sorted(i for i in set(now) & set(then) if now[i].spec_text != then[i].spec_text)),
                        ("removed", sorted(set(then) - set(now)))):
        for rid in ids:
            a, b = then.get(rid), now.get(rid)
            lines = list(difflib.unified_diff(a.spec_text.splitlines() if a else [],
                                              b.spec_text.splitlines() if b else [],
                                              f"before/{rid}", f"now/{rid}", lineterm="", n=3))
            shown = lines[:SPEC_DIFF_LINES]
            home = rel if b is not None else base
            out.append(SpecChange(
                id=rid, anchor=f"spec-{slug(rid)}", change=change,
                rule=Link(rid, href(page, rule_path(home.release_id, rid))),
                pile=_arrow(a.pile if a else None, b.pile if b else None),
                won=_arrow(_wins(a), _wins(b)), diff="\n".join(shown), cut=len(lines) - len(shown)))
    same = len(set(now) & set(then)) - sum(1 for c in out if c.change == "edited")
    return tuple(out), same


def _wins(rule: RuleStat | None) -> str:
    if rule is None:
        return "—"
    return f"shadow ({fmt(rule.would_win or 0)} forecast)" if rule.shadow else fmt(rule.won)


def _arrow(before: str | None, after: str | None) -> str:
    if before == after:
        return str(before)
    return f"{before or '—'} → {after or '—'}"


def _rule_changes(page: str, rel: Release, base: Release,
                  handed: dict[str, tuple[int, int]] | None = None) -> tuple[RuleChange, ...]:
    now = {r.id: r.won for r in rel.stats.live()}
    then = {r.id: r.won for r in base.stats.live()}
    known = rel.stats.rule_ids()
    ids = sorted(set(now) | set(then), key=lambda i: (-abs(now.get(i, 0) - then.get(i, 0)), i))
    out = []
    for i in ids[:RULE_CHANGES]:
        delta = now.get(i, 0) - then.get(i, 0)
        if delta == 0:
            break
        link = href(page, rule_path(rel.release_id, i)) if i in known else None
        took, gave = (handed or {}).get(i, (0, 0))
        same = ", ".join(part for part in (f"took {took:,}" if took else "", f"gave up {gave:,}" if gave else "")
                         if part)
        out.append(RuleChange(Count(i, now.get(i, 0), link), then.get(i, 0), now.get(i, 0), f"{delta:+,}", same))
    return tuple(out)


def _names(ids: list[str]) -> str:
    shown = ", ".join(ids[:NAMED])
    return shown + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def summary_lines(rel: Release, base: Release, data: DiffData, specs: tuple[SpecChange, ...],
                  same: int) -> tuple[str, ...]:
    """What changed, and why, in a few plain sentences (the top of the diff page)."""
    changed = [n for n in INPUT_NAMES if base.manifest.inputs[n] != rel.manifest.inputs[n]]
    lines = [f"Inputs changed: {_inputs(changed)}; the others are the same." if changed else
             "No input changed."]
    by = {c: [s.id for s in specs if s.change == c] for c in ("added", "edited", "removed")}
    parts = [f"{len(ids)} {c} ({_names(ids)})" for c, ids in by.items() if ids]
    lines.append(f"Rules: {'; '.join(parts)}; {fmt(same)} the same." if parts else
                 f"Rules: all {fmt(same)} the same.")
    paying = set(data.paying)
    new = sum(n for _s, n, _w in data.new)
    left = sum(n for _s, n, _w in data.left)
    new_paying = sum(n for s, n, _w in data.new if s in paying)
    left_paying = sum(n for s, n, _w in data.left if s in paying)
    if new or left:
        lines.append(f"The pool gained {count(new, 'work')} ({fmt(new_paying)} of them go to screening) and lost "
                     f"{fmt(left)} ({fmt(left_paying)} of them had gone to screening).")
    else:
        lines.append("The pool holds the same works.")
    moved = data.moved.num_rows
    lines.append(f"{count(moved, 'work')} in both releases changed pile: {fmt(data.into_paying[0])} into a paying pile, "
                 f"{fmt(data.out_of_paying[0])} out of one." if moved else
                 "No work in both releases changed pile.")
    then, now = (sum(r.stats.piles[p] for p in compute.paying_piles(r.stats)) for r in (base, rel))
    lines.append(f"To screening: {fmt(then)} → {fmt(now)} ({now - then:+,}).")
    return tuple(lines)


def change_line(rel: Release, base: Release | None, data: DiffData | None) -> str:
    """One line for the home page: what changed since the previous release."""
    if base is None or data is None:
        return "The first release."
    changed = [n for n in INPUT_NAMES if base.manifest.inputs[n] != rel.manifest.inputs[n]]
    specs, _same = spec_changes(diff_path(rel.release_id), rel, base)
    counts = {c: sum(1 for s in specs if s.change == c) for c in ("added", "edited", "removed")}
    rules = ", ".join(f"{n} {c}" for c, n in counts.items() if n) or "none changed"
    new, left = (sum(n for _s, n, _w in g) for g in (data.new, data.left))
    then, now = (sum(r.stats.piles[p] for p in compute.paying_piles(r.stats)) for r in (base, rel))
    return (f"Changed: {_inputs(changed) or 'nothing'}. Rules: {rules}. Works: {fmt(new)} new, {fmt(left)} gone, "
            f"{fmt(data.moved.num_rows)} moved pile. To screening: {fmt(then)} → {fmt(now)}.")


def _inputs(names: list[str]) -> str:
    """Changed inputs in plain words, each with its name: `the works (pool), the rule book (specs)`."""
    return ", ".join(f"{INPUT_SHORT[n]} ({n})" for n in names)
