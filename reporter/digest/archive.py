"""The digest archive's reader (docs/design/digest.md): one folder per ISO week, and the prior of a week.

`ARCHIVE/YYYY-Www/decisions.json` holds a week's decisions, calibration,
watchlist drift, merges, and the sha256 of every input (papers, watchlist,
criteria, each prior week's decisions.json); `novelty.jsonl` beside it holds
the graph's verdicts on its KEEPs, and the pages engineer writes the rendered
pages in the site. The newest version of each week is its decisions.json (a
forced re-publish keeps the old one beside it as
`decisions.superseded-<sha12>.json`).

This module only reads: the published weeks, a week's decisions and the head
of its document (what it was decided from), typed and checked (the checks:
`reporter.digest.week_checks`), for the site and the prior of the next week. Deciding and publishing weeks is
`reporter.digest.weeks`; the calendar (week names and their arithmetic) is
the shared leaf `reporter.isoweek`.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import MiB, parse_json, read_capped
from ..hashing import sha256_bytes
from ..isoweek import is_week, shift_week, week_start
from .close_read import CloseEntry, read_close
from .also_in import read_also_in
from .config import DEFAULT_TOPIC
from .lists_diff import FileChange, ListsDiff, read_lists_diff
from .judge.archived import Disagreement, JudgeSpend, WeekJudge, read_judge
from .records import (DROP_CAUSES, EARLIER_VERSION_NOVELTY, REVIEW_REASONS, SILENT_CRITERIA, Decision, JudgeEntry,
                      ListedAgain, WeekDecisions, review_reason_of)
from .week_checks import check_counts, check_decisions, check_listed_again, score_setting, whole_setting

DECISIONS_FILE = "decisions.json"
DECISIONS_CAP = 64 * MiB
"""The largest decisions.json read: a real week of 2,000 papers (abstracts included) is about 5 MB, a generated
week of 10,000 about 25 MB (docs/limits.md)."""
GRAPH_FILE = "novelty.jsonl"
"""Beside a week's decisions.json: the graph's verdicts on its KEEPs, written by the build that published it."""
PRIOR_WEEKS = 4
KEEP_AT, REVIEW_AT = 70, 50
"""The thresholds a week's page shows when its decisions.json names none."""


# The prior -----------------------------------------------------------------------------------------------


def prior_weeks(week: str) -> list[str]:
    """The weeks whose KEEPs are week W's prior: W-4 .. W-1, oldest first."""
    return [shift_week(week, -k) for k in range(PRIOR_WEEKS, 0, -1)]


# The document head, typed ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputFile:
    """One input a week was decided from, as its decisions.json names it."""

    file: str
    """The file's name (never its folder)."""
    sha256: str
    """The hex sha256 of its bytes."""


@dataclass(frozen=True)
class WeekSettings:
    """The settings a week was decided with (`settings` of its decisions.json)."""

    max_kept: int | None
    """The most KEEPs the week could have (None: not recorded)."""
    keep_threshold: int
    """The lowest score that is KEEP (KEEP_AT when not recorded)."""
    review_threshold: int
    """The lowest score that is REVIEW (REVIEW_AT when not recorded)."""
    prior: str
    """`archive`, `none` or `given`: where the prior came from."""
    watchlist: str
    """The watchlist's name."""
    criteria: str
    """The criteria document's name."""
    topic: tuple[str, str] | None = None
    """(name, title) of the topic a week of a named topic was decided for (`settings.topic`); None otherwise."""


@dataclass(frozen=True)
class WeekHead:
    """What a week's decisions.json says it was decided from: the rules version, the settings, the inputs."""

    rules: str
    """The version of the scoring rules (`digest.1`, `digest.2`, `digest.3`)."""
    settings: WeekSettings
    """The thresholds, the cap and the prior's origin."""
    papers: InputFile | None
    """The week's papers file (None when the document names none)."""
    watchlist: InputFile | None
    """The watchlist file."""
    criteria: InputFile | None
    """The criteria file."""
    prior: tuple[tuple[str, str], ...]
    """(week, sha256 of its decisions.json) of each prior week read, by week."""

    def files(self) -> tuple[tuple[str, InputFile], ...]:
        """(name, file) of the papers, watchlist and criteria files the document names, in that order."""
        named = (("papers", self.papers), ("watchlist", self.watchlist), ("criteria", self.criteria))
        return tuple((name, f) for name, f in named if f is not None)


@dataclass(frozen=True)
class RejectedEntry:
    """A watchlist entry whose matches the criteria keep rejecting (`entries_rejected_by_criteria`)."""

    phrase: str
    """The watchlist phrase."""
    matched: int
    """Papers it matched this week."""
    rejected: int
    """Of those, rejected by the criteria."""
    dropped: int
    """Of those, dropped."""
    causes: tuple[tuple[str, int], ...]
    """(drop cause, papers) as listed."""
    criteria_lines: tuple[tuple[str, int], ...]
    """(criteria line, papers) as listed."""
    ids: tuple[str, ...]
    """The papers."""


@dataclass(frozen=True)
class MissedConcept:
    """An In scope concept of the criteria the watchlist misses (`concepts_missed_by_watchlist`)."""

    concept: str
    """The concept."""
    missed: int
    """Papers it matched that no watchlist entry did."""
    ids: tuple[str, ...]
    """The papers."""


@dataclass(frozen=True)
class Drift:
    """The watchlist drift a week surfaced (never applied)."""

    note: str
    """What the drift is for, as the document says it ("" when it says nothing)."""
    rejected: tuple[RejectedEntry, ...]
    """The entries the criteria keep rejecting."""
    missed: tuple[MissedConcept, ...]
    """The concepts the watchlist misses."""


@dataclass(frozen=True)
class MergeEntry:
    """What the cross-source merge folded together, as decisions.json lists it."""

    survivor: str
    """The id kept."""
    merged_ids: tuple[str, ...]
    """The ids folded into it."""
    reason: str
    """Why (same id, same DOI, similar title, ...)."""
    similarity: float | None
    """The title similarity when that was the reason, else None."""
    where: tuple[str, ...]
    """Where each listing was read."""


@dataclass(frozen=True)
class ArchivedWeek:
    """One week of the archive read back: its decisions, the head of its document, and its identity."""

    decisions: WeekDecisions
    """The decisions, calibration, drift and merges."""
    head: WeekHead
    """What it was decided from."""
    drift: Drift
    """The watchlist drift it surfaced."""
    merges: tuple[MergeEntry, ...]
    """The merges, typed."""
    sha256: str
    """sha256 of the decisions.json bytes."""
    source: str
    """Where it was read (for messages)."""
    judge: WeekJudge | None = None
    """The criteria judge's week (its cost, where it and the keyword rule disagree); None without a judge."""
    close: tuple[CloseEntry, ...] | None = None
    """Close in meaning, missed by the watchlist (`close_in_meaning`); None for a week decided without meaning."""
    lists_diff: ListsDiff | None = None
    """The watchlist and criteria lines changed since the week before (`lists_diff`); None when not recorded."""
    also_in: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Per paper another topic kept this week: (name, title) of each such topic (`also_in`); {} without topics."""

    @property
    def week(self) -> str:
        """The ISO week."""
        return self.decisions.week

    @property
    def listed_again(self) -> tuple[ListedAgain, ...]:
        """The papers listed again this week, not decided again: each with the prior week and its decision."""
        return self.decisions.listed_again


# The archive ----------------------------------------------------------------------------------------------


def published_weeks(archive: Path) -> list[str]:
    """The weeks published in an archive (a `YYYY-Www/decisions.json`), in order."""
    archive = Path(archive)
    if not archive.is_dir():
        return []
    weeks = [p.parent.name for p in archive.glob(f"*/{DECISIONS_FILE}") if is_week(p.parent.name)]
    return sorted(weeks, key=week_start)


def load_week(archive: Path, week: str) -> WeekDecisions:
    """A published week's decisions (its newest version); InputError naming the file when unreadable."""
    return read_published(Path(archive), week)[0]


def read_published(archive: Path, week: str) -> tuple[WeekDecisions, dict[str, Any], bytes]:
    """A published week read once: its decisions, its document and its bytes (the sha256 is of these)."""
    path = Path(archive) / week / DECISIONS_FILE
    data = week_bytes(archive, week)
    if data is None:
        raise InputError(f"{path}: week {week} is not published in {archive}")
    return (*read_decisions(data, str(path)), data)


def week_bytes(archive: Path, week: str) -> bytes | None:
    """The bytes of a week's decisions.json; None when it has none; InputError when it is there but is not a
    file this tool can read (a folder, a FIFO, a link to a device, no permission) or larger than DECISIONS_CAP
    (refused before it is read: a link to a huge file never fills memory)."""
    path = Path(archive) / week / DECISIONS_FILE
    if not os.path.lexists(path):
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        return read_capped(path, DECISIONS_CAP, "digest archive file")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc}); a week's decisions.json is a file this "
                         f"tool wrote: move this aside (or restore the file)") from None


def read_decisions(data: bytes, source: str) -> tuple[WeekDecisions, dict[str, Any]]:
    """A decisions.json's bytes read back: (its decisions, its document); InputError naming `source`.

    A lone surrogate (a `\\ud800` escape, which names no character) is read as
    U+FFFD (reporter.files.parse_json), so the week can be shown and written.
    """
    document = parse_json(data, source)
    try:
        return WeekDecisions.from_json(document), document
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(f"{source}: not a decisions.json this tool wrote ({type(exc).__name__}: {exc}); "
                         f"restore it, or re-publish the week with --force") from None


def read_week(data: bytes, source: str) -> ArchivedWeek:
    """A week from its decisions.json bytes (as published, or as a build will publish them), typed and checked.

    Every count a page shows must follow from the decisions: a calibration that
    disagrees with them, thresholds that are not scores, a paper listed twice
    or a score or cause that does not fit its decision are refused, naming
    `source`. Every REVIEW comes with its `review_reason`: a week decided before
    it was recorded gets the one its decision had (`review_reason_of`, with the
    week's thresholds), so its page groups its papers as before.
    """
    decisions, document = read_decisions(data, source)
    check_counts(decisions, source)
    head = _head(document, source)
    decisions = _with_review_reasons(decisions, head.settings)
    check_decisions(decisions.decisions, source)
    check_listed_again(decisions, prior_weeks(decisions.week) if is_week(decisions.week) else (), source)
    try:
        drift, merges = _drift(_dict(decisions.watchlist_drift)), tuple(_merge(m) for m in decisions.merges)
        judge = read_judge(document.get("judge"))
        close = read_close(document.get("close_in_meaning"), decisions.decisions)
        changed = read_lists_diff(document.get("lists_diff"))
        also = read_also_in(document.get("also_in"), (d.id for d in decisions.decisions))
    except (TypeError, ValueError, AttributeError, OverflowError, KeyError) as exc:
        raise InputError(f"{source}: not a decisions.json this tool wrote ({type(exc).__name__}: {exc}); "
                         f"restore it, or re-publish the week with --force") from None
    return ArchivedWeek(decisions, head, drift, merges, sha256_bytes(data), source, judge, close, changed, also)


def archived_weeks(archive: Path) -> list[ArchivedWeek]:
    """Every published week of an archive, oldest first, typed and checked (`read_week`)."""
    weeks = []
    for week in published_weeks(Path(archive)):
        found = read_week(week_bytes(archive, week) or b"", str(Path(archive) / week / DECISIONS_FILE))
        if found.week != week:
            raise InputError(f"{found.source}: says week {found.week} but sits in the folder of {week}")
        weeks.append(found)
    return weeks


def archive_state(archive: Path, weeks: Iterable[str]) -> dict[str, str | None]:
    """Per week: the sha256 of its published decisions.json, or None when it is not published."""
    out = {}
    for week in weeks:
        data = week_bytes(archive, week)
        out[week] = None if data is None else sha256_bytes(data)
    return out


# Reading the head ----------------------------------------------------------------------------------------


def _with_review_reasons(week: WeekDecisions, settings: WeekSettings) -> WeekDecisions:
    """The week with a `review_reason` on every REVIEW: as recorded, or derived for a week decided before it was."""
    if all(d.review_reason is not None for d in week.decisions if d.decision == "REVIEW"):
        return week
    return dataclasses.replace(week, decisions=tuple(
        dataclasses.replace(d, review_reason=review_reason_of(d.tags, d.score, settings.keep_threshold,
                                                              settings.review_threshold))
        if d.decision == "REVIEW" and d.review_reason is None else d for d in week.decisions))


def _head(document: dict[str, Any], source: str) -> WeekHead:
    """The head of a decisions.json document; a part that is not an object reads as empty."""
    inputs, settings = _dict(document.get("inputs")), _dict(document.get("settings"))
    return WeekHead(
        rules=str(document.get("rules", "")),
        settings=WeekSettings(
            max_kept=whole_setting(settings, "max_kept", None, source),
            keep_threshold=score_setting(settings, "keep_threshold", KEEP_AT, source),
            review_threshold=score_setting(settings, "review_threshold", REVIEW_AT, source),
            prior=str(settings.get("prior", "archive")), watchlist=str(settings.get("watchlist", "")),
            criteria=str(settings.get("criteria", "")), topic=_topic(settings.get("topic"), source)),
        papers=_input(inputs.get("papers")), watchlist=_input(inputs.get("watchlist")),
        criteria=_input(inputs.get("criteria")),
        prior=tuple((str(w), str(sha)) for w, sha in sorted(_dict(inputs.get("prior")).items())))


def _drift(drift: dict[str, Any]) -> Drift:
    return Drift(
        note=str(drift.get("note") or ""),
        rejected=tuple(RejectedEntry(
            phrase=str(e.get("phrase", "")), matched=int(e.get("matched", 0)),
            rejected=int(e.get("rejected_by_criteria", 0)), dropped=int(e.get("dropped", 0)),
            causes=tuple((str(k), int(v)) for k, v in (e.get("causes") or {}).items()),
            criteria_lines=tuple((str(k), int(v)) for k, v in (e.get("criteria_lines") or {}).items()),
            ids=tuple(str(x) for x in e.get("ids", ()))) for e in drift.get("entries_rejected_by_criteria") or ()),
        missed=tuple(MissedConcept(str(k.get("concept", "")), int(k.get("missed_by_watchlist", 0)),
                                   tuple(str(x) for x in k.get("ids", ())))
                     for k in drift.get("concepts_missed_by_watchlist") or ()))


def _merge(m: dict[str, Any]) -> MergeEntry:
    similarity = m.get("similarity")
    return MergeEntry(survivor=str(m.get("survivor", "")), merged_ids=tuple(str(x) for x in m.get("merged_ids", ())),
                      reason=str(m.get("reason", "")), similarity=None if similarity is None else float(similarity),
                      where=tuple(str(x) for x in m.get("where", ())))


def _dict(value: Any) -> dict[str, Any]:
    """A part of decisions.json read as an object: itself, or empty when it is not one."""
    return value if isinstance(value, dict) else {}


def _input(value: Any) -> InputFile | None:
    if not isinstance(value, dict):
        return None
    return InputFile(str(value.get("file", "")), str(value.get("sha256", "")))



def _topic(value: Any, source: str) -> tuple[str, str] | None:
    """`settings.topic` ({"name", "title"}), or None when the week was decided for no named topic."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not isinstance(value.get("title"), str):
        raise InputError(f"{source}: settings.topic is not {{\"name\", \"title\"}}; restore the file, or "
                         f"re-publish the week with --force")
    return value["name"], value["title"]


__all__ = ["DECISIONS_FILE", "DEFAULT_TOPIC", "DROP_CAUSES", "EARLIER_VERSION_NOVELTY", "GRAPH_FILE", "REVIEW_REASONS",
           "SILENT_CRITERIA", "ArchivedWeek", "Decision", "Disagreement", "Drift",
           "FileChange", "InputFile", "JudgeEntry", "JudgeSpend", "ListedAgain", "WeekJudge",
           "MergeEntry", "MissedConcept", "RejectedEntry", "WeekDecisions", "WeekHead", "WeekSettings", "archive_state",
           "archived_weeks", "load_week", "prior_weeks", "published_weeks", "read_decisions", "read_published",
           "read_week", "week_bytes"]
