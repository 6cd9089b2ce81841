"""The criteria judge's part of a published week, typed as the pages read it (through `reporter.digest.archive`).

decisions.json's `judge` (null without a judge): the generation, per judge
what it answered and cost that week, the week's judge cost, and the papers
where the keyword rule and the judge disagree (surfaced, never applied; null
when the criteria document has no backticked terms). The per-paper answers
are each decision's `criteria_source` and `judges` (`Decision`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JudgeSpend:
    """What one judge answered on the week's papers and what that cost."""

    voter: str
    """The judge's name."""
    model: str
    """Its model."""
    answered: int
    """Papers it gave a fit."""
    failed: int
    """Papers whose reply was a failure (the keyword rule decided them, tagged judge-failed)."""
    missing: int
    """Papers it had not answered (decided with --keyword-fallback, tagged judge-missing)."""
    input_tokens: int
    """Prompt tokens of its recorded replies."""
    output_tokens: int
    """Their completion tokens."""
    cost_usd: float
    """What they cost, in US dollars."""

    def to_json(self) -> dict[str, Any]:
        return {"voter": self.voter, "model": self.model, "answered": self.answered, "failed": self.failed,
                "missing": self.missing, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 6)}


@dataclass(frozen=True)
class Disagreement:
    """A paper the judge decided where the keyword rule's fit is apart from the judge's (never applied)."""

    id: str
    """The paper."""
    title: str
    """Its title."""
    decision: str
    """KEEP, REVIEW or DROP: what the judge's answer made of it."""
    keyword_fit: str
    """The keyword rule's reading as a fit (in_scope, borderline, partial, out_of_scope, silent)."""
    keyword_lines: tuple[int, ...]
    """The criteria lines the keyword rule matched."""
    judge_fit: str
    """The fit that decided."""
    judge_lines: tuple[int, ...]
    """The criteria lines the judges cited."""


@dataclass(frozen=True)
class WeekJudge:
    """The criteria judge's week: its generation, its cost, and where it and the keyword rule disagree."""

    generation: str
    """The judge's generation the week was decided with."""
    judges: tuple[JudgeSpend, ...]
    """Per judge, in configured order."""
    cost_usd: float
    """The week's judge cost: every judge's recorded answers on its papers."""
    disagreements: tuple[Disagreement, ...] | None
    """Keyword rule against judge, by paper id: both speak, two or more steps apart; None when the document has no
    keyword terms (no table)."""
    note: str
    """What the disagreements are for ("" without them)."""
    keyword_silent: int = 0
    """Papers the judge decided where the keyword rule is silent and the judge is not."""
    judge_silent: int = 0
    """Papers where the judge is silent and the keyword rule is not."""


def read_judge(value: Any) -> WeekJudge | None:
    """decisions.json's `judge`, typed (None when absent or null: no judge, or rules before digest.3).

    TypeError, ValueError or AttributeError when malformed (the archive's reader names the file)."""
    if value is None:
        return None
    table = value.get("keyword_disagreements")
    rows = None if table is None else tuple(Disagreement(
        id=str(r["id"]), title=str(r.get("title", "")), decision=str(r["decision"]),
        keyword_fit=str(r["keyword"]["fit"]), keyword_lines=tuple(int(x) for x in r["keyword"]["criteria_lines"]),
        judge_fit=str(r["judge"]["fit"]), judge_lines=tuple(int(x) for x in r["judge"]["criteria_lines"]))
        for r in table["papers"])
    return WeekJudge(
        generation=str(value["generation"]),
        judges=tuple(JudgeSpend(str(j["voter"]), str(j.get("model", "")), int(j["answered"]), int(j["failed"]),
                                int(j["missing"]), int(j["input_tokens"]), int(j["output_tokens"]),
                                float(j["cost_usd"])) for j in value["judges"]),
        cost_usd=float(value["cost_usd"]), disagreements=rows, note="" if table is None else str(table["note"]),
        keyword_silent=0 if table is None else int(table["keyword_silent"]),
        judge_silent=0 if table is None else int(table["judge_silent"]))
