"""`reporter judge --run`: the judge asked for the papers of each week, on the panel's run (`run_tasks`).

The judged papers of a week are its papers after the merge (`merge_records`),
the same records the digest decides. Each week is one step of the panel's
claim-ask-record run: its papers are the scope of the task `judge` (keyed by
the week), a paper's job is done (`done`) once every judge has an answer or a
failure recorded, and only the judges still missing are asked. So the raw
reply is on disk before its row, any number of runners share the work, a
runner killed at any point loses no paid reply (the next one adopts it),
`--max-cost` and Ctrl-C behave as for the screen, and a re-run on a judged
week sends nothing. A job is keyed by the paper, not the week: a paper listed
in two weeks is asked once per generation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import InputError
from ...panel.config import VoterSettings
from ...panel.run_report import RunReport, TierReport
from ...panel.runner import run_tasks
from ...panel.tier_loop import StepScope, Tier, Work
from ...panel.votes import DONE, AnswerSchema, Vote
from ...runs import RunStart
from ..config import DigestSettings
from ..merge import merge_records
from ...pool.record import Record
from ..listings import load_papers, week_papers as listed_in_week
from .config import TABLE, WHERE, JudgeSettings
from .prompt import TASK_NAME, JudgeSetup, judge_setup


def judge_settings(digest: DigestSettings | None, file: Any) -> JudgeSettings:
    """The workspace's `[digest.judge]`, or an InputError saying how to add it."""
    if digest is None:
        raise InputError(f"{file}: no [digest] table; the judge reads the digest's papers and criteria "
                         f"(docs/digest.md)")
    if digest.judge is None:
        raise InputError(f"{file}: no [digest.judge] table; add one with one or two [[digest.judge.voters]] "
                         f"(docs/digest.md, \"The criteria judge\")")
    return digest.judge


def week_papers(digest: DigestSettings, week: str) -> list[Record]:
    """The papers of a week the judge is asked about: those first listed in it (and any relisted after more than
    four weeks), after the merge, whatever the prior decided: the digest decides a subset of them."""
    return merge_records(listed_in_week(load_papers(digest.papers), week, {}).records)[0]


def paper_work(record: Record) -> Work:
    """A paper as a judge is shown it: its title and abstract (a blank abstract is none: the title alone)."""
    abstract = record.abstract if record.abstract and record.abstract.strip() else None
    return Work(record.id, record.title, abstract, False)


def judge_gate(votes: Sequence[Any]) -> str:
    """A paper is judged (`done`) once every judge has an answer or a failure recorded; else incomplete."""
    return DONE if votes and all(isinstance(v, Vote) for v in votes) else "incomplete"


class JudgeTasks:
    """The judge over some weeks: one step per week, in order (the panel's `Tasks`)."""

    where = WHERE

    def __init__(self, judge: JudgeSettings, setup: JudgeSetup, papers: Mapping[str, Sequence[Record]]) -> None:
        self.settings, self.setup, self.papers = judge, setup, dict(papers)
        self.steps = tuple(self.papers)

    def voters(self) -> dict[str, tuple[VoterSettings, ...]]:
        return {TASK_NAME: self.settings.voters}

    def answer(self, task: str) -> AnswerSchema:
        return self.setup.answer

    def _tier(self, scope: StepScope | None, works: dict[str, Work], todo: int = 0, week: str = "") -> Tier:
        return Tier(TASK_NAME, self.settings.voters, self.setup.prompt, self.setup.generation, scope, works, todo,
                    answer=self.setup.answer, gate=judge_gate, label=f"judge {week}".strip(), table=TABLE,
                    unit="papers", load_texts=lambda ids: {w: works[w] for w in ids if w in works})

    def current(self) -> list[Tier]:
        return [self._tier(None, {})]

    def prepare(self, week: str, store: Any) -> Tier | TierReport:
        generation = self.setup.generation
        store.register_generation(generation.id, TASK_NAME, generation.definition)
        ids = [r.id for r in self.papers[week]]
        store.seed_scope(week, TASK_NAME, generation.id, ids)
        decided = store.verdicts(TASK_NAME, generation.id, ids)
        scope = StepScope(week, tuple(ids))
        works = {r.id: paper_work(r) for r in self.papers[week]}
        return self._tier(scope, works, sum(1 for w in ids if w not in decided), week)

    def report_id(self) -> str:
        return self.steps[0] if len(self.steps) == 1 else f"{self.steps[0]}..{self.steps[-1]}"


def run_judge(digest: DigestSettings, weeks: Sequence[str], *, max_cost: float | None = None,
              environ: Mapping[str, str], progress: bool = True, runner_id: str | None = None,
              after_raw_written: Callable[[int], None] | None = None, record: RunStart | None = None) -> RunReport:
    """Judge the papers of `weeks` (in order): claim, ask the judges still missing, record; one TierReport a week.

    Every week's papers are read before anything is sent (a bad papers file stops the run first).
    `after_raw_written` is the crash tests' seam, as for `run_screen`."""
    judge = digest.judge
    setup = judge_setup(judge, digest.criteria)
    papers = {week: week_papers(digest, week) for week in weeks}
    inputs = [record.ref("papers", digest.papers), record.ref("criteria", digest.criteria)] if record else []
    return run_tasks(JudgeTasks(judge, setup, papers), max_cost=max_cost, environ=environ, progress=progress,
                     runner_id=runner_id, after_raw_written=after_raw_written, record=record, kind="judge",
                     inputs=inputs)
