"""Rate limits you can set and see: a voter's `requests_per_minute` and `tokens_per_minute`, and the run's traffic
counters (requests sent and answered, retries, 429s, 5xx).

`RateLimit` is one voter's sliding window of the last 60 seconds, shared by
every request of the voter whatever its concurrency: a request (each HTTP
attempt: the first in `ChatVoter.ask`, where a Ctrl-C meanwhile leaves it
unsent, the client's retries in the HTTP hook) waits until the window has room for
one more request and for its tokens (its prompt plus `max_tokens`, the most
it can use: what providers count against a tokens-per-minute limit). A
request larger than the whole token limit is sent alone in an empty window
rather than never.

`Traffic` counts what the run's voters sent and what came back, HTTP attempt
by attempt, from the HTTP client's event hooks (`hooks`): so a 429 the
`openai` client retried on its own is counted though the run never sees it.
The progress line shows the retries and the 429s of the last minute
(`progress_words`); the run's record keeps the counters (`counts`).

Both take a clock (`time.monotonic`) and a sleep (`asyncio.sleep`), so tests
drive them with a fake clock, never with wall time. All calls come from the
run's event loop (one thread).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

WINDOW_SECONDS = 60.0
"""The window of a per-minute limit, and of the progress line's `in the last minute`."""

REQUEST_TOKENS: contextvars.ContextVar[int] = contextvars.ContextVar("request_tokens", default=0)
"""The tokens the request being sent may use (its prompt plus max_tokens), for the HTTP hook's limiter."""

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[Any]]


class RateLimit:
    """One voter's `requests_per_minute` and `tokens_per_minute` over a sliding minute."""

    def __init__(self, requests_per_minute: int | None, tokens_per_minute: int | None, *,
                 clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep,
                 traffic: Traffic | None = None) -> None:
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self.clock, self.sleep = clock, sleep
        self.traffic = traffic
        self._sent: deque[tuple[float, int]] = deque()
        """(when, tokens) of each request sent in the window, oldest first."""
        self._tokens = 0
        self._lock = asyncio.Lock()  # first come, first served: one request waits at the head at a time

    def _expire(self, now: float) -> None:
        while self._sent and self._sent[0][0] <= now - WINDOW_SECONDS:
            self._tokens -= self._sent.popleft()[1]

    def _fits(self, tokens: int) -> bool:
        if self.rpm is not None and len(self._sent) >= self.rpm:
            return False
        if self.tpm is not None and self._sent and self._tokens + tokens > self.tpm:
            return False
        return True

    async def acquire(self, tokens: int = 0) -> float:
        """Wait until one more request of `tokens` fits in the window, count it; the seconds waited."""
        waited = 0.0
        async with self._lock:
            while True:
                now = self.clock()
                self._expire(now)
                if self._fits(tokens):
                    self._sent.append((now, tokens))
                    self._tokens += tokens
                    if waited and self.traffic is not None:
                        self.traffic.waits += 1
                        self.traffic.waited_seconds += waited
                    return waited
                pause = max(self._sent[0][0] + WINDOW_SECONDS - now, 0.001)
                await self.sleep(pause)
                waited += pause


class Traffic:
    """What a run's voters sent and what came back, attempt by attempt (the HTTP client's event hooks)."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.sent = 0
        """Requests sent (first attempts: one per request a voter asked)."""
        self.answered = 0
        """Requests that got an HTTP answer at their last attempt (a reply, or a status the client gave up on)."""
        self.retries = 0
        """Attempts beyond the first (the client's own retries after a 429, a 5xx, a timeout, a dropped line)."""
        self.status_429 = 0
        """Answers with status 429 (too many requests), retried or not."""
        self.status_5xx = 0
        """Answers with a 5xx status, retried or not."""
        self.waits = 0
        """Requests that waited for room under their voter's requests_per_minute or tokens_per_minute."""
        self.waited_seconds = 0.0
        """How long they waited, in all."""
        self._recent_429: deque[float] = deque()

    def on_request(self, retry_count: int) -> None:
        if retry_count > 0:
            self.retries += 1
        else:
            self.sent += 1

    def on_response(self, status: int) -> None:
        if status == 429:
            self.status_429 += 1
            self._recent_429.append(self.clock())
        elif status >= 500:
            self.status_5xx += 1

    def on_answer(self) -> None:
        """A request ended with an answer (a reply read, or the status the client stopped at)."""
        self.answered += 1

    def recent_429(self) -> int:
        """429s in the last minute."""
        now = self.clock()
        while self._recent_429 and self._recent_429[0] <= now - WINDOW_SECONDS:
            self._recent_429.popleft()
        return len(self._recent_429)

    def progress_words(self) -> str:
        """What the progress line adds: retries, 429s of the last minute, rate-limit waits (empty when none)."""
        words = []
        if self.retries:
            words.append(f"{self.retries:,} retries")
        if (recent := self.recent_429()):
            words.append(f"waiting on 429s: {recent:,} in the last minute")
        if self.waits:
            words.append(f"{self.waits:,} waited for the rate limit ({self.waited_seconds:,.0f} s)")
        return "; ".join(words)

    def counts(self) -> dict[str, int]:
        """The counters for the run's record (`requests.<name>`)."""
        return {"requests.sent": self.sent, "requests.answered": self.answered, "requests.retries": self.retries,
                "requests.429": self.status_429, "requests.5xx": self.status_5xx,
                "requests.rate_limit_waits": self.waits}


def hooks(traffic: Traffic | None, limit: RateLimit | None) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """The HTTP client's event hooks of one voter: each attempt waits for its rate limit and is counted."""

    async def on_request(request: Any) -> None:
        try:
            retry = int(request.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            retry = 0
        if limit is not None and retry > 0:  # a first attempt waited in `ChatVoter.ask`, where Ctrl-C can stop it
            await limit.acquire(REQUEST_TOKENS.get())
        if traffic is not None:
            traffic.on_request(retry)

    async def on_response(response: Any) -> None:
        if traffic is not None:
            traffic.on_response(response.status_code)

    return {"request": [on_request], "response": [on_response]}
