"""One polite HTTP client per source: etiquette, retries with backoff and jitter, Retry-After, the cache.

`Client.get(request, parse)` answers a request from the raw-answer cache when
it can (no request is sent); otherwise it waits for the source's etiquette
interval, sends it, stores the answer (reporter.fetch.cache) *before* it is
parsed, and parses it. A 429, a 5xx, a dropped or timed-out connection, a
body cut short and a page the parser calls bad (`BadPage`: not well-formed,
an empty page before the API's own total) are asked again after a wait:
the server's `Retry-After` when it sends one, else an exponential backoff
with jitter. A bad page is removed from the cache first, so it is never
taken as an answer, let alone as the end of the results. When the retries
run out the fetch stops with an InputError that names the source, the URL
(never a key) and every failure. Any other status (400, 404, ...) is a
request the API refuses: it stops at once.

The transport is the project's one GET (`reporter.transport.http_transport`,
httpx with a deadline for the whole request, a body cap of `max_page_bytes`
and no redirect to another origin); a same-origin redirect's answer is never
cached as the original page's.

Time, sleep and randomness come in as arguments (`clock`, `sleep`, `wall`,
`rng`), so tests run the waits without waiting.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import random
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .. import __version__
from ..errors import InputError
from ..masking import mask_secret
from ..transport import MAX_REDIRECTS, Answer, Dropped, TooLarge, Transport, http_transport
from .cache import RawCache, request_key

T = TypeVar("T")
RETRIED_STATUS = frozenset({429})
"""Statuses asked again after a wait besides every 5xx (a source may add some); any other non-200 stops the fetch."""
SETTLED_AFTER = dt.timedelta(days=2)
"""How long after the first moment of a window's last day (UTC) an answer about it is final: the day has ended
in every time zone (UTC-12 to UTC+14) and the sources have had a day to index it."""


class BadPage(Exception):
    """A page that is not a whole answer (malformed, cut short, empty before the total): asked again."""


class WouldSend(Exception):
    """A dry run reached a request the cache cannot answer."""

    def __init__(self, request: Request):
        super().__init__(request.shown_url())
        self.request = request


@dataclass(frozen=True)
class Request:
    """One GET: the endpoint and its parameters, split by what may be shown, stored and keyed."""

    source: str
    """The source asked (arxiv, biorxiv, medrxiv, pubmed, openalex)."""
    url: str
    """The endpoint, without a query string."""
    params: tuple[tuple[str, str], ...] = ()
    """The question: shown in messages and part of the cache key."""
    etiquette: tuple[tuple[str, str], ...] = ()
    """Sent and shown, never part of the key (`tool`, `email`, `mailto`): they do not change the answer."""
    secrets: tuple[tuple[str, str], ...] = ()
    """Sent only (`api_key`): never shown, stored or keyed."""
    epoch: str | None = None
    """The day an open date range (one that had not ended) was asked: part of the key, so tomorrow asks again."""
    scope: str | None = None
    """What else the answer depends on that the URL does not say (PubMed's efetch: the esearch it reads the
    history of, with its term and dates): part of the key, never sent."""
    ends: dt.date | None = None
    """The last day the answer covers: an answer stored before that day settled (SETTLED_AFTER, by the real
    clock) is marked not final, and never serves a request asked as an ended window (`epoch` None)."""

    def sent_url(self) -> str:
        """The URL as sent, keys included: never printed, logged or stored."""
        return _url(self.url, self.params + self.etiquette + self.secrets)

    def shown_url(self) -> str:
        """The URL without keys, for messages and the cache's header line."""
        return _url(self.url, self.params + self.etiquette)

    def key_text(self) -> str:
        """What the cache key is the sha256 of: the endpoint, the question, the epoch and the scope."""
        text = f"GET {_url(self.url, self.params)}"
        if self.epoch is not None:
            text += f" as of {self.epoch}"
        return text if self.scope is None else f"{text} for {self.scope}"

    def settled(self, now: float) -> bool:
        """True when, at wall-clock time `now`, the days this answer covers have all ended (SETTLED_AFTER)."""
        if self.ends is None:
            return True
        try:
            end = dt.datetime.combine(self.ends, dt.time(), dt.timezone.utc) + SETTLED_AFTER
        except OverflowError:  # the last days of year 9999: never settled
            return False
        return now >= end.timestamp()

    def hide(self, text: str) -> str:
        """`text` with this request's keys masked, in every encoding (reporter.masking.mask_secret)."""
        for _, secret in self.secrets:
            text = mask_secret(text, secret)
        return text


def _url(base: str, params: tuple[tuple[str, str], ...]) -> str:
    return f"{base}?{urllib.parse.urlencode(params)}" if params else base


_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks for (ASCII digits, or an HTTP date less `now`); None when absent or bad.

    Only ASCII digits are a number (`²` and other digits `str.isdigit` accepts are not); a number too long to
    be a wait is infinite (longer than any max_wait_seconds); a negative number or a date that does not parse
    is no Retry-After at all (the backoff applies).
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        return float(value) if len(value) <= 15 else math.inf
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # an HTTP date is GMT
            when = when.replace(tzinfo=dt.timezone.utc)
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None


@dataclass(frozen=True)
class Policy:
    """How hard a client tries: the [fetch] table's timeout and retry settings."""

    timeout_seconds: float = 60.0
    """The deadline of one whole request: connect, headers and body."""
    retries: int = 5
    """Asks after the first one, per page."""
    backoff_seconds: float = 2.0
    """The first retry's wait without Retry-After; doubled each retry, with jitter."""
    max_wait_seconds: float = 600.0
    """The longest wait before one retry; a Retry-After above it stops the fetch."""
    max_page_bytes: int = 256 * 1024 * 1024
    """The largest body read; a larger one stops the fetch (reporter.fetch.config.DEFAULT_MAX_PAGE_BYTES)."""

    def backoff(self, retry: int, rng: random.Random) -> float:
        """The wait before retry number `retry` (1, 2, ...): half of base * 2**(retry-1), plus up to as much again."""
        full = min(self.backoff_seconds * 2 ** (retry - 1), self.max_wait_seconds)
        return full / 2 + rng.uniform(0, full / 2)


@dataclass
class Counters:
    """What one source's client did (the summary's numbers)."""

    sent: int = 0
    """Requests sent over the network (retries included)."""
    cached: int = 0
    """Pages answered from the cache (no request sent)."""
    retried: int = 0
    """Requests sent again after a failure."""
    waited_seconds: float = 0.0
    """Time spent waiting: the etiquette interval, Retry-After and backoff."""
    failures: list[str] = field(default_factory=list)
    """Each failure that was retried, `URL: what happened`, in order."""


class Client:
    """The requests of one source: paced, retried, cached. Not shared between sources."""

    def __init__(self, source: str, interval: float, policy: Policy, cache: RawCache, *,
                 contact: str | None = None, transport: Transport = http_transport,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 wall: Callable[[], float] = time.time, rng: random.Random | None = None,
                 refresh: bool = False, dry_run: bool = False, retried: frozenset[int] = RETRIED_STATUS,
                 on_wait: Callable[[float, str], None] | None = None):
        self.source, self.interval, self.policy, self.cache = source, interval, policy, cache
        self.transport, self.clock, self.sleep, self.wall = transport, clock, sleep, wall
        self.rng = rng if rng is not None else random.Random()
        self.refresh, self.dry_run, self.on_wait = refresh, dry_run, on_wait
        self.retried = retried
        agent = f"reporter/{__version__}" + (f" (mailto:{contact})" if contact else "")
        self.headers = {"User-Agent": agent}
        self.counters = Counters()
        self._last: float | None = None

    def get(self, request: Request, parse: Callable[[bytes], T],
            explain: Callable[[bytes], str | None] | None = None) -> T:
        """The parsed answer to a request: from the cache when it holds one, else asked (and stored first).

        `explain` reads the API's message out of an error answer's body, for the error. Every message is
        passed through `Request.hide`, so no key reaches it in any encoding.
        """
        try:
            return self._get(request, parse, explain)
        except InputError as exc:
            raise InputError(request.hide(str(exc))) from None

    def _get(self, request: Request, parse: Callable[[bytes], T],
             explain: Callable[[bytes], str | None] | None) -> T:
        key = request_key(request.key_text())
        if not self.refresh:
            # An answer stored before the window's days had settled is only an answer for an open window
            # (keyed by the day it was asked), never for the same window asked once it has ended.
            body = self.cache.get(request.source, key, final_only=request.epoch is None)
            if body is not None:
                try:
                    parsed = self._parse(parse, body, request, key)
                except BadPage:
                    pass  # evicted: asked again below
                else:
                    self.counters.cached += 1
                    return parsed
        if self.dry_run:
            raise WouldSend(request)
        return self._ask(request, key, parse, explain)

    def forget(self, request: Request) -> None:
        """Drop a request's stored answer (it is asked again next time)."""
        self.cache.evict(request.source, request_key(request.key_text()))

    def _ask(self, request: Request, key: str, parse: Callable[[bytes], T],
             explain: Callable[[bytes], str | None] | None) -> T:
        shown = request.shown_url()
        problems: list[str] = []
        for attempt in range(self.policy.retries + 1):
            if attempt:
                self.counters.retried += 1
            self._pace()
            retry_after = None
            try:
                answer = self.transport(request.sent_url(), self.headers, self.policy.timeout_seconds,
                                        self.policy.max_page_bytes)
            except Dropped as exc:
                problem = request.hide(str(exc))
            except TooLarge as exc:
                raise InputError(f"{self.source}: {shown}: {exc}, more than [fetch] max_page_bytes "
                                 f"({self.policy.max_page_bytes:,} bytes); lower [fetch.{self.source}] page_size "
                                 f"or raise max_page_bytes") from None
            else:
                if answer.status == 200:
                    if answer.url is None:  # a redirected answer is used, never stored as this URL's page
                        self.cache.put(request.source, key, shown, answer.headers.get("content-type"),
                                       answer.body, final=request.settled(self.wall()))
                    try:
                        return self._parse(parse, answer.body, request, key)
                    except BadPage as exc:
                        problem = f"a bad page ({request.hide(str(exc))})"
                elif answer.status in self.retried or 500 <= answer.status < 600:
                    problem = f"HTTP {answer.status}"
                    retry_after = retry_after_seconds(answer.headers.get("retry-after"), self.wall())
                    if retry_after is not None:
                        problem += f" (Retry-After {_seconds(retry_after)})"
                elif 300 <= answer.status < 400:
                    where = request.hide(" ".join(answer.headers.get("location", "(no Location)").split()))[:300]
                    why = ("redirects to another scheme, host or port" if answer.url is None else
                           f"redirects more than {MAX_REDIRECTS} times")
                    raise InputError(f"{self.source}: {shown}: HTTP {answer.status} {why} ({where}): not followed; "
                                     f"set [fetch.{self.source}] base_url to the API's own address")
                else:
                    said = _said(answer, request, explain)
                    raise InputError(f"{self.source}: {shown}: HTTP {answer.status}{said}: the API refused the "
                                     f"request; check [fetch.{self.source}] query and base_url")
            finally:
                self._last = self.clock()
            problems.append(problem)
            self.counters.failures.append(f"{shown}: {problem}")
            if attempt == self.policy.retries:
                break
            if retry_after is not None and retry_after > self.policy.max_wait_seconds:
                raise InputError(f"{self.source}: {shown}: {problem}: the server asks to wait longer than "
                                 f"[fetch] max_wait_seconds ({self.policy.max_wait_seconds:g} s); try again later")
            wait = retry_after if retry_after is not None else self.policy.backoff(attempt + 1, self.rng)
            self._wait(wait, f"retry {attempt + 1} of {self.policy.retries} after {problem}")
        tries = len(problems)
        raise InputError(f"{self.source}: {shown}: no whole answer after {tries} attempt{'s' * (tries > 1)} "
                         f"({'; '.join(problems)}); try again later, or raise [fetch] retries")

    def _parse(self, parse: Callable[[bytes], T], body: bytes, request: Request, key: str) -> T:
        try:
            return parse(body)
        except InputError as exc:  # the API answered with an error of its own: stop, naming the request
            self.cache.evict(request.source, key)
            raise InputError(f"{self.source}: {request.shown_url()}: {exc}") from None
        except Exception:  # a bad page, or one the walker acts on (an expired history): never kept as an answer
            self.cache.evict(request.source, key)
            raise

    def _pace(self) -> None:
        """Wait until the etiquette interval has passed since the previous answer; count the request."""
        if self._last is not None:
            left = self._last + self.interval - self.clock()
            if left > 0:
                self._wait(left, f"{self.source}'s limit of one request every {self.interval:g} s")
        self.counters.sent += 1

    def _wait(self, seconds: float, why: str) -> None:
        if seconds <= 0:
            return
        if self.on_wait is not None:
            self.on_wait(seconds, why)
        self.sleep(seconds)
        self.counters.waited_seconds += seconds


def _said(answer: Answer, request: Request, explain: Callable[[bytes], str | None] | None) -> str:
    """What an error answer says (the API's message, else the start of its text), any key taken out."""
    text = (explain(answer.body) if explain is not None else None) or answer.body[:4000].decode("utf-8", "replace")
    text = " ".join(request.hide(text).split())[:300]
    return f" ({text})" if text else ""


def _seconds(value: float) -> str:
    """A wait for a message: `7 s`, or `more than 10^15 s` for a Retry-After no clock can hold."""
    return f"{value:g} s" if math.isfinite(value) else "more than 10^15 s"
