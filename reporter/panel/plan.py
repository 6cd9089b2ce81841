"""The cost of asking a panel, before anything is sent: prompt lengths, their distribution, each voter's cost.

What a dry run shows (the screen's `reporter screen`, the digest's `reporter
judge`): the input tokens of a work are those of its assembled prompt (system
and user message plus the chat format's overhead), counted offline with
`o200k_base` (`tokens.py`); output tokens are the mean of the voter's
recorded replies in this generation, or DEFAULT_OUTPUT_TOKENS per reply
before there is one. Nothing here opens a database or sends a request.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..money import dollars
from .config import VoterSettings
from .prices import cost_usd
from .prompt import Prompt, work_text

# tokens.py (bpe-openai) is imported where tokens are counted: loading it takes a second or two, which
# the site (whose status page shows plans) and the commands that never count tokens should not pay.

DEFAULT_OUTPUT_TOKENS = 60
"""Output tokens per reply assumed before a voter has recorded any in the generation."""
HISTOGRAM_BINS = 10
"""Bins of the token-length histogram (equal widths from the shortest prompt to the longest)."""


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
    price_checked: str | None = None
    """None when the prices were configured; else the date prices.json says they were checked, or `unchecked`."""


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


def mean_output(voter: VoterSettings, votes: dict[str, dict[str, Any]]) -> float:
    sizes = [row[voter.name].output_tokens for row in votes.values() if voter.name in row
             and row[voter.name].output_tokens is not None]
    return sum(sizes) / len(sizes) if sizes else DEFAULT_OUTPUT_TOKENS


def voter_cost(voter: VoterSettings, ids: list[str], lengths: dict[str, int],
               votes: dict[str, dict[str, Any]]) -> VoterCost:
    """What `voter` would be asked of `ids` (those it has no vote on in `votes`, its generation's) and would cost."""
    from .tokens import is_openai_model
    asked = [w for w in ids if voter.name not in votes.get(w, {})]
    recorded = sum(1 for row in votes.values() if voter.name in row and row[voter.name].output_tokens is not None)
    mean = mean_output(voter, votes)
    input_tokens = sum(lengths[w] for w in asked)
    output = round(mean * len(asked))
    basis = (f"the mean of its {recorded:,} recorded replies in this generation ({mean:,.1f} tokens)" if recorded
             else f"{DEFAULT_OUTPUT_TOKENS} tokens per reply (no reply recorded yet)")
    return VoterCost(voter=voter.name, model=voter.model, works=len(asked), input_tokens=input_tokens,
                     output_tokens_estimate=output, cost_usd=cost_usd(voter.price_in_per_mtok, voter.price_out_per_mtok, input_tokens, output),
                     estimate=not is_openai_model(voter.model) or not recorded, output_basis=basis,
                     price_in_per_mtok=voter.price_in_per_mtok, price_out_per_mtok=voter.price_out_per_mtok,
                     price_checked=voter.price_checked)


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
                     f"{v.output_tokens_estimate:>14,} {dollars(v.cost_usd, tenths=True):>12}"
                     f"{' (estimate)' if v.estimate else ''}")
    lines.append(f"  total {dollars(total, tenths=True)}" + (" (an estimate)" if any(v.estimate for v in voters) else ""))
    return lines


def price_lines(voters: Sequence[VoterCost], table: str = "[screen]") -> list[str]:
    """The prices a plan used, per voter (each once), and where they came from: configured, or prices.json with
    the date they were checked against the provider's page, or `unchecked`."""
    from .prices import PRICES_FILE, UNCHECKED
    lines, seen = ["Prices used (US dollars per million tokens, input / output):"], set()
    for v in voters:
        if (v.voter, v.model) in seen:
            continue
        seen.add((v.voter, v.model))
        if v.price_checked is None:
            source = "configured (price_in_per_mtok, price_out_per_mtok)"
        elif v.price_checked == UNCHECKED:
            source = (f"from the shipped {PRICES_FILE}, UNCHECKED (never compared with the provider's pricing page: "
                      f"set price_in_per_mtok and price_out_per_mtok in the voter's {table} entry to be sure)")
        else:
            source = f"from the shipped {PRICES_FILE}, checked against the provider's page on {v.price_checked}"
        lines.append(f"  {v.voter} ({v.model}): ${v.price_in_per_mtok:g} / ${v.price_out_per_mtok:g}, {source}")
    return lines if len(lines) > 1 else []


def tokens_json(tokens: TokenStats | None) -> dict[str, Any] | None:
    """A token distribution as JSON, its histogram as {lowest, highest, works} rows."""
    if tokens is None:
        return None
    doc = asdict(tokens)
    doc["histogram"] = [{"lowest": lo, "highest": hi, "works": c} for lo, hi, c in tokens.histogram]
    return doc
