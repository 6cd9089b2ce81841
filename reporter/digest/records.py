"""The digest's data: a decision out (docs/design/digest.md); the paper record in is reporter.pool.record.

`Decision` and `WeekDecisions` are what `decisions.json` holds; the pages
are built from them and nothing else.
"""

from __future__ import annotations

import base64
import functools
import math
from dataclasses import dataclass, field
from typing import Any

from ..hashing import sha256_text


DECISIONS = ("KEEP", "REVIEW", "DROP")
DROP_CAUSES = ("already-covered", "look-alike-trap", "fails-required", "not-in-scope", "weak-match")
"""Why a paper was dropped, in the order the digest page groups them."""
REVIEW_REASONS = ("over-cap", "rescued", "no-abstract", "judges-disagree", "judge-failed", "judge-missing",
                  "criteria-silent", "fails-required", "look-alike-trap", "earlier-version", "near-threshold", "other")
"""Why a REVIEW waits for a reader (`review_reason` of decisions.json), in the order the week page groups them:
a paper's reason is the first of these that fits (`review_reason_of`)."""
SILENT_CRITERIA = 70
"""Hundredths: the criteria value of a paper no concept of the criteria matched (`criteria-silent`), in both
passes: a stand-in, not a fit, so such a paper is never KEEP."""
EARLIER_VERSION_NOVELTY = 50
"""Hundredths: the novelty of a paper a prior week kept another version of (tag `journal-version-of:`)."""
CRITERIA_CAUSES = ("look-alike-trap", "not-in-scope", "fails-required")
"""The drop causes that are the criteria's doing (a rationale quotes the criteria line)."""
CRITERIA_SOURCES = ("judge", "keyword")
"""What decided a paper's Axis 2: the criteria judge's answers, or the keyword rule."""
MISSING = "missing"
"""A judge's failure cause when it has not answered the paper yet (decided with --keyword-fallback)."""


KEY_CHARS = 8
"""The length of a paper's key (`paper_key`): 40 bits, so two papers of an archive of 100,000 share one with a
chance under 1 in 200 (the feedback command then asks for the id)."""


@functools.lru_cache(maxsize=1 << 16)  # a week's ids are keyed when decided and again when read back as a prior
def paper_key(paper_id: str) -> str:
    """A paper's stable short key, what a reader types to mark it (`reporter feedback --wanted KEY`): the first
    KEY_CHARS of the base32 of the sha256 of its id, in lower case (letters and the digits 2-7: no 0/o or 1/l to
    mistake). Derived from the id alone, so every week that lists the paper shows the same key, and a week
    published before keys were recorded (rules `digest.3` and older) has them too."""
    digest = bytes.fromhex(sha256_text(paper_id))
    return base64.b32encode(digest).decode("ascii")[:KEY_CHARS].lower()


@dataclass(frozen=True)
class Axes:
    """The three axis scores, each in [0, 1], kept to two decimals."""

    match: float
    criteria: float
    novelty: float

    def to_json(self) -> dict[str, float]:
        return {"match": self.match, "criteria": self.criteria, "novelty": self.novelty}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Axes:
        """The inverse of to_json (KeyError or TypeError on a malformed value)."""
        return cls(float(data["match"]), float(data["criteria"]), float(data["novelty"]))


@dataclass(frozen=True)
class JudgeEntry:
    """One judge's answer on one paper, as a decision lists it (`judges`): a fit, or the judge's failure."""

    voter: str
    """The judge's name (`[[digest.judge.voters]] name`)."""
    model: str
    """The model it asked."""
    fit: str | None
    """in_scope, borderline, partial, out_of_scope or silent; None when the judge failed."""
    criteria_lines: tuple[int, ...] = ()
    """The lines the answer cited, as it cited them (sorted, each once)."""
    reason: str = ""
    """The judge's reason; for a failure, what was wrong."""
    failure: str | None = None
    """Why there is no fit: the failure's cause (`uncited`, `unparseable`, `refusal`, ...), or `missing` (no
    answer recorded yet); None for an answer."""

    def to_json(self) -> dict[str, Any]:
        return {"voter": self.voter, "model": self.model, "fit": self.fit,
                "criteria_lines": list(self.criteria_lines), "reason": self.reason, "failure": self.failure}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeEntry:
        """The inverse of to_json (KeyError, TypeError or ValueError when malformed)."""
        fit, failure = _text(data.get("fit")), _text(data.get("failure"))
        if (fit is None) == (failure is None):
            raise ValueError("a judge entry has either a fit or a failure, never both or neither")
        return cls(voter=str(data["voter"]), model=str(data.get("model", "")), fit=fit,
                   criteria_lines=tuple(int(x) for x in data.get("criteria_lines", ())),
                   reason=str(data.get("reason", "")), failure=failure)


@dataclass(frozen=True)
class Decision:
    """One paper's decision: the contract fields of decisions.json plus what the pages show."""

    id: str
    """The surviving id (a merged paper appears once)."""
    decision: str
    """KEEP, REVIEW or DROP."""
    score: int
    """0-100, computed exactly in integer hundredths and rounded half up."""
    axes: Axes
    """The three axis scores."""
    rationale: str
    """One line a reader can audit; every DROP names its cause and quotes the criteria line or prior week."""
    tags: tuple[str, ...]
    """e.g. already-covered, look-alike-trap, fails-required, criteria-silent, no-abstract,
    demoted-for-cap, journal-version-of:YYYY-Www."""
    title: str
    """The paper's title (for the pages)."""
    cause: str | None = None
    """For a DROP: one of DROP_CAUSES (the group it is listed under); None otherwise."""
    review_reason: str | None = None
    """For a REVIEW: one of REVIEW_REASONS, why it waits for a reader (the group it is listed under); None
    otherwise. A decisions.json written before it was recorded has none: the archive's reader derives it
    (`review_reason_of`, with the week's thresholds)."""
    criteria_lines: tuple[int, ...] = ()
    """Lines of the criteria document the criteria score came from."""
    matched_terms: tuple[str, ...] = ()
    """Watchlist entries that matched, for the pages."""
    merged_ids: tuple[str, ...] = ()
    """Other ids folded into this paper by the cross-source merge."""
    relevance: float | None = None
    """BM25F of the watchlist and In scope terms over title and abstract, the week as the corpus, rounded to 4
    decimals (docs/digest.md, "Relevance"): what orders papers of one score. None in a decisions.json written
    before it was recorded (rules `digest.1`)."""
    authors: tuple[str, ...] = ()
    """The record's authors, in order."""
    published: str | None = None
    """The record's date (`YYYY-MM-DD`: when it first appeared), or None."""
    venue: str | None = None
    """The record's journal, server or listing, or None."""
    categories: tuple[str, ...] = ()
    """The record's subject categories (arXiv's, the primary first), or ()."""
    abstract: str | None = None
    """The record's abstract, or None."""
    version: str | None = None
    """The version of the text decided (arXiv `v2`, bioRxiv `3`), or None when the source gives none: a later
    week that lists the paper again in a newer version decides it again (docs/digest.md, "One paper, one week")."""
    criteria_source: str = "keyword"
    """What decided Axis 2: `judge` (the criteria judge's answers) or `keyword` (the keyword rule: no judge, or a
    judge failed or has not answered). `keyword` in a decisions.json written before the judge (rules `digest.2`
    and older)."""
    judges: tuple[JudgeEntry, ...] = ()
    """One entry per configured judge, in configured order (() without a judge)."""
    similarity: float | None = None
    """The cosine of the paper and the In scope concepts as one, 4 decimals (docs/digest.md, "Meaning"); None with
    `[digest] semantic = false` and in a decisions.json written before it was recorded (rules `digest.3`)."""
    order: float | None = field(default=None, compare=False)
    """The blend that ordered it within its score (`meaning.blend`), in memory only: decisions.json has its two
    parts (`relevance`, `similarity`); None without meaning."""
    key: str | None = None
    """The paper's short key (`paper_key` of its id), recorded since rules `digest.4`; None in an older
    decisions.json (the pages then show none, and the feedback command derives it from the id)."""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "key": self.key, "decision": self.decision, "score": self.score, "axes": self.axes.to_json(),
                "rationale": self.rationale, "tags": list(self.tags), "title": self.title, "cause": self.cause,
                "review_reason": self.review_reason,
                "criteria_lines": list(self.criteria_lines), "matched_terms": list(self.matched_terms),
                "merged_ids": list(self.merged_ids), "relevance": self.relevance, "authors": list(self.authors),
                "published": self.published, "venue": self.venue, "categories": list(self.categories),
                "abstract": self.abstract, "version": self.version, "criteria_source": self.criteria_source,
                "judges": [j.to_json() for j in self.judges],
                **({} if self.similarity is None else {"similarity": self.similarity})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        """The inverse of to_json (KeyError, TypeError or ValueError on a malformed entry); a decisions.json
        written before `relevance`, `authors`, `published`, `venue`, `categories`, `abstract` and `version` were
        recorded reads as None or () for them."""
        if data["decision"] not in DECISIONS or (data.get("cause") is not None and data["cause"] not in DROP_CAUSES):
            raise ValueError(f"decision {data['decision']!r} or cause {data.get('cause')!r} unknown")
        reason = data.get("review_reason")
        if reason is not None and (reason not in REVIEW_REASONS or data["decision"] != "REVIEW"):
            raise ValueError(f"review_reason {reason!r:.40} unknown, or given to a {data['decision']}")
        relevance = data.get("relevance")
        key = _text(data.get("key"))
        if key is not None and key != paper_key(str(data["id"])):
            raise ValueError(f"key {key!r:.20} is not the key of id {data['id']!r:.80} ({paper_key(str(data['id']))})")
        source = data.get("criteria_source", "keyword")
        if source not in CRITERIA_SOURCES:
            raise ValueError(f"criteria_source {source!r} unknown")
        return cls(id=str(data["id"]), decision=data["decision"], score=int(data["score"]),
                   axes=Axes.from_json(data["axes"]), rationale=str(data["rationale"]),
                   tags=tuple(data["tags"]), title=str(data.get("title", "")), cause=data.get("cause"),
                   review_reason=reason,
                   criteria_lines=tuple(int(x) for x in data.get("criteria_lines", ())),
                   matched_terms=tuple(data.get("matched_terms", ())),
                   merged_ids=tuple(data.get("merged_ids", ())),
                   relevance=None if relevance is None else _finite(relevance, "relevance"),
                   authors=_strings(data.get("authors"), "authors"), published=_text(data.get("published")),
                   venue=_text(data.get("venue")), categories=_strings(data.get("categories"), "categories"),
                   abstract=_text(data.get("abstract")), version=_text(data.get("version")),
                   criteria_source=source, judges=tuple(JudgeEntry.from_json(j) for j in data.get("judges") or ()),
                   similarity=None if data.get("similarity") is None else _finite(data["similarity"], "similarity"),
                   key=key)


def review_reason_of(tags: tuple[str, ...], score: int, keep_threshold: int, review_threshold: int) -> str:
    """Why a REVIEW waits for a reader (one of REVIEW_REASONS): the first that fits, in the order the rationale's
    head states the decisive reason (docs/digest.md, "Rationales"): the cap, the stricter pass's rescue (a score
    under REVIEW: only a KEEP of the first pass is REVIEW there), the never-KEEP overrides and the criteria's tags,
    an earlier version kept, else the score (near the threshold, or `other` for a score at or over KEEP)."""
    given = set(tags)
    if "demoted-for-cap" in given:
        return "over-cap"
    if score < review_threshold:
        return "rescued"
    # `judge-missing` is not a reason to wait (such a paper may be KEEP): since rules digest.4 a REVIEW the keyword
    # rule decided under --keyword-fallback waits for the reason that rule gives (issue 33, item 7: every REVIEW of
    # such a week fell into one "not judged" group). A document recorded before keeps its recorded reasons.
    for reason in ("no-abstract", "judges-disagree", "judge-failed", "criteria-silent",
                   "fails-required", "look-alike-trap"):
        if reason in given:
            return reason
    if any(t.startswith("journal-version-of:") for t in given):
        return "earlier-version"
    return "near-threshold" if score < keep_threshold else "other"


@dataclass(frozen=True)
class ListedAgain:
    """A paper a week lists again after one of its four prior weeks decided it, in the same version: not decided
    again (`listed_again` of decisions.json)."""

    id: str
    """The paper's id, as the earlier week decided it (or one of the ids merged into that decision)."""
    week: str
    """The prior week that decided it (the newest of the four, when several did)."""
    decision: str
    """What that week decided: REVIEW or DROP (a prior KEEP is decided again, and dropped as already covered)."""

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "week": self.week, "decision": self.decision}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ListedAgain:
        """The inverse of to_json (KeyError, TypeError or ValueError on a malformed entry)."""
        if not all(isinstance(data[k], str) for k in ("id", "week", "decision")) or data["decision"] not in DECISIONS:
            raise ValueError(f"listed_again entry {data!r:.80} is not an id, a week and a decision")
        return cls(data["id"], data["week"], data["decision"])


def _finite(value: Any, name: str) -> float:
    """A JSON number that is a finite float (a bool, a string or NaN is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r:.40}")
    return float(value)


def _strings(value: Any, name: str) -> tuple[str, ...]:
    """A JSON list of strings as a tuple (absent or null: ())."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of strings")
    return tuple(value)


def _text(value: Any) -> str | None:
    """A JSON string or null."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"expected a string or null, not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class Calibration:
    """The calibration block of decisions.json (the seed's fields)."""

    kept: int
    review: int
    dropped: int
    force_dropped_already_covered: int
    demoted_for_cap: int
    stricter_pass_applied: bool
    histogram: tuple[int, ...] = field(default=(0,) * 10)
    """Papers per score decile (0-9, 10-19, ..., 90-100), for the page's histogram."""

    def to_json(self) -> dict[str, Any]:
        return {"kept": self.kept, "review": self.review, "dropped": self.dropped,
                "force_dropped_already_covered": self.force_dropped_already_covered,
                "demoted_for_cap": self.demoted_for_cap, "stricter_pass_applied": self.stricter_pass_applied,
                "histogram": list(self.histogram)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        """The inverse of to_json (KeyError or TypeError on a malformed value)."""
        return cls(kept=int(data["kept"]), review=int(data["review"]), dropped=int(data["dropped"]),
                   force_dropped_already_covered=int(data["force_dropped_already_covered"]),
                   demoted_for_cap=int(data["demoted_for_cap"]),
                   stricter_pass_applied=bool(data["stricter_pass_applied"]),
                   histogram=tuple(int(x) for x in data.get("histogram", (0,) * 10)))


@dataclass(frozen=True)
class WeekDecisions:
    """One published week of the digest archive: its decisions.json, read back."""

    week: str
    """The ISO week, `YYYY-Www`."""
    decisions: tuple[Decision, ...]
    """Every paper once: KEEP, then REVIEW, then DROP; by score (high first), then relevance (high first),
    then id."""
    calibration: Calibration
    watchlist_drift: dict[str, Any] = field(default_factory=dict)
    """Surfaced, never applied: watchlist entries the criteria keep dropping, concepts the watchlist misses."""
    merges: tuple[dict[str, Any], ...] = ()
    """What the cross-source merge folded together, as merge_records reported it."""
    inputs: dict[str, Any] = field(default_factory=dict)
    """sha256 of the papers file, the watchlist, the criteria and each prior week's decisions.json."""
    prior_weeks: tuple[str, ...] = ()
    """The weeks whose KEEPs were the prior (oldest first)."""
    listed_again: tuple[ListedAgain, ...] = ()
    """The papers listed again this week that a prior week decided in the same version, by id: not decided again."""
    lists: dict[str, Any] = field(default_factory=dict)
    """The watchlist and criteria texts it was decided with (`lists`, reporter.digest.lists_diff); {} before."""

    def kept(self) -> tuple[Decision, ...]:
        """The KEEP decisions."""
        return tuple(d for d in self.decisions if d.decision == "KEEP")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WeekDecisions:
        """A decisions.json document read back (KeyError, TypeError or ValueError when malformed)."""
        return cls(week=str(data["week"]), decisions=tuple(Decision.from_json(d) for d in data["decisions"]),
                   calibration=Calibration.from_json(data["calibration"]),
                   watchlist_drift=dict(data.get("watchlist_drift", {})),
                   merges=tuple(data.get("merges", ())), inputs=dict(data.get("inputs", {})),
                   prior_weeks=tuple(data.get("prior_weeks", ())),
                   listed_again=tuple(ListedAgain.from_json(x) for x in data.get("listed_again") or ()),
                   lists=dict(data.get("lists") or {}))
