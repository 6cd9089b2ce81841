"""Fail-closed resolvers for keys the graph does not hold: OpenAlex, then Semantic Scholar.

A resolver answers one lookup with the keys the service returned, or with a
failure (HTTP 429, a miss, a timeout, an answer that does not echo the id
asked for). It never retries: a 429 is reported, not hidden, and a key is
only ever copied from an answer, never guessed.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from .. import __version__
from ..ids import normalize_key

MAX_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 10.0
OPENALEX_URL = "https://api.openalex.org"
S2_URL = "https://api.semanticscholar.org/graph/v1"


@dataclass(frozen=True)
class Lookup:
    """The outcome of one lookup: the keys found, or why it failed."""

    scheme: str
    """The service asked: `openalex` or `s2`."""
    lookup: str
    """The id as sent (`doi:10.1/x`, `W123`, `DOI:10.1/x`, `ARXIV:2608.13940`)."""
    http_status: int | None
    """The HTTP status of the answer; None for a timeout or a network failure."""
    found: Mapping[str, str] = field(default_factory=dict)
    """Normalised keys by scheme (doi, arxiv, openalex, s2) read from the answer."""
    error: str | None = None
    """None on success, else `http_429`, `not_found`, `http_<status>`, `timeout`, `network`,
    `bad_response`, `mismatch` or `conflict`."""

    @property
    def failed(self) -> bool:
        """True unless the service answered with the record asked for."""
        return self.error is not None

    def entry(self) -> dict[str, Any]:
        """The `ingest_errors_blocking` entry for a failed lookup."""
        return {"scheme": self.scheme, "http_status": self.http_status, "lookup": self.lookup}


class Resolver(Protocol):
    """A service that can supply missing keys for a work."""

    scheme: str
    """Its name in `ingest_errors_blocking` (`openalex`, `s2`)."""
    provides: frozenset[str]
    """The key schemes its answers can fill."""

    def query_for(self, keys: Mapping[str, str]) -> str | None:
        """The id to send for these keys, or None when it cannot be asked."""

    def lookup(self, query: str) -> Lookup:
        """Ask the service for one id; never raises for HTTP or network failures."""


@dataclass(frozen=True)
class HttpResponse:
    """What `fetch_json` got: a status and a parsed body, or an error name."""

    status: int | None
    """The HTTP status; None when no answer came (a timeout, a network failure)."""
    body: Any = None
    """The parsed JSON body of a 2xx answer."""
    error: str | None = None
    """None on success, else the failure's name (see `Lookup.error`)."""


def fetch_json(url: str, timeout: float, headers: Mapping[str, str] | None = None) -> HttpResponse:
    """GET a JSON document within `timeout` seconds in all, no retries; failures come back, not raised.

    The project's one GET (`reporter.transport`): the deadline bounds the
    whole request (a server dripping its answer is a timeout, not a hang), the
    body is never read past MAX_BYTES, and a redirect to another host is not
    followed (its status is the failure).
    """
    from ..transport import Dropped, TooLarge, http_transport  # httpx: loaded by a lookup, not by `--help`

    try:
        answer = http_transport(url, {"Accept": "application/json",
                                      "User-Agent": f"reporter/{__version__} (novelty check)", **(headers or {})},
                                timeout, MAX_BYTES)
    except TooLarge:
        return HttpResponse(None, error="bad_response")
    except Dropped as exc:
        return HttpResponse(None, error="timeout" if exc.timed_out else "network")
    status = answer.status
    if status == 429:
        return HttpResponse(429, error="http_429")
    if not 200 <= status < 300:
        return HttpResponse(status, error="not_found" if status == 404 else f"http_{status}")
    try:
        return HttpResponse(status, body=json.loads(answer.body))
    except (ValueError, RecursionError):
        return HttpResponse(status, error="bad_response")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class OpenAlexResolver:
    """OpenAlex `GET /works/{id}`: asked by OpenAlex id, else by DOI; fills openalex and doi."""

    base_url: str = OPENALEX_URL
    """The API root (tests point it at 127.0.0.1)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for connect and for each read."""
    mailto: str | None = None
    """An e-mail for OpenAlex's polite pool, sent as `mailto=`."""
    scheme: str = "openalex"
    provides: frozenset[str] = frozenset({"openalex", "doi"})

    def query_for(self, keys: Mapping[str, str]) -> str | None:
        """`W…` when the OpenAlex id is known, else `doi:…`, else None."""
        if keys.get("openalex"):
            return keys["openalex"]
        if keys.get("doi"):
            return f"doi:{keys['doi']}"
        return None

    def lookup(self, query: str) -> Lookup:
        """Fetch one work; a DOI answer must carry the DOI asked for."""
        params = {"select": "id,doi,ids,title"}
        if self.mailto:
            params["mailto"] = self.mailto
        url = (f"{self.base_url.rstrip('/')}/works/{urllib.parse.quote(query, safe=':/')}"
               f"?{urllib.parse.urlencode(params)}")
        response = fetch_json(url, self.timeout)
        if response.error:
            return Lookup(self.scheme, query, response.status, error=response.error)
        body = response.body
        if not isinstance(body, dict) or not _text(body.get("id")):
            return Lookup(self.scheme, query, response.status, error="bad_response")
        ids = body.get("ids") if isinstance(body.get("ids"), dict) else {}
        found = {"openalex": normalize_key("openalex", body["id"])}
        doi = _text(body.get("doi")) or _text(ids.get("doi"))
        if doi:
            found["doi"] = normalize_key("doi", doi)
        if query.startswith("doi:") and found.get("doi") != query[4:]:
            return Lookup(self.scheme, query, response.status, error="mismatch")
        return Lookup(self.scheme, query, response.status, found={k: v for k, v in found.items() if v})


@dataclass(frozen=True)
class SemanticScholarResolver:
    """Semantic Scholar `GET /paper/{DOI:…|ARXIV:…}`: fills s2 (paperId), doi and arxiv."""

    base_url: str = S2_URL
    """The Graph API root, ending in /graph/v1 (tests point it at 127.0.0.1)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for connect and for each read."""
    api_key: str | None = field(default=None, repr=False)
    """Sent as `x-api-key` when given."""
    scheme: str = "s2"
    provides: frozenset[str] = frozenset({"s2", "doi", "arxiv"})

    def query_for(self, keys: Mapping[str, str]) -> str | None:
        """`DOI:…` when the DOI is known, else `ARXIV:…`, else None."""
        if keys.get("doi"):
            return f"DOI:{keys['doi']}"
        if keys.get("arxiv"):
            return f"ARXIV:{keys['arxiv']}"
        return None

    def lookup(self, query: str) -> Lookup:
        """Fetch one paper; its externalIds must carry the id asked for."""
        url = (f"{self.base_url.rstrip('/')}/paper/{urllib.parse.quote(query, safe=':/')}"
               f"?{urllib.parse.urlencode({'fields': 'paperId,externalIds,title'})}")
        headers = {"x-api-key": self.api_key} if self.api_key else None
        response = fetch_json(url, self.timeout, headers)
        if response.error:
            return Lookup(self.scheme, query, response.status, error=response.error)
        body = response.body
        if not isinstance(body, dict) or not _text(body.get("paperId")):
            return Lookup(self.scheme, query, response.status, error="bad_response")
        external = body.get("externalIds") if isinstance(body.get("externalIds"), dict) else {}
        found = {"s2": normalize_key("s2", body["paperId"])}
        if _text(external.get("DOI")):
            found["doi"] = normalize_key("doi", external["DOI"])
        if _text(external.get("ArXiv")):
            found["arxiv"] = normalize_key("arxiv", external["ArXiv"])
        asked, _, value = query.partition(":")
        scheme = "doi" if asked == "DOI" else "arxiv"
        if found.get(scheme) != normalize_key(scheme, value):
            return Lookup(self.scheme, query, response.status, error="mismatch")
        return Lookup(self.scheme, query, response.status, found={k: v for k, v in found.items() if v})


def make_resolvers(names: list[str], openalex_url: str | None = None, s2_url: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT, mailto: str | None = None,
                   s2_api_key: str | None = None) -> tuple[Resolver, ...]:
    """The configured resolvers, always in the order OpenAlex, then Semantic Scholar."""
    out: list[Resolver] = []
    if "openalex" in names:
        out.append(OpenAlexResolver(base_url=openalex_url or OPENALEX_URL, timeout=timeout, mailto=mailto))
    if "s2" in names:
        out.append(SemanticScholarResolver(base_url=s2_url or S2_URL, timeout=timeout, api_key=s2_api_key))
    return tuple(out)
