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

The transport (`http_transport`) is httpx (the `httpx2` distribution, the
openai client's transport) with three bounds of its own: a deadline for the
whole request (connect, TLS, headers and body together, not per read), a
cap on the body (streamed, never read past `max_page_bytes`), and a
redirect policy (a redirect to another scheme, host or port is never
followed; one on the same origin is, at most MAX_REDIRECTS times, and its
answer is never cached as the original page's).

Time, sleep and randomness come in as arguments (`clock`, `sleep`, `wall`,
`rng`), so tests run the waits without waiting.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import random
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2

from .. import __version__
from ..errors import InputError
from ..masking import mask_secret
from .cache import RawCache, request_key

T = TypeVar("T")
RETRIED_STATUS = frozenset({429})
"""Statuses asked again after a wait besides every 5xx (a source may add some); any other non-200 stops the fetch."""
MAX_REDIRECTS = 5
"""Redirects on the same origin followed for one request; more stop the fetch."""
SETTLED_AFTER = dt.timedelta(days=2)
"""How long after the first moment of a window's last day (UTC) an answer about it is final: the day has ended
in every time zone (UTC-12 to UTC+14) and the sources have had a day to index it."""


class BadPage(Exception):
    """A page that is not a whole answer (malformed, cut short, empty before the total): asked again."""


class Dropped(Exception):
    """No whole answer came: the connection failed, timed out or was cut short (the message says which)."""


class TooLarge(Exception):
    """The answer is larger than the body cap: asking again would not make it smaller."""


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


@dataclass(frozen=True)
class Answer:
    """What a transport got: the status, the headers (lower-case names), the whole body, the URL answered."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str | None = None
    """The URL that gave this answer when a same-origin redirect was followed (None: the URL asked)."""


Transport = Callable[[str, Mapping[str, str], float, int], Answer]
"""(url, headers, deadline seconds, most body bytes) -> Answer; raises Dropped when no whole answer came,
TooLarge when the body is larger than allowed."""


def http_transport(url: str, headers: Mapping[str, str], timeout: float, max_bytes: int) -> Answer:
    """GET with httpx, within `timeout` seconds for everything; every status is an Answer.

    Same-origin redirects are followed (at most MAX_REDIRECTS, within the same deadline); a redirect to another
    origin is returned as it came, for the client to refuse.
    """
    deadline = time.monotonic() + timeout
    target = httpx2.URL(url)
    for _ in range(MAX_REDIRECTS + 1):
        answer = _get_once(target, headers, deadline, timeout, max_bytes)
        location = answer.headers.get("location")
        if not 300 <= answer.status < 400 or not location:
            return answer if target == httpx2.URL(url) else Answer(answer.status, answer.headers, answer.body,
                                                                   str(target))
        try:
            following = target.join(location)
        except (ValueError, httpx2.InvalidURL):  # a Location that is not a URL: refused as it came
            return answer
        if _origin(following) != _origin(target):
            return answer
        target = following
    return Answer(answer.status, answer.headers, answer.body, str(target))


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


_CLIENT: httpx2.Client | None = None
_CLIENT_LOCK = threading.Lock()


def _client() -> httpx2.Client:
    """One httpx client for the process; no kept-alive connections, so every request has its own socket."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            _CLIENT = httpx2.Client(follow_redirects=False, limits=httpx2.Limits(max_keepalive_connections=0))
        return _CLIENT


class _Deadline:
    """Shuts the request's socket down when the deadline passes, whatever phase the request is in.

    httpx's timeouts bound one connect or one read; a server dripping a byte a second never trips them. The
    socket is learnt from httpcore's `trace` extension as soon as it connects; a duplicate of it is kept (a TLS
    wrap detaches the original) and, at the deadline, shut down from a timer thread, which ends any read.
    """

    def __init__(self, deadline: float):
        self.expired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.daemon = True

    def trace(self, name: str, info: dict[str, Any]) -> None:
        if name == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._socket = sock.dup()
                    if self.expired:
                        self._shut()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shut()

    def _shut(self) -> None:
        if self._socket is not None:
            try:
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None


def _get_once(target: httpx2.URL, headers: Mapping[str, str], deadline: float, timeout: float,
              max_bytes: int) -> Answer:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Dropped(f"no whole answer within {timeout:g} s")
    client = _client()
    watch = _Deadline(deadline)
    received, length = 0, ""
    try:
        request = client.build_request("GET", target, headers={**headers, "Accept-Encoding": "identity"},
                                       timeout=httpx2.Timeout(left), extensions={"trace": watch.trace})
        with watch:
            response = client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "").strip()
                if declared.isascii() and declared.isdigit() and len(declared) < 30:
                    if int(declared) > max_bytes:
                        raise TooLarge(f"the answer is {int(declared):,} bytes (Content-Length)")
                    length = f" of {int(declared):,}"
                body = bytearray()
                for chunk in response.iter_bytes():
                    received += len(chunk)
                    if received > max_bytes:
                        raise TooLarge(f"the answer is more than {max_bytes:,} bytes")
                    body += chunk
                    if time.monotonic() >= deadline:
                        watch.expired = True
                        raise Dropped(f"no whole answer within {timeout:g} s (the body came too slowly; "
                                      f"{received:,} bytes so far)")
            finally:
                response.close()
    except (TooLarge, Dropped):
        raise
    except httpx2.TimeoutException:
        raise Dropped(f"no whole answer within {timeout:g} s") from None
    except httpx2.ConnectError as exc:
        raise Dropped(f"cannot connect ({exc})") from None
    except httpx2.InvalidURL as exc:  # a same-origin Location httpx cannot send
        raise Dropped(f"the URL cannot be sent ({exc})") from None
    except (httpx2.HTTPError, httpx2.StreamError, OSError) as exc:
        if watch.expired:
            raise Dropped(f"no whole answer within {timeout:g} s ({received:,} bytes of the body so far)") from None
        if isinstance(exc, httpx2.RemoteProtocolError) and received:
            raise Dropped(f"the answer was cut short after {received:,}{length} bytes") from None
        raise Dropped(f"the connection was dropped ({type(exc).__name__}: {exc})") from None
    return Answer(response.status_code, {k.lower(): v for k, v in response.headers.items()}, bytes(body))


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
