"""[fetch] of reporter.toml: the raw-answer cache and one table per public source."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Table, non_negative

# Each source's API root and documented etiquette (seconds between requests).
SOURCES = {
    "arxiv": ("https://export.arxiv.org/api/query", 3.0),
    "biorxiv": ("https://api.biorxiv.org", 1.0),
    "medrxiv": ("https://api.biorxiv.org", 1.0),
    "pubmed": ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils", 1 / 3),
    "openalex": ("https://api.openalex.org", 0.1),
}


@dataclass(frozen=True)
class SourceSettings:
    """One [fetch.<source>] table."""

    name: str
    """The source: arxiv, biorxiv, medrxiv, pubmed or openalex."""
    base_url: str
    """The API root (default the public one)."""
    query: str | None = None
    """The source's own query syntax, e.g. `cat:cs.CL OR cat:cs.IR` for arXiv."""
    min_interval_seconds: float = 0.0
    """Seconds between two requests (default: the source's published etiquette; 0 allowed)."""
    email: str | None = None
    """Contact e-mail sent with each request where the source asks for one (NCBI's `email`)."""
    mailto: str | None = None
    """OpenAlex's polite-pool `mailto`."""
    api_key_env: str | None = None
    """Name of the environment variable holding an API key (NCBI); the key is never stored."""


@dataclass(frozen=True)
class FetchSettings:
    """The [fetch] table."""

    cache_dir: Path
    """Where every answered page is stored before it is parsed (default state/fetch-cache)."""
    sources: tuple[SourceSettings, ...] = ()
    """The configured sources, in SOURCES order."""

    def source(self, name: str) -> SourceSettings:
        """The named source's settings; defaults when its table is absent."""
        for s in self.sources:
            if s.name == name:
                return s
        base_url, interval = SOURCES[name]
        return SourceSettings(name=name, base_url=base_url, min_interval_seconds=interval)


def parse_fetch(table: Table | None) -> FetchSettings | None:
    """Parse [fetch]; None when the workspace fetches nothing."""
    if table is None:
        return None
    sources = []
    for name, (base_url, interval) in SOURCES.items():
        sub = table.table(name)
        if sub is None:
            continue
        sources.append(SourceSettings(
            name=name, base_url=sub.get("base_url", str, base_url), query=sub.get("query", str, None),
            min_interval_seconds=sub.get("min_interval_seconds", float, interval, check=non_negative),
            email=sub.get("email", str, None), mailto=sub.get("mailto", str, None),
            api_key_env=sub.get("api_key_env", str, None)))
        sub.done()
    return FetchSettings(cache_dir=table.path("cache_dir", "state/fetch-cache"), sources=tuple(sources))
