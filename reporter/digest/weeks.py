"""Deciding and publishing the digest's weeks: the patterns (docs/design/digest.md), run in order.

Patterns: A, one week (`run_week`); B, catch-up (`run_weeks` over several
weeks, in order, each week's KEEPs in the next week's prior; every week is
gathered and decided before any is written, so a refusal writes nothing);
C, a high `max_kept` (the command prints the full ranking); D, no prior.
The prior of week W is the KEEPs of W-1 .. W-4 as published, read through
the archive's reader (`reporter.digest.archive`); this module is the only
one that writes the archive, each week's decisions.json made by
`reporter.digest.document` (its head, identity check and body). Which papers a week decides, and which it
lists again, is `reporter.digest.listings` (one paper, one week).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import write_bytes
from ..hashing import dump_json, sha256_bytes, sha256_file, sha256_json
from ..isoweek import parse_week, week_start
from ..locks import locked, remove_debris
from ..pool.record import Record
from ..runs import FileRef, RunStart
from ..novelty.results import write_novelty_results
from .archive import (DECISIONS_FILE, GRAPH_FILE, archive_state, prior_weeks, published_weeks, read_decisions,
                      week_bytes)
from .axes import PriorKeep
from .config import DigestSettings
from .criteria import load_criteria
from .decide import Thresholds, WeekOutcome, decide_week
from .feedback import FEEDBACK_FILE, wanted_texts
from .meaning import with_order
from .also_in import also_in
from .lists_diff import list_texts, lists_diff
from .semantic import load_model
from .document import decisions_document, document_head, identity_changes, judge_block, merge_json
from .judge.answers import recorded_answers, refuse_unjudged
from .judge.prompt import JudgeSetup, judge_setup
from .listings import Papers, check_covered, given_decisions, load_papers, prior_decisions, week_papers
from .merge import Merge, merge_records
from .records import ListedAgain, WeekDecisions
from .watchlist import load_watchlist


# Writing the archive ------------------------------------------------------------------------------------


def write_week(archive: Path, week: str, data: bytes, *, force: bool = False) -> tuple[Path, Path | None]:
    """Write ARCHIVE/WEEK/decisions.json; refuse an existing week unless forced, keeping the old one beside.

    Returns (decisions.json, the superseded copy or None). Re-publishing the same
    bytes changes nothing.
    """
    with locked(archive):
        target = Path(archive) / week / DECISIONS_FILE
        kept = None
        old = week_bytes(archive, week)
        if old is not None:
            if not force:
                raise _published(target)
            if old == data:
                return target, None
            kept = target.with_name(f"decisions.superseded-{sha256_bytes(old)[:12]}.json")
            if not kept.exists():
                write_bytes(kept, old)
        write_bytes(target, data)
        return target, kept


def _published(target: Path, changes: Sequence[str] = ()) -> InputError:
    shown = list(changes[:5]) + ([f"and {len(changes) - 5:,} more"] if len(changes) > 5 else [])
    why = f" with other inputs ({'; '.join(shown)})" if changes else ""
    return InputError(f"{target}: week {target.parent.name} is already published{why}; re-publishing is "
                      f"refused. Give --force to publish it again (the old decisions.json is kept beside the new "
                      f"one as decisions.superseded-<sha12>.json)")


def sweep_archive(archive: Path) -> list[Path]:
    """Remove the temporaries (`.tmp-*`) that killed runs left in the archive; never a live run's."""
    return remove_debris(Path(archive))


def prior_keeps(weeks: dict[str, WeekDecisions]) -> list[PriorKeep]:
    """The KEEPs of the given weeks, as novelty's prior."""
    return [PriorKeep(d.id, d.title, w) for w, doc in sorted(weeks.items()) for d in doc.kept()]



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
    unchanged: bool = False
    """Already published with the same inputs (a re-run of a catch-up): left as it is, not written again."""
    seen: tuple[tuple[str, str | None], ...] = ()
    """The archive as this decision saw it: (week, sha256 of its decisions.json or None) per week consulted."""
    stored: bytes | None = None
    """The published bytes of an unchanged week."""
    encoded: bytes | None = None
    """The document's bytes, made once when the week is decided (`data`; None: made on use)."""
    records: tuple[Record, ...] = ()
    """The records decided, merged across sources (() for a week read back): what the graph check reads."""
    listed_again: tuple[ListedAgain, ...] = ()
    """The papers listed again, not decided again (`listed_again` of decisions.json)."""

    @property
    def data(self) -> bytes:
        """The decisions.json bytes (canonical: sorted keys, 2-space indent)."""
        if self.stored is not None:
            return self.stored
        return self.encoded if self.encoded is not None else encode_document(self.document)


def encode_document(document: dict[str, Any]) -> bytes:
    """A decisions.json document's bytes: the one place they are made (sorted keys, 2-space indent)."""
    return dump_json(document).encode("utf-8")


def pending_weeks(settings: DigestSettings, papers: Papers | None = None) -> list[str]:
    """The weeks the papers cover (`reporter.digest.listings`) not yet published, in order; [] when the papers
    path does not exist yet. `papers`: the papers already read."""
    if papers is None:
        if not Path(settings.papers).exists():
            return []
        papers = load_papers(settings.papers)
    done = set(published_weeks(settings.archive))
    return [w for w in papers.weeks() if w not in done]


def run_week(settings: DigestSettings, week: str, *, prior_override: Sequence[PriorKeep] | None = None,
             force: bool = False, as_of: dt.date | None = None, keyword_fallback: bool = False) -> WeekResult:
    """Pattern A: decide one week and publish it (`prior_override`: use this prior, not the archive's)."""
    return run_weeks(settings, [week], prior_override=prior_override, force=force, as_of=as_of,
                     keyword_fallback=keyword_fallback)[0]


def run_weeks(settings: DigestSettings, weeks: Sequence[str], *,
              prior_override: Sequence[PriorKeep] | None = None, force: bool = False,
              as_of: dt.date | None = None, keyword_fallback: bool = False,
              on_published: Callable[[WeekResult], None] | None = None,
              record: RunStart | None = None) -> list[WeekResult]:
    """Decide several weeks in order, each week's KEEPs feeding the next one's prior; then publish them all.

    A re-run of the same weeks finishes a killed one: a week already published
    with the same inputs is left as it is (`WeekResult.unchanged`), and only a
    week whose inputs changed is refused without `force`. Every week is decided
    before any is written. Publishing holds the archive's lock; if a week this
    run consulted (a prior week, or one of its own) changed since it was
    decided, every week is decided again under the lock, so no week is ever
    published with a prior other than the archive's. The temporaries of killed
    runs are removed first. `on_published` is called after each week is
    written (or found unchanged).
    """
    def prepare() -> list[WeekResult]:
        return prepare_weeks(settings, weeks, prior_override=prior_override, force=force, as_of=as_of,
                             keyword_fallback=keyword_fallback)

    results = prepare()
    with locked(settings.archive):
        sweep_archive(settings.archive)
        if is_stale(settings.archive, results):
            results = prepare()  # another run changed what these weeks were decided on
        published = []
        for result in results:
            published.append(publish_week(settings, result, force=force, record=record))
            if on_published is not None:
                on_published(published[-1])
    return published


def is_stale(archive: Path, results: Sequence[WeekResult]) -> bool:
    """Whether a week the results were decided on changed in the archive since (published, re-published)."""
    seen = dict(pair for r in results for pair in r.seen)
    return archive_state(archive, seen) != seen


def prepare_weeks(settings: DigestSettings, weeks: Sequence[str], *,
                  prior_override: Sequence[PriorKeep] | None = None, force: bool = False,
                  as_of: dt.date | None = None, papers: Papers | None = None,
                  keyword_fallback: bool = False) -> list[WeekResult]:
    """Gather and decide every week, writing nothing (what `run_weeks` and a build publish afterwards).

    A week already published with the same inputs (`identity`) is read back,
    not decided again, and marked `unchanged`; one published with other inputs
    is refused, naming what changed, unless `force`. `papers`: the papers
    path already read (`load_papers`); each week decides the papers first
    listed in it and lists again those its prior decided (`week_papers`). `keyword_fallback`
    (`--keyword-fallback`, a flag of the run, never a setting): papers the judge has not answered yet are decided
    by the keyword rule, tagged `judge-missing`, instead of the week being refused.
    """
    weeks = [parse_week(w) for w in weeks]
    if len(set(weeks)) != len(weeks) or weeks != sorted(weeks, key=week_start):
        raise InputError(f"weeks must be given once each and in order, not {', '.join(weeks)}")
    if isinstance(as_of, dt.datetime):
        as_of = as_of.date()
    for week in weeks:
        if as_of is not None and week_start(week) > as_of:
            raise InputError(f"--week {week}: starts after {as_of.isoformat()}; a future week has no papers yet")
    watchlist = load_watchlist(settings.watchlist)
    criteria = load_criteria(settings.criteria, need_terms=settings.judge is None)
    inputs = {"watchlist": _digest(settings.watchlist), "criteria": _digest(settings.criteria)}
    texts = list_texts({"watchlist": settings.watchlist, "criteria": settings.criteria})
    papers = papers if papers is not None else load_papers(settings.papers)
    check_covered(papers, weeks)
    archive = Path(settings.archive)
    decided: dict[str, WeekResult] = {}
    # Each prior week read (from this run or the archive) and parsed once per run, not once per week it is the
    # prior of: re-encoding 5 MB documents 35 times for 9 weeks was a third of a catch-up (issue 35, item 3).
    priors: dict[str, tuple[WeekDecisions, str]] = {}
    judged = _judge(settings)
    model = load_model() if settings.semantic else None  # once per run: weeks of a catch-up share it
    liked = wanted_texts(settings.state, archive) if model is not None and settings.state is not None else {}
    for week in weeks:
        seen: dict[str, str | None] = {}
        if prior_override is not None:
            prior, used = list(prior_override), {}
            listed = week_papers(papers, week, given_decisions(prior))
        else:
            used = _prior_documents(archive, week, decided, seen, priors)
            prior = prior_keeps({w: doc for w, (doc, _) in used.items()})
            listed = week_papers(papers, week, prior_decisions({w: doc for w, (doc, _) in used.items()}))
        records, merges = merge_records(listed.records)  # the papers of the week after the merge: what is judged
        # The judge's answers are part of the week's identity: read before it is compared.
        answers = recorded_answers(settings.judge, judged, records) if judged is not None else None
        # The papers the reader wanted in earlier weeks, by id: the close-in-meaning list reads them (identity).
        wanted = sorted((i, text) for i, (w, text) in liked.items() if week_start(w) < week_start(week))
        head = document_head(
            week, settings, watchlist, criteria,
            inputs={**inputs, "papers": listed.digest, "prior": {w: sha for w, (_, sha) in used.items()},
                    **({"judge": answers.identity()} if answers is not None else {}),
                    **({"wanted": {"file": FEEDBACK_FILE, "papers": len(wanted), "sha256": sha256_json(wanted)}}
                       if wanted else {})},
            prior_weeks=sorted(used) if prior_override is None else sorted({p.week for p in prior}),
            prior="archive" if prior_override is None else "given" if prior_override else "none",
            semantic=None if model is None else model.name)
        target = archive / week / DECISIONS_FILE
        published = None if force else week_bytes(archive, week)
        if published is not None:
            old, document = read_decisions(published, str(target))
            data = published
            seen[week] = sha256_bytes(data)
            changes = identity_changes(document, head)
            if changes:
                raise _published(target, changes)
            outcome = WeekOutcome(with_order(old.decisions), old.calibration, old.watchlist_drift)
            decided[week] = WeekResult(week, document, outcome, path=target, unchanged=True,
                                       seen=tuple(seen.items()), stored=data, listed_again=old.listed_again)
            continue
        seen[week] = None if not force else archive_state(archive, [week])[week]
        if answers is not None and answers.unjudged and not keyword_fallback:
            raise refuse_unjudged(week, answers, settings.judge)
        outcome = decide_week(records, watchlist, criteria, prior, max_kept=settings.max_kept,
                              thresholds=Thresholds(settings.keep_threshold, settings.review_threshold),
                              merged=_merged_ids(merges), new_versions=listed.new_versions,
                              judged=None if answers is None else answers.entries, model=model, wanted=wanted)
        since = max(used, key=week_start) if used else None  # the newest prior week: what the diff is since
        then = used[since][0] if since is not None else None
        lists = {"lists": texts, "lists_diff": lists_diff(texts, inputs, since, then and then.lists,
                                                          then and then.inputs)}
        document = decisions_document(head, outcome, [merge_json(m, papers.root) for m in merges],
                                      listed.listed_again,
                                      None if answers is None else judge_block(records, criteria, answers, outcome),
                                      lists)
        if settings.others:  # a workspace with topics: the papers another topic kept this week (also_in)
            document["also_in"] = also_in((d.id for d in outcome.decisions),
                                          [(n, t, published_keeps(a, week)) for n, t, a in settings.others])
        decided[week] = WeekResult(week, document, outcome, seen=tuple(seen.items()), records=tuple(records),
                                   listed_again=listed.listed_again, encoded=encode_document(document))
    return [decided[w] for w in weeks]


def _judge(settings: DigestSettings) -> JudgeSetup | None:
    """The criteria judge's prompt and generation for the week's criteria (None without `[digest.judge]`)."""
    return None if settings.judge is None else judge_setup(settings.judge, settings.criteria)


def publish_week(settings: DigestSettings, result: WeekResult, *, evidence: Sequence[dict[str, Any]] | None = None,
                 force: bool = False, record: RunStart | None = None) -> WeekResult:
    """Write a decided week into the archive: the one way a week is published (`reporter digest`, a build).

    `evidence` (a build's novelty check of the week's KEEPs: results lines, or
    None when nothing was checked) is written first, beside the week
    (`novelty.jsonl`), then its decisions.json: a week counts as published
    once its decisions.json is in place, so a run killed in between leaves a
    week that the next run decides again. Refused when the week is published,
    unless forced; an unchanged one stays as it is. `record`: the command's run, whose record
    (reporter/runs.py, kind `digest`) is written for each week published (docs/runs.md).
    """
    if result.unchanged:
        return result
    graph = Path(settings.archive) / result.week / GRAPH_FILE
    if evidence is not None:
        write_novelty_results(graph, evidence)
    path, kept = write_week(settings.archive, result.week, result.data, force=force)
    if record is not None:
        write_digest_run(record, result, path, graph if evidence is not None else None)
    return replace(result, path=path, superseded=kept)


def write_digest_run(run: RunStart, result: WeekResult, path: Path, graph: Path | None) -> Path:
    """A published week's run record: its inputs as decisions.json names them (with their sha256), the judge's
    answers it read, decisions.json (and the graph verdicts) written, and how many papers got each decision."""
    doc = result.document
    inputs = [FileRef(role, str(ref.get("file", "")), str(ref.get("sha256", "")))
              for role, ref in sorted(doc.get("inputs", {}).items()) if role != "prior" and isinstance(ref, dict)]
    inputs += [FileRef("prior", f"{week}/{DECISIONS_FILE}", str(sha or ""))
               for week, sha in sorted(doc.get("inputs", {}).get("prior", {}).items())]
    judge = doc.get("judge") if isinstance(doc.get("judge"), dict) else None
    if judge is not None and judge.get("answers_sha256"):
        inputs.append(FileRef("judge answers", str(judge.get("generation", "")), str(judge["answers_sha256"])))
    outputs = [run.ref("decisions", path), *([run.ref("graph verdicts", graph)] if graph is not None else [])]
    decided = Counter(d.get("decision") for d in doc.get("decisions", ()))
    counts = {"papers": len(doc.get("decisions", ())), "keep": decided["KEEP"], "review": decided["REVIEW"],
              "drop": decided["DROP"], "listed_again": len(doc.get("listed_again", ()))}
    return run.write("digest", "done", inputs=inputs, outputs=outputs, counts=counts,
                     settings={"week": result.week, **dict(doc.get("settings", {})), "rules": doc.get("rules")})


def _prior_documents(archive: Path, week: str, decided: dict[str, WeekResult], seen: dict[str, str | None],
                     priors: dict[str, tuple[WeekDecisions, str]]) -> dict[str, tuple[WeekDecisions, str]]:
    """The prior weeks that exist: decided earlier in this run, else published; with their sha256.

    Each week read from the archive (or found absent) is recorded in `seen`. `priors`: the weeks already read
    in this run (filled here), each decoded and hashed once however many weeks it is the prior of.
    """
    out = {}
    for w in prior_weeks(week):
        if w in decided:
            if w not in priors:
                priors[w] = (WeekDecisions.from_json(decided[w].document), sha256_bytes(decided[w].data))
            out[w] = priors[w]
            seen.update(decided[w].seen)
        elif w in priors:
            out[w] = priors[w]
            seen.setdefault(w, priors[w][1])
        elif (data := week_bytes(archive, w)) is not None:
            doc, _ = read_decisions(data, str(archive / w / DECISIONS_FILE))
            priors[w] = (doc, sha256_bytes(data))
            out[w] = (doc, seen.setdefault(w, priors[w][1]))
        else:
            seen[w] = None
    return out


def published_keeps(archive: Path, week: str) -> frozenset[str]:
    """The ids a topic's published week kept, for `also_in` (none when it is not published, or cannot be read)."""
    try:
        data = week_bytes(archive, week)
        return frozenset() if data is None else frozenset(
            d.id for d in read_decisions(data, str(Path(archive) / week / DECISIONS_FILE))[0].kept())
    except InputError:
        return frozenset()


def _merged_ids(merges: Sequence[Merge]) -> dict[str, tuple[str, ...]]:
    """Surviving id -> the other ids folded into it (a repeated listing of its own id is not one)."""
    out: dict[str, set[str]] = {}
    for m in merges:
        out.setdefault(m.survivor, set()).update(x for x in m.merged_ids if x != m.survivor)
    return {k: tuple(sorted(v)) for k, v in out.items() if v}


def _digest(path: Path) -> dict[str, str]:
    return {"file": Path(path).name, "sha256": sha256_file(Path(path))}


__all__ = ["WeekResult", "is_stale", "pending_weeks", "prepare_weeks", "prior_keeps", "publish_week", "run_week",
           "run_weeks", "sweep_archive", "write_week"]
