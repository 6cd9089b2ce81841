"""The rule language of routing.md, read plainly in Python: the one reference the tests compare the engine with.

It shares no code with the engine (reporter/routing/): normalisation is
unicodedata NFKC, every Pd dash to '-', str.lower(), whitespace runs collapsed
by str.split(); phrases are Python `re` searches with explicit `(?<!\\w)` and
`(?!\\w)` word boundaries (a trailing `*` drops the right one); regexes are
Python `re` on the normalised, case-preserved field, case-insensitive unless
`"case": "sensitive"`. The routing decision follows routing.md step by step:
the highest-precedence non-shadow rule that matched wins, no winner is
`pending/unrouted`, a paying pile without an abstract is `pending/no_text`
unless the source is a title-only source and the title is not blank.

Used by test_routing_properties.py (random rule books and pools) and
test_routing_realdata.py (real records): one reading, so the two cannot drift.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from typing import Any

TEXT_FIELDS = ("title", "abstract")

_DASHES = {c: "-" for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd"}


def norm(text: str | None, lower: bool = True) -> str | None:
    """routing.md's normalisation: NFKC, dashes to '-', lower-casing (unless lower=False), whitespace collapsed."""
    if text is None:
        return None
    text = unicodedata.normalize("NFKC", text).translate(_DASHES)
    if lower:
        text = text.lower()
    return " ".join(text.split())


@functools.cache
def phrase_re(phrase: str) -> re.Pattern:
    """A phrase as a regex on normalised text: no word character before it or after it (`*`: the word goes on)."""
    prefix = phrase.endswith("*")
    body = norm(phrase[:-1] if prefix else phrase)
    return re.compile(r"(?<!\w)" + re.escape(body) + (r"\w*" if prefix else r"(?!\w)"))


@functools.cache
def _regex(pattern: str, sensitive: bool) -> re.Pattern:
    return re.compile(pattern, 0 if sensitive else re.IGNORECASE)


def _fields(name: str) -> tuple[str, ...]:
    return TEXT_FIELDS if name == "text" else (name,)


class Row:
    """One pool row with its text fields normalised once (lower-cased and case-preserved)."""

    __slots__ = ("case", "low", "raw")

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw
        self.low = {f: norm(raw.get(f)) for f in TEXT_FIELDS}
        self.case = {f: norm(raw.get(f), lower=False) for f in TEXT_FIELDS}

    def blank(self, name: str) -> bool:
        """The field is null or blank (for `text`: both are)."""
        return all(not self.low[f] for f in _fields(name))


def holds(pred: dict, row: Row | dict) -> bool:
    """Evaluate one predicate of the rule language on one row; never null."""
    if not isinstance(row, Row):
        row = Row(row)
    if "all" in pred:
        return all(holds(p, row) for p in pred["all"])
    if "any" in pred:
        return any(holds(p, row) for p in pred["any"])
    if "not" in pred:
        return not holds(pred["not"], row)
    if "empty" in pred:
        return row.blank(pred["empty"])
    if "in" in pred:
        value = row.raw.get(pred["column"])
        return value is not None and value in pred["in"]
    fields = _fields(pred["field"])
    if "regex" in pred:
        rx = _regex(pred["regex"], pred.get("case") == "sensitive")
        return any(row.case[f] is not None and rx.search(row.case[f]) is not None for f in fields)
    phrases = [pred["phrase"]] if "phrase" in pred else pred["any_phrase"]
    return any(row.low[f] is not None and phrase_re(p).search(row.low[f]) is not None
               for f in fields for p in phrases)


@dataclass
class Routed:
    """What routing.md says about a pool: each row's fate and every count of rule_stats.json checked by the tests."""

    rows: list[dict[str, Any]]          # per row: pile, pending_reason, winner, matched, shadow_matched, title_only
    rules: dict[str, dict[str, int]]    # per rule id: matched, won, no_text, outranked, would_win, would_move,
    #                                     domain_rows, domain_matched, domain_miss
    piles: dict[str, int]
    pending: dict[str, int]
    title_only: int
    overlap: dict[tuple[str, str], int] = field(default_factory=dict)   # (a, b): rows both rules matched


def route(rules: list[dict], works: list[dict], piles: dict) -> Routed:
    """Route works with a rule book (a list of rules) and piles.json's content, the plain way."""
    kinds = {p["name"]: p["kind"] for p in piles["piles"]}
    pending_pile = next(name for name, kind in kinds.items() if kind == "pending")
    paying = {name for name, kind in kinds.items() if kind == "screen"}
    title_only_sources = set(piles.get("title_only_sources", ["osf"]))
    rules = sorted(rules, key=lambda r: -r["precedence"])
    ids = [r["id"] for r in rules]
    counts = {rid: {"matched": 0, "won": 0, "no_text": 0, "outranked": 0, "would_win": 0, "would_move": 0,
                    "domain_rows": 0, "domain_matched": 0, "domain_miss": 0} for rid in ids}
    pile_counts = {name: 0 for name in kinds}
    pending = {"unrouted": 0, "no_text": 0}
    overlap = {(a, b): 0 for a in ids for b in ids}
    out, title_only_rows = [], 0

    for work in works:
        row = Row(work)
        hit = [r for r in rules if holds(r["match"], row)]           # in precedence order
        live = [r for r in hit if not r.get("shadow")]
        winner = live[0] if live else None
        no_text = row.blank("abstract") and not (row.raw.get("source") in title_only_sources
                                                 and not row.blank("title"))

        def final(rule: dict | None, no_text: bool = no_text) -> tuple[str, str | None]:
            """Step 3 to 5 of the decision: the pile a winner sends the row to, the no_text policy applied."""
            if rule is None:
                return pending_pile, "unrouted"
            if rule["pile"] in paying and no_text:
                return pending_pile, "no_text"
            return rule["pile"], None

        pile, reason = final(winner)
        title_only = reason is None and pile in paying and row.blank("abstract")
        pile_counts[pile] += 1
        title_only_rows += title_only
        if reason:
            pending[reason] += 1
        for a in hit:
            for b in hit:
                overlap[a["id"], b["id"]] += 1
        matched_ids = {r["id"] for r in hit}
        for r in rules:
            c, matched = counts[r["id"]], r["id"] in matched_ids
            c["matched"] += matched
            if matched and not r.get("shadow"):
                if r is not winner:
                    c["outranked"] += 1
                elif reason == "no_text":
                    c["no_text"] += 1
                else:
                    c["won"] += 1
            if matched and r.get("shadow") and (winner is None or winner["precedence"] < r["precedence"]):
                c["would_win"] += 1
                c["would_move"] += final(r)[0] != pile
            if r.get("domain") is not None and holds(r["domain"], row):
                c["domain_rows"] += 1
                c["domain_matched"] += matched
                c["domain_miss"] += (not matched) and pile in paying
        out.append({"pile": pile, "pending_reason": reason, "winner": winner["id"] if winner else None,
                    "matched": [r["id"] for r in live], "shadow_matched": [r["id"] for r in hit if r.get("shadow")],
                    "title_only": title_only})
    return Routed(out, counts, pile_counts, pending, title_only_rows, overlap)
