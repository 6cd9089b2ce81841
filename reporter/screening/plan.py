"""The dry run: per tier, the works that would be sent, their prompt lengths and what they would cost.

Nothing is claimed, sent or written: the state database is opened read-only
(and not created when it is absent; then nothing is decided yet). A work
would be sent when it is in the tier's scope (scope.py) and has no verdict
in the tier's current generation; a voter is asked only for the works it has
not voted on. The input tokens of a work are those of its assembled prompt
(system and user message plus the chat format's overhead), counted offline
with `o200k_base`; output tokens are the mean of the voter's recorded replies
in this generation, or DEFAULT_OUTPUT_TOKENS per reply before there is one.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..money import dollars
from .config import TIERS, VoterSettings
from .prompt import Prompt, generation_for, load_prompt, work_text
from .scope import TierScope, load_works, tier_scope

# tokens.py (bpe-openai) is imported where tokens are counted: loading it takes a second or two, which
# the site (whose status page shows plans) and the commands that never count tokens should not pay.

DEFAULT_OUTPUT_TOKENS = 60
"""Output tokens per reply assumed before a voter has recorded any in the generation."""
HISTOGRAM_BINS = 10
"""Bins of the token-length histogram (equal widths from the shortest prompt to the longest)."""
TIER_NAMES = {"cheap": "cheap tier (discard-only)", "expensive": "expensive screen"}
"""How outputs name each tier."""
HOW_TO_CONFIGURE = ("add a [screen] table to reporter.toml with two [[screen.expensive.voters]] entries "
                    "(and two [[screen.cheap.voters]] for the discard-only tier); see docs/screening.md")
"""What to do when screening is not configured."""


@dataclass(frozen=True)
class TokenStats:
    """The input-token lengths of the prompts a tier would send (nearest-rank percentiles)."""

    count: int
    """Prompts counted."""
    min: int
    """The shortest prompt."""
    median: int
    """The median (nearest rank: the lower middle of an even count)."""
    p90: int
    """The 90th percentile (nearest rank)."""
    p99: int
    """The 99th percentile (nearest rank)."""
    max: int
    """The longest prompt."""
    total: int
    """All prompts together (what one voter asked for every work would read)."""
    histogram: tuple[tuple[int, int, int], ...]
    """(lowest, highest, prompts) per bin, each bin `lowest..highest` tokens inclusive, shortest first."""


@dataclass(frozen=True)
class VoterCost:
    """What one voter would be asked and what it would cost."""

    voter: str
    """The voter's name."""
    model: str
    """The model it asks."""
    works: int
    """Works it would be asked (those without its vote in this generation)."""
    input_tokens: int
    """Their prompts' tokens."""
    output_tokens_estimate: int
    """Reply tokens expected: `works` times the mean of its recorded replies (or DEFAULT_OUTPUT_TOKENS)."""
    cost_usd: float
    """At the voter's configured prices, in US dollars."""
    estimate: bool
    """True when the input count is an estimate (not an OpenAI model) or no reply is recorded to size the output."""
    output_basis: str
    """Where the output estimate comes from, in words."""
    price_in_per_mtok: float
    """Dollars per million input tokens used."""
    price_out_per_mtok: float
    """Dollars per million output tokens used."""


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


def token_stats(lengths: Sequence[int], bins: int = HISTOGRAM_BINS) -> TokenStats | None:
    """Min, median, p90, p99, max and a histogram of equal-width bins (None for no lengths)."""
    if not len(lengths):
        return None
    values = np.sort(np.asarray(lengths, dtype=np.int64))
    n = len(values)

    def rank(p: float) -> int:
        return int(values[max(0, math.ceil(p * n) - 1)])

    low, high = int(values[0]), int(values[-1])
    width = max(1, math.ceil((high - low + 1) / bins))
    edges = np.arange(low, high + width + 1, width)
    counts = np.histogram(values, bins=edges)[0] if len(edges) > 1 else np.array([n])
    histogram = tuple((int(edges[i]), int(edges[i] + width - 1), int(c)) for i, c in enumerate(counts)
                      if edges[i] <= high)
    return TokenStats(count=n, min=low, median=rank(0.5), p90=rank(0.9), p99=rank(0.99), max=high,
                      total=int(values.sum()), histogram=histogram)


def prompt_lengths(prompt: Prompt, works: Sequence[Any]) -> list[int]:
    """Input tokens of each work's request: system and user message, each with the chat format's overhead.

    The same as `tokens.count_message_tokens` over `messages_for`, with the
    system message (the same for every work) counted once.
    """
    from .tokens import TOKENS_PER_MESSAGE, TOKENS_PER_REPLY, count_tokens
    system = count_tokens([prompt.system])[0]
    users = count_tokens([work_text(prompt, w.title, w.abstract, w.title_only) for w in works])
    return [system + user + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_REPLY for user in users]


def cost_usd(voter: VoterSettings, input_tokens: int, output_tokens: int) -> float:
    """Dollars at the voter's prices per million tokens."""
    return (input_tokens * voter.price_in_per_mtok + output_tokens * voter.price_out_per_mtok) / 1e6


def readonly_store(ws: Any, store: Any = None) -> contextlib.AbstractContextManager[Any]:
    """`store` when given, else the workspace's store opened read-only (None when its database does not exist)."""
    return open_readonly(ws.screen.database, store)


@contextlib.contextmanager
def open_readonly(database: str, store: Any = None, where: str = "[screen] database") -> Iterator[Any]:
    """`store` when given, else the store at `database` opened read-only: None when it does not exist (nothing is
    created, nothing is written)."""
    if store is not None:
        yield store
        return
    from .store import open_store
    opened = open_store(database, readonly=True, where=where)
    try:
        yield opened
    finally:
        if opened is not None:
            opened.close()


def tier_voters(ws: Any) -> dict[str, tuple[VoterSettings, ...]]:
    """Tier -> its configured voters (empty when the tier is not configured)."""
    return {tier: tuple(getattr(ws.screen, tier)) for tier in TIERS}


def generations(ws: Any, prompt: Prompt) -> dict[str, str | None]:
    """Tier -> its current generation id (None when the tier has no voters)."""
    return {tier: generation_for(tier, voters, prompt).id if voters else None
            for tier, voters in tier_voters(ws).items()}


def scopes(ws: Any, release_dir: Path, gens: dict[str, str | None], store: Any) -> dict[str, TierScope]:
    """Tier -> its scope in the release, the expensive one after the cheap tier's current verdicts."""
    return {tier: tier_scope(ws, release_dir, tier, cheap_generation=gens["cheap"], store=store) for tier in TIERS}


def plan_screen(ws: Any, release_dir: Path, *, store: Any = None) -> tuple[TierPlan, ...]:
    """The dry run of every tier of the release (cheap, then expensive); never writes anything."""
    if ws.screen is None:
        raise InputError(f"{ws.file}: screening is not configured; {HOW_TO_CONFIGURE}")
    from .tokens import TOKENIZER_NOTE
    prompt = load_prompt(ws.screen)
    gens = generations(ws, prompt)
    voters = tier_voters(ws)
    with readonly_store(ws, store) as db:
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
    texts = load_works(ws, release_dir, {w for ids in send.values() for w in ids} | set(may_come))
    order = list(texts)
    lengths = dict(zip(order, prompt_lengths(prompt, [texts[w] for w in order])))
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
        coming_cost = sum(cost_usd(v, sum(lengths[w] for w in coming), _mean_output(v, votes[tier]) * len(coming))
                          for v in voters[tier])
        note = s.note if voters[tier] else _unconfigured_note(tier, s)
        plans.append(TierPlan(
            tier=tier, generation=gens[tier], configured=bool(voters[tier]), routed=len(s.work_ids),
            decided=len(decided[tier]), works=len(ids), may_come=len(coming),
            may_come_cost_usd=coming_cost, tokens=token_stats([lengths[w] for w in ids]), voters=costs,
            total_cost_usd=sum(c.cost_usd for c in costs), note=note, tokenizer_note=TOKENIZER_NOTE))
    return tuple(plans)


def _unconfigured_note(tier: str, s: TierScope) -> str:
    if tier == "cheap":
        return (f"its {len(s.work_ids):,} works go straight to the expensive screen; add two [[screen.cheap.voters]] "
                f"to screen them first")
    return "nothing can be admitted until two [[screen.expensive.voters]] are configured"


def _mean_output(voter: VoterSettings, votes: dict[str, dict[str, Any]]) -> float:
    sizes = [row[voter.name].output_tokens for row in votes.values() if voter.name in row
             and row[voter.name].output_tokens is not None]
    return sum(sizes) / len(sizes) if sizes else DEFAULT_OUTPUT_TOKENS


def voter_cost(voter: VoterSettings, ids: list[str], lengths: dict[str, int],
               votes: dict[str, dict[str, Any]]) -> VoterCost:
    """What `voter` would be asked of `ids` (those it has no vote on in `votes`, its generation's) and would cost."""
    from .tokens import is_openai_model
    asked = [w for w in ids if voter.name not in votes.get(w, {})]
    recorded = sum(1 for row in votes.values() if voter.name in row and row[voter.name].output_tokens is not None)
    mean = _mean_output(voter, votes)
    input_tokens = sum(lengths[w] for w in asked)
    output = round(mean * len(asked))
    basis = (f"the mean of its {recorded:,} recorded replies in this generation ({mean:,.1f} tokens)" if recorded
             else f"{DEFAULT_OUTPUT_TOKENS} tokens per reply (no reply recorded yet)")
    return VoterCost(voter=voter.name, model=voter.model, works=len(asked), input_tokens=input_tokens,
                     output_tokens_estimate=output, cost_usd=cost_usd(voter, input_tokens, output),
                     estimate=not is_openai_model(voter.model) or not recorded, output_basis=basis,
                     price_in_per_mtok=voter.price_in_per_mtok, price_out_per_mtok=voter.price_out_per_mtok)


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
            lines.append(f"  {p.may_come:,} cheap-tier works may still come (about {dollars(p.may_come_cost_usd)} "
                         f"more if all of them do)")
        lines += cost_lines(p.tokens, p.voters, p.total_cost_usd)
        lines.append("")
    if any(p.voters for p in plans):
        lines.append(plans[0].tokenizer_note)
        lines.append("Output tokens: " + "; ".join(f"{v.voter}: {v.output_basis}" for p in plans for v in p.voters)
                     + ".")
    lines.append("Nothing was claimed or sent; run with --run to screen.")
    return "\n".join(lines) + "\n"


def cost_lines(tokens: TokenStats | None, voters: Sequence[VoterCost], total: float, *,
               unit: str = "work", voter: str = "voter", works: str = "works") -> list[str]:
    """A plan's token distribution (with its histogram), its cost per voter and its total, as terminal lines."""
    lines = []
    if tokens is not None:
        t = tokens
        lines.append(f"  input tokens per {unit}: min {t.min:,}, median {t.median:,}, p90 {t.p90:,}, "
                     f"p99 {t.p99:,}, max {t.max:,}")
        top = max(c for _lo, _hi, c in t.histogram) or 1
        for lo, hi, c in t.histogram:
            lines.append(f"    {lo:>7,}–{hi:<7,} {'#' * math.ceil(30 * c / top) if c else '':<30} {c:,}")
    lines.append(f"  {voter:<20} {'model':<28} {works:>9} {'input tokens':>14} {'output (est.)':>14} {'cost':>12}")
    for v in voters:
        lines.append(f"  {v.voter[:20]:<20} {v.model[:28]:<28} {v.works:>9,} {v.input_tokens:>14,} "
                     f"{v.output_tokens_estimate:>14,} {dollars(v.cost_usd):>12}"
                     f"{' (estimate)' if v.estimate else ''}")
    lines.append(f"  total {dollars(total)}" + (" (an estimate)" if any(v.estimate for v in voters) else ""))
    return lines


def tokens_json(tokens: TokenStats | None) -> dict[str, Any] | None:
    """A token distribution as JSON, its histogram as {lowest, highest, works} rows."""
    if tokens is None:
        return None
    doc = asdict(tokens)
    doc["histogram"] = [{"lowest": lo, "highest": hi, "works": c} for lo, hi, c in tokens.histogram]
    return doc


def plan_json(plans: Sequence[TierPlan]) -> dict[str, Any]:
    """The dry run as JSON (for --json): every field of every tier's plan."""
    tiers = []
    for p in plans:
        tiers.append({**asdict(p), "tokens": tokens_json(p.tokens)})
    return {"dry_run": True, "tiers": tiers, "total_cost_usd": sum(p.total_cost_usd for p in plans)}


def unanswered_runs(ws: Any) -> list[tuple[Any, bool]]:
    """(run, still running) of every run with requests sent and never answered, oldest first; reads only.

    Such requests were in flight when the run was killed (a later run asks
    them again), or are in flight now (a live runner).
    """
    from .rawlog import SUFFIX, is_dead
    with readonly_store(ws) as db:
        runs = db.runs() if db is not None else []
    return [(r, r.finished_at is None and not is_dead(Path(ws.screen.raw_dir) / (r.runner + SUFFIX)))
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
