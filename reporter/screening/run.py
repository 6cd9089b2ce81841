"""`reporter screen --run`: the screen of one release, tier by tier, as the panel's run (`run_tasks`).

The screen describes its task to the panel (`ScreenTasks`): its steps are the
tiers (cheap, then expensive), each tier's voters answer the screen's schema
(`answer.SCREEN_ANSWER`), its prompt is the classify prompt (`prompt.py`),
its scope the release's works routed to the tier (`scope.py`), and its gate
the tier's (`answer.tier_gate`). Claiming, asking, recording, recovery,
`--max-cost` and signals are the panel's (`reporter.panel.runner`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..panel.config import VoterSettings
from ..panel.prompt import Prompt, generation_for
from ..panel.run_report import RunReport, RunWords, TierReport
from ..panel.runner import run_tasks
from ..panel.tier_loop import Tier
from ..panel.votes import AnswerSchema
from ..runs import FileRef, RunStart
from .answer import SCREEN_ANSWER, tier_gate
from .config import TIERS, WHERE, ScreenSettings, ScreenWorkspace
from .prompt import load_prompt

SCREEN_WORDS = RunWords(subject="release", done="works screened", votes="votes", scope="works in scope",
                        claimed="works")
"""How the screen's run report names what it did."""


def run_screen(ws: ScreenWorkspace, release_dir: Path, *, tiers: Sequence[str], max_cost: float | None = None,
               environ: Mapping[str, str], progress: bool = True, runner_id: str | None = None,
               after_raw_written: Callable[[int], None] | None = None, record: RunStart | None = None) -> RunReport:
    """Screen a release's works tier by tier (cheap, then expensive): claim, ask, record; see the module doc.
    With `record` (the command's), the run's record (kind `screen`) is written at its end.

    `after_raw_written(n)`, for the crash tests only, runs after the n-th batch's raw lines are fsynced
    and before its vote rows are written."""
    settings = screen_settings(ws)
    for tier in tiers:
        if tier not in TIERS:
            raise InputError(f"tier {tier!r}: use one of {', '.join(TIERS)}")
    return run_tasks(ScreenTasks(ws, settings, Path(release_dir), tuple(t for t in TIERS if t in tiers)),
                     max_cost=max_cost, environ=environ, progress=progress, runner_id=runner_id,
                     after_raw_written=after_raw_written, record=record, kind="screen",
                     inputs=screen_inputs(record, settings, Path(release_dir)) if record is not None else ())


def screen_inputs(record: RunStart, settings: ScreenSettings, release_dir: Path) -> list[FileRef]:
    """What a screen's record names as its inputs: the release screened (its manifest) and the prompt."""
    from ..routing.index import MANIFEST_FILE
    refs = [record.ref("release", release_dir / MANIFEST_FILE)]
    prompt = getattr(settings, "prompt", None)
    return refs + ([record.ref("prompt", prompt)] if isinstance(prompt, Path) else [])


def screen_settings(ws: ScreenWorkspace) -> ScreenSettings:
    """The workspace's [screen] settings, or an InputError saying how to add them."""
    if ws.screen is None:
        raise InputError(f"{ws.file}: no [screen] table; add one with the state database and each tier's "
                         f"two voters (docs/screening.md)")
    return ws.screen


def screen_tier(name: str, voters: tuple[VoterSettings, ...], prompt: Prompt, generation: Any, scope: Any,
                works: dict[str, Any], todo: int = 0,
                load_texts: Callable[[list[str]], dict[str, Any]] | None = None) -> Tier:
    """A screen tier as the panel runs it: the screen's answer, the tier's gate, its table and its progress label."""
    return Tier(name, voters, prompt, generation, scope, works, todo, answer=SCREEN_ANSWER,
                gate=lambda votes: tier_gate(name, *votes), label=f"screen {name}", table=f"[screen.{name}]",
                load_texts=load_texts)


class ScreenTasks:
    """The screen of one release, tier by tier (cheap, then expensive; the expensive scope is read after the
    cheap tier ran, so the works it passed on are in it)."""

    where = WHERE

    def __init__(self, ws: ScreenWorkspace, settings: ScreenSettings, release_dir: Path,
                 tiers: tuple[str, ...]) -> None:
        self.ws, self.settings, self.release_dir, self.steps = ws, settings, release_dir, tiers
        self.release_id: str | None = None

    def voters(self) -> dict[str, tuple[VoterSettings, ...]]:
        return {tier: getattr(self.settings, tier) for tier in self.steps}

    def answer(self, task: str) -> AnswerSchema:
        return SCREEN_ANSWER

    def current(self) -> list[Tier]:
        prompt = load_prompt(self.settings)
        return [screen_tier(name, voters, prompt, generation_for(name, voters, prompt), None, {})
                for name in TIERS if (voters := getattr(self.settings, name))]

    def prepare(self, tier: str, store: Any) -> Tier | TierReport:
        from .scope import load_works, tier_scope
        voters: tuple[VoterSettings, ...] = getattr(self.settings, tier)
        if not voters:
            return TierReport(tier, None, 0, 0, 0, 0, 0, 0, 0.0, False,
                              note=f"not configured (no [[screen.{tier}.voters]] in {self.ws.file.name})")
        prompt = load_prompt(self.settings)
        generation = generation_for(tier, voters, prompt)
        cheap = None
        if tier == "expensive" and self.settings.cheap:
            cheap = generation_for("cheap", self.settings.cheap, prompt).id
        store.register_generation(generation.id, tier, generation.definition)
        scope = tier_scope(self.ws, self.release_dir, tier, cheap_generation=cheap, store=store)
        self.release_id = scope.release_id
        store.seed_scope(scope.release_id, tier, generation.id, list(scope.work_ids))
        decided = store.verdicts(tier, generation.id, list(scope.work_ids))
        todo = [w for w in scope.work_ids if w not in decided]
        works = load_works(self.ws, self.release_dir, todo)
        return screen_tier(tier, voters, prompt, generation, scope, works, len(todo),
                           load_texts=lambda ids: load_works(self.ws, self.release_dir, ids))

    def report_id(self) -> str:
        return self.release_id or self.release_dir.name
