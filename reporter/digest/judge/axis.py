"""Axis 2 from the criteria judge's answers (docs/digest.md, "The criteria judge"): the mapping, two judges, failures.

Each fit maps onto a rule of the keyword axis whose values are the issue's,
so the seed's formula, thresholds, overrides, stricter pass and cap apply to
a judged paper exactly as to any other:

| fit | rule | value | stricter pass |
| --- | --- | --- | --- |
| in_scope | IN_SCOPE_FIT | 1.0 | 1.0 |
| borderline | REDUCED | 0.7 | 0.4 |
| partial | PARTIAL | 0.4 | 0.2 |
| out_of_scope | TRAP, FAILS_REQUIRED or NOT_IN_SCOPE, by the section of the line it cites | 0.0 | 0.0 |
| silent | SILENT (tag `criteria-silent`, never KEEP) | 0.7 | 0.7 |

With two judges the lower value counts (in either pass: the order of the
values is the same in both); the fit that gives it decides, its lines cited
first. When one is silent and the other is not, or their fits are two or
more steps apart on out_of_scope < partial < borderline < in_scope, the
paper is tagged `judges-disagree` and is never KEEP. When a judge failed,
the keyword rule decides (silent when the document has no terms), tagged
`judge-failed`, never KEEP; when a judge has not answered (`--keyword-fallback`),
the keyword rule decides, tagged `judge-missing`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..axes import (FAILS_REQUIRED, IN_SCOPE_FIT, JUDGE_FAILED, JUDGE_MISSING, JUDGES_DISAGREE, NOT_IN_SCOPE, PARTIAL,
                    PARTLY, REDUCED, REQUIRED_UNCONFIRMED, SILENT, TRAP, CriteriaAxis, criteria_axis)
from ..criteria import IN_SCOPE, OUT_OF_SCOPE, REQUIRED, Concept, Criteria
from ...pool.record import Record
from ..records import MISSING, Decision, JudgeEntry

SCALE = ("out_of_scope", "partial", "borderline", "in_scope")
"""The fits other than silent, in order: two judges two or more steps apart disagree."""
RULES = {"in_scope": IN_SCOPE_FIT, "borderline": REDUCED, "partial": PARTIAL, "silent": SILENT}
"""The keyword axis's rule each fit scores as (out_of_scope: by the section it cites, `out_of_scope_rule`)."""
WORDS = {"in_scope": "judged in scope", "borderline": "judged borderline", "partial": "judged a partial fit",
         "out_of_scope": "judged out of scope", "silent": "the judge found the criteria silent"}
"""A fit as a rationale's head says it."""
REASON_CHARS = 200
"""A judge's reason is quoted up to its first sentence, and at most this many characters."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
"""A sentence ends at `.`, `!` or `?` before white space and a capital (not in "e.g. for")."""


def fits_disagree(a: str, b: str) -> bool:
    """Two fits disagree: one is silent and the other is not, or they are two or more steps apart on SCALE."""
    if (a == "silent") != (b == "silent"):
        return True
    return a != "silent" and abs(SCALE.index(a) - SCALE.index(b)) >= 2


def fit_rule(fit: str, cited: Sequence[Concept]) -> str:
    """The keyword axis's rule a fit scores as: out_of_scope is a trap when it cites an Out of scope concept,
    fails required when it cites a Required one, else not in scope."""
    if fit != "out_of_scope":
        return RULES[fit]
    sections = {c.section for c in cited}
    return TRAP if OUT_OF_SCOPE in sections else FAILS_REQUIRED if REQUIRED in sections else NOT_IN_SCOPE


def rule_fit(rule: str) -> str:
    """The fit a keyword rule amounts to (what the keyword-against-judge table compares)."""
    return {IN_SCOPE_FIT: "in_scope", REDUCED: "borderline", REQUIRED_UNCONFIRMED: "borderline", PARTIAL: "partial",
            PARTLY: "partial", SILENT: "silent"}.get(rule, "out_of_scope")


def first_sentence(text: str) -> str:
    """A reason as a rationale quotes it: one line, up to its first sentence's end, at most REASON_CHARS."""
    one = " ".join(text.split())
    one = _SENTENCE_END.split(one, 1)[0]
    return one if len(one) <= REASON_CHARS else one[:REASON_CHARS - 1].rstrip() + "\u2026"


@dataclass(frozen=True)
class JudgedCriteria(CriteriaAxis):
    """Axis 2 of a paper with a judge configured: decided by the judges' answers, or by the keyword rule when a
    judge failed or has not answered (`keyword` then decides, and says so)."""

    fit: str = ""
    """The fit that decided ("" when the keyword rule did)."""
    keyword: CriteriaAxis | None = None
    """The keyword rule's axis for the paper (what decides when a judge failed or is missing)."""

    @property
    def words(self) -> str:
        """The rule in the rationale's head ("" when the keyword rule decided: its own words)."""
        return WORDS[self.fit] if self.source == "judge" else ""

    def describe(self, criteria: Criteria, strict: bool = False) -> str:
        """Who judged what, the lines cited and each reason (its first sentence); or why the keyword rule decided."""
        if self.source != "judge":
            why = " and ".join(_failure(j) for j in self.judges if j.failure is not None)
            return f"the keyword rule decided, as {why}: {self.keyword.describe(criteria, strict)}"
        parts = [_judged(j, criteria) for j in self.judges]
        text = "judged by " + ", and by ".join(parts)
        if len(self.judges) > 1:
            text += f", the lower ({self.fit.replace('_', ' ')}) counts"
            if JUDGES_DISAGREE in self.flags:
                text += ", and the judges disagree"
        if self.rule == SILENT:
            text += " (0.70 is a stand-in, not a fit)"
        if strict and self.value(True) != self.value(False):
            text += f" (stricter pass: {self.value(True) / 100:.2f}, {self.value(False) / 100:.2f} before)"
        return text


def judged_axis(keyword: CriteriaAxis, entries: Sequence[JudgeEntry], criteria: Criteria) -> JudgedCriteria:
    """Axis 2 from one paper's judge entries (one per judge), with the keyword rule's axis for a failure."""
    entries = tuple(entries)
    flags = tuple(f for f, on in ((JUDGE_FAILED, any(j.failure not in (None, MISSING) for j in entries)),
                                  (JUDGE_MISSING, any(j.failure == MISSING for j in entries))) if on)
    if flags:
        return JudgedCriteria(keyword.rule, keyword.cited, keyword.in_scope, source="keyword", flags=flags,
                              judges=entries, keyword=keyword)
    by_line = {c.line: c for c in criteria.concepts}
    deciding = min(entries, key=lambda j: _values(j, by_line))
    cited: dict[Concept, None] = {}
    for j in (deciding, *(j for j in entries if j is not deciding)):
        cited.update((by_line[x], None) for x in j.criteria_lines if x in by_line)
    mine = [by_line[x] for x in deciding.criteria_lines if x in by_line]
    rule = fit_rule(deciding.fit, mine)
    if rule in (TRAP, FAILS_REQUIRED):  # the line that made it so is quoted first
        section = OUT_OF_SCOPE if rule == TRAP else REQUIRED
        cited = dict.fromkeys(sorted(cited, key=lambda c: c.section != section or c not in mine))
    apart = len(entries) == 2 and fits_disagree(entries[0].fit, entries[1].fit)
    return JudgedCriteria(rule, tuple(cited), tuple(c for c in cited if c.section == IN_SCOPE), source="judge",
                          flags=(JUDGES_DISAGREE,) if apart else (), judges=entries, fit=deciding.fit,
                          keyword=keyword)


def _values(entry: JudgeEntry, by_line: dict[int, Concept]) -> tuple[int, int]:
    """A fit's (first-pass, stricter-pass) hundredths: the lower pair decides between two judges."""
    probe = CriteriaAxis(fit_rule(entry.fit, [by_line[x] for x in entry.criteria_lines if x in by_line]), ())
    return probe.value(False), probe.value(True)


def _judged(j: JudgeEntry, criteria: Criteria) -> str:
    lines = [c for c in criteria.concepts if c.line in j.criteria_lines]
    per = f" per {', '.join(criteria.cite(c) for c in lines)}" if lines else ""
    return f'{j.voter} ({j.model}) {j.fit.replace("_", " ")}{per} ("{first_sentence(j.reason)}")'


def _failure(j: JudgeEntry) -> str:
    if j.failure == MISSING:
        return f"judge {j.voter} ({j.model}) has not answered yet (--keyword-fallback)"
    return f"judge {j.voter} ({j.model}) failed ({j.failure}: {first_sentence(j.reason)})"



DISAGREEMENT_NOTE = ("surfaced, never applied: papers the judge decided where the keyword rule and the judge both "
                     "speak and are two or more steps apart on out_of_scope < partial < borderline < in_scope; "
                     "the papers where only one of them speaks are counted")


def keyword_disagreements(records: Sequence[Record], criteria: Criteria, entries: Mapping[str, Sequence[JudgeEntry]],
                          decisions: Sequence[Decision]) -> dict | None:
    """Where the keyword rule and the judge disagree on the papers the judge decided: both speak (neither is
    silent) and their fits are two or more steps apart; where only one speaks, counted. Surfaced in
    decisions.json, never applied. None when the document has no backticked terms (no keyword rule to compare)."""
    if not any(c.terms for c in criteria.concepts):
        return None
    decided = {d.id: d for d in decisions}
    rows, silent = [], Counter()
    for record, keyword in zip(records, criteria_axis(records, criteria)):
        judged = judged_axis(keyword, entries[record.id], criteria)
        if judged.source != "judge":
            continue
        fit = rule_fit(keyword.rule)
        if (fit == "silent") != (judged.fit == "silent"):
            silent["keyword_silent" if fit == "silent" else "judge_silent"] += 1
        if "silent" in (fit, judged.fit) or not fits_disagree(fit, judged.fit):
            continue
        d = decided[record.id]
        rows.append({"id": record.id, "title": record.title, "decision": d.decision,
                     "keyword": {"fit": fit, "criteria_lines": sorted({c.line for c in keyword.cited})},
                     "judge": {"fit": judged.fit, "criteria_lines": list(d.criteria_lines)}})
    return {"note": DISAGREEMENT_NOTE, "papers": sorted(rows, key=lambda r: r["id"]),
            "keyword_silent": silent["keyword_silent"], "judge_silent": silent["judge_silent"]}
