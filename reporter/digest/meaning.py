"""What the embedding model reads (docs/digest.md, "Meaning"): similarity, the order within a score, the safety net.

- **Similarity** (`week_meaning`): the cosine of a paper (its title, `. `, its abstract) and the In scope
  concepts as one (the normalised mean of their vectors, each concept read as its bullet is written: its
  prose, `: `, its terms); with it the nearest concept line (the highest cosine of one concept, ties to the
  earlier line). Rounded to 4 decimals.
- **The order within a score** (`blend`): `ORDER_RELEVANCE * relevance / R + ORDER_MEANING * similarity`,
  R the week's largest relevance: the literal evidence leads, meaning breaks its ties and near ties.
- **Close in meaning, missed by the watchlist** (`close_in_meaning`): the papers that are not KEEP, by
  similarity (high first, then id), those at or above the week's KEEP median (CLOSE_FLOOR without a KEEP),
  at most CLOSE_SHOWN (5; the e-mail shows the first 3): surfaced, never applied (no score, decision or
  threshold reads it). Once the reader has marked papers of earlier weeks wanted, a paper's nearness to
  them counts too: its `wanted_similarity` (the cosine with the nearest wanted paper) lists it from the
  week's KEEP median of that measure up (WANTED_FLOOR without a KEEP), and the list is ordered by the
  larger of the two similarities.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from statistics import median
from typing import Any

import numpy as np

from ..errors import InputError
from ..pool.record import Record
from ..routing import match_phrases
from .close_read import CLOSE_SHOWN
from .criteria import IN_SCOPE, Concept, Criteria
from .semantic import DECIMALS, Model, similarities
from .watchlist import Watchlist, check_phrases

ORDER_RELEVANCE, ORDER_MEANING = 0.8, 0.2
"""The blend's weights (docs/digest.md, "Meaning": measured on the SYNERGY reviews)."""
SUGGEST_CHARS = 1_000
"""A suggested phrase is taken from the first characters of the title or the abstract (bounded work per paper)."""
CLOSE_FLOOR = 0.5
"""Without a KEEP to compare with, a paper is listed from this similarity on."""
WANTED_FLOOR = 0.8
"""Without a KEEP to compare with, a paper is listed from this similarity to a wanted paper on (papers are nearer
each other than to the concepts' mean: a choice, not a fit; docs/digest.md, "Meaning")."""
_BREAK = re.compile(r"[^\w\s'-]|\s-\s")
"""Where a phrase stops: punctuation (`LGMT: Logic-Grounded`, `Contextual, LLM-Judges`, `models (LLMs)`)."""
_WORD = re.compile(r"[^\W_][\w'-]*[^\W_]|[^\W_]")
_STOP = frozenset("""a about above after again against all also among an and any are as at be been before being
below between both but by can could did do does doing down during each either equally every few for from further had
has have having here how if in into is it its itself just less many may might more most much must no nor not now of
off on once only or other our out over own per same should so some such than that the their them then there these
they this those through to too toward towards under until up upon us using very via was we well were what when where
whether which while who whom whose why will with within without would yet you your new novel study studies approach
approaches method methods paper based towards propose proposed show shows shown""".split())
"""Words a suggested phrase never holds: function words, and the words every abstract says of itself."""


@dataclass(frozen=True)
class Nearness:
    """One paper's meaning against the In scope concepts."""

    similarity: float
    """The cosine with the In scope concepts as one, 4 decimals."""
    nearest: Concept
    """The In scope concept line it is nearest to."""
    nearest_similarity: float
    """Its cosine with that concept line, 4 decimals."""
    wanted: float | None = None
    """Its cosine with the nearest paper the reader marked wanted in an earlier week, 4 decimals; None without."""
    wanted_id: str | None = None
    """That wanted paper's id (ties to the smaller id)."""


def concept_text(concept: Concept) -> str:
    """A concept as the model reads it: its bullet as written, the backticks dropped."""
    return f"{concept.prose}: {', '.join(concept.terms)}" if concept.terms else concept.prose


def paper_text(record: Record) -> str:
    return f"{record.title}. {record.abstract}" if record.abstract else record.title


def week_meaning(model: Model, records: Sequence[Record], criteria: Criteria,
                 wanted: Sequence[tuple[str, str]] = ()) -> list[Nearness]:
    """Every record's similarity and nearest In scope concept (one embedding call for the week); `wanted`: (id,
    text) of the papers the reader marked wanted in earlier weeks, by id: each record's nearest of them too."""
    concepts = criteria.section(IN_SCOPE)
    vectors = model.embed([concept_text(c) for c in concepts])
    centre = vectors.mean(axis=0)
    norm = float(np.sqrt(centre @ centre))
    centre = centre / norm if norm > 0 else centre
    papers = model.embed([paper_text(r) for r in records])
    whole = similarities(papers, centre[None, :])[:, 0]
    each = similarities(papers, vectors)
    near = similarities(papers, model.embed([t for _, t in wanted])) if wanted else None
    out = []
    for i in range(len(records)):
        k = int(np.argmax(each[i]))  # the first of the highest: the earlier line
        out.append(Nearness(float(whole[i]), concepts[k], float(each[i, k])))
        if near is not None:
            j = int(np.argmax(near[i]))  # the first of the highest: the smaller id
            out[-1] = dc_replace(out[-1], wanted=float(near[i, j]), wanted_id=wanted[j][0])
    return out


def blend(relevance: float, similarity: float, top_relevance: float) -> float:
    """The order within a score: relevance as a share of the week's largest, and similarity, weighed, rounded."""
    share = relevance / top_relevance if top_relevance > 0 else 0.0
    return round(ORDER_RELEVANCE * share + ORDER_MEANING * similarity, DECIMALS)


def with_order(decisions: Sequence[Any]) -> tuple[Any, ...]:
    """Decisions read back from a decisions.json with their order within a score (`blend`) set again from the two
    parts each records, as `rank_key` reads it; unchanged when they have no similarity (no meaning)."""
    if not decisions or any(d.similarity is None for d in decisions):
        return tuple(decisions)
    top = max(d.relevance or 0.0 for d in decisions)
    return tuple(dc_replace(d, order=blend(d.relevance or 0.0, d.similarity, top)) for d in decisions)


def close_in_meaning(decisions: Sequence[Any], meaning: dict[str, Nearness], records: dict[str, Record],
                     model: Model, criteria: Criteria, watchlist: Watchlist) -> list[dict[str, Any]]:
    """The safety net's list for decisions.json: `id`, `similarity`, `nearest_concept` (file:line),
    `suggested_phrase` (None when no phrase of the title or abstract is new to the watchlist), and `concept`, the
    nearest concept quoted as a rationale cites it."""
    kept = [meaning[d.id] for d in decisions if d.decision == "KEEP"]
    floor = median(n.similarity for n in kept) if kept else CLOSE_FLOOR
    wanted = [n.wanted for n in kept if n.wanted is not None]
    wanted_floor = median(wanted) if wanted else WANTED_FLOOR

    def close(n: Nearness) -> float:
        return n.similarity if n.wanted is None else max(n.similarity, n.wanted)

    def near_enough(n: Nearness) -> bool:
        return n.similarity >= floor or (n.wanted is not None and n.wanted >= wanted_floor)

    candidates = sorted((d for d in decisions if d.decision != "KEEP" and d.cause != "already-covered"
                         and near_enough(meaning[d.id])),
                        key=lambda d: (-close(meaning[d.id]), d.id))[:CLOSE_SHOWN]
    out = []
    for d in candidates:
        near = meaning[d.id]
        out.append({"id": d.id, "similarity": near.similarity,
                    "nearest_concept": f"{criteria.name}:{near.nearest.line}", "concept": criteria.cite(near.nearest),
                    "suggested_phrase": suggest_phrase(model, records[d.id], near.nearest, watchlist),
                    **({} if near.wanted is None else {"wanted_similarity": near.wanted,
                                                       "nearest_wanted": near.wanted_id})})
    return out


def suggest_phrase(model: Model, record: Record, concept: Concept, watchlist: Watchlist) -> str | None:
    """The phrase of two or three words of the title (else the abstract; their first SUGGEST_CHARS), none of
    them a function word (_STOP) or a number, nearest in meaning to the concept,
    lower-cased, that the rule language accepts and the watchlist does not already cover: no entry matches it (the one
    matcher) and it is not part of an entry; ties to the earlier."""
    taken = [" ".join(p.lower().rstrip("*").split()) for p in watchlist.phrases]
    for text in (record.title, record.abstract or ""):
        candidates: dict[str, None] = {}
        runs = [_WORD.findall(run) for run in _BREAK.split(text[:SUGGEST_CHARS])]  # a phrase never spans a `:`
        for n in (2, 3):
            for words, i in ((w, i) for w in runs for i in range(len(w) - n + 1)):
                g = words[i:i + n]
                if any(w.lower() in _STOP or w.isdigit() for w in g):
                    continue
                phrase = " ".join(g).lower()
                if phrase not in candidates and not any(phrase in t for t in taken):
                    candidates[phrase] = None
        grams = _accepted(list(candidates))
        if grams and watchlist.phrases:
            covered = match_phrases(grams, watchlist.phrases).matched().tolist()
            grams = [g for g, hit in zip(grams, covered) if not hit]
        if grams:
            scores = similarities(model.embed(grams), model.embed([concept_text(concept)]))[:, 0]
            return grams[int(np.argmax(scores))]
    return None


def _accepted(phrases: list[str]) -> list[str]:
    """The phrases the rule language accepts, in order: checked together (one matcher each time; a phrase it
    refuses, refused alone too, is dropped and the rest checked again), else one by one."""
    refused: set[int] = set()
    while True:
        rest = [k for k in range(len(phrases)) if k not in refused]
        try:
            match_phrases([], [phrases[k] for k in rest])
        except InputError as exc:
            k = rest[exc.index] if isinstance(getattr(exc, "index", None), int) else None
            if k is None or _accepted_alone(phrases[k]):
                return [p for p in phrases if _accepted_alone(p)]  # not one phrase's refusal: each alone
            refused.add(k)
            continue
        return [phrases[k] for k in rest]


def _accepted_alone(phrase: str) -> bool:
    try:
        check_phrases([(phrase, "suggested phrase")])
    except InputError:
        return False
    return True
