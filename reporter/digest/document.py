"""A week's decisions.json document: its head (what it was decided from), the identity check, its body.

The head (`document_head`) holds the identity fields (`IDENTITY`): the
same ones give the same bytes, so a published week whose identity equals the
one it would get now is left as it is, and any difference is refused naming
it (`identity_changes`). `decisions_document` puts the head, the decisions,
the merges (`merge_json`), the papers listed again and the criteria judge's
week (`judge_block`) into one document. `reporter.digest.weeks` decides and
publishes the weeks with them; the archive's reader is `reporter.digest.archive`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..pool.record import Record
from .config import DEFAULT_TOPIC, DigestSettings
from .criteria import Criteria
from .decide import WeekOutcome
from .judge.answers import WeekAnswers, week_judge
from .judge.axis import keyword_disagreements
from .merge import Merge
from .records import ListedAgain
from .watchlist import Watchlist

RULES = "digest.4"
"""The version of the scoring rules, recorded in every decisions.json (same inputs and rules, same bytes).
`digest.4`: a Required concept with no term is borderline (0.7, 0.4 in the stricter pass, tag
`required-unconfirmed`), not a fail; a "Partly in scope" section scores 0.4; every decision has its `key`.
`digest.3`: a paper is decided in the week it is first listed in (`listed_again`, `version`), and Axis 2
may come from the criteria judge; every decision says which (`criteria_source`, `judges`) and the
document has `judge`. `digest.4`: within a score papers are ordered by a blend of relevance and similarity to the
In scope concepts (each decision's `similarity`), and the document has `close_in_meaning` (docs/digest.md,
"Meaning")."""


IDENTITY = ("schema_version", "rules", "week", "inputs", "prior_weeks", "settings")
"""The fields of a decisions.json that say what it was decided from: the same ones, the same bytes."""


def document_head(week: str, settings: DigestSettings, watchlist: Watchlist, criteria: Criteria, *,
                  inputs: dict[str, Any], prior_weeks: Sequence[str], prior: str,
                  semantic: str | None = None) -> dict[str, Any]:
    """The identity fields of a week's decisions.json (`IDENTITY`), known before the week is decided; `semantic`:
    the embedding model's name (`settings.semantic`, false without one)."""
    return {
        "schema_version": 1,
        "rules": RULES,
        "week": week,
        "inputs": inputs,
        "prior_weeks": list(prior_weeks),
        "settings": {"max_kept": settings.max_kept, "keep_threshold": settings.keep_threshold,
                     "review_threshold": settings.review_threshold, "prior": prior,
                     "watchlist": watchlist.name, "criteria": criteria.name,
                     "semantic": semantic if semantic is not None else False,
                     **({"topic": {"name": settings.name, "title": settings.title or settings.name}}
                        if settings.title is not None or settings.name != DEFAULT_TOPIC else {})},
    }


def identity_changes(old: Any, new: dict[str, Any]) -> list[str]:
    """What differs between a published document's identity and a new one's, in words; [] when the same."""
    if not isinstance(old, dict):
        return ["it is not a decisions.json document"]
    if all(old.get(k) == new[k] for k in IDENTITY):
        return []
    changes = []
    for key in ("schema_version", "rules"):
        if old.get(key) != new[key]:
            changes.append(f"{key} {_shown(old.get(key))} then, {_shown(new[key])} now")
    was, now = old.get("inputs"), new["inputs"]
    was = was if isinstance(was, dict) else {}
    for name in ("papers", "watchlist", "criteria"):
        if was.get(name) != now[name]:
            then = was.get(name) if isinstance(was.get(name), dict) else {}
            changes.append(f"the {name} file {_shown(now[name]['file'])} changed (sha256 "
                           f"{_shown(then.get('sha256'))[:14]} then, {now[name]['sha256'][:12]} now)"
                           if then.get("file") == now[name]["file"] else
                           f"the {name} file was {_shown(then.get('file'))}, now {_shown(now[name]['file'])}")
    if was.get("wanted") != now.get("wanted"):
        count = lambda v: v.get("papers", "?") if isinstance(v, dict) else 0  # noqa: E731
        changes.append(f"the papers the reader marked wanted in earlier weeks changed ({count(was.get('wanted'))} "
                       f"then, {count(now.get('wanted'))} now: they feed the close-in-meaning list)")
    if was.get("judge") != now.get("judge"):
        changes.append(_judge_change(was.get("judge"), now.get("judge")))
    before = was.get("prior") if isinstance(was.get("prior"), dict) else {}
    for w in sorted(set(before) | set(now["prior"]), key=str):
        if w not in now["prior"]:
            changes.append(f"prior week {_shown(w)} was in the archive then and is not now")
        elif w not in before:
            changes.append(f"prior week {w} was not in the archive then and is now")
        elif before[w] != now["prior"][w]:
            changes.append(f"prior week {w} was re-published since")
    old_settings = old.get("settings") if isinstance(old.get("settings"), dict) else {}
    for key, value in new["settings"].items():
        if old_settings.get(key) != value:
            changes.append(f"setting {key} {_shown(old_settings.get(key))} then, {_shown(value)} now")
    return changes or ["the inputs it records differ"]


def _judge_change(then: Any, now: Any) -> str:
    """What changed of the criteria judge a week was decided with, in words."""
    if not isinstance(now, dict):
        return "it was decided with a criteria judge, and none is configured now"
    if not isinstance(then, dict):
        return "a criteria judge is configured now, and the week was decided without one"
    if then.get("generation") != now["generation"]:
        return (f"the judge's generation changed ({_shown(then.get('generation'))[:14]} then, "
                f"{now['generation'][:12]} now: its prompt, models or criteria)")
    return (f"the judge's recorded answers changed (sha256 {_shown(then.get('answers_sha256'))[:14]} then, "
            f"{now['answers_sha256'][:12]} now)")


def _shown(value: Any) -> str:
    """A value from a document, quoted and escaped for a message, at most 60 characters."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


def decisions_document(head: dict[str, Any], outcome: WeekOutcome, merges: Sequence[dict[str, Any]],
                       listed_again: Sequence[ListedAgain] = (),
                       judge: dict[str, Any] | None = None,
                       lists: dict[str, Any] | None = None) -> dict[str, Any]:
    """The decisions.json document: the seed's `decisions` and `calibration`, the papers listed again without
    being decided again, and what they came from (`head`); `judge`: the criteria judge's week (its cost,
    where it and the keyword rule disagree), None without one; `lists`: the watchlist and criteria texts and
    what changed since the week before (`lists`, `lists_diff`: reporter.digest.lists_diff)."""
    return {
        **(lists or {}),
        **head,
        "decisions": [d.to_json() for d in outcome.decisions],
        "calibration": outcome.calibration.to_json(),
        "watchlist_drift": outcome.watchlist_drift,
        "merges": list(merges),
        "listed_again": [a.to_json() for a in listed_again],
        "judge": judge,
        "close_in_meaning": outcome.close_in_meaning,
    }


def judge_block(records: Sequence[Record], criteria: Criteria, answers: WeekAnswers,
                outcome: WeekOutcome) -> dict[str, Any]:
    """decisions.json's `judge`: the generation, what each judge answered and cost this week, and the papers where
    the keyword rule and the judge disagree (surfaced, never applied; None without keyword terms)."""
    return {**week_judge(answers),
            "keyword_disagreements": keyword_disagreements(records, criteria, answers.entries, outcome.decisions)}


def merge_json(merge: Merge, papers: Path) -> dict[str, Any]:
    """One merge as decisions.json lists it; where it was read names the papers file by its name only (a file
    of the papers folder by its name in the folder)."""
    prefix = f"{papers if Path(papers).is_dir() else Path(papers).parent}/"
    return {"survivor": merge.survivor, "merged_ids": list(merge.merged_ids), "reason": merge.reason,
            "similarity": merge.similarity, "via": merge.via,
            "where": [w[len(prefix):] if w.startswith(prefix) else w for w in merge.where]}
