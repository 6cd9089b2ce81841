"""One voter behind an OpenAI-compatible Chat Completions API; its replies are read into votes by `replies`.

The `openai` package does the HTTP: it reaches hosted APIs and the servers
people run themselves through `base_url`, and retries 429, 5xx, timeouts and
dropped connections with backoff, honouring `Retry-After`. The reply body is
kept verbatim (`with_raw_response`), because it is what the raw log stores and
what a re-run validates again (`replies.read_masked`). Every reply is checked
against the answer schema there, whether or not the server honoured
`response_format`; a reply that is not a valid answer is an invalid vote with
its cause, never guessed into an answer. The key comes from the environment
variable the voter names and is never put in a message, a log or a file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai

try:  # the HTTP library of the installed openai package: httpx2 from openai 3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover - openai 1.x/2.x
    import httpx as _http

from ..errors import InputError
from ..masking import mask_json_text, mask_secret
from .budget import Budget
from .config import VoterSettings
from .prices import cost_usd
from .prompt import response_format
from .ratelimit import REQUEST_TOKENS, RateLimit, Traffic, hooks
from .replies import read_masked, usage_count
from .votes import AnswerSchema, Vote

CONNECTIONS_PER_CLIENT = 8
"""Requests in flight per openai client: a voter with more concurrency gets several clients.

The client's connection pool scans every connection it holds on each request,
so one client with 64 connections spends more CPU per request than eight with
eight each (bench/screen.py: 4.1 against 6.6 ms per request at 64 in flight)."""
PLACEHOLDER_KEY = "no-key"
"""Sent to a server that needs no key (no `api_key_env`): local servers ignore it."""
SNIPPET_CHARS = 300
"""How much of an error body a failure's cause quotes."""
_RETRIED = {408, 409, 429}
"""Statuses (besides 5xx) the client retries before it gives up."""
try:  # the longest Retry-After the openai client waits for; a longer one stops its retries at once
    from openai._constants import MAX_RETRY_AFTER_DELAY as RETRY_AFTER_CAP
except ImportError:  # pragma: no cover - an openai without the constant
    RETRY_AFTER_CAP = 120.0


@dataclass(frozen=True)
class Reply:
    """One answered request: the vote, the body as received (the key masked), and what it cost."""

    vote: Vote
    """The reply read into a vote (valid or invalid)."""
    body: str
    """The HTTP response body as received, the voter's key masked in it (what the raw log stores)."""
    status: int
    """The HTTP status of the answer (200)."""
    input_tokens: int | None
    """Prompt tokens: the reply's `usage`, else counted offline (see usage_estimated)."""
    output_tokens: int | None
    """Completion tokens: the reply's `usage`, else counted offline."""
    cost_usd: float
    """Dollars for this reply at the voter's prices."""
    usage_estimated: bool
    """True when the server sent no usable `usage` and the tokens were counted offline."""


class VoterFailure(Exception):
    """The provider gave no answer after the client's retries: no vote is recorded (it is a failure)."""

    def __init__(self, cause: str, status: int | None = None):
        super().__init__(cause)
        self.cause = cause
        """What failed, naming the voter and the URL (never the key, never a query string)."""
        self.status = status
        """The last HTTP status, or None when no answer came (timeout, refused or dropped connection)."""


def _printable(text: str) -> str:
    """Text for a message: each character a terminal or a page would act on or hide (controls, NUL, bidi
    overrides, lone surrogates) written as its escape (`\\x1b`, `\\u202e`), the rest as it is."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class NotSent(Exception):
    """The request was never sent: the run stopped (Ctrl-C) while it waited for a free slot."""


def _read_key(settings: VoterSettings, environ: Mapping[str, str]) -> str:
    """The key from the environment variable the voter names; a placeholder when it names none."""
    if not settings.api_key_env:
        return PLACEHOLDER_KEY
    key = environ.get(settings.api_key_env, "")
    if not key.strip():
        raise InputError(f"voter {settings.name!r} ({settings.model}): environment variable "
                         f"{settings.api_key_env} is not set; export it with the API key "
                         f"(api_key_env names the variable; the key itself is never written anywhere)")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, as a POSIX environment may hold
        raise InputError(f"voter {settings.name!r} ({settings.model}): environment variable "
                         f"{settings.api_key_env} holds bytes that are not UTF-8; export the key as text") from None
    return key


def endpoint(base_url: str) -> str:
    """The chat completions URL shown in messages: scheme, host, port and path, never user info or query."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}/chat/completions"


class ChatVoter:
    """One configured voter: asks a work's messages and returns the Reply, or raises VoterFailure."""

    def __init__(self, settings: VoterSettings, environ: Mapping[str, str], *, max_retries: int = 8,
                 answer: AnswerSchema, budget: Budget | None = None, traffic: Traffic | None = None,
                 limit: RateLimit | None = None):
        self.name = settings.name
        """The voter's name (votes are recorded under it)."""
        self.settings = settings
        """Its [[screen.<tier>.voters]] (or [[digest.judge.voters]]) entry."""
        self.answer = answer
        """What it is asked to answer and how a reply is read (the screen's vote, the digest's judgement)."""
        self._secret = _read_key(settings, environ)
        self._max_retries = max_retries
        self._url = endpoint(settings.base_url)
        self._slots = asyncio.Semaphore(settings.max_concurrency)
        shards = -(-settings.max_concurrency // CONNECTIONS_PER_CLIENT)
        if limit is None and (settings.requests_per_minute or settings.tokens_per_minute):
            limit = RateLimit(settings.requests_per_minute, settings.tokens_per_minute, traffic=traffic)
        self.limit = limit
        """The voter's requests_per_minute and tokens_per_minute, shared by all its requests (None: no limit)."""
        self.traffic = traffic
        """The run's counters of requests, retries, 429s and 5xx (None: not counted)."""
        self._clients = [openai.AsyncOpenAI(api_key=self._secret, base_url=settings.base_url,
                                            timeout=settings.timeout_seconds, max_retries=max_retries,
                                            **self._http_client())
                         for _ in range(shards)]
        self._turn = 0
        self.budget = budget
        """The run's spending cap: each request's worst case is reserved before it is sent (None: no cap)."""
        self.halted = False
        """Set when the run stops (Ctrl-C): requests still waiting for a slot are not sent (`NotSent`)."""

    def _http_client(self) -> dict[str, Any]:
        """The HTTP client's event hooks (each attempt waits for the rate limit and is counted), when needed."""
        if self.limit is None and self.traffic is None:
            return {}
        return {"http_client": openai.DefaultAsyncHttpxClient(event_hooks=hooks(self.traffic, self.limit))}

    def __repr__(self) -> str:
        return f"ChatVoter({self.name!r}, {self.settings.model!r}, {self._url!r})"

    def _request(self, messages: list[dict]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                   "temperature": self.settings.temperature,
                                   "max_tokens": self.settings.max_tokens}
        if self.settings.structured_output:
            request["response_format"] = response_format(self.answer.name, self.answer.schema)
        return request

    async def ask(self, messages: list[dict]) -> Reply:
        """Send one classify request (at most max_concurrency in flight) and read the answer."""
        async with self._slots:
            if self.halted:
                raise NotSent()
            budget = self.budget or Budget(None)
            prompt = budget.prompt_tokens(messages)
            worst = budget.worst_case_of(self.settings, prompt)
            if not budget.reserve(worst):
                raise NotSent()
            tokens = self._limit_tokens(messages)
            turn = REQUEST_TOKENS.set(tokens)
            try:
                if self.limit is not None:  # the first attempt waits here; the client's retries in the HTTP hook
                    await self.limit.acquire(tokens)
                    if self.halted:
                        raise NotSent()  # Ctrl-C while it waited for the rate limit: never sent
                body, status = await self._send(messages)
            except BaseException:
                budget.settle(worst, 0.0)
                raise
            finally:
                REQUEST_TOKENS.reset(turn)
        cost = 0.0
        try:
            reply = self._reply(messages, body, status)
            cost = reply.cost_usd
            if not reply.usage_estimated:
                budget.observe(self.settings, prompt, reply.input_tokens, reply.output_tokens)
        finally:
            budget.settle(worst, cost)
        return reply

    def _limit_tokens(self, messages: list[dict]) -> int:
        """The tokens a request may use (its prompt plus max_tokens), for a tokens_per_minute limit (else 0)."""
        if self.limit is None or self.limit.tpm is None:
            return 0
        from .tokens import count_message_tokens
        return count_message_tokens([messages])[0] + self.settings.max_tokens

    async def _send(self, messages: list[dict]) -> tuple[str, int]:
        """One request, its retries done by the client: the body as received and its status (or VoterFailure)."""
        client = self._clients[self._turn % len(self._clients)]
        self._turn += 1
        try:
            # The client's documented call for a request it need not model (`client.post` with
            # `cast_to=Response`): the same retries, Retry-After, timeouts and auth as
            # `chat.completions.create`, without re-validating our own parameters (a third of
            # the CPU per request), and the body kept verbatim.
            raw = await client.post("/chat/completions", cast_to=_http.Response, body=self._request(messages))
            body = raw.text
        except openai.APIStatusError as exc:
            self._answered()
            raise VoterFailure(self._status_cause(exc), exc.status_code) from None
        except openai.APITimeoutError:
            raise VoterFailure(self._cause(f"no answer within {self.settings.timeout_seconds:g} s"
                                           f"{self._retried()}")) from None
        except openai.APIConnectionError as exc:
            why = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
            raise VoterFailure(self._cause(f"could not connect or the connection dropped ({why})"
                                           f"{self._retried()}")) from None
        except openai.OpenAIError as exc:
            raise VoterFailure(self._cause(f"the request failed ({type(exc).__name__})")) from None
        self._answered()
        return body, raw.status_code

    def _answered(self) -> None:
        if self.traffic is not None:
            self.traffic.on_answer()

    def _reply(self, messages: list[dict], body: str, status: int) -> Reply:
        body, vote, usage, text = read_masked(body, self._mask_key, self.answer)
        input_tokens, output_tokens = usage_count(usage, "prompt_tokens"), usage_count(usage, "completion_tokens")
        estimated = input_tokens is None or output_tokens is None
        if estimated:  # the tokenizer loads only for a server that sends no usage (it takes a second)
            from .tokens import count_message_tokens, count_tokens
        if input_tokens is None:
            input_tokens = count_message_tokens([messages])[0]
        if output_tokens is None:
            output_tokens = count_tokens([text])[0]
        cost = cost_usd(self.settings.price_in_per_mtok, self.settings.price_out_per_mtok,
                        input_tokens, output_tokens)
        return Reply(vote=vote, body=body, status=status, input_tokens=input_tokens,
                     output_tokens=output_tokens, cost_usd=cost, usage_estimated=estimated)

    def _retried(self) -> str:
        return f" after {self._max_retries} retries" if self._max_retries else ""

    def _attempts(self, exc: openai.APIStatusError) -> str:
        """How many times a retryable status was asked and why the client stopped, as the cause says it.

        The client numbers each attempt in its `x-stainless-retry-count` request
        header, so the last request says how many retries were taken; fewer than
        the limit means the client chose to stop (a `Retry-After` beyond what it
        waits, or `x-should-retry: false`).
        """
        try:
            taken = int(exc.response.request.headers.get("x-stainless-retry-count", ""))
        except (ValueError, RuntimeError, AttributeError):
            return self._retried()
        attempts = f"{taken + 1} attempt{'s' * (taken != 0)}"
        if taken >= self._max_retries:
            return f" after {attempts} ({self._max_retries} retries, the limit)" if self._max_retries else ""
        headers = exc.response.headers
        wait = headers.get("retry-after-ms") or headers.get("retry-after")
        if wait is not None:
            unit = " ms" if headers.get("retry-after-ms") else ""
            return (f" after {attempts}: the server asked to wait {' '.join(wait.split())[:60]!r}{unit} "
                    f"(Retry-After), more than the {RETRY_AFTER_CAP:g} s the client waits, so it was not "
                    f"asked again; the work stays unscreened and a later run asks it")
        if headers.get("x-should-retry", "").strip().lower() == "false":
            return f" after {attempts}: the server said not to retry (x-should-retry: false)"
        return f" after {attempts}"

    @property
    def _mask_key(self) -> str | None:
        """The key to mask in what the server sends (None for the placeholder, which is no secret)."""
        return None if self._secret == PLACEHOLDER_KEY else self._secret

    def _cause(self, what: str) -> str:
        return mask_secret(f"voter {self.name!r} ({self.settings.model}): POST {self._url}: {what}", self._mask_key)

    def _status_cause(self, exc: openai.APIStatusError) -> str:
        status = exc.status_code
        retried = self._attempts(exc) if status in _RETRIED or status >= 500 else ""
        try:
            # the body is masked as JSON first: a key its strings spell with escapes of their own is masked too
            body = mask_json_text(exc.response.text, self._mask_key)
            snippet = _printable(" ".join(body.split())[:SNIPPET_CHARS])
        except Exception:  # a body that cannot be read adds nothing to the cause
            snippet = ""
        hint = ""
        if status == 400 and self.settings.structured_output:
            hint = ("; if this server does not support response_format json_schema, set "
                    "structured_output = false for this voter")
        elif status in (401, 403):
            hint = (f"; check the key in {self.settings.api_key_env}" if self.settings.api_key_env
                    else "; this server wants a key: set api_key_env for this voter")
        elif status == 404:
            hint = "; check base_url (it usually ends in /v1) and model"
        return self._cause(f"HTTP {status}{retried}: {snippet or '(empty body)'}{hint}")

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        for client in self._clients:
            await client.close()
