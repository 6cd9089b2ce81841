"""The criteria judge's recorded answers on a week's papers, read back: the digest decides from them and never sends.

The state database is opened read-only (nothing is created when it does not
exist: then no paper is judged). Per paper, one `JudgeEntry` per configured
judge in configured order: its fit and cited lines, its failure with the
cause (an invalid reply), or `missing` (no answer recorded in the current
generation: `reporter judge --run` asks it). What the answers cost is
summed per judge over the week's papers: the week's judge cost.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...hashing import sha256_json
from ...panel.readonly import open_readonly
from ...text import replace_surrogates
from ...pool.record import Record
from ..records import MISSING, JudgeEntry
from .archived import JudgeSpend
from .config import WHERE, JudgeSettings
from .prompt import TASK_NAME, JudgeSetup, cited_lines


@dataclass(frozen=True)
class WeekAnswers:
    """The judges' recorded answers on one week's papers."""

    generation: str
    """The judge's current generation (answers of another one do not count)."""
    entries: Mapping[str, tuple[JudgeEntry, ...]]
    """Paper id -> one entry per judge, in configured order."""
    costs: tuple[JudgeSpend, ...]
    """Per judge, in configured order."""

    @property
    def unjudged(self) -> int:
        """Papers some judge has not answered yet."""
        return sum(any(j.failure == MISSING for j in e) for e in self.entries.values())

    @property
    def sha256(self) -> str:
        """The digest of every entry (papers by id): the decisions' identity counts the answers they came from."""
        return sha256_json([[pid, [j.to_json() for j in self.entries[pid]]] for pid in sorted(self.entries)])

    def identity(self) -> dict[str, str]:
        """`inputs.judge` of the week's decisions.json: the generation and the answers' digest."""
        return {"generation": self.generation, "answers_sha256": self.sha256}


def recorded_answers(judge: JudgeSettings, setup: JudgeSetup, records: Sequence[Record], *,
                     store: Any = None) -> WeekAnswers:
    """The recorded answers of the judge's current generation on `records` (read-only; nothing is sent)."""
    ids = [r.id for r in records]
    gen = setup.generation.id
    with open_readonly(judge.database, WHERE, store) as db:
        votes = db.votes(TASK_NAME, gen, ids) if db is not None and ids else {}
    entries = {pid: tuple(_entry(v.name, v.model, votes.get(pid, {}).get(v.name)) for v in judge.voters)
               for pid in ids}
    costs = []
    for k, v in enumerate(judge.voters):
        rows = [votes[pid][v.name] for pid in ids if v.name in votes.get(pid, {})]
        mine = [e[k] for e in entries.values()]
        costs.append(JudgeSpend(v.name, v.model, sum(e.fit is not None for e in mine),
                               sum(e.failure not in (None, MISSING) for e in mine),
                               sum(e.failure == MISSING for e in mine), sum(r.input_tokens or 0 for r in rows),
                               sum(r.output_tokens or 0 for r in rows), sum(r.cost_usd for r in rows)))
    return WeekAnswers(gen, entries, tuple(costs))


def _entry(voter: str, model: str, row: Any) -> JudgeEntry:
    if row is None:
        return JudgeEntry(voter, model, None, (), "", MISSING)
    vote = row.vote
    # A reason an older reporter recorded with a lone surrogate in it is read with U+FFFD (as a new reply is
    # recorded), so the week's hash, pages and files can encode it.
    reason = replace_surrogates(vote.reason)
    if vote.answer is None:
        return JudgeEntry(voter, model, None, (), reason, vote.invalid_cause)
    return JudgeEntry(voter, model, vote.answer, cited_lines(vote), reason)


def refuse_unjudged(week: str, answers: WeekAnswers, judge: JudgeSettings) -> InputError:
    """The refusal of a week with papers not judged yet: the count, and the command that judges them."""
    names = ", ".join(f"{c.voter} ({c.missing:,})" for c in answers.costs if c.missing)
    run = f"reporter judge --workspace {shlex.quote(str(judge.workspace))} --week {week} --run"
    return InputError(f"week {week}: {answers.unjudged:,} of {len(answers.entries):,} papers are not judged yet "
                      f"(judge generation {answers.generation[:12]}; not answered by {names}); the digest never "
                      f"sends: run `{run}` first, or give --keyword-fallback to decide them by the keyword rule "
                      f"(tagged judge-missing)")


def week_judge(answers: WeekAnswers) -> dict[str, Any]:
    """The costs part of decisions.json's `judge`: the generation, per judge what it answered and cost, the total."""
    return {"generation": answers.generation, "judges": [c.to_json() for c in answers.costs],
            "cost_usd": round(sum(c.cost_usd for c in answers.costs), 6)}


__all__ = ["WeekAnswers", "recorded_answers", "refuse_unjudged", "week_judge"]
