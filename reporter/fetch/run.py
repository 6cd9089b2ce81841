"""Fetch a window from several sources into one list of records, and write it as normalized JSONL.

`fetch_sources(settings, names, window, ...)` runs each source's walker in
turn with its own client (etiquette, retries, the shared raw-answer cache),
shows a progress line per source, folds each source's versions
(reporter.pool.sources.fold.fold_same_id: the newest version's text, the first
date) and returns the records with a report per source. Nothing is
written but the cache; `write_records` writes the file, atomically, so a
fetch that fails or is killed leaves the old file (or none).
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import write_bytes
from ..hashing import canonical_json
from ..isoweek import parse_week, week_start
from ..pool.record import Record
from ..pool.sources.fold import fold_same_id
from ..progress import Progress
from . import arxiv, biorxiv, openalex, pubmed
from .cache import RawCache
from .config import RETRIED_ALSO, SOURCES, FetchSettings, SourceSettings
from .http import RETRIED_STATUS, Client, Policy, Transport, WouldSend, http_transport
from .pages import Page, Window, make_window

Walker = Callable[[SourceSettings, Window, Client, "str | None"], Iterator[Page]]
WALKERS: dict[str, Walker] = {
    "arxiv": arxiv.walk, "biorxiv": biorxiv.walk, "medrxiv": biorxiv.walk,
    "pubmed": pubmed.walk, "openalex": openalex.walk,
}
"""Each source's walker, in SOURCES order."""


@dataclass(frozen=True)
class SourceReport:
    """What fetching one source did (a line of the summary)."""

    source: str
    """The source's name."""
    records: int
    """Records after its versions were folded (each paper once)."""
    versions_folded: int
    """Rows folded into another version of the same paper (bioRxiv/medRxiv versions, repeated ids)."""
    pages: int
    """Answers read (from the network or the cache); PubMed's esearch counts as one."""
    sent: int
    """Requests sent over the network, retries included."""
    cached: int
    """Pages answered from the cache: no request sent."""
    retried: int
    """Requests sent again after a 429, a 5xx, a dropped connection or a bad page."""
    waited_seconds: float
    """Time spent waiting on the etiquette interval, Retry-After and backoff."""
    skipped: tuple[str, ...] = ()
    """Records the reader refused (each named, with why); the rest of their page was kept."""
    failures: tuple[str, ...] = ()
    """Each failure that was asked again, `URL: what happened`, in order."""
    would_send: str | None = None
    """Dry run only: the first request the cache could not answer (None: every page is cached)."""

    def to_json(self) -> dict[str, Any]:
        """The `--json` form."""
        return {"source": self.source, "records": self.records, "versions_folded": self.versions_folded,
                "pages": self.pages, "requests_sent": self.sent, "answered_from_cache": self.cached,
                "retried": self.retried, "waited_seconds": round(self.waited_seconds, 3),
                "skipped": list(self.skipped), "failures": list(self.failures), "would_send": self.would_send}


@dataclass(frozen=True)
class FetchResult:
    """Every source's records (each source's versions folded) and its report."""

    records: tuple[Record, ...]
    """In source order, then in the order each source answered."""
    reports: tuple[SourceReport, ...]
    """One per source, in the order fetched."""


@dataclass(frozen=True)
class Runtime:
    """What a fetch takes from the outside world, injectable so tests neither wait nor touch the network."""

    environ: Mapping[str, str]
    """Where API keys are read (the variable [fetch.<source>] api_key_env names)."""
    transport: Transport = http_transport
    """Sends one GET (reporter.fetch.http.http_transport)."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds, for the etiquette interval."""
    sleep: Callable[[float], None] = time.sleep
    """Waits: the interval, Retry-After, backoff."""
    wall: Callable[[], float] = time.time
    """Seconds since the epoch, for a Retry-After given as an HTTP date."""
    rng: random.Random | None = None
    """The jitter's randomness (None: a fresh, unseeded one)."""


def source_names(values: Sequence[str] | None, settings: FetchSettings) -> list[str]:
    """The sources asked (`--source`, repeated or comma-separated), else the configured ones, in SOURCES order."""
    if not values:
        names = [s.name for s in settings.sources]
        if not names:
            raise InputError(f"no source to fetch: give --source ({', '.join(SOURCES)}) or add a "
                             f"[fetch.<source>] table to reporter.toml")
        return names
    asked = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    unknown = [name for name in asked if name not in SOURCES]
    if unknown:
        raise InputError(f"--source {', '.join(unknown)}: unknown source; choose from {', '.join(SOURCES)}")
    return [name for name in SOURCES if name in asked]


def api_key(source: SourceSettings, environ: Mapping[str, str]) -> str | None:
    """The source's API key from the variable its table names; None without one. Never stored or shown."""
    if source.api_key_env is None:
        return None
    value = environ.get(source.api_key_env, "").strip()
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, as POSIX environments may hold
        raise InputError(f"[fetch.{source.name}] api_key_env names the environment variable "
                         f"{source.api_key_env!r}, which holds bytes that are not UTF-8; export the key as "
                         f"text") from None
    if not value:
        raise InputError(f"[fetch.{source.name}] api_key_env names the environment variable "
                         f"{source.api_key_env!r}, which is not set; export it, or remove api_key_env to fetch "
                         f"without a key")
    return value


def fetch_sources(settings: FetchSettings, names: Sequence[str], window: Window, runtime: Runtime, *,
                  refresh: bool = False, dry_run: bool = False, progress: bool = True) -> FetchResult:
    """Fetch the window from each named source in turn; a source that fails stops the fetch (InputError)."""
    cache = RawCache(settings.cache_dir, settings.max_page_bytes)
    cache.sweep()  # temporaries of killed runs
    policy = Policy(settings.timeout_seconds, settings.retries, settings.backoff_seconds, settings.max_wait_seconds,
                    settings.max_page_bytes)
    keys = {name: api_key(settings.source(name), runtime.environ) for name in names}  # all, before any request
    records: list[Record] = []
    reports = []
    for name in names:
        report, found = _fetch_one(settings.source(name), keys[name], window, cache, policy, runtime, refresh,
                                   dry_run, progress, Bounds(settings.max_pages, settings.max_records))
        records += found
        reports.append(report)
    return FetchResult(tuple(records), tuple(reports))


@dataclass(frozen=True)
class Bounds:
    """How far one source's walk of one window may go, from the network or the cache ([fetch] max_pages,
    max_records; arXiv's own cap is arxiv.MAX_RESULTS). Past either, the fetch stops and writes nothing."""

    pages: int
    """The most answers read."""
    records: int
    """The most records read, and the most the API's total may claim."""

    def check(self, source: str, pages: int, records: int, total: int | None) -> None:
        """InputError when the walk has gone, or its API's total claims it will go, past a bound."""
        fix = f"narrow [fetch.{source}] query or fetch a shorter window"
        if total is not None and total > self.records:
            raise InputError(f"{source}: the API counts {total:,} results for this window, more than [fetch] "
                             f"max_records ({self.records:,}); {fix}, or raise max_records. Nothing was written")
        if records > self.records:
            raise InputError(f"{source}: more than [fetch] max_records ({self.records:,}) records read for this "
                             f"window (page {pages:,}); {fix}, or raise max_records. Nothing was written")
        if pages > self.pages:
            raise InputError(f"{source}: more than [fetch] max_pages ({self.pages:,}) answers read for this "
                             f"window; {fix}, or raise max_pages. Nothing was written")


def _fetch_one(source: SourceSettings, key: str | None, window: Window, cache: RawCache, policy: Policy,
               runtime: Runtime, refresh: bool, dry_run: bool, show: bool,
               bounds: Bounds) -> tuple[SourceReport, list[Record]]:
    bar = Progress(f"fetch {source.name}", unit="pages", enabled=show)
    rows: list[Record] = []

    def waiting(seconds: float, why: str) -> None:
        bar.label = f"fetch {source.name} ({len(rows):,} records; waiting {seconds:.1f} s: {why})"
        bar.advance(0)

    client = Client(source.name, source.interval(key is not None), policy, cache,
                    contact=source.email or source.mailto, transport=runtime.transport, clock=runtime.clock,
                    sleep=runtime.sleep, wall=runtime.wall, rng=runtime.rng, refresh=refresh, dry_run=dry_run,
                    retried=RETRIED_STATUS | RETRIED_ALSO.get(source.name, frozenset()), on_wait=waiting)
    skipped: list[str] = []
    pages = 0
    would_send = None
    try:
        for page in WALKERS[source.name](source, window, client, key):
            pages += 1
            read = len(rows) + len(skipped) + len(page.records) + len(page.skipped)
            bounds.check(source.name, pages, read, page.total)
            rows += page.records
            skipped += page.skipped
            if page.expected_pages is not None:
                bar.total = max(page.expected_pages, pages)
            bar.label = f"fetch {source.name} ({len(rows):,} records)"
            bar.advance(1)
    except WouldSend as exc:
        would_send = str(exc)
    finally:
        bar.close()
    folded = fold_same_id(rows)
    c = client.counters
    report = SourceReport(source.name, len(folded), sum(len(members) - 1 for _, members in folded), pages,
                          c.sent, c.cached, c.retried, c.waited_seconds, tuple(skipped), tuple(c.failures),
                          would_send)
    return report, [record for record, _ in folded]


def records_jsonl(records: Sequence[Record]) -> bytes:
    """Normalized records, one canonical JSON object a line (what the digest's reader reads)."""
    return "".join(canonical_json(r.to_json()) + "\n" for r in records).encode("utf-8")


def write_records(path: Path, records: Sequence[Record]) -> bytes:
    """Write the records as JSONL atomically (temporary file, then rename); returns the bytes written."""
    data = records_jsonl(records)
    write_bytes(path, data)
    return data


def week_window(week: str, as_of: dt.date) -> Window:
    """Monday to Sunday of an ISO week (`YYYY-Www`, checked), as asked on `as_of`."""
    monday = week_start(parse_week(week))
    return make_window(monday, monday + dt.timedelta(days=6), as_of)
