"""The dry run: per tier, the works that would be sent, their prompt lengths and what they would cost.

Nothing is claimed, sent or written: the state database is opened read-only
(and not created when it is absent; then nothing is decided yet). A work
would be sent when it is in the tier's scope (scope.py) and has no verdict
in the tier's current generation; a voter is asked only for the works it has
not voted on. What each voter would cost is the panel's (`reporter.panel.plan`:
prompt lengths counted offline, output tokens from the recorded replies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..money import dollars
from ..panel.config import VoterSettings
from ..panel.plan import TokenStats, VoterCost, cost_lines, mean_output, price_lines, prompt_lengths, token_stats, \
    tokens_json, voter_cost
from ..panel.prices import cost_usd
from ..panel.prompt import Prompt, generation_for
from ..panel.readonly import open_readonly
from .config import TIERS, WHERE, ScreenWorkspace
from .prompt import load_prompt
from .lengths import KeptLengths, cache_key, prompt_lengths_cached
from .scope import TierScope, check_text_inputs, load_works, release_id_of, tier_scope

# the panel's tokens.py (bpe-openai) is imported where tokens are counted: loading it takes a second or two,
# which the site (whose status page shows plans) and the commands that never count tokens should not pay.

TIER_NAMES = {"cheap": "cheap tier (discard-only)", "expensive": "expensive screen"}
"""How outputs name each tier."""
HOW_TO_CONFIGURE = ("add a [screen] table to reporter.toml with two [[screen.expensive.voters]] entries "
                    "(and two [[screen.cheap.voters]] for the discard-only tier); see docs/screening.md")
"""What to do when screening is not configured."""


@dataclass(frozen=True)
class TierPlan:
    """The dry run of one tier."""

    tier: str
    """`cheap` or `expensive`."""
    generation: str | None
    """The tier's current generation (None when it has no voters)."""
    configured: bool
    """True when [screen] configures the tier's two voters."""
    routed: int
    """Works in the tier's scope now."""
    decided: int
    """Of those, works with a verdict in the current generation (never sent again)."""
    works: int
    """Works that would be sent now."""
    may_come: int
    """Expensive only: cheap-tier works not decided yet, which may still reach the screen."""
    may_come_cost_usd: float
    """Expensive only: what those works would cost the screen's voters if all of them came."""
    tokens: TokenStats | None
    """The prompt lengths of the works that would be sent (None when there is none)."""
    voters: tuple[VoterCost, ...]
    """Per configured voter, in configured order."""
    total_cost_usd: float
    """Both voters together."""
    note: str
    """How the scope came about, or why the tier sends nothing."""
    tokenizer_note: str
    """How tokens were counted (exact for OpenAI's o200k models, an estimate otherwise)."""


def tier_voters(ws: ScreenWorkspace) -> dict[str, tuple[VoterSettings, ...]]:
    """Tier -> its configured voters (empty when the tier is not configured)."""
    return {tier: tuple(getattr(ws.screen, tier)) for tier in TIERS}


def generations(ws: ScreenWorkspace, prompt: Prompt) -> dict[str, str | None]:
    """Tier -> its current generation id (None when the tier has no voters)."""
    return {tier: generation_for(tier, voters, prompt).id if voters else None
            for tier, voters in tier_voters(ws).items()}


def scopes(ws: ScreenWorkspace, release_dir: Path, gens: dict[str, str | None], store: Any) -> dict[str, TierScope]:
    """Tier -> its scope in the release, the expensive one after the cheap tier's current verdicts."""
    return {tier: tier_scope(ws, release_dir, tier, cheap_generation=gens["cheap"], store=store) for tier in TIERS}


def plan_screen(ws: ScreenWorkspace, release_dir: Path, *, store: Any = None,
                lengths_file: KeptLengths | None = None) -> tuple[TierPlan, ...]:
    """The dry run of every tier of the release (cheap, then expensive); never writes anything.

    `lengths_file`: where the prompt lengths are kept between builds (lengths.py; a build's status page passes
    the workspace's, and writes what was counted once it has published); None counts them all.
    """
    if ws.screen is None:
        raise InputError(f"{ws.file}: screening is not configured; {HOW_TO_CONFIGURE}")
    from ..panel.tokens import TOKENIZER_NOTE
    prompt = load_prompt(ws.screen)
    gens = generations(ws, prompt)
    voters = tier_voters(ws)
    with open_readonly(ws.screen.database, WHERE, store) as db:
        scope = scopes(ws, release_dir, gens, db)
        decided, votes = {}, {}
        for tier in TIERS:
            gen, ids = gens[tier], scope[tier].work_ids
            decided[tier] = db.verdicts(tier, gen, ids) if db is not None and gen and ids else {}
            votes[tier] = db.votes(tier, gen, None) if db is not None and gen else {}
    send = {tier: [w for w in scope[tier].work_ids if w not in decided[tier]]
            for tier in TIERS if voters[tier] or tier == "expensive"}
    # The cheap works still undecided may reach the screen: counted now, with the cheap tier's prompts.
    may_come = send.get("cheap", []) if voters["cheap"] else []
    lengths = _lengths(ws, release_dir, prompt, {w for ids in send.values() for w in ids} | set(may_come),
                       lengths_file)
    plans = []
    for tier in TIERS:
        s = scope[tier]
        if tier not in send:
            plans.append(TierPlan(tier, None, False, len(s.work_ids), 0, 0, 0, 0.0, None, (), 0.0,
                                  _unconfigured_note(tier, s), TOKENIZER_NOTE))
            continue
        ids = send[tier]
        costs = tuple(voter_cost(v, ids, lengths, votes[tier]) for v in voters[tier])
        coming = may_come if tier == "expensive" else []
        coming_cost = sum(cost_usd(v.price_in_per_mtok, v.price_out_per_mtok, sum(lengths[w] for w in coming),
                               mean_output(v, votes[tier]) * len(coming))
                          for v in voters[tier])
        note = s.note if voters[tier] else _unconfigured_note(tier, s)
        plans.append(TierPlan(
            tier=tier, generation=gens[tier], configured=bool(voters[tier]), routed=len(s.work_ids),
            decided=len(decided[tier]), works=len(ids), may_come=len(coming),
            may_come_cost_usd=coming_cost, tokens=token_stats([lengths[w] for w in ids]), voters=costs,
            total_cost_usd=sum(c.cost_usd for c in costs), note=note, tokenizer_note=TOKENIZER_NOTE))
    return tuple(plans)


def _lengths(ws: ScreenWorkspace, release_dir: Path, prompt: Prompt, work_ids: set[str],
             lengths_file: KeptLengths | None) -> dict[str, int]:
    """work id -> prompt length; kept lengths are of the release's text, so the pool is checked all the same."""
    def count(ids: list[str]) -> dict[str, int]:
        texts = load_works(ws, release_dir, ids, check=False)  # checked first
        return dict(zip(ids, prompt_lengths(prompt, [texts[w] for w in ids])))

    if not work_ids:
        return {}
    check_text_inputs(ws, release_dir)
    key = cache_key(release_id_of(release_dir), prompt.hash)
    return prompt_lengths_cached(lengths_file, key, work_ids, count)


def _unconfigured_note(tier: str, s: TierScope) -> str:
    if tier == "cheap":
        return (f"its {len(s.work_ids):,} works go straight to the expensive screen; add two [[screen.cheap.voters]] "
                f"to screen them first")
    return "nothing can be admitted until two [[screen.expensive.voters]] are configured"


# --- outputs -------------------------------------------------------------------------------------

def format_plan(plans: Sequence[TierPlan]) -> str:
    """The dry run for a terminal: per tier, the works, the token distribution and the cost per voter."""
    lines: list[str] = []
    for p in plans:
        head = f"{TIER_NAMES[p.tier]}"
        if not p.configured:
            lines += [f"{head}: not configured ({p.note})", ""]
            continue
        lines.append(f"{head} (generation {p.generation[:12] if p.generation else '-'}): {p.works:,} works would "
                     f"be sent ({p.routed:,} in scope, {p.decided:,} already decided)")
        lines.append(f"  scope: {p.note}")
        if p.tier == "expensive" and p.may_come:
            lines.append(f"  {p.may_come:,} cheap-tier works may still come (about {dollars(p.may_come_cost_usd, tenths=True)} "
                         f"more if all of them do)")
        lines += cost_lines(p.tokens, p.voters, p.total_cost_usd)
        lines.append("")
    if any(p.voters for p in plans):
        lines.append(plans[0].tokenizer_note)
        lines.append("Output tokens: " + "; ".join(f"{v.voter}: {v.output_basis}" for p in plans for v in p.voters)
                     + ".")
        lines += price_lines([v for p in plans for v in p.voters], "[[screen.<tier>.voters]]")
    lines.append("Nothing was claimed or sent; run with --run to screen.")
    return "\n".join(lines) + "\n"


def plan_json(plans: Sequence[TierPlan]) -> dict[str, Any]:
    """The dry run as JSON (for --json): every field of every tier's plan."""
    tiers = []
    for p in plans:
        tiers.append({**asdict(p), "tokens": tokens_json(p.tokens)})
    return {"dry_run": True, "tiers": tiers, "total_cost_usd": sum(p.total_cost_usd for p in plans)}


def unanswered_runs(ws: ScreenWorkspace) -> list[tuple[Any, bool]]:
    """(run, still running) of every run with requests sent and never answered, oldest first; reads only.

    Such requests were in flight when the run was killed (a later run asks
    them again), or are in flight now (a live runner).
    """
    from ..panel.store_status import runner_state
    with open_readonly(ws.screen.database, WHERE) as db:
        runs, now = (db.runner_rows(), db.clock()) if db is not None else ([], 0.0)
    # A runner of another machine (no raw file here) is running only while its heartbeats come (issue 34).
    return [(r, runner_state(r, Path(ws.screen.raw_dir), ws.screen.lease_seconds, now) == "running")
            for r in runs if r.in_flight]


def format_unanswered(runs: Sequence[tuple[Any, bool]]) -> str:
    """The dry run's lines on requests in flight (none: no lines)."""
    if not runs:
        return ""
    lines = ["Requests sent and never answered (in flight when a run was killed; a later run asks them again):"]
    for r, live in runs:
        state = "still running" if live else "ended" if r.finished_at is not None else "killed"
        lines.append(f"  {r.runner} on {r.host} (pid {r.pid}, {state}): {r.sent:,} sent, {r.answered:,} answered, "
                     f"{r.in_flight:,} in flight")
    return "\n".join(lines) + "\n"


def unanswered_json(runs: Sequence[tuple[Any, bool]]) -> list[dict[str, Any]]:
    """The same runs for --json."""
    return [{"runner": r.runner, "host": r.host, "pid": r.pid, "sent": r.sent, "answered": r.answered,
             "in_flight": r.in_flight, "running": live, "finished": r.finished_at is not None} for r, live in runs]
