"""The three axes of docs/design/digest.md, each defined once: match, criteria fit, novelty.

Every axis value is an integer number of hundredths (0-100), so the score
can be computed exactly; `Axes` carries them as two-decimal floats. Terms
and watchlist phrases are matched only with `reporter.routing.match_phrases`,
one call per field (title, abstract) for the whole week, over one list: the
watchlist's phrases and every criteria term of every concept (`count_terms`).
Each axis (and the relevance measure) reads its own columns of those counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from ..pool.record import Record
from ..routing import match_phrases
from .criteria import IN_SCOPE, OUT_OF_SCOPE, PARTLY_IN_SCOPE, REDUCED_FIT, REQUIRED, Concept, Criteria
from .merge import normalize_title
from .records import EARLIER_VERSION_NOVELTY, SILENT_CRITERIA, JudgeEntry
from .watchlist import Watchlist

TITLE_MATCH = 0.9
"""Two normalised titles match when their Levenshtein normalized similarity is above this."""


def hundredths(value: Decimal) -> int:
    """A value in [0, 1] (or a product such as 0.7 x 1.5) as whole hundredths, rounded half up, capped at 100.

    The cap comes first: a product of any size (a weight of 1e308) is 100, never rounded (Decimal's
    quantize refuses a result wider than its precision).
    """
    scaled = value * 100
    if scaled >= 100:
        return 100
    return int(scaled.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def has_abstract(record: Record) -> bool:
    """The record has an abstract with some text in it."""
    return bool(record.abstract and record.abstract.strip())


@dataclass(frozen=True, eq=False)
class TermCounts:
    """Occurrences of terms in every record's title and in its abstract, as the one phrase matcher counts them."""

    terms: tuple[str, ...]
    """The phrases, each once (the columns)."""
    title: np.ndarray
    """int64 (records, terms): occurrences in the title."""
    abstract: np.ndarray
    """int64 (records, terms): occurrences in the abstract (0 without one)."""
    _column: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_column", {t: j for j, t in enumerate(self.terms)})

    def of(self, terms: Sequence[str]) -> TermCounts:
        """The counts of some of the terms, in the order given (KeyError for a term not counted)."""
        cols = [self._column[t] for t in terms]
        return TermCounts(tuple(terms), self.title[:, cols], self.abstract[:, cols])


def count_terms(records: Sequence[Record], terms: Sequence[str]) -> TermCounts:
    """Every term over every title and every abstract: one match_phrases call per field."""
    terms = tuple(dict.fromkeys(terms))
    return TermCounts(terms, match_phrases([r.title for r in records], terms).counts(),
                      match_phrases([r.abstract for r in records], terms).counts())


def week_terms(watchlist: Watchlist, criteria: Criteria) -> tuple[str, ...]:
    """The one term list of a week: the watchlist's phrases, then every criteria term, each once."""
    return tuple(dict.fromkeys([*watchlist.phrases, *(t for c in criteria.concepts for t in c.terms)]))


# Axis 1: match ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchAxis:
    """Axis 1 for one paper: which watchlist entries matched where, and the value."""

    value: int
    """Hundredths: the base (0, 50, 70, 100) times the largest matched weight, capped at 100."""
    base: int
    """Hundredths before the weight."""
    entries: tuple[str, ...]
    """The matched entries (D = their number), in watchlist order."""
    in_title: tuple[str, ...]
    """The entries found in the title (T)."""
    abstract_hits: int
    """Occurrences of entries in the abstract (A), summed over the entries."""
    weight: float
    """The largest weight among the matched entries (1.0 when none matched)."""
    in_abstract: tuple[str, ...] = ()
    """The entries found in the abstract."""

    def describe(self) -> str:
        """Where the entries matched (`'LLM' in the title`); the value is the rationale's head's."""
        if not self.entries:
            return "no watchlist phrase in the title or abstract"
        where = []
        if self.in_title:
            where.append(f"{_quoted(self.in_title)} in the title")
        if self.abstract_hits:
            times = "once" if self.abstract_hits == 1 else f"{self.abstract_hits} times"
            where.append(f"{_quoted(self.in_abstract)} {times} in the abstract")
        text = " and ".join(where)
        if self.weight != 1.0:
            text += f" (weight {self.weight:g})"
        return text


def match_base(in_title: bool, abstract_hits: int, distinct: int) -> int:
    """The match rule before the weight, in hundredths (digest.md, Axis 1)."""
    if distinct == 0:
        return 0
    if (in_title and abstract_hits >= 1) or distinct >= 2:
        return 100
    if in_title or abstract_hits >= 2:
        return 70
    return 50


def match_axis(records: Sequence[Record], watchlist: Watchlist, counts: TermCounts | None = None) -> list[MatchAxis]:
    """Axis 1 for every record, from `counts` (default: count_terms of the watchlist's phrases)."""
    phrases = watchlist.phrases
    weights = [Decimal(repr(e.weight)) for e in watchlist.entries]
    counts = (count_terms(records, phrases) if counts is None else counts).of(phrases)
    title, abstract = counts.title, counts.abstract
    out = []
    for i in range(len(records)):
        hit = (title[i] > 0) | (abstract[i] > 0)
        matched = [j for j in range(len(phrases)) if hit[j]]
        base = match_base(bool(title[i].any()), int(abstract[i].sum()), len(matched))
        weight = max((weights[j] for j in matched), default=Decimal(1))
        out.append(MatchAxis(hundredths(Decimal(base) / 100 * weight), base, tuple(phrases[j] for j in matched),
                             tuple(phrases[j] for j in matched if title[i, j]), int(abstract[i].sum()),
                             float(weight), tuple(phrases[j] for j in matched if abstract[i, j])))
    return out


# Axis 2: criteria fit -----------------------------------------------------------------------------------

SILENT, TRAP, NOT_IN_SCOPE, FAILS_REQUIRED, REDUCED, IN_SCOPE_FIT, PARTIAL = (
    "criteria-silent", "look-alike-trap", "not-in-scope", "fails-required", "reduced-fit", "in-scope", "partial")
PARTLY, REQUIRED_UNCONFIRMED = "partly-in-scope", "required-unconfirmed"
"""Rules 3 (only a Partly in scope concept matched) and 4 (a Required concept has no term: borderline, not a
fail) of digest.md since rules `digest.4`; only a criteria judge's answer gives FAILS_REQUIRED."""
CRITERIA_VALUES = {SILENT: (SILENT_CRITERIA, SILENT_CRITERIA), TRAP: (0, 0), NOT_IN_SCOPE: (0, 0), FAILS_REQUIRED: (0, 0),
                   PARTLY: (40, 20), REQUIRED_UNCONFIRMED: (70, 40),
                   REDUCED: (70, 40), IN_SCOPE_FIT: (100, 100), PARTIAL: (40, 20)}
"""Per rule: (hundredths in the first pass, hundredths in the stricter pass)."""
JUDGES_DISAGREE, JUDGE_FAILED, JUDGE_MISSING = "judges-disagree", "judge-failed", "judge-missing"
"""The criteria judge's tags (reporter.digest.judge.axis): two judges apart, a judge's failure (the keyword rule
decided), a judge that has not answered (`--keyword-fallback`: the keyword rule decided)."""
NEVER_KEEP_FLAGS = (JUDGES_DISAGREE, JUDGE_FAILED)
"""The judge's tags that keep a paper from KEEP."""


@dataclass(frozen=True)
class ConceptHit:
    """How one concept's terms occurred in one paper."""

    concept: Concept
    in_title: bool
    """A term of the concept occurs in the title."""
    abstract_hits: int
    """Occurrences of the concept's terms in the abstract."""

    @property
    def matched(self) -> bool:
        return self.in_title or self.abstract_hits > 0


@dataclass(frozen=True)
class CriteriaAxis:
    """Axis 2 for one paper: the rule that decided it and the concepts it came from."""

    rule: str
    """SILENT, TRAP, NOT_IN_SCOPE, PARTLY, REQUIRED_UNCONFIRMED, FAILS_REQUIRED (a judge's), REDUCED, IN_SCOPE_FIT
    or PARTIAL."""
    cited: tuple[Concept, ...]
    """The concepts the score came from (quoted by the rationale, their lines in `criteria_lines`)."""
    in_scope: tuple[Concept, ...] = ()
    """Every In scope concept matched anywhere (what watchlist drift counts), whatever the rule."""
    source: str = "keyword"
    """What decided: `keyword` (this rule) or `judge` (the criteria judge's answers, `judge.axis`)."""
    flags: tuple[str, ...] = ()
    """The judge's tags: JUDGES_DISAGREE, JUDGE_FAILED, JUDGE_MISSING."""
    judges: tuple[JudgeEntry, ...] = ()
    """Each configured judge's answer or failure (() without a judge)."""

    @property
    def never_keep(self) -> bool:
        """The judges disagree, or one failed: the paper is never KEEP."""
        return any(f in NEVER_KEEP_FLAGS for f in self.flags)

    def value(self, strict: bool = False) -> int:
        """Hundredths, in the first pass or the stricter pass."""
        return CRITERIA_VALUES[self.rule][strict]

    def describe(self, criteria: Criteria, strict: bool = False) -> str:
        """The rule and the lines it came from (the value is the rationale's head's); the stricter pass's change."""
        quotes = ", ".join(criteria.cite(c) for c in self.cited)
        text = {
            SILENT: f"silent: no In scope, Out of scope{', Partly in scope' * bool(criteria.section(PARTLY_IN_SCOPE))}"
                    f" or Reduced fit concept matched (0.70 is a stand-in, not a fit)",
            TRAP: f"out of scope {quotes}, and no In scope concept in the title",
            NOT_IN_SCOPE: f"not in scope: no In scope concept matched, only {quotes}",
            PARTLY: f"partly in scope {quotes}, and no In scope concept matched",
            REQUIRED_UNCONFIRMED: (f"required unconfirmed {_cited(criteria, self.cited, REQUIRED)}: no term of it in "
                                   f"the title or abstract, which is no evidence of failing it (borderline); in "
                                   f"scope {_cited(criteria, self.cited, IN_SCOPE)}"),
            FAILS_REQUIRED: f"fails required {quotes} (no term in the title or abstract)",
            REDUCED: f"reduced fit {quotes}",
            IN_SCOPE_FIT: f"in scope {quotes}",
            PARTIAL: f"partial: in scope {quotes} once, in the abstract only",
        }[self.rule]
        if strict and self.value(True) != self.value(False):
            text += f" (stricter pass: {self.value(True) / 100:.2f}, {self.value(False) / 100:.2f} before)"
        return text


def criteria_rule(hits: Sequence[ConceptHit], abstract_present: bool,
                  in_scope_abstract_hits: int | None = None) -> CriteriaAxis:
    """The criteria rules 1-7 of digest.md, in order, over one paper's concept hits.

    `in_scope_abstract_hits`: occurrences of In scope terms in the abstract, summed
    over the distinct terms (default: summed over the concepts' hits).
    """
    def of(section: str) -> list[ConceptHit]:
        return [h for h in hits if h.concept.section == section and h.matched]

    in_scope, out, reduced, partly = of(IN_SCOPE), of(OUT_OF_SCOPE), of(REDUCED_FIT), of(PARTLY_IN_SCOPE)
    matched = tuple(h.concept for h in in_scope)
    in_title = [h.concept for h in in_scope if h.in_title]
    if not (in_scope or out or reduced or partly):
        return CriteriaAxis(SILENT, ())
    if out and not in_title:
        return CriteriaAxis(TRAP, (out[0].concept,), matched)
    if not in_scope:
        if partly:  # the reader's "partly in scope": the seed's partial fit, never a drop by the criteria
            return CriteriaAxis(PARTLY, tuple(h.concept for h in partly))
        return CriteriaAxis(NOT_IN_SCOPE, tuple(h.concept for h in reduced))
    if abstract_present:
        # An absent keyword is absence of evidence, not evidence of failing: borderline, quoting the concept.
        missing = tuple(h.concept for h in hits if h.concept.section == REQUIRED and not h.matched)
        if missing:
            return CriteriaAxis(REQUIRED_UNCONFIRMED, missing + matched, matched)
    if reduced:
        return CriteriaAxis(REDUCED, tuple(h.concept for h in reduced) + matched, matched)
    abstract_hits = sum(h.abstract_hits for h in in_scope) if in_scope_abstract_hits is None \
        else in_scope_abstract_hits
    return CriteriaAxis(IN_SCOPE_FIT if in_title or abstract_hits >= 2 else PARTIAL, matched, matched)


def criteria_axis(records: Sequence[Record], criteria: Criteria,
                  counts: TermCounts | None = None) -> list[CriteriaAxis]:
    """Axis 2 for every record, from `counts` (default: count_terms of every criteria term)."""
    terms = list(dict.fromkeys(t for c in criteria.concepts for t in c.terms))
    column = {t: j for j, t in enumerate(terms)}
    cols = [[column[t] for t in dict.fromkeys(c.terms)] for c in criteria.concepts]
    counts = (count_terms(records, terms) if counts is None else counts).of(terms)
    title, abstract = counts.title, counts.abstract
    in_scope_terms = [column[t] for t in dict.fromkeys(t for c in criteria.section(IN_SCOPE) for t in c.terms)]
    # A concept of prose alone (a criteria judge reads it) is not the keyword rule's: it never matches.
    keyed = [(c, js) for c, js in zip(criteria.concepts, cols) if c.terms]
    in_title = [title[:, js].any(axis=1).tolist() for _, js in keyed]  # each concept's, every record at once
    hits_in_abstract = [abstract[:, js].sum(axis=1).tolist() for _, js in keyed]
    in_scope = abstract[:, in_scope_terms].sum(axis=1).tolist()  # a term two In scope concepts share counts once
    return [criteria_rule([ConceptHit(c, in_title[k][i], hits_in_abstract[k][i]) for k, (c, _) in enumerate(keyed)],
                          has_abstract(record), in_scope[i])
            for i, record in enumerate(records)]


def _cited(criteria: Criteria, cited: Sequence[Concept], section: str) -> str:
    """The cited concepts of one section, quoted (rule 4 quotes its Required ones, then the In scope ones)."""
    return ", ".join(criteria.cite(c) for c in cited if c.section == section)


# Axis 3: novelty ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriorKeep:
    """A KEEP of one of the four weeks before: what novelty is judged against."""

    id: str
    title: str
    week: str
    """The ISO week (`YYYY-Www`) that kept it."""


@dataclass(frozen=True)
class NoveltyAxis:
    """Axis 3 for one paper."""

    value: int
    """Hundredths: 0 already covered, 50 an earlier version covered, 100 novel."""
    covered_by: PriorKeep | None = None
    """The prior KEEP that covered it (the newest week's, ties by id)."""
    how: str = ""
    """`id`, `related id` or `title`: what tied it to that KEEP."""

    def describe(self) -> str:
        """The novelty part of a rationale, naming the prior week (the value is the rationale's head's)."""
        if self.covered_by is None:
            return "not in the prior four weeks"
        kept = f"{self.covered_by.id} kept in {self.covered_by.week}"
        if self.value == 0:
            return f"already covered ({kept})"
        return f"an earlier version was covered ({kept}, matched by {self.how})"


def _similar(a: str, b: str) -> bool:
    """normalized_similarity(a, b) > 0.9, decided exactly: 1 - d / L > 0.9 is 10 d < L. Empty titles never match."""
    longest = max(len(a), len(b))
    return bool(a and b) and 10 * Levenshtein.distance(a, b) < longest


def novelty_axis(records: Sequence[Record], prior: Sequence[PriorKeep]) -> list[NoveltyAxis]:
    """Axis 3 for every record against the prior KEEPs (an empty prior: every paper is novel)."""
    prior = sorted(prior, key=lambda p: (_week_desc(p.week), p.id))  # newest week first, then id
    by_id: dict[str, PriorKeep] = {}
    for p in prior:
        by_id.setdefault(p.id, p)
    similar = _title_matches([r.title for r in records], [p.title for p in prior])
    out = []
    for i, record in enumerate(records):
        if record.id in by_id:
            out.append(NoveltyAxis(0, by_id[record.id], "id"))
            continue
        related = [by_id[x] for x in record.related_ids if x in by_id]
        if related:
            out.append(NoveltyAxis(EARLIER_VERSION_NOVELTY, min(related, key=lambda p: (_week_desc(p.week), p.id)),
                                   "related id"))
        elif similar[i] is not None:
            out.append(NoveltyAxis(EARLIER_VERSION_NOVELTY, prior[similar[i]], "title"))
        else:
            out.append(NoveltyAxis(100))
    return out


PAIRS_PER_CALL = 20_000_000
"""Pairs one cdist call compares at most (80 MB of float32 scores)."""


def _title_matches(titles: list[str], prior_titles: list[str]) -> list[int | None]:
    """Per title: the first prior title (in the order given) it matches, or None.

    Similarity above 0.9 needs the lengths within 10% of each other (the
    distance is at least the length difference), so each title is compared
    only with the prior titles in its length window: a week of 10,000 titles
    against 100,000 prior ones compares a small fraction of the pairs, in
    bounded memory. cdist finds the candidates on every core; each is then
    decided exactly by _similar (no float at the boundary).
    """
    out: list[int | None] = [None] * len(titles)
    if not titles or not prior_titles:
        return out
    a = [normalize_title(t) for t in titles]
    b = [normalize_title(t) for t in prior_titles]
    order = np.array(sorted(range(len(b)), key=lambda j: (len(b[j]), j)), dtype=np.int64)
    lengths = np.array([len(b[j]) for j in order], dtype=np.int64)
    ordered = [b[j] for j in order]
    by_length: dict[int, list[int]] = {}
    for i, t in enumerate(a):
        if t:
            by_length.setdefault(len(t), []).append(i)
    for n, rows in sorted(by_length.items()):
        # 10 d < max(n, m) with d >= |n - m| bounds m to (0.9 n, n / 0.9): a slightly wider window is safe.
        lo = int(np.searchsorted(lengths, int(n * 0.9), side="left"))
        hi = int(np.searchsorted(lengths, int(n / 0.9) + 1, side="right"))
        if lo >= hi:
            continue
        step = max(1, PAIRS_PER_CALL // (hi - lo))
        for k in range(0, len(rows), step):
            chunk = rows[k:k + step]
            sim = process.cdist([a[i] for i in chunk], ordered[lo:hi], scorer=Levenshtein.normalized_similarity,
                                score_cutoff=TITLE_MATCH - 0.01, dtype=np.float32, workers=-1)
            for i, row in zip(chunk, sim):
                hits = sorted(int(order[lo + j]) for j in np.flatnonzero(row))
                out[i] = next((j for j in hits if _similar(a[i], b[j])), None)
    return out


def _week_desc(week: str) -> tuple[int, int]:
    year, w = week.split("-W")
    return (-int(year), -int(w))


def _quoted(phrases: Sequence[str]) -> str:
    return ", ".join(f"'{p}'" for p in phrases)
