"""[fetch] of reporter.toml: the raw-answer cache, the retry policy and one table per public source."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..settings import Table, http_url, positive_seconds, seconds

# Each source's API root and documented etiquette (seconds between requests): arXiv asks for one request
# every 3 seconds; NCBI allows 3 a second without a key (10 with one, KEY_INTERVAL); bioRxiv publishes no
# number, so one a second; OpenAlex allows 10 a second (docs/fetch.md, "Etiquette").
SOURCES = {
    "arxiv": ("https://export.arxiv.org/api/query", 3.0),
    "biorxiv": ("https://api.biorxiv.org", 1.0),
    "medrxiv": ("https://api.biorxiv.org", 1.0),
    "pubmed": ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils", 1 / 3),
    "openalex": ("https://api.openalex.org", 0.1),
}
KEY_INTERVAL = {"pubmed": 0.1}
"""The etiquette with an API key, where the source allows more with one (NCBI: 10 requests a second)."""
RETRIED_ALSO = {"openalex": frozenset({403})}
"""Statuses a source answers when it is overloaded, beyond 429 and 5xx (OpenAlex's errors page: 403 "Rate limit
exceeded; slow down"): asked again after a wait, like a 429."""
PAGE_SIZES = {"arxiv": 200, "pubmed": 500, "openalex": 100}
"""Records asked per page where the client chooses (bioRxiv and medRxiv serve 100, fixed by the API)."""
MAX_PAGE_SIZES = {"arxiv": 2000, "pubmed": 10000, "openalex": 100}
"""The most each API serves in one page (its documentation)."""
SOURCE_KEYS = {
    "arxiv": ("page_size",),
    "biorxiv": (),
    "medrxiv": (),
    "pubmed": ("page_size", "email", "api_key_env"),
    "openalex": ("page_size", "mailto", "api_key_env"),
}
"""The keys each source takes beyond base_url, query and min_interval_seconds."""
DEFAULT_CACHE = "state/fetch-cache"
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 5
DEFAULT_BACKOFF = 2.0
DEFAULT_MAX_WAIT = 600.0
DEFAULT_MAX_PAGE_BYTES = 256 * 1024 * 1024
"""The largest answer read (256 MiB): a PubMed efetch page of 10,000 records is about 50 MB, an arXiv page of
2,000 entries about 6 MB; a larger body stops the fetch naming the URL and the limit."""
DEFAULT_MAX_PAGES = 5_000
"""The most answers one source's walk of one window reads (cache included): 200,000 OpenAlex works at 100 a page
are 2,000."""
DEFAULT_MAX_RECORDS = 200_000
"""The most records one source's walk of one window reads, and the most a total may claim: a week of all of
PubMed is about 30,000 records, of all of OpenAlex about 200,000."""


@dataclass(frozen=True)
class SourceSettings:
    """One [fetch.<source>] table."""

    name: str
    """The source: arxiv, biorxiv, medrxiv, pubmed or openalex."""
    base_url: str
    """The API root (default the public one)."""
    query: str | None = None
    """The source's own query syntax, e.g. `cat:cs.CL OR cat:cs.IR` for arXiv (docs/fetch.md says per source)."""
    min_interval_seconds: float = 0.0
    """Seconds between two requests (default: the source's published etiquette; 0 allowed)."""
    email: str | None = None
    """Contact e-mail sent with each request where the source asks for one (NCBI's `email`)."""
    mailto: str | None = None
    """OpenAlex's polite-pool `mailto`."""
    api_key_env: str | None = None
    """Name of the environment variable holding an API key (NCBI, OpenAlex); the key is never stored."""
    page_size: int | None = None
    """Records asked per page (arXiv, PubMed, OpenAlex); None: PAGE_SIZES."""
    interval_is_default: bool = True
    """True when min_interval_seconds is the etiquette default (so a key may shorten it, KEY_INTERVAL)."""

    def interval(self, has_key: bool) -> float:
        """Seconds between two requests: the setting, or the etiquette (shorter with a key where allowed)."""
        if self.interval_is_default and has_key and self.name in KEY_INTERVAL:
            return KEY_INTERVAL[self.name]
        return self.min_interval_seconds

    @property
    def size(self) -> int:
        """Records asked per page (bioRxiv and medRxiv: what the API serves, 100)."""
        return self.page_size or PAGE_SIZES.get(self.name, 100)


@dataclass(frozen=True)
class FetchSettings:
    """The [fetch] table."""

    cache_dir: Path
    """Where every answered page is stored before it is parsed (default state/fetch-cache)."""
    sources: tuple[SourceSettings, ...] = ()
    """The configured sources, in SOURCES order."""
    timeout_seconds: float = DEFAULT_TIMEOUT
    """The deadline of one whole request (connect, headers and body) before it is retried."""
    retries: int = DEFAULT_RETRIES
    """How many times a page is asked again after a 429, a 5xx, a dropped connection or a bad page."""
    backoff_seconds: float = DEFAULT_BACKOFF
    """The first retry's wait without Retry-After; it doubles each retry, with jitter."""
    max_wait_seconds: float = DEFAULT_MAX_WAIT
    """The longest wait before a retry (a Retry-After above it stops the fetch with an error)."""
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    """The largest answer read; a larger one stops the fetch, naming the URL and the limit."""
    max_pages: int = DEFAULT_MAX_PAGES
    """The most answers one source's walk of one window reads (from the network or the cache)."""
    max_records: int = DEFAULT_MAX_RECORDS
    """The most records one source's walk of one window reads, and the most its API's total may claim."""

    def source(self, name: str) -> SourceSettings:
        """The named source's settings; defaults when its table is absent."""
        for s in self.sources:
            if s.name == name:
                return s
        base_url, interval = SOURCES[name]
        return SourceSettings(name=name, base_url=base_url, min_interval_seconds=interval)


def default_fetch(root: Path) -> FetchSettings:
    """The settings of a workspace without [fetch]: every default, the cache under root."""
    return FetchSettings(cache_dir=(Path(root) / DEFAULT_CACHE).resolve())


def parse_fetch(table: Table | None) -> FetchSettings | None:
    """Parse [fetch]; None when the workspace fetches nothing."""
    if table is None:
        return None
    sources = []
    for name, (base_url, interval) in SOURCES.items():
        sub = table.table(name)
        if sub is None:
            continue
        sources.append(_source(sub, name, base_url, interval))
        sub.done()
    return FetchSettings(
        cache_dir=table.path("cache_dir", DEFAULT_CACHE), sources=tuple(sources),
        timeout_seconds=table.get("timeout_seconds", float, DEFAULT_TIMEOUT, check=positive_seconds),
        retries=table.get("retries", int, DEFAULT_RETRIES, check=_retries),
        backoff_seconds=table.get("backoff_seconds", float, DEFAULT_BACKOFF, check=seconds),
        max_wait_seconds=table.get("max_wait_seconds", float, DEFAULT_MAX_WAIT, check=seconds),
        max_page_bytes=table.get("max_page_bytes", int, DEFAULT_MAX_PAGE_BYTES, check=_between(1024, 2**34)),
        max_pages=table.get("max_pages", int, DEFAULT_MAX_PAGES, check=_between(1, 10**7)),
        max_records=table.get("max_records", int, DEFAULT_MAX_RECORDS, check=_between(1, 10**8)))


def _source(sub: Table, name: str, base_url: str, interval: float) -> SourceSettings:
    keys = SOURCE_KEYS[name]
    extra: dict[str, Any] = {}
    for key in ("email", "mailto", "api_key_env"):
        if key in keys:
            extra[key] = sub.get(key, str, None, check=_not_blank)
    if "page_size" in keys:
        most = MAX_PAGE_SIZES[name]
        extra["page_size"] = sub.get("page_size", int, None, check=lambda v: None if 1 <= v <= most else
                                     f"must be from 1 to {most:,} (the most the API serves a page), not {v}")
    url = sub.get("base_url", str, base_url, check=http_url)
    return SourceSettings(
        name=name, base_url=url.rstrip("/"), query=sub.get("query", str, None, check=_not_blank),
        min_interval_seconds=sub.get("min_interval_seconds", float, interval, check=seconds),
        interval_is_default="min_interval_seconds" not in sub.data, **extra)


def _not_blank(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def _retries(value: int) -> str | None:
    return _between(0, 100)(value)


def _between(least: int, most: int):
    return lambda value: None if least <= value <= most else f"must be from {least:,} to {most:,}, not {value}"
