"""The digest archive and the patterns (docs/design/digest.md): one folder per ISO week, run in order.

`ARCHIVE/YYYY-Www/decisions.json` holds a week's decisions, calibration,
watchlist drift, merges, and the sha256 of every input (papers, watchlist,
criteria, each prior week's decisions.json); the pages engineer writes the
rendered pages beside it. The prior of week W is the KEEPs of W-1 .. W-4
as published (the newest version of each week is its decisions.json; a
forced re-publish keeps the old one beside it as
`decisions.superseded-<sha12>.json`).

Patterns: A, one week (`run_week`); B, catch-up (`run_weeks` over several
weeks, in order, each week's KEEPs in the next week's prior; every week is
gathered and decided before any is written, so a refusal writes nothing);
C, a high `max_kept` (the command prints the full ranking); D, no prior.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import locked, write_bytes
from ..hashing import dump_json, sha256_file
from .axes import PriorKeep
from .config import DigestSettings
from .criteria import Criteria, load_criteria
from .decide import Thresholds, WeekOutcome, decide_week
from .merge import Merge, merge_records
from .read import read_papers
from .records import Record, WeekDecisions
from .watchlist import Watchlist, load_watchlist

DECISIONS_FILE = "decisions.json"
PRIOR_WEEKS = 4
RULES = "digest.1"
"""The version of the scoring rules, recorded in every decisions.json (same inputs and rules, same bytes)."""
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


# Weeks --------------------------------------------------------------------------------------------------


def parse_week(text: str, where: str = "--week") -> str:
    """Check an ISO week `YYYY-Www` (week 53 only in years that have one); InputError naming `where`."""
    m = _WEEK.match(text or "")
    if m:
        try:
            dt.date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
            return text
        except ValueError:
            pass
    raise InputError(f"{where}: {text!r} is not an ISO week; write YYYY-Www, e.g. 2026-W20 "
                     f"(weeks 01 to 52, or 53 in a year that has one)")


def week_start(week: str) -> dt.date:
    """The Monday of an ISO week."""
    year, w = week.split("-W")
    return dt.date.fromisocalendar(int(year), int(w), 1)


def week_of(day: dt.date) -> str:
    """The ISO week a date falls in."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def shift_week(week: str, n: int) -> str:
    """The week n weeks after (n < 0: before) `week`."""
    return week_of(week_start(week) + dt.timedelta(weeks=n))


def week_range(first: str, last: str) -> list[str]:
    """Every week from `first` to `last`, both included, in order."""
    if week_start(last) < week_start(first):
        raise InputError(f"--from {first} is after --to {last}")
    weeks = [first]
    while weeks[-1] != last:
        weeks.append(shift_week(weeks[-1], 1))
    return weeks


# The archive ----------------------------------------------------------------------------------------------


def published_weeks(archive: Path) -> list[str]:
    """The weeks published in an archive (a `YYYY-Www/decisions.json`), in order."""
    archive = Path(archive)
    if not archive.is_dir():
        return []
    weeks = [p.parent.name for p in archive.glob(f"*/{DECISIONS_FILE}") if _is_week(p.parent.name)]
    return sorted(weeks, key=week_start)


def load_week(archive: Path, week: str) -> WeekDecisions:
    """A published week's decisions (its newest version); InputError naming the file when unreadable."""
    path = Path(archive) / week / DECISIONS_FILE
    try:
        return WeekDecisions.from_json(json.loads(path.read_bytes()))
    except FileNotFoundError:
        raise InputError(f"{path}: week {week} is not published in {archive}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: not a decisions.json this tool wrote ({type(exc).__name__}: {exc}); "
                         f"restore it, or re-publish the week with --force") from None


def prior_weeks(week: str) -> list[str]:
    """The weeks whose KEEPs are week W's prior: W-4 .. W-1, oldest first."""
    return [shift_week(week, -k) for k in range(PRIOR_WEEKS, 0, -1)]


def prior_keeps(weeks: dict[str, WeekDecisions]) -> list[PriorKeep]:
    """The KEEPs of the given weeks, as novelty's prior."""
    return [PriorKeep(d.id, d.title, w) for w, doc in sorted(weeks.items()) for d in doc.kept()]


def publish_week(archive: Path, week: str, data: bytes, *, force: bool = False) -> tuple[Path, Path | None]:
    """Write ARCHIVE/WEEK/decisions.json; refuse an existing week unless forced, keeping the old one beside.

    Returns (decisions.json, the superseded copy or None). Re-publishing the same
    bytes changes nothing.
    """
    with locked(archive):
        target = Path(archive) / week / DECISIONS_FILE
        kept = None
        if target.exists():
            old = target.read_bytes()
            if not force:
                raise _published(target)
            if old == data:
                return target, None
            kept = target.with_name(f"decisions.superseded-{sha256_bytes(old)[:12]}.json")
            if not kept.exists():
                write_bytes(kept, old)
        write_bytes(target, data)
        return target, kept


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def _published(target: Path) -> InputError:
    return InputError(f"{target}: week {target.parent.name} is already published; re-publishing is refused. "
                      f"Give --force to publish it again (the old decisions.json is kept beside the new one "
                      f"as decisions.superseded-<sha12>.json)")


def _is_week(name: str) -> bool:
    try:
        parse_week(name)
        return True
    except InputError:
        return False


# The patterns --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeekResult:
    """One week decided (and, once published, where it was written)."""

    week: str
    document: dict[str, Any]
    """The decisions.json document."""
    outcome: WeekOutcome
    """The decisions, calibration and drift."""
    path: Path | None = None
    """ARCHIVE/WEEK/decisions.json once published."""
    superseded: Path | None = None
    """The old version a forced re-publish kept, or None."""

    @property
    def data(self) -> bytes:
        """The decisions.json bytes (canonical: sorted keys, 2-space indent)."""
        return dump_json(self.document).encode("utf-8")


def papers_file(papers: Path, week: str) -> Path:
    """The papers of a week: FOLDER/YYYY-Www.jsonl when `papers` is a folder, else the file itself."""
    papers = Path(papers)
    if papers.is_dir():
        path = papers / f"{week}.jsonl"
        if not path.is_file():
            raise InputError(f"{path}: no papers file for {week} in {papers}; add one (an empty file for a "
                             f"week without papers)")
        return path
    if not papers.is_file():
        raise InputError(f"{papers}: papers file not found")
    return papers


def pending_weeks(settings: DigestSettings) -> list[str]:
    """Weeks with a papers file (`YYYY-Www.jsonl` in the papers folder) not yet published, in order."""
    folder = Path(settings.papers)
    if not folder.is_dir():
        return []
    weeks = []
    for path in folder.glob("*.jsonl"):
        if re.match(r"^\d{4}-W\d{2}$", path.stem):
            weeks.append(parse_week(path.stem, str(path)))
    done = set(published_weeks(settings.archive))
    return sorted((w for w in weeks if w not in done), key=week_start)


def run_week(settings: DigestSettings, week: str, *, prior_override: Sequence[PriorKeep] | None = None,
             force: bool = False, as_of: dt.date | None = None) -> WeekResult:
    """Pattern A: decide one week and publish it (`prior_override`: use this prior, not the archive's)."""
    return run_weeks(settings, [week], prior_override=prior_override, force=force, as_of=as_of)[0]


def run_weeks(settings: DigestSettings, weeks: Sequence[str], *,
              prior_override: Sequence[PriorKeep] | None = None, force: bool = False,
              as_of: dt.date | None = None) -> list[WeekResult]:
    """Decide several weeks in order, each week's KEEPs feeding the next one's prior; then publish them all."""
    results = prepare_weeks(settings, weeks, prior_override=prior_override, force=force, as_of=as_of)
    return [publish(settings, r, force=force) for r in results]


def prepare_weeks(settings: DigestSettings, weeks: Sequence[str], *,
                  prior_override: Sequence[PriorKeep] | None = None, force: bool = False,
                  as_of: dt.date | None = None) -> list[WeekResult]:
    """Gather and decide every week, writing nothing (what `run_weeks` and a build publish afterwards)."""
    weeks = [parse_week(w) for w in weeks]
    if len(set(weeks)) != len(weeks) or weeks != sorted(weeks, key=week_start):
        raise InputError(f"weeks must be given once each and in order, not {', '.join(weeks)}")
    published = set(published_weeks(settings.archive))
    if isinstance(as_of, dt.datetime):
        as_of = as_of.date()
    for week in weeks:
        if as_of is not None and week_start(week) > as_of:
            raise InputError(f"--week {week}: starts after {as_of.isoformat()}; a future week has no papers yet")
        if week in published and not force:
            raise _published(Path(settings.archive) / week / DECISIONS_FILE)
    watchlist, criteria = load_watchlist(settings.watchlist), load_criteria(settings.criteria)
    inputs = {"watchlist": _digest(settings.watchlist), "criteria": _digest(settings.criteria)}
    papers = {week: papers_file(settings.papers, week) for week in weeks}
    decided: dict[str, WeekResult] = {}
    for week in weeks:
        records, merges = _read_week(papers[week])
        if prior_override is not None:
            prior, used = list(prior_override), {}
        else:
            used = _prior_documents(settings.archive, week, decided)
            prior = prior_keeps({w: doc for w, (doc, _) in used.items()})
        outcome = decide_week(records, watchlist, criteria, prior, max_kept=settings.max_kept,
                              thresholds=Thresholds(settings.keep_threshold, settings.review_threshold),
                              merged=_merged_ids(merges))
        document = decisions_document(
            week, outcome, [merge_json(m, papers[week]) for m in merges], settings, watchlist, criteria,
            inputs={**inputs, "papers": _digest(papers[week]), "prior": {w: sha for w, (_, sha) in used.items()}},
            prior_weeks=sorted(used) if prior_override is None else sorted({p.week for p in prior}),
            prior="archive" if prior_override is None else "given" if prior_override else "none")
        decided[week] = WeekResult(week, document, outcome)
    return [decided[w] for w in weeks]


def publish(settings: DigestSettings, result: WeekResult, *, force: bool = False) -> WeekResult:
    """Write a prepared week into the archive (refused when published, unless forced)."""
    path, kept = publish_week(settings.archive, result.week, result.data, force=force)
    return replace(result, path=path, superseded=kept)


def decisions_document(week: str, outcome: WeekOutcome, merges: Sequence[dict[str, Any]], settings: DigestSettings,
                       watchlist: Watchlist, criteria: Criteria, *, inputs: dict[str, Any],
                       prior_weeks: Sequence[str], prior: str) -> dict[str, Any]:
    """The decisions.json document: the seed's `decisions` and `calibration`, and what they came from."""
    return {
        "schema_version": 1,
        "rules": RULES,
        "week": week,
        "decisions": [d.to_json() for d in outcome.decisions],
        "calibration": outcome.calibration.to_json(),
        "watchlist_drift": outcome.watchlist_drift,
        "merges": list(merges),
        "inputs": inputs,
        "prior_weeks": list(prior_weeks),
        "settings": {"max_kept": settings.max_kept, "keep_threshold": settings.keep_threshold,
                     "review_threshold": settings.review_threshold, "prior": prior,
                     "watchlist": watchlist.name, "criteria": criteria.name},
    }


def _prior_documents(archive: Path, week: str,
                     decided: dict[str, WeekResult]) -> dict[str, tuple[WeekDecisions, str]]:
    """The prior weeks that exist: decided earlier in this run, else published; with their sha256."""
    out = {}
    for w in prior_weeks(week):
        if w in decided:
            data = decided[w].data
            out[w] = (WeekDecisions.from_json(decided[w].document), sha256_bytes(data))
        elif (Path(archive) / w / DECISIONS_FILE).is_file():
            out[w] = (load_week(archive, w), sha256_file(Path(archive) / w / DECISIONS_FILE))
    return out


def _read_week(path: Path) -> tuple[list[Record], list[Merge]]:
    """A week's records, merged across sources (read_papers, then merge_records)."""
    return merge_records(read_papers(path))


def _merged_ids(merges: Sequence[Merge]) -> dict[str, tuple[str, ...]]:
    """Surviving id -> the other ids folded into it (a repeated listing of its own id is not one)."""
    out: dict[str, set[str]] = {}
    for m in merges:
        out.setdefault(m.survivor, set()).update(x for x in m.merged_ids if x != m.survivor)
    return {k: tuple(sorted(v)) for k, v in out.items() if v}


def merge_json(merge: Merge, papers: Path) -> dict[str, Any]:
    """One merge as decisions.json lists it; where it was read names the papers file by its name only."""
    prefix = str(papers)
    return {"survivor": merge.survivor, "merged_ids": list(merge.merged_ids), "reason": merge.reason,
            "similarity": merge.similarity, "via": merge.via,
            "where": [Path(prefix).name + w[len(prefix):] if w.startswith(prefix) else w for w in merge.where]}


def _digest(path: Path) -> dict[str, str]:
    return {"file": Path(path).name, "sha256": sha256_file(Path(path))}


__all__ = ["DECISIONS_FILE", "WeekResult", "load_week", "parse_week", "pending_weeks", "prepare_weeks",
           "prior_keeps", "publish", "publish_week", "published_weeks", "run_week", "run_weeks", "shift_week",
           "week_of", "week_range", "week_start"]
