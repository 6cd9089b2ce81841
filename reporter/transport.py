"""The one HTTP GET of the project: a deadline for the whole request, a cap on the body, our redirect policy.

httpx (the `httpx2` distribution, the openai client's transport) bounds one
connect or one read; a server dripping a byte a second never trips that, so
the deadline for the whole request (name resolution, connect, TLS, headers and
body) is ours: the name is resolved in a worker thread the request waits for
no longer than the deadline allows (`_ResolvingBackend`: `getaddrinfo` cannot be
interrupted, and a stalled resolver once held a 1 s request for 4.3 s), and the
socket is shut down when the deadline passes (`_Deadline`). The body is streamed and never read past `max_bytes`; a
redirect to another scheme, host or port is never followed (its answer is
returned as it came, for the caller to refuse); one on the same origin is, at
most MAX_REDIRECTS times, within the same deadline. The fetch client
(`reporter.fetch.http`) adds etiquette, retries and its cache on top; the
novelty resolvers (`reporter.novelty.resolvers`) one lookup each.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

MAX_REDIRECTS = 5
"""Redirects on the same origin followed for one request; more stop the fetch."""


class Dropped(Exception):
    """No whole answer came: the connection failed, timed out or was cut short (the message says which)."""

    def __init__(self, message: str, *, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out
        """Whether the deadline passed (rather than the connection failing or being cut)."""


class TooLarge(Exception):
    """The answer is larger than the body cap: asking again would not make it smaller."""


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
    """One httpx client for the process; no kept-alive connections, so every request has its own socket.

    Its direct connections go through `_ResolvingBackend` (httpcore's pool takes a network backend; httpx's
    transport offers no argument for it, so its pool is replaced by one made the same way with ours). A proxy
    from the environment keeps httpx's own transport.
    """
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            direct = httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))
            direct._pool = httpcore2.ConnectionPool(ssl_context=httpx2.create_ssl_context(),
                                                    max_keepalive_connections=0, network_backend=_ResolvingBackend())
            _CLIENT = httpx2.Client(follow_redirects=False, transport=direct,
                                    limits=httpx2.Limits(max_keepalive_connections=0))
        return _CLIENT


_REQUEST = threading.local()
"""The deadline (monotonic seconds) and the timeout as given of the request this thread is sending."""


class _ResolvingBackend(httpcore2.SyncBackend):
    """httpcore's backend, with the host name resolved within the request's deadline before connecting.

    `socket.create_connection` resolves in the calling thread and nothing bounds it; here the resolution runs in
    a worker thread and the request waits for it only as long as its deadline allows (the worker, stuck in
    `getaddrinfo`, ends whenever the resolver answers). Each address is then tried in turn, as
    `create_connection` does, each connect bounded by what is left. The name still goes in the Host header and
    TLS's server name: httpcore takes those from the URL, not from here.
    """

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore2.NetworkStream:
        deadline = getattr(_REQUEST, "deadline", None)
        try:
            ipaddress.ip_address(host.partition("%")[0])
            addresses = [host]  # already an address: nothing to resolve
        except ValueError:
            addresses = _resolve(host, port, deadline, getattr(_REQUEST, "timeout", 0.0))
        failure: Exception | None = None
        for address in addresses:
            left = timeout if deadline is None else max(0.001, deadline - time.monotonic())
            try:
                return super().connect_tcp(address, port, timeout=left if timeout is None else min(timeout, left),
                                           local_address=local_address, socket_options=socket_options)
            except httpcore2.ConnectError as exc:
                failure = exc
        raise failure if failure is not None else httpcore2.ConnectError(f"{host} has no address")


def _resolve(host: str, port: int, deadline: float | None, timeout: float) -> list[str]:
    """The addresses of `host`, in the resolver's order; Dropped (timed out) when the deadline passes first."""
    found: list[Any] = []
    failed: list[Exception] = []
    done = threading.Event()

    def work() -> None:
        try:
            found.extend(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except Exception as exc:  # noqa: BLE001 (OSError, and UnicodeError for a label too long for IDNA)
            failed.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name=f"resolve {host}"[:60], daemon=True).start()
    if not done.wait(None if deadline is None else max(0.0, deadline - time.monotonic())):
        raise Dropped(f"no whole answer within {timeout:g} s ({host} did not resolve in time)", timed_out=True)
    if failed:
        raise httpcore2.ConnectError(f"{host}: {failed[0]}")
    return list(dict.fromkeys(info[4][0] for info in found))


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
        raise Dropped(f"no whole answer within {timeout:g} s", timed_out=True)
    client = _client()
    watch = _Deadline(deadline)
    received, length = 0, ""
    try:
        request = client.build_request("GET", target, headers={**headers, "Accept-Encoding": "identity"},
                                       timeout=httpx2.Timeout(left), extensions={"trace": watch.trace})
        with watch:
            _REQUEST.deadline, _REQUEST.timeout = deadline, timeout
            try:
                response = client.send(request, stream=True)
            finally:
                _REQUEST.deadline = None
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
                                      f"{received:,} bytes so far)", timed_out=True)
            finally:
                response.close()
    except (TooLarge, Dropped):
        raise
    except httpx2.TimeoutException:
        raise Dropped(f"no whole answer within {timeout:g} s", timed_out=True) from None
    except httpx2.ConnectError as exc:
        raise Dropped(f"cannot connect ({exc})") from None
    except httpx2.InvalidURL as exc:  # a same-origin Location httpx cannot send
        raise Dropped(f"the URL cannot be sent ({exc})") from None
    except (httpx2.HTTPError, httpx2.StreamError, OSError) as exc:
        if watch.expired:
            raise Dropped(f"no whole answer within {timeout:g} s ({received:,} bytes of the body so far)",
                          timed_out=True) from None
        if isinstance(exc, httpx2.RemoteProtocolError) and received:
            raise Dropped(f"the answer was cut short after {received:,}{length} bytes") from None
        raise Dropped(f"the connection was dropped ({type(exc).__name__}: {exc})") from None
    return Answer(response.status_code, {k.lower(): v for k, v in response.headers.items()}, bytes(body))
