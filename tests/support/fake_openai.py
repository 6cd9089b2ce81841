"""A fake OpenAI-compatible Chat Completions server on 127.0.0.1, for the screening tests and benchmarks.

Real HTTP/1.1 (keep-alive, Content-Length or chunked request bodies) and the
real wire format, so the `openai` client talks to it exactly as it talks to a
hosted API or a self-run server (vLLM, llama.cpp, Ollama): its retries,
timeouts and connection errors are exercised for real, not mocked.

A script decides each reply. It sees the work (the text between `Title: `
and the first blank line of the last user message, mapped through `titles`),
the model, and the attempt (1, 2, ... per (work, model)), and returns an
action: `Answer`, `Content`, `Refuse`, `Status`, `Drop`, `Slow`, `Truncate`.
Every request is counted per (work, model), so a test can assert that each
work was asked exactly once per voter.

    with FakeOpenAI({("w1", "m"): [Status(429, retry_after=0.05), Answer("exclude")]}) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x")
        ...
        assert server.count("w1", "m") == 2

Process mode (for benchmarks that run the tool in another process):

    python tests/support/fake_openai.py --port 0 --script FILE.json

prints `http://127.0.0.1:PORT/v1` on its first stdout line and serves until
killed; `GET /_fake/counts` gives the counts in both modes. Standard library
only, and it never writes a file.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import signal
import sys
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Union

CREATED = 1_700_000_000
"""The `created` timestamp of every reply: fixed, so replies are deterministic."""

SYSTEM_FINGERPRINT = "fp_fake_openai"
"""The `system_fingerprint` of every reply."""

MAX_HEAD = 64 * 1024
"""Largest request line plus headers accepted (bytes)."""


# --- the actions a script returns -------------------------------------------

@dataclass(frozen=True)
class Answer:
    """A valid chat.completion whose content is the JSON object {"label", "reason"}."""

    label: str
    """The label the voter gives (any string: an unknown label tests validation)."""
    reason: str = "..."
    """The reason the voter gives."""
    usage: bool = True
    """False omits the `usage` object, as some self-run servers do."""

    async def _reply(self, exchange: _Exchange) -> None:
        text = json.dumps({"label": self.label, "reason": self.reason})
        await exchange.completion(text, None, "stop", usage=self.usage)


@dataclass(frozen=True)
class Content:
    """A chat.completion with arbitrary message content: malformed JSON, prose, code-fenced JSON."""

    text: str
    """The message content, sent as is."""
    finish_reason: str = "stop"
    """`length` for a reply cut by max_tokens, `content_filter` for a filtered one."""

    async def _reply(self, exchange: _Exchange) -> None:
        await exchange.completion(self.text, None, self.finish_reason)


@dataclass(frozen=True)
class Refuse:
    """A chat.completion whose message carries `refusal` and a null content."""

    text: str = "I can't help with that."
    """The refusal text."""

    async def _reply(self, exchange: _Exchange) -> None:
        await exchange.completion(None, self.text, "stop")


@dataclass(frozen=True)
class Status:
    """An error status in OpenAI's error JSON shape (429, 500, 503, 400...)."""

    code: int
    """The HTTP status code."""
    retry_after: float | None = None
    """Seconds sent in a `Retry-After` header when given (the openai client honours up to 60)."""
    body: str | None = None
    """The raw response body instead of the OpenAI error object (HTML from a proxy, say)."""

    async def _reply(self, exchange: _Exchange) -> None:
        headers = {} if self.retry_after is None else {"retry-after": _seconds(self.retry_after)}
        if self.body is not None:
            await exchange.send(self.code, self.body.encode(), headers, content_type="text/plain")
        else:
            await exchange.error(self.code, _STATUS_MESSAGES.get(self.code, "Fake error."), headers)


@dataclass(frozen=True)
class Drop:
    """Close the connection without any reply."""

    async def _reply(self, exchange: _Exchange) -> None:
        exchange.drop()


@dataclass(frozen=True)
class Slow:
    """Wait, then answer with another action (a timeout test, or a slow provider)."""

    seconds: float
    """How long to wait before answering."""
    then: Action
    """The action taken after the wait."""

    async def _reply(self, exchange: _Exchange) -> None:
        await asyncio.sleep(self.seconds)
        await self.then._reply(exchange)


@dataclass(frozen=True)
class Truncate:
    """Announce a Content-Length larger than the body sent, then close: a connection cut mid-reply."""

    async def _reply(self, exchange: _Exchange) -> None:
        body = json.dumps(exchange.completion_object('{"label": "incl', None, "stop", usage=True)).encode()
        cut = body[: len(body) // 2]
        await exchange.send(200, cut, {}, content_length=len(body))
        exchange.drop()


Action = Union[Answer, Content, Refuse, Status, Drop, Slow, Truncate]
Script = Union[Callable[[str, str, int], "Action | None"], dict]

_STATUS_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    404: "Not found.",
    408: "Request timed out.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}
_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                429: "rate_limit_exceeded"}
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            408: "Request Timeout", 413: "Payload Too Large", 429: "Too Many Requests",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 504: "Gateway Timeout"}


def _seconds(value: float) -> str:
    """A Retry-After value: an integer when whole, else a decimal (the openai client parses floats)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def tokens(text: str) -> int:
    """The fake's deterministic token count of a text: len // 4 + 1."""
    return len(text) // 4 + 1


# --- reading the work out of a request --------------------------------------

def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def work_key(messages: list, titles: dict[str, str] | None = None) -> str:
    """The work a request is about: the text after `Title: ` in the last user message, up to the first blank line.

    Mapped through `titles` (title -> work id) when the title is in it; a
    message without `Title: ` gives the empty string.
    """
    text = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = message_text(message.get("content"))
            break
    start = text.find("Title: ")
    if start < 0:
        return ""
    title = text[start + len("Title: "):].split("\n\n", 1)[0]
    return titles.get(title, title) if titles else title


def _prompt_text(messages: list) -> str:
    return "".join(message_text(m.get("content")) for m in messages if isinstance(m, dict))


# --- one request and its reply ----------------------------------------------

class _Exchange:
    """One HTTP request on a connection, and the ways to answer it."""

    def __init__(self, writer: asyncio.StreamWriter, keep_alive: bool, request: dict | None,
                 work: str, model: str, attempt: int) -> None:
        self.writer = writer
        self.keep_alive = keep_alive
        self.request = request
        self.work = work
        self.model = model
        self.attempt = attempt
        self.closed = False
        self.reported = model
        """The `model` the completion object names (FakeOpenAI's `reported_models` may name another)."""

    async def send(self, status: int, body: bytes, headers: dict[str, str], *,
                   content_type: str = "application/json", content_length: int | None = None) -> None:
        length = len(body) if content_length is None else content_length
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
                f"content-type: {content_type}", f"content-length: {length}",
                f"x-request-id: req_fake_{self.attempt}",
                "connection: keep-alive" if self.keep_alive else "connection: close"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await self.writer.drain()

    async def json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        await self.send(status, json.dumps(value).encode(), headers or {})

    async def error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        code = "rate_limit_exceeded" if status == 429 else None
        await self.json(status, {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"),
                                           "param": None, "code": code}}, headers)

    def completion_object(self, content: str | None, refusal: str | None, finish_reason: str, *,
                          usage: bool = True) -> dict:
        seed = f"{self.work}\0{self.model}\0{self.attempt}".encode()
        reply = {
            "id": "chatcmpl-" + hashlib.sha256(seed).hexdigest()[:29],
            "object": "chat.completion",
            "created": CREATED,
            "model": self.reported,
            "choices": [{"index": 0,
                         "message": {"role": "assistant", "content": content, "refusal": refusal},
                         "logprobs": None, "finish_reason": finish_reason}],
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }
        if usage:
            prompt = tokens(_prompt_text((self.request or {}).get("messages", [])))
            completion = tokens(content if content is not None else refusal or "")
            reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion}
        return reply

    async def completion(self, content: str | None, refusal: str | None, finish_reason: str, *,
                         usage: bool = True) -> None:
        await self.json(200, self.completion_object(content, refusal, finish_reason, usage=usage))

    def drop(self) -> None:
        self.closed = True
        self.writer.close()


# --- the server's state and HTTP handling -----------------------------------

@dataclass
class _State:
    """What the server has seen; guarded by `lock`, written on the loop thread, read from any."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    total: int = 0
    models: dict[str, None] = field(default_factory=dict)
    requests: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class HTTPError(Exception):
    """A request the parser cannot read: answered with `status` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, str, dict[str, str], bytes] | None:
    """One HTTP/1.x request (method, path, version, lower-case headers, body), or None at a clean end."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as cut:
        if cut.partial.strip():
            raise HTTPError(400, "Incomplete request head.") from None
        return None
    except asyncio.LimitOverrunError:
        raise HTTPError(431, "Request head too large.") from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        raise HTTPError(400, "Malformed request line.") from None
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise HTTPError(400, "Bad Content-Length.") from None
        body = await reader.readexactly(length) if length else b""
    return method, target.split("?", 1)[0], version, headers, body


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise HTTPError(400, "Bad chunk size.") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _keep_alive(version: str, headers: dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


def _script_action(script: Script | None, work: str, model: str, attempt: int) -> Action | None:
    """The action a script gives for this attempt: a callable's return, or the dict entry by attempt."""
    if script is None:
        return None
    if callable(script):
        return script(work, model, attempt)
    entry = script.get((work, model))
    if isinstance(entry, (list, tuple)):
        return entry[min(attempt, len(entry)) - 1] if entry else None
    return entry


class FakeOpenAI:
    """The fake server: start it with `with FakeOpenAI(...) as server:` or `start()`/`stop()`.

    It runs its own event loop on a background thread, so tests (sync or
    async) and the openai client can use it like any remote server.
    """

    def __init__(self, script: Script | None = None, default: Action | None = None,
                 titles: dict[str, str] | None = None, latency: float = 0.0, *,
                 reject_response_format: bool = False, models: list[str] | tuple[str, ...] = (),
                 record_requests: bool = True, port: int = 0,
                 reported_models: dict[str, str] | None = None) -> None:
        """Args:
            script: `script(work, model, attempt) -> action | None`, or a dict
                `{(work, model): action | [actions by attempt, the last repeating]}`.
            default: the action when the script gives none (default `Answer("include", "Default.")`).
            titles: title -> work id, so a script can be keyed by work id.
            latency: seconds every chat request waits before its action.
            reject_response_format: answer 400 to requests carrying `response_format`.
            models: models listed by `GET /v1/models` besides the ones seen and the script's keys.
            record_requests: keep every request in `requests` (off for long benchmarks).
            port: the port to bind (0: a free one).
            reported_models: requested model -> the model the completion names (a server that answers with
                another model than the one asked for); by default the one asked for.
        """
        self.reported_models = dict(reported_models or {})
        self.script = script
        self.default = default if default is not None else Answer("include", "Default.")
        self.titles = titles
        self.latency = latency
        self.reject_response_format = reject_response_format
        self.record_requests = record_requests
        self._port = port
        self._state = _State()
        configured = list(models) + ([model for _, model in script] if isinstance(script, dict) else [])
        self._state.models = dict.fromkeys(configured)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.host = "127.0.0.1"
        self.port: int | None = None

    # --- life cycle ---

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> FakeOpenAI:
        """Bind and serve on a background thread; returns once the port is bound."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(asyncio.start_server(
                    self._connection, self.host, self._port, limit=MAX_HEAD, backlog=1024))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as error:  # reported to start()'s caller
                failure.append(error)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close the listener and every open connection, stop the loop and join the thread."""
        if self._thread is None or self._loop is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None

    @property
    def base_url(self) -> str:
        """The base URL the openai client takes: `http://127.0.0.1:PORT/v1`."""
        if self.port is None:
            raise RuntimeError("the fake server is not started")
        return f"http://{self.host}:{self.port}/v1"

    # --- what it has seen ---

    def count(self, work: str, model: str) -> int:
        """Chat requests received for (work, model), every attempt counted."""
        with self._state.lock:
            return self._state.counts.get((work, model), 0)

    def counts(self) -> dict[tuple[str, str], int]:
        """Chat requests per (work, model)."""
        with self._state.lock:
            return dict(self._state.counts)

    @property
    def total(self) -> int:
        """Every POST to /v1/chat/completions, malformed ones included."""
        with self._state.lock:
            return self._state.total

    @property
    def requests(self) -> list[dict]:
        """Records {work, model, attempt, headers (lower-case), body (parsed JSON)}, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def errors(self) -> list[str]:
        """Tracebacks of script functions that raised (each answered with a 500)."""
        with self._state.lock:
            return list(self._state.errors)

    def models(self) -> list[str]:
        """The models configured or seen, in that order."""
        with self._state.lock:
            return list(self._state.models)

    def reset(self) -> None:
        """Forget the counts and requests (attempts start again from 1)."""
        with self._state.lock:
            self._state.counts.clear()
            self._state.requests.clear()
            self._state.errors.clear()
            self._state.total = 0

    # --- HTTP ---

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    request = await _read_request(reader)
                except HTTPError as bad:
                    await _Exchange(writer, False, None, "", "", 0).error(bad.status, str(bad))
                    return
                if request is None:
                    return
                method, path, version, headers, body = request
                keep_alive = _keep_alive(version, headers)
                exchange = await self._route(writer, keep_alive, method, path, headers, body)
                if exchange.closed or not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        except asyncio.CancelledError:
            return
        finally:
            self._writers.discard(writer)
            if not writer.is_closing():
                writer.close()

    async def _route(self, writer: asyncio.StreamWriter, keep_alive: bool, method: str, path: str,
                     headers: dict[str, str], body: bytes) -> _Exchange:
        path = path.rstrip("/") or "/"
        if path == "/v1/chat/completions" and method == "POST":
            return await self._chat(writer, keep_alive, headers, body)
        exchange = _Exchange(writer, keep_alive, None, "", "", 0)
        if path == "/v1/models" and method == "GET":
            data = [{"id": model, "object": "model", "created": CREATED, "owned_by": "fake-openai"}
                    for model in self.models()]
            await exchange.json(200, {"object": "list", "data": data})
        elif path == "/_fake/counts" and method == "GET":
            with self._state.lock:
                rows = [[work, model, n] for (work, model), n in sorted(self._state.counts.items())]
                total = self._state.total
            await exchange.json(200, {"total": total, "counts": rows})
        elif path in ("/v1/chat/completions", "/v1/models", "/_fake/counts"):
            await exchange.error(405, f"Method {method} not allowed on {path}.")
        else:
            await exchange.error(404, f"Unknown request URL: {method} {path}.")
        return exchange

    async def _chat(self, writer: asyncio.StreamWriter, keep_alive: bool, headers: dict[str, str],
                    body: bytes) -> _Exchange:
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        ok = isinstance(request, dict) and isinstance(request.get("model"), str) \
            and isinstance(request.get("messages"), list) and bool(request["messages"])
        work = work_key(request["messages"], self.titles) if ok else ""
        model = request["model"] if ok else ""
        with self._state.lock:
            self._state.total += 1
            attempt = 0
            if ok:
                attempt = self._state.counts.get((work, model), 0) + 1
                self._state.counts[(work, model)] = attempt
                self._state.models.setdefault(model, None)
            if self.record_requests:
                self._state.requests.append({"work": work if ok else None, "model": model if ok else None,
                                             "attempt": attempt, "headers": headers, "body": request})
        exchange = _Exchange(writer, keep_alive, request if ok else None, work, model, attempt)
        exchange.reported = self.reported_models.get(model, model)
        if not ok:
            await exchange.error(400, "The request needs a JSON body with a string `model` and a "
                                      "non-empty `messages` list.")
            return exchange
        if request.get("stream"):
            await exchange.error(400, "The fake server does not stream.")
            return exchange
        if self.reject_response_format and "response_format" in request:
            await exchange.error(400, "response_format is not supported by this server.")
            return exchange
        if self.latency:
            await asyncio.sleep(self.latency)
        try:
            action = _script_action(self.script, work, model, attempt)
        except Exception:
            with self._state.lock:
                self._state.errors.append(traceback.format_exc())
            await exchange.error(500, "The fake server's script raised (see server.errors).")
            return exchange
        await (action if action is not None else self.default)._reply(exchange)
        return exchange


# --- script files (process mode) --------------------------------------------

def action_from_json(spec: Any) -> Action:
    """An action from its JSON form.

    {"label", "reason"?, "usage"?} -> Answer; {"content", "finish_reason"?} -> Content;
    {"refuse": text} -> Refuse; {"status", "retry_after"?, "body"?} -> Status;
    {"drop": true} -> Drop; {"truncate": true} -> Truncate; {"slow": s, "then": spec} -> Slow.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"an action must be a JSON object, not {spec!r}")
    if "slow" in spec:
        return Slow(float(spec["slow"]), action_from_json(spec["then"]))
    if "label" in spec:
        return Answer(spec["label"], spec.get("reason", "..."), bool(spec.get("usage", True)))
    if "content" in spec:
        return Content(spec["content"], spec.get("finish_reason", "stop"))
    if "refuse" in spec:
        return Refuse(spec["refuse"]) if isinstance(spec["refuse"], str) else Refuse()
    if "status" in spec:
        return Status(int(spec["status"]), spec.get("retry_after"), spec.get("body"))
    if spec.get("drop"):
        return Drop()
    if spec.get("truncate"):
        return Truncate()
    raise ValueError(f"unknown action {spec!r}")


def load_script(data: dict) -> dict:
    """FakeOpenAI keyword arguments from a script file's JSON.

    {"answers": {work: {model: spec | [specs by attempt]}}, "default": spec,
     "titles": {title: work}, "latency": seconds, "reject_response_format": bool}
    """
    def actions(spec: Any) -> Action | list[Action]:
        return [action_from_json(s) for s in spec] if isinstance(spec, list) else action_from_json(spec)

    script = {(work, model): actions(spec)
              for work, by_model in data.get("answers", {}).items() for model, spec in by_model.items()}
    kwargs: dict[str, Any] = {"script": script, "titles": data.get("titles"),
                              "latency": float(data.get("latency", 0.0)),
                              "reject_response_format": bool(data.get("reject_response_format", False))}
    if "default" in data:
        kwargs["default"] = action_from_json(data["default"])
    return kwargs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible Chat Completions server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: a free one)")
    parser.add_argument("--script", help="script JSON file (answers, default, titles, latency)")
    parser.add_argument("--latency", type=float, help="seconds every chat request waits (overrides the script)")
    parser.add_argument("--record-requests", action="store_true",
                        help="keep every request in memory (off: a long benchmark stays small)")
    args = parser.parse_args(argv)
    kwargs: dict[str, Any] = {}
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            kwargs = load_script(json.load(handle))
    if args.latency is not None:
        kwargs["latency"] = args.latency
    server = FakeOpenAI(**kwargs, record_requests=args.record_requests, port=args.port).start()
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    print(server.base_url, flush=True)
    while not done.wait(3600):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
