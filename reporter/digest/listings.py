"""One paper, one week: every listing of a `[digest] papers` path, and which papers each week decides.

`papers` is one file or a folder of files of any dates (a whole arXiv listing, several fetches, one
`YYYY-Www.jsonl` per week). Each listing (a record as a file lists it) has a week: its file's, when the
file is named after one (`2026-W20.jsonl`, what `reporter fetch --week` writes, whatever the records'
dates), else the week of its record's `published` (the arXiv listing's `crawl_date`). A source's
repeated listings of one paper in one file and one week are one listing (`fold_same_id`).

A paper is decided in the week it is first listed in: the weeks are decided in order, and a paper
that one of week W's four prior weeks decided is, listed again in W:

- decided again, tagged `new-version-of:YYYY-Www`, when W lists a newer version (both versions known);
- decided again when that prior week kept it (the seed's rule: novelty 0, DROP `already-covered`);
- otherwise not decided again: W lists it under `listed_again` with that week and its decision.

A paper no prior week decided (listed again more than four weeks on) is decided in W like a new one.
The week's papers are recorded in decisions.json (`inputs.papers`) by the sha256 of its listings, so a
papers folder that gains other weeks leaves the weeks already decided unchanged (docs/digest.md).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..hashing import canonical_json, sha256_text
from ..isoweek import parse_week, week_of, week_start
from ..pool.record import Record
from ..pool.sources.fold import folded_records, version_key
from .axes import PriorKeep
from .read import paper_files, read_listed
from .records import ListedAgain, WeekDecisions

_WEEK_NAME = re.compile(r"[0-9]{4}-W[0-9]{2}")


@dataclass(frozen=True)
class Listing:
    """One paper as one file lists it in one week."""

    record: Record
    """The record (a source's repeated listings of it in this file and week folded into one)."""
    week: str
    """The ISO week it is listed in."""
    file: str
    """Its file's name (a papers folder's files are named by their name only)."""
    where: str
    """Where it was read, without the folder: `2026-W20.jsonl: line 3`."""


@dataclass(frozen=True)
class Papers:
    """Every listing of a papers path (a file, or a folder of files of any dates), in reading order."""

    root: Path
    """The papers file or folder."""
    listings: tuple[Listing, ...]
    """Every listing: the files by name, each in its order."""
    named: tuple[tuple[str, str], ...] = ()
    """(week, file) of each file named after a week: the week is covered even when the file is empty."""

    def weeks(self) -> list[str]:
        """The weeks the papers cover (a listing, or a file named after the week), in order."""
        return sorted({x.week for x in self.listings} | {w for w, _ in self.named}, key=week_start)

    def listed_in(self, week: str) -> list[Listing]:
        """The listings of one week, in reading order."""
        return [x for x in self.listings if x.week == week]

    def files_of(self, week: str) -> list[str]:
        """The names of the files that list papers in the week (or are named after it), by name."""
        return sorted({x.file for x in self.listings if x.week == week} | {f for w, f in self.named if w == week})


@dataclass(frozen=True)
class PriorDecision:
    """What a prior week decided about a paper, as the next weeks see it when it is listed again."""

    week: str
    """The prior week."""
    decision: str
    """KEEP, REVIEW or DROP."""
    version: str | None
    """The version decided (None: not known)."""


@dataclass(frozen=True)
class WeekPapers:
    """What one week decides, and what it lists again without deciding it."""

    records: tuple[Record, ...]
    """The papers the week decides, in reading order (merged afterwards, across sources)."""
    new_versions: Mapping[str, str]
    """Paper id -> the prior week that decided an earlier version (tag `new-version-of:`)."""
    listed_again: tuple[ListedAgain, ...]
    """The papers listed again in the version a prior week decided, by id."""
    digest: dict[str, str]
    """`inputs.papers` of decisions.json: the files and the sha256 of the week's listings."""


def load_papers(path: Path) -> Papers:
    """Read every file of a papers path once and give each listing its week; InputError for a record with no date.

    A record in a file not named after a week needs `published`: without it
    there is no week to decide it in.
    """
    root = Path(path)
    folder = root if root.is_dir() else root.parent
    listings: list[Listing] = []
    named: list[tuple[str, str]] = []
    for file in paper_files(root):
        name = file.relative_to(folder).as_posix()
        week = _named_week(file)
        if week is not None:
            named.append((week, name))
        records, folds = read_listed(file)
        by_week: dict[str, list[Record]] = {}
        for record in records:
            by_week.setdefault(week or _dated_week(record), []).append(record)
        for w, group in by_week.items():
            for record in folded_records(group) if folds else group:
                listings.append(Listing(record, w, name, _short(record.where, folder)))
    return Papers(root, tuple(listings), tuple(named))


def week_papers(papers: Papers, week: str, decided: Mapping[str, PriorDecision]) -> WeekPapers:
    """The papers a week decides and the ones it lists again (module docstring), given what its prior decided."""
    listed = papers.listed_in(week)
    groups: dict[str, list[Listing]] = {}
    for x in listed:
        groups.setdefault(x.record.id, []).append(x)
    taken: set[str] = set()
    new_versions: dict[str, str] = {}
    again: list[ListedAgain] = []
    for paper, group in groups.items():
        prior = decided.get(paper)
        if prior is None:
            taken.add(paper)  # first listed this week (or more than four weeks after a week that decided it)
        elif _newer(max((x.record.version for x in group), key=version_key), prior.version):
            taken.add(paper)
            new_versions[paper] = prior.week
        elif prior.decision == "KEEP":
            taken.add(paper)  # novelty finds it a prior KEEP: DROP already-covered, as the seed says
        else:
            again.append(ListedAgain(paper, prior.week, prior.decision))
    lines = "".join(canonical_json({"record": x.record.to_json(), "where": x.where}) + "\n" for x in listed)
    digest = {"file": ", ".join(papers.files_of(week)) or papers.root.name, "sha256": sha256_text(lines)}
    return WeekPapers(tuple(x.record for x in listed if x.record.id in taken), new_versions,
                      tuple(sorted(again, key=lambda a: a.id)), digest)


def prior_decisions(weeks: Mapping[str, WeekDecisions]) -> dict[str, PriorDecision]:
    """Paper id -> what the newest of the given weeks that decided it decided (an id merged into a decision
    counts, its version unknown)."""
    out: dict[str, PriorDecision] = {}
    for w, doc in sorted(weeks.items(), key=lambda item: week_start(item[0])):
        for d in doc.decisions:
            for merged in d.merged_ids:
                out[merged] = PriorDecision(w, d.decision, None)
            out[d.id] = PriorDecision(w, d.decision, d.version)
    return out


def given_decisions(prior: Iterable[PriorKeep]) -> dict[str, PriorDecision]:
    """A prior given by a caller (its KEEPs) as prior decisions."""
    return {p.id: PriorDecision(p.week, "KEEP", None) for p in sorted(prior, key=lambda p: week_start(p.week))}


def check_covered(papers: Papers, weeks: Sequence[str]) -> None:
    """Refuse a week the papers do not cover (no listing, no file named after it), naming what they cover."""
    covered = set(papers.weeks())
    for week in weeks:
        if week in covered:
            continue
        span = f"they cover {papers.weeks()[0]} to {papers.weeks()[-1]}" if covered else "they list no paper"
        add = (f"add an empty {week}.jsonl to {papers.root} for a week without papers" if papers.root.is_dir()
               else f"give a folder holding a file named {week}.jsonl for a week without papers")
        raise InputError(f"{papers.root}: no paper is listed in {week} ({span}); fetch the week, or {add}")


def _named_week(file: Path) -> str | None:
    """The week a file is named after (`2026-W20.jsonl`, `2026-W20.xml.gz`), or None."""
    stem = file.name.split(".", 1)[0]
    return parse_week(stem, str(file)) if _WEEK_NAME.fullmatch(stem) else None


def _dated_week(record: Record) -> str:
    if record.published is None:
        raise InputError(f"{record.where} (id {record.id}): no date, so no week to decide it in: give it "
                         f"`published` (YYYY-MM-DD), or put it in a file named after its week (e.g. 2026-W20.jsonl)")
    return week_of(dt.date.fromisoformat(record.published))


def _newer(version: str | None, decided: str | None) -> bool:
    """Whether `version` is newer than the one decided; never when either is unknown."""
    return version is not None and decided is not None and version_key(version) > version_key(decided)


def _short(where: str, folder: Path) -> str:
    """Where a record was read, without its folder (the bytes of a week never depend on where the inputs live)."""
    prefix = f"{folder}/"
    return where[len(prefix):] if where.startswith(prefix) else where


__all__ = ["Listing", "Papers", "PriorDecision", "WeekPapers", "check_covered", "given_decisions",
           "load_papers", "prior_decisions", "week_papers"]
