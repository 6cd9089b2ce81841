"""The reader's feedback (docs/digest.md, "The reader's feedback"): marks, and the quality they measure.

A reader marks papers of published weeks `wanted` or `not-wanted`, by the key
each page and e-mail shows (`paper_key`: eight characters of the id's
sha256) or by the paper's id, from `--wanted KEY...` / `--not-wanted KEY...`
or a sheet (CSV, `key` or `id` and `mark` columns). Every mark is kept, in
the order recorded, in the workspace's `state/feedback.json` (`FEEDBACK_FILE`),
written atomically under the state folder's lock: a run killed while
writing leaves the file as it was before or as it is after, and two runs at
once take turns, neither losing the other's marks. The latest mark of a
paper is the one that counts (`latest`).

From the marks and the archive: `measure` gives the KEEP precision of the
last QUALITY_WEEKS weeks with its Wilson interval, and the wanted papers that
were not KEEP, each with the axis that missed it (`missed_by`). Proposals
(what a new watchlist phrase or criteria concept would have changed) are
`reporter.digest.proposals`. Nothing here changes a decision, the watchlist or
the criteria.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..csvcells import uncell
from ..errors import InputError
from ..files import parse_json, read_capped, write_json
from ..locks import locked
from .archive import ArchivedWeek, Decision
from .records import paper_key

FEEDBACK_FILE = "feedback.json"
"""The marks, in the workspace's state folder."""
MARKS = ("wanted", "not-wanted")
"""What a mark says."""
QUALITY_WEEKS = 8
"""The measured precision covers the last this many published weeks."""
FEEDBACK_LIMIT = 64 * 1024 * 1024
"""The most bytes of feedback.json or of a sheet read (a mark is about 150 bytes: some 400,000 marks)."""
SHEET_MARKS = {"wanted": "wanted", "not-wanted": "not-wanted", "not wanted": "not-wanted", "unwanted": "not-wanted"}
"""A sheet's `mark` cell (any case, spaces around ignored); empty is no mark."""


@dataclass(frozen=True)
class Paper:
    """A decided paper of a published week, as the feedback reads it."""

    id: str
    key: str
    week: str
    decision: Decision


@dataclass(frozen=True)
class Mark:
    """One mark as recorded."""

    id: str
    key: str
    week: str
    """The week that decided the paper (the newest, when several did)."""
    mark: str
    """`wanted` or `not-wanted`."""
    source: str
    """`--wanted`, `--not-wanted` or `sheet NAME`."""
    n: int
    """Its place in the record (1 for the first mark ever recorded): the latest of a paper wins."""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "key": self.key, "week": self.week, "mark": self.mark, "source": self.source,
                "n": self.n}


def papers(weeks: Sequence[ArchivedWeek]) -> dict[str, Paper]:
    """Every decided paper of the archive by id. A paper decided in two weeks is the newer decision, unless that
    one only dropped it as already covered (its KEEP, the week before, is what the reader saw)."""
    out: dict[str, Paper] = {}
    for week in weeks:
        for d in week.decisions.decisions:
            if d.id in out and d.cause == "already-covered":
                continue
            out[d.id] = Paper(d.id, d.key or paper_key(d.id), week.week, d)
    return out


def resolve(tokens: Iterable[str], known: dict[str, Paper], where: str) -> list[Paper]:
    """Each token (a key, or a paper's id) as the paper it names; InputError naming every one that names none."""
    by_key: dict[str, list[Paper]] = {}
    for p in known.values():
        by_key.setdefault(p.key, []).append(p)
    found, unknown, ambiguous = [], [], []
    for token in tokens:
        text = token.strip()
        if text in known:
            found.append(known[text])
        elif len(by_key.get(text.lower(), ())) == 1:
            found.append(by_key[text.lower()][0])
        elif text.lower() in by_key:
            ambiguous.append(f"{text} ({', '.join(sorted(p.id for p in by_key[text.lower()]))})")
        else:
            unknown.append(text)
    if unknown or ambiguous:
        parts = []
        if unknown:
            shown = ", ".join(repr(u) for u in unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10
                                                                  else "")
            parts.append(f"no published week decided a paper of key or id {shown}")
        if ambiguous:
            parts.append(f"these keys name several papers, give the id instead: {'; '.join(ambiguous)}")
        raise InputError(f"{where}: {'; '.join(parts)}; nothing was recorded (the keys are on each week's page "
                         f"and e-mail)")
    return found


def read_sheet(path: Path, known: dict[str, Paper]) -> list[tuple[Paper, str]]:
    """A reader's sheet: CSV in UTF-8 (a byte order mark allowed) with a `key` or an `id` column and a `mark`
    column (`wanted`, `not-wanted`, or empty for none); other columns are kept for the reader and not read."""
    try:
        data = read_capped(path, FEEDBACK_LIMIT, "--sheet")
    except FileNotFoundError:
        raise InputError(f"--sheet {path}: cannot read it (no such file)") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"--sheet {path}: not UTF-8 ({exc}); save the sheet as CSV in UTF-8") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"--sheet {path}: not CSV ({exc})") from None
    header = [uncell(h).strip().lower() for h in rows[0]] if rows else []
    if "mark" not in header or not ({"key", "id"} & set(header)):
        raise InputError(f"--sheet {path}: the header must name a `mark` column and a `key` (or `id`) column, "
                         f"e.g. key,title,mark")
    at_mark, at_paper = header.index("mark"), header.index("key" if "key" in header else "id")
    marked: list[tuple[str, str, int]] = []
    for number, row in enumerate(rows[1:], start=2):
        cell = uncell(row[at_mark]).strip().lower() if at_mark < len(row) else ""
        token = uncell(row[at_paper]).strip() if at_paper < len(row) else ""
        if not cell:
            continue
        if cell not in SHEET_MARKS:
            raise InputError(f"--sheet {path}: row {number}: mark {cell!r:.40} is not wanted or not-wanted; "
                             f"write one of them, or leave the cell empty")
        if not token:
            raise InputError(f"--sheet {path}: row {number}: a mark without a key")
        marked.append((token, SHEET_MARKS[cell], number))
    found = resolve([t for t, _, _ in marked], known, f"--sheet {path}")
    return [(p, mark) for p, (_, mark, _) in zip(found, marked)]


def read_marks(state: Path) -> list[Mark]:
    """Every mark recorded in the state folder, oldest first ([] before the first)."""
    path = Path(state) / FEEDBACK_FILE
    try:
        data = read_capped(path, FEEDBACK_LIMIT, "the feedback record")
    except FileNotFoundError:
        return []
    doc = parse_json(data, str(path))
    try:
        marks = [Mark(str(m["id"]), str(m["key"]), str(m["week"]), m["mark"], str(m["source"]), int(m["n"]))
                 for m in doc["marks"]]
    except (KeyError, TypeError, ValueError):
        marks = None
    if marks is None or any(m.mark not in MARKS for m in marks):
        raise InputError(f"{path}: not a feedback record ({{\"marks\": [{{\"id\", \"key\", \"week\", \"mark\", "
                         f"\"source\", \"n\"}}, ...]}}); restore it from a backup")
    return marks


def record(state: Path, marked: Sequence[tuple[Paper, str]], source: str) -> list[Mark]:
    """Append the marks to the record, atomically under the state folder's lock; the marks recorded."""
    state = Path(state)
    with locked(state):
        before = read_marks(state)
        n = before[-1].n if before else 0
        new = [Mark(p.id, p.key, p.week, mark, source, n + i) for i, (p, mark) in enumerate(marked, 1)]
        write_json(state / FEEDBACK_FILE, {"schema_version": 1, "marks": [m.to_json() for m in before + new]})
    return new


def latest(marks: Iterable[Mark]) -> dict[str, Mark]:
    """Each paper's latest mark, by id."""
    out: dict[str, Mark] = {}
    for m in sorted(marks, key=lambda m: m.n):
        out[m.id] = m
    return out


def missed_by(d: Decision) -> str:
    """The axis (or rule) that kept a paper from KEEP, in words a reader can act on."""
    tags = set(d.tags)
    if d.cause == "already-covered":
        return "novelty: kept in an earlier week"
    if "demoted-for-cap" in tags:
        return "the cap: over max_kept"
    if "no-abstract" in tags:
        return "no abstract: never KEEP"
    if {"judges-disagree", "judge-failed"} & tags:
        return "the criteria judges: disagreed or failed"
    if "criteria-silent" in tags:
        return "criteria: silent (no concept matched)"
    if d.cause in ("look-alike-trap", "not-in-scope", "fails-required") or d.axes.criteria == 0:
        return f"criteria: {d.cause or 'scored 0'}"
    if d.axes.match == 0:
        return "match: no watchlist phrase"
    return "match: a weak match" if d.axes.match <= d.axes.criteria else "criteria: a partial fit"


def measure(weeks: Sequence[ArchivedWeek], marks: Iterable[Mark], last: int = QUALITY_WEEKS) -> dict[str, Any]:
    """KEEP precision over the last `last` weeks (wanted KEEPs of the marked KEEPs) with its Wilson interval, and
    every wanted paper of those weeks that was not KEEP, with the axis that missed it."""
    shown = list(weeks)[-last:]
    marked = latest(marks)
    wanted_keeps = marked_keeps = 0
    missed = []
    for p in papers(shown).values():  # each paper once: a KEEP dropped again as already covered is a KEEP
        d, m = p.decision, marked.get(p.id)
        if m is None:
            continue
        if d.decision == "KEEP":
            marked_keeps += 1
            wanted_keeps += m.mark == "wanted"
        elif m.mark == "wanted":
            missed.append({"id": d.id, "key": p.key, "week": p.week, "title": d.title, "decision": d.decision,
                           "score": d.score, "missed_by": missed_by(d)})
    from ..routing.labels import wilson  # with polars: loaded by the measure, not by every digest run

    low, high = wilson(wanted_keeps, marked_keeps)
    return {"weeks": [w.week for w in shown], "keep_marked": marked_keeps, "keep_wanted": wanted_keeps,
            "precision": round(wanted_keeps / marked_keeps, 4) if marked_keeps else None,
            "interval": [round(low, 4), round(high, 4)] if marked_keeps else None,
            "wanted_not_keep": missed}


__all__ = ["FEEDBACK_FILE", "MARKS", "QUALITY_WEEKS", "Mark", "Paper", "latest", "measure", "missed_by", "papers",
           "read_marks", "read_sheet", "record", "resolve"]


def wanted_texts(state: Path, archive: Path) -> dict[str, tuple[str, str]]:
    """The papers the reader's latest mark says are wanted: id -> (the week that decided it, its title and abstract
    as that week's decisions.json records them), read once per week; a paper whose week is not in `archive` (another
    archive given by flag) is left out. What the close-in-meaning list of later weeks reads ("Meaning")."""
    from .archive import read_published, week_bytes

    wanted = [m for m in latest(read_marks(state)).values() if m.mark == "wanted"]
    out: dict[str, tuple[str, str]] = {}
    for week in sorted({m.week for m in wanted}):
        if week_bytes(archive, week) is None:
            continue
        decided = {d.id: d for d in read_published(archive, week)[0].decisions}
        for m in wanted:
            d = decided.get(m.id) if m.week == week else None
            if d is not None:
                out[m.id] = (week, f"{d.title}. {d.abstract}" if d.abstract else d.title)
    return out
