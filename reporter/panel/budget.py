"""What a run may spend: `--max-cost` (this run) and the workspace's budget (`[screen] budget`, `[digest.judge]
budget`: every run of the current generations together), each request's worst case reserved before it is sent.

A request may cost at most its prompt's tokens (counted offline, `tokens.py`,
times the largest ratio the voter's replies billed to that count so far: a
server's own tokenizer may count more) plus the voter's `max_tokens` of
output, at the voter's prices. `reserve`
takes that worst case out of what is left under both limits before the
request is sent and refuses it (for good: the run stops sending) when it does
not fit under either; `settle` puts the reservation back and counts what the
reply really cost. So what is spent never passes a limit by more than the
requests in flight could cost beyond their worst case (a server that bills
more tokens than the prompt and `max_tokens` allow), and without a limit
nothing is counted.

The budget's spend is read from the state database, never kept in memory
across runs: `load` takes the spend of the current generations' vote rows
per runner (`Store.spend`). Its first call (at the run's start, after
recovery) is what earlier runs spent (`before`); later calls (before a
claim: as often as `runner.SPEND_READ_SHARE` allows, and at every claim once
less than NEAR_LIMIT of the budget is left) add what other runners spent
since (`others`), so runners at once share one budget.

All calls come from the run's event loop (one thread): no lock is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..money import dollars
from .prices import cost_usd

MAX_COST = "--max-cost"
"""How messages name the run's limit."""
NEAR_LIMIT = 0.2
"""The share of the workspace's budget left under which a runner reads the others' spend before every claim."""


class Budget:
    """What a run may still spend, with the requests in flight reserved at their worst case."""

    def __init__(self, cap: float | None, limit: float | None = None, limit_name: str = "budget") -> None:
        self.cap = cap
        """The --max-cost in US dollars (None: no cap)."""
        self.limit = limit
        """The workspace's budget for the current generations, in US dollars (None: none)."""
        self.limit_name = limit_name
        """How messages name it (`[screen] budget`)."""
        self.spent = 0.0
        """What the replies this run received cost (their usage at the voters' prices)."""
        self.reserved = 0.0
        """The worst cases of the requests in flight."""
        self.before = 0.0
        """What the generations' recorded replies cost when this run started (earlier runs, adopted replies)."""
        self.others = 0.0
        """What other runners recorded since this run started."""
        self._others_at_start: float | None = None
        self.refused_by: str | None = None
        """`max_cost` or `budget` once a request did not fit under that limit: nothing more is sent."""
        self.refused_worst = 0.0
        """The worst case of the request that did not fit."""
        self._prompt_ratio: dict[Any, float] = {}
        """Voter -> the largest ratio of the prompt tokens its replies billed to those counted offline (>= 1)."""
        self._output_most: dict[Any, int] = {}
        """Voter -> the most output tokens a reply of it billed."""

    @property
    def counting(self) -> bool:
        """True when there is a limit to keep (else nothing is reserved)."""
        return self.cap is not None or self.limit is not None

    @property
    def refused(self) -> bool:
        """True once a limit stopped the sending."""
        return self.refused_by is not None

    @property
    def workspace_spent(self) -> float:
        """What the current generations cost so far, over every run (as far as this run has seen)."""
        return self.before + self.others + self.spent

    def load(self, rows: Iterable[tuple[str, Any, float]], runner: str) -> None:
        """The generations' recorded spend, as `(runner, voter, dollars)` rows (`Store.spend`)."""
        total = others = 0.0
        for who, _voter, usd in rows:
            total += usd
            if who != runner:
                others += usd
        if self._others_at_start is None:
            self.before, self._others_at_start = total, others
        else:
            self.others = max(others - self._others_at_start, 0.0)

    def near_limit(self) -> bool:
        """True when less than NEAR_LIMIT of the workspace's budget is left (its spend is then read at every claim)."""
        return self.limit is not None and self.limit - self.workspace_spent - self.reserved < NEAR_LIMIT * self.limit

    def prompt_tokens(self, messages: list[dict]) -> int:
        """A request's prompt tokens counted offline (0 when there is no limit: nothing is counted)."""
        if not self.counting:
            return 0
        from .tokens import count_message_tokens
        return count_message_tokens([messages])[0]

    def worst_case_of(self, voter: Any, prompt: int) -> float:
        """The most one request of `voter` (VoterSettings) with `prompt` tokens counted offline can cost: its
        prompt as the voter's server counts it (the largest ratio its replies billed so far, at least 1) plus
        max_tokens of output (or the most a reply billed, if more), at the voter's prices."""
        if not self.counting:
            return 0.0
        billed = math.ceil(prompt * self._prompt_ratio.get(voter, 1.0))
        output = max(voter.max_tokens, self._output_most.get(voter, 0))
        return cost_usd(voter.price_in_per_mtok, voter.price_out_per_mtok, billed, output)

    def worst_case(self, voter: Any, messages: list[dict]) -> float:
        """The most one request of `voter` (VoterSettings) can cost (`worst_case_of` its counted prompt)."""
        return self.worst_case_of(voter, self.prompt_tokens(messages))

    def observe(self, voter: Any, prompt: int, billed_in: int | None, billed_out: int | None) -> None:
        """What a reply's usage billed beside the prompt counted offline: a server whose tokenizer counts more
        than the offline one (any model but OpenAI's), or a reply longer than max_tokens, makes the voter's next
        worst cases larger, so the reservations keep holding."""
        if not self.counting:
            return
        if prompt > 0 and billed_in and billed_in > prompt:
            self._prompt_ratio[voter] = max(self._prompt_ratio.get(voter, 1.0), billed_in / prompt)
        if billed_out and billed_out > self._output_most.get(voter, 0):
            self._output_most[voter] = billed_out

    def exhausted(self) -> bool:
        """True (and from now on refused) when a limit is already spent: nothing is claimed or sent."""
        if self.refused:
            return True
        if self.cap is not None and self.spent + self.reserved >= self.cap:
            self.refused_by = "max_cost"
        elif self.limit is not None and self.workspace_spent + self.reserved >= self.limit:
            self.refused_by = "budget"
        return self.refused

    def reserve(self, worst: float) -> bool:
        """Reserve a request's worst case; False (and from now on always False) when it would pass a limit."""
        if not self.counting:
            return True
        if self.refused:
            return False
        if self.cap is not None and self.spent + self.reserved + worst > self.cap:
            self.refused_by = "max_cost"
        elif self.limit is not None and self.workspace_spent + self.reserved + worst > self.limit:
            self.refused_by = "budget"
        if self.refused:
            self.refused_worst = worst
            return False
        self.reserved += worst
        return True

    def settle(self, worst: float, cost: float) -> None:
        """A request came back: its reservation freed, what it cost (0 for a failure) counted."""
        self.reserved = max(self.reserved - worst, 0.0)
        self.spent += cost

    def stop_message(self, workspace_file: str = "reporter.toml") -> str:
        """Why the sending stopped: the spend, the limit and how to raise it (empty when no limit stopped it)."""
        nxt = f"the next request's worst case ({dollars(self.refused_worst, tenths=True)}, its prompt plus max_tokens " \
              f"at the voter's prices) would have passed it" if self.refused_worst else "it was spent"
        if self.refused_by == "max_cost":
            return (f"stopped by {MAX_COST}: this run spent {dollars(self.spent, tenths=True)} of "
                    f"{MAX_COST} {dollars(self.cap or 0.0, tenths=True)} and {nxt}; what was in flight was "
                    f"answered and recorded. To go on, run the same command again with a larger {MAX_COST} "
                    f"(a re-run asks only what is missing)")
        if self.refused_by == "budget":
            return (f"stopped by {self.limit_name}: the current generations have spent "
                    f"{dollars(self.workspace_spent, tenths=True)} of {self.limit_name} "
                    f"{dollars(self.limit or 0.0, tenths=True)} over all their runs (this run "
                    f"{dollars(self.spent, tenths=True)}) and {nxt}; what was in flight was answered and recorded. "
                    f"To go on, raise {self.limit_name} in {workspace_file} and run the same command again")
        return ""


def budget_name(where: str) -> str:
    """How messages name a panel's budget key, from how they name its database (`[screen] database`)."""
    return f"{where.removesuffix(' database')} budget"
