"""Routing: the rule book, the engine, releases; and the phrase matcher other stages share.

The public surface:

- `load_rulebook(specs)`: load and validate a rule book folder (`RuleBook`);
- `route_release(pool, specs, out, ...)`: route a pool into `out/<release_id>/` (`RouteResult`);
- `match_phrases(texts, phrases)`: the `phrase` predicate over a text column (`PhraseMatches`),
  exactly as a rule matches it: what the digest uses for watchlist and criteria terms;
- `artifacts`: the typed reader of what a route wrote (`load_releases`, `Release`), the one
  module of routing the site imports.
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .phrases import PhraseMatches, Span, match_phrases
    from .release import RouteResult, route_release
    from .specs import RuleBook, load_rulebook

# Imported on first use: a worker process that routes batches needs the engine, not the release writer.
_EXPORTS = {"PhraseMatches": "phrases", "Span": "phrases", "match_phrases": "phrases",
            "RouteResult": "release", "route_release": "release", "RuleBook": "specs", "load_rulebook": "specs"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
