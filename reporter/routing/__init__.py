"""Routing: the rule book, the engine, releases; and the phrase matcher other stages share.

The public surface:

- `load_rulebook(specs)`: load and validate a rule book folder (`RuleBook`);
- `route_release(pool, specs, out, ...)`: route a pool into `out/<release_id>/` (`RouteResult`);
- `match_phrases(texts, phrases)`: the `phrase` predicate over a text column (`PhraseMatches`),
  exactly as a rule matches it: what the digest uses for watchlist and criteria terms.
"""

from .phrases import PhraseMatches, Span, match_phrases
from .release import RouteResult, route_release
from .specs import RuleBook, load_rulebook

__all__ = ["PhraseMatches", "RouteResult", "RuleBook", "Span", "load_rulebook", "match_phrases", "route_release"]
