"""[novelty] of reporter.toml: which resolvers to ask, and the candidates a build checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..settings import Table, http_url, positive_seconds
from .resolvers import DEFAULT_TIMEOUT, Resolver, make_resolvers

RESOLVER_NAMES = ("openalex", "s2")


@dataclass(frozen=True)
class NoveltySettings:
    """The [novelty] table; every field has a default, so an absent table means no network call."""

    resolvers: tuple[str, ...] = ()
    """Resolvers for keys a candidate lacks: `openalex`, `s2` (asked in that order); empty: none."""
    openalex_url: str | None = None
    """OpenAlex API root (default the public one)."""
    s2_url: str | None = None
    """Semantic Scholar Graph API root, ending in /graph/v1 (default the public one)."""
    timeout_seconds: float = DEFAULT_TIMEOUT
    """Timeout of one lookup; lookups are never retried (fail closed)."""
    mailto: str | None = None
    """E-mail sent to OpenAlex for its polite pool."""
    s2_api_key_env: str | None = None
    """Name of the environment variable holding a Semantic Scholar API key (the key is never stored)."""
    candidates: Path | None = None
    """A JSONL of candidates that `reporter build` checks against the workspace's graph."""

    def make_resolvers(self, environ: Mapping[str, str]) -> tuple[Resolver, ...]:
        """The resolver objects, the S2 key read from `environ` (the caller's environment)."""
        key = environ.get(self.s2_api_key_env) if self.s2_api_key_env else None
        return make_resolvers(list(self.resolvers), openalex_url=self.openalex_url, s2_url=self.s2_url,
                              timeout=self.timeout_seconds, mailto=self.mailto, s2_api_key=key)


def check_resolvers(names: list) -> str | None:
    """A complaint about resolver names, or None."""
    bad = [n for n in names if n not in RESOLVER_NAMES]
    return f"names unknown resolvers {bad!r}; allowed: {', '.join(RESOLVER_NAMES)}" if bad else None


def parse_novelty(table: Table | None) -> NoveltySettings:
    """Parse [novelty]; defaults when the workspace has none."""
    if table is None:
        return NoveltySettings()
    return NoveltySettings(
        resolvers=tuple(table.get("resolvers", list, [], check=check_resolvers)),
        openalex_url=table.get("openalex_url", str, None, check=http_url),
        s2_url=table.get("s2_url", str, None, check=http_url),
        timeout_seconds=table.get("timeout_seconds", float, DEFAULT_TIMEOUT, check=positive_seconds),
        mailto=table.get("mailto", str, None),
        s2_api_key_env=table.get("s2_api_key_env", str, None),
        candidates=table.path("candidates", None),
    )
