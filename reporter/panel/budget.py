"""A run's spending cap (`--max-cost`): each request's worst case is reserved before it is sent.

A request may cost at most its prompt's tokens (counted offline, `tokens.py`)
plus the voter's `max_tokens` of output, at the voter's prices. `reserve`
takes that worst case out of what is left under the cap before the request is
sent and refuses it (for good: the run stops sending) when it does not fit;
`settle` puts the reservation back and counts what the reply really cost. So
what is spent never passes the cap by more than the requests in flight could
cost beyond their worst case (a server that bills more tokens than the prompt
and `max_tokens` allow), and without a cap nothing is counted.

All calls come from the run's event loop (one thread): no lock is needed.
"""

from __future__ import annotations

from typing import Any

from .prices import cost_usd


class Budget:
    """What a run may still spend, with the requests in flight reserved at their worst case."""

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        """The --max-cost in US dollars (None: no cap)."""
        self.spent = 0.0
        """What the replies received cost (their usage at the voters' prices)."""
        self.reserved = 0.0
        """The worst cases of the requests in flight."""
        self.refused = False
        """True once a request did not fit under the cap: nothing more is sent."""

    def worst_case(self, voter: Any, messages: list[dict]) -> float:
        """The most one request of `voter` (VoterSettings) can cost: its prompt plus max_tokens of output."""
        if self.cap is None:
            return 0.0
        from .tokens import count_message_tokens
        prompt = count_message_tokens([messages])[0]
        return cost_usd(voter.price_in_per_mtok, voter.price_out_per_mtok, prompt, voter.max_tokens)

    def reserve(self, worst: float) -> bool:
        """Reserve a request's worst case; False (and from now on always False) when it would pass the cap."""
        if self.cap is None:
            return True
        if self.refused or self.spent + self.reserved + worst > self.cap:
            self.refused = True
            return False
        self.reserved += worst
        return True

    def settle(self, worst: float, cost: float) -> None:
        """A request came back: its reservation freed, what it cost (0 for a failure) counted."""
        self.reserved = max(self.reserved - worst, 0.0)
        self.spent += cost
