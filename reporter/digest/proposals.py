"""Proposals from the reader's marks, each with a forecast over the archive, never applied (guardrail 5).

`propose(weeks, marks, watchlist, criteria)`:

- **watchlist** proposals: phrases of two or three words (no stop word) from
  the titles of wanted papers that were not KEEP, not already a watchlist
  phrase;
- **criteria** proposals: the best of those as an In scope concept, and, from
  the titles of KEEPs marked not wanted, phrases no wanted paper holds as an
  Out of scope concept (an exclusion).

Each is forecast over every paper the archive decided (`papers`): `matched`
(the papers it matches, in the title or the abstract), `wanted` and
`not_wanted` among them (the latest mark of each), `would_keep` (papers not
KEEP that would have reached their week's KEEP threshold, or for an
exclusion `would_drop_keep`, KEEPs that would have fallen below it). The
forecast is the digest's own: the phrases are counted by the one matcher in
one call per field (`axes.count_terms`, `reporter.routing.match_phrases`), the
new match or criteria value is the digest's axis (`match_axis`,
`criteria_axis`) over the watchlist or criteria with the proposal added, and
the score the digest's formula (`decide.combine`) with the other two axes as
the week recorded them. A paper that the week never let be KEEP (already
covered, no abstract, criteria silent, the judges disagreeing or failing)
stays so. The cap is not forecast: a paper over the threshold may still be
demoted by `max_kept`.

The reader applies a proposal by editing the watchlist or the criteria; the
tool never does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..pool.record import Record
from ..routing import match_phrases
from .archive import ArchivedWeek
from .axes import SILENT, TermCounts, count_terms, criteria_axis, match_axis, week_terms
from .criteria import IN_SCOPE, OUT_OF_SCOPE, Concept, Criteria
from .decide import combine
from .feedback import Mark, Paper, latest, papers
from .watchlist import WatchEntry, Watchlist

SHOWN = {"watchlist": 10, "criteria": 5}
"""The most proposals of each kind listed."""
CANDIDATES = 40
"""Candidate phrases forecast in full (the most wanted papers matched first)."""
NEVER_KEEP = frozenset({"already-covered", "no-abstract", "criteria-silent", "judges-disagree", "judge-failed"})
"""Tags of a paper its week never let be KEEP, whatever the score."""
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how in into is it its of on or over the their this to toward "
    "towards under via what when where which why with without we our using based new".split())
_WORD = re.compile(r"[^\W_][\w-]*")
NOTE = "surfaced, never applied: the reader applies a proposal by editing the watchlist or the criteria"


def propose(weeks: Sequence[ArchivedWeek], marks: Iterable[Mark], watchlist: Watchlist,
            criteria: Criteria) -> dict[str, Any]:
    """The proposals, each with its forecast over the archive's weeks."""
    marked = latest(marks)
    known = list(papers(weeks).values())
    names = [w.week for w in weeks]
    wanted = [p for p in known if _mark(marked, p) == "wanted"]
    missed = [p for p in wanted if p.decision.decision != "KEEP"]
    unwanted_keeps = [p for p in known if _mark(marked, p) == "not-wanted" and p.decision.decision == "KEEP"]
    have = {x.lower() for x in watchlist.phrases}
    grow = [c for c in _phrases(p.decision.title for p in missed) if c not in have]
    wanted_text = " ".join(f"{p.decision.title} {p.decision.abstract or ''}".lower() for p in wanted)
    shrink = [c for c in _phrases(p.decision.title for p in unwanted_keeps) if c not in have and c not in wanted_text]
    records = [Record(id=p.id, title=p.decision.title, abstract=p.decision.abstract) for p in known]
    counts = count_terms(records, list(dict.fromkeys([*week_terms(watchlist, criteria), *grow, *shrink])))
    thresholds = {w.week: w.head.settings.keep_threshold for w in weeks}
    forecast = _Forecast(known, records, counts, marked, thresholds, watchlist, criteria)
    proposals = []
    ranked = forecast.rank(grow)
    watch = [forecast.as_entry(c) for c in ranked]
    proposals += _best(watch, SHOWN["watchlist"])
    terms = {t.lower() for c in criteria.concepts for t in c.terms}  # a concept already has these
    inside = [forecast.as_concept(c, IN_SCOPE) for c in ranked if c not in terms][:SHOWN["criteria"] * 2]
    outside = [forecast.as_concept(c, OUT_OF_SCOPE) for c in forecast.rank(shrink, against=True) if c not in terms]
    proposals += _best(inside, SHOWN["criteria"]) + _best(outside, SHOWN["criteria"])
    return {"note": NOTE, "weeks": names, "wanted": len(wanted), "wanted_not_keep": len(missed),
            "not_wanted_keep": len(unwanted_keeps), "proposals": proposals}


class _Forecast:
    """What one phrase, added to the watchlist or the criteria, would have changed over the archive."""

    def __init__(self, known: list[Paper], records: list[Record], counts: TermCounts, marked: dict[str, Mark],
                 thresholds: dict[str, int], watchlist: Watchlist, criteria: Criteria):
        self.known, self.records, self.counts, self.marked = known, records, counts, marked
        self.thresholds, self.watchlist, self.criteria = thresholds, watchlist, criteria
        self.weeks = sorted({p.week for p in known})

    def hits(self, phrase: str) -> np.ndarray:
        """The indexes of the papers the phrase matches, in the title or the abstract."""
        one = self.counts.of([phrase])
        return np.flatnonzero((one.title[:, 0] > 0) | (one.abstract[:, 0] > 0))

    def rank(self, phrases: Sequence[str], against: bool = False) -> list[str]:
        """The candidates to forecast in full: most wanted (or, `against`, most not wanted) papers matched first,
        then fewest of the other, then fewest matched, then the phrase."""
        def key(phrase: str) -> tuple[int, int, int, str]:
            marks = [_mark(self.marked, self.known[i]) for i in self.hits(phrase)]
            good, bad = marks.count("wanted"), marks.count("not-wanted")
            return ((-bad, good) if against else (-good, bad)) + (len(marks), phrase)
        keys = sorted((key(p), p) for p in phrases)
        return [p for k, p in keys if (k[0] < 0)][:CANDIDATES]

    def _row(self, kind: str, text: str, phrase: str, changed: list[tuple[int, int, bool]], lost: bool = False
             ) -> dict[str, Any]:
        hits = self.hits(phrase)
        marks = [_mark(self.marked, self.known[i]) for i in hits]
        weeks = sorted({self.known[i].week for i in hits})
        out = {"kind": kind, "text": text, "phrase": phrase, "matched": len(hits), "wanted": marks.count("wanted"),
               "not_wanted": marks.count("not-wanted"), "weeks": self.weeks, "matched_weeks": weeks,
               "would_keep": 0, "would_drop_keep": 0, "examples": sorted(self.known[i].key for i in hits)[:5]}
        for i, score, blocked in changed:
            p = self.known[i]
            keep_now = p.decision.decision == "KEEP"
            if not keep_now and score >= self.thresholds[p.week] and not blocked:
                out["would_keep"] += 1
            if lost and keep_now and score < self.thresholds[p.week]:
                out["would_drop_keep"] += 1
        return out

    def as_entry(self, phrase: str) -> dict[str, Any]:
        """The phrase as a watchlist entry of weight 1: the match axis again, the week's criteria and novelty."""
        hits = self.hits(phrase)
        plus = replace(self.watchlist, entries=(*self.watchlist.entries, WatchEntry(phrase)))
        sub = TermCounts(self.counts.terms, self.counts.title[hits], self.counts.abstract[hits])
        match = match_axis([self.records[i] for i in hits], plus, sub)
        changed = [(i, combine(m.value, _hundredths(self.known[i].decision.axes.criteria),
                               _hundredths(self.known[i].decision.axes.novelty)),
                     bool(set(self.known[i].decision.tags) & NEVER_KEEP)) for i, m in zip(hits, match)]
        return self._row("watchlist", phrase, phrase, changed)

    def as_concept(self, phrase: str, section: str) -> dict[str, Any]:
        """The phrase as a concept of `section` (In scope, or Out of scope for an exclusion): the criteria axis
        again by the keyword rule, the week's match and novelty. A paper the criteria judge decided keeps its
        criteria value (the judge read the document; a forecast cannot ask it)."""
        hits = self.hits(phrase)
        title = "In scope" if section == IN_SCOPE else "Out of scope"
        line = max((c.line for c in self.criteria.concepts), default=0) + 1
        plus = replace(self.criteria, concepts=(*self.criteria.concepts, Concept(section, phrase, (phrase,), line)))
        sub = TermCounts(self.counts.terms, self.counts.title[hits], self.counts.abstract[hits])
        fits = criteria_axis([self.records[i] for i in hits], plus, sub)
        changed = []
        for i, fit in zip(hits, fits):
            d = self.known[i].decision
            if d.criteria_source == "judge":
                continue
            # The criteria speak now (the concept matched): only the week's other never-KEEP reasons hold.
            blocked = fit.rule == SILENT or bool((set(d.tags) - {"criteria-silent"}) & NEVER_KEEP)
            changed.append((i, combine(_hundredths(d.axes.match), fit.value(), _hundredths(d.axes.novelty)),
                            blocked))
        return self._row("criteria", f"{title}: - {phrase}: `{phrase}`", phrase, changed, lost=section == OUT_OF_SCOPE)


def _phrases(titles: Iterable[str]) -> list[str]:
    """Phrases of two or three words of the titles (lower case), none of them a stop word, each once;
    only those the rule language accepts."""
    found: dict[str, None] = {}
    for title in titles:
        words = _WORD.findall(title.lower())
        for n in (2, 3):
            for k in range(len(words) - n + 1):
                gram = words[k:k + n]
                if any(w in STOPWORDS for w in gram) or all(w.isdigit() for w in gram):
                    continue
                found[" ".join(gram)] = None
    accepted = list(found)
    while accepted:  # one matcher call for all; a phrase it refuses is dropped and the rest checked again
        try:
            match_phrases([], accepted)
            break
        except InputError as exc:
            bad = getattr(exc, "index", None)
            if bad is None:
                return []
            del accepted[bad]
    return accepted


def _best(rows: list[dict[str, Any]], most: int) -> list[dict[str, Any]]:
    """The proposals worth showing: more wanted than not wanted matched (for an exclusion, more not wanted), best
    first by the papers the reader marked so times the share of its matches they are, marked x (marked + 1) /
    (matched + 2): on two real weeks `evaluating llm` (18 matched, 4 wanted: 1.0) comes before a phrase of one
    wanted paper (0.67) and before `language models` (1,163 matched, 23 wanted: 0.47); then by what it would
    change, then by its text."""
    def side(r: dict[str, Any]) -> int:
        return r["not_wanted"] if r["text"].startswith("Out of scope") else r["wanted"]

    def other(r: dict[str, Any]) -> int:
        return r["wanted"] if r["text"].startswith("Out of scope") else r["not_wanted"]
    chosen = [r for r in rows if side(r) > other(r)]
    chosen.sort(key=lambda r: (-side(r) * (side(r) + 1) / (r["matched"] + 2),
                               -(r["would_keep"] + r["would_drop_keep"]), r["text"]))
    return chosen[:most]


def _mark(marked: dict[str, Mark], p: Paper) -> str | None:
    m = marked.get(p.id)
    return m.mark if m else None


def _hundredths(value: float) -> int:
    return int(round(value * 100))


__all__ = ["NOTE", "propose"]
