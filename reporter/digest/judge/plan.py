"""`reporter judge` without `--run`: the dry run, per week the papers to judge, their prompt lengths and the cost.

The panel's dry run (`reporter.panel.plan`) for the task `judge`: nothing
is claimed, sent or created (the database is opened read-only, and not made
when it does not exist). A paper would be sent when it has no verdict in the
judge's current generation; a judge is counted only for the papers it has
not answered. Input tokens are those of each paper's assembled prompt,
counted offline; output tokens are the mean of the judge's recorded replies
in this generation, else the panel's DEFAULT_OUTPUT_TOKENS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...money import dollars
from ...panel.plan import TokenStats, VoterCost, cost_lines, price_lines, prompt_lengths, token_stats, tokens_json, \
    voter_cost
from ...panel.readonly import open_readonly
from ..config import DigestSettings
from .config import WHERE
from .prompt import TASK_NAME, judge_setup
from .run import paper_work, week_papers


@dataclass(frozen=True)
class WeekPlan:
    """The dry run of one week."""

    week: str
    """The ISO week."""
    papers: int
    """Its papers after the merge."""
    judged: int
    """Of those, papers every judge has answered in the current generation (never sent again)."""
    to_judge: int
    """Papers that would be sent now."""
    tokens: TokenStats | None
    """The prompt lengths of the papers that would be sent (None when there is none)."""
    voters: tuple[VoterCost, ...]
    """Per judge, in configured order."""
    total_cost_usd: float
    """Every judge together."""


@dataclass(frozen=True)
class JudgePlan:
    """The dry run of `reporter judge` over some weeks."""

    generation: str
    """The judge's current generation."""
    weeks: tuple[WeekPlan, ...]
    """Per week, in order."""
    voters: tuple[VoterCost, ...]
    """Per judge, over every week."""
    total_cost_usd: float
    """Every judge over every week."""
    tokenizer_note: str
    """How tokens were counted."""


def plan_judge(digest: DigestSettings, weeks: Sequence[str], *, store: Any = None) -> JudgePlan:
    """The dry run of the judge over `weeks`; never claims, sends or writes anything."""
    from ...panel.tokens import TOKENIZER_NOTE
    judge = digest.judge
    setup = judge_setup(judge, digest.criteria)
    gen = setup.generation.id
    papers = {week: week_papers(digest, week) for week in weeks}
    with open_readonly(judge.database, WHERE, store) as db:
        votes = db.votes(TASK_NAME, gen, None) if db is not None else {}
        decided = db.verdicts(TASK_NAME, gen, [r.id for rs in papers.values() for r in rs]) if db else {}
    plans = []
    for week, records in papers.items():
        todo = [r for r in records if r.id not in decided]
        lengths = dict(zip((r.id for r in todo), prompt_lengths(setup.prompt, [paper_work(r) for r in todo])))
        costs = tuple(voter_cost(v, list(lengths), lengths, votes) for v in judge.voters)
        plans.append(WeekPlan(week, len(records), len(records) - len(todo), len(todo),
                              token_stats(list(lengths.values())), costs, sum(c.cost_usd for c in costs)))
    totals = tuple(_summed(v.name, [c for p in plans for c in p.voters if c.voter == v.name]) for v in judge.voters)
    return JudgePlan(gen, tuple(plans), totals, sum(p.total_cost_usd for p in plans), TOKENIZER_NOTE)


def _summed(name: str, costs: Sequence[VoterCost]) -> VoterCost:
    """One judge's costs over every week."""
    first = costs[0]
    return VoterCost(voter=name, model=first.model, works=sum(c.works for c in costs),
                     input_tokens=sum(c.input_tokens for c in costs),
                     output_tokens_estimate=sum(c.output_tokens_estimate for c in costs),
                     cost_usd=sum(c.cost_usd for c in costs), estimate=any(c.estimate for c in costs),
                     output_basis=first.output_basis, price_in_per_mtok=first.price_in_per_mtok,
                     price_out_per_mtok=first.price_out_per_mtok)


def format_judge_plan(plan: JudgePlan) -> str:
    """The dry run for a terminal: per week the papers, the token distribution and the cost per judge; the total."""
    lines = [f"criteria judge (generation {plan.generation[:12]}), "
             f"{len(plan.voters)} judge{'s' * (len(plan.voters) != 1)}: "
             + ", ".join(f"{v.voter} ({v.model})" for v in plan.voters), ""]
    for p in plan.weeks:
        lines.append(f"{p.week}: {p.to_judge:,} papers would be sent ({p.papers:,} after the merge, "
                     f"{p.judged:,} already judged)")
        if p.to_judge:
            lines += cost_lines(p.tokens, p.voters, p.total_cost_usd, unit="paper", voter="judge", works="papers")
        lines.append("")
    if len(plan.weeks) > 1:
        lines.append(f"all {len(plan.weeks)} weeks: {sum(p.to_judge for p in plan.weeks):,} papers would be sent")
        lines += cost_lines(None, plan.voters, plan.total_cost_usd, voter="judge", works="papers")
        lines.append("")
    lines.append(plan.tokenizer_note)
    lines.append("Output tokens: " + "; ".join(f"{v.voter}: {v.output_basis}" for v in plan.voters) + ".")
    lines += price_lines(plan.voters, "[[digest.judge.voters]]")
    lines.append(f"Nothing was claimed or sent; run with --run to judge (about {dollars(plan.total_cost_usd, tenths=True)}; "
                 f"--max-cost USD stops claiming at a spend).")
    return "\n".join(lines) + "\n"


def judge_plan_json(plan: JudgePlan) -> dict[str, Any]:
    """The dry run as JSON (for --json): every field of every week's plan."""
    return {"dry_run": True, "generation": plan.generation, "tokenizer_note": plan.tokenizer_note,
            "weeks": [{**asdict(p), "tokens": tokens_json(p.tokens)} for p in plan.weeks],
            "voters": [asdict(v) for v in plan.voters], "total_cost_usd": plan.total_cost_usd}
