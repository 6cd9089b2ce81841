"""The relevance measure that orders papers of one score (docs/digest.md, "Relevance"): BM25F over title and abstract.

The keyword axes saturate (on a real arXiv week, 72 papers score 100), so
the score alone cannot say which of them the cap should keep, and ties by
id let the arXiv id choose. Relevance is a graded measure of the same
evidence: how often, where, and how specifically the reader's terms occur.

- The query is the watchlist's phrases and the criteria's In scope terms,
  each distinct phrase once (`query_terms`).
- A term's occurrences are the ones the axes counted (`TermCounts`: the one
  phrase matcher, `reporter.routing.match_phrases`, one call per field for
  the whole week), so relevance and the axes can never disagree on a match.
- The corpus is the week itself: N its papers, df(t) the papers in which t
  occurs in the title or the abstract, avglen_f the mean length of field f.

    tf~(t, d) = sum_f W_f * tf(t, d, f) / (1 - B + B * len(d, f) / avglen_f)
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    rel(d)    = sum_t idf(t) * tf~(t, d) / (K1 + tf~(t, d))

Lengths are in words: runs of word characters (Unicode letters, digits and
underscore, the matcher's word characters) in the text as the matcher
normalises it. The value is rounded to DECIMALS, and papers are ordered on
the rounded value, so the order can be checked from decisions.json alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..pool.record import Record
from ..routing.normalise import normalise_array, phrase_literal
from .axes import TermCounts
from .criteria import IN_SCOPE, Criteria
from .watchlist import Watchlist

K1 = 1.2
"""Term-frequency saturation: a term's contribution is half its maximum at tf~ = K1 (Robertson's default)."""
B = 0.75
"""Length normalisation, the same for both fields (Robertson's default)."""
TITLE_WEIGHT, ABSTRACT_WEIGHT = 3.0, 1.0
"""W_f: an occurrence in the title counts three times one in the abstract."""
DECIMALS = 4
"""Relevance is rounded to this many decimals before it orders anything or is written."""
_WORD = re.compile(r"\w+")
"""A word: a run of Python's \\w, the matcher's word characters (routing.normalise.SETTINGS, is_word_char)."""


def query_terms(watchlist: Watchlist, criteria: Criteria) -> tuple[str, ...]:
    """The watchlist's phrases, then the In scope terms, each once (two phrases the matcher reads alike are one)."""
    seen: set[tuple[str, bool]] = set()
    out = []
    for term in list(watchlist.phrases) + [t for c in criteria.section(IN_SCOPE) for t in c.terms]:
        literal = phrase_literal(term)  # once a term: each normalises the phrase
        if literal not in seen:
            seen.add(literal)
            out.append(term)
    return tuple(out)


def field_words(texts: Sequence[str | None]) -> np.ndarray:
    """int64 per text: its words, in the text as the matcher normalises it (None: 0)."""
    normalised, _ = normalise_array(pa.array(list(texts), pa.string()))
    return np.array([len(_WORD.findall(t)) if t else 0 for t in normalised.to_pylist()], dtype=np.int64)


def relevance(records: Sequence[Record], terms: Sequence[str], counts: TermCounts) -> list[float]:
    """BM25F of every record for the query `terms` (module docstring), the week as the corpus, rounded."""
    n = len(records)
    if n == 0 or not terms:
        return [0.0] * n
    counts = counts.of(terms)
    fields = ((TITLE_WEIGHT, counts.title, field_words([r.title for r in records])),
              (ABSTRACT_WEIGHT, counts.abstract, field_words([r.abstract for r in records])))
    tf = np.zeros(counts.title.shape, dtype=np.float64)
    for weight, occurrences, words in fields:
        mean = words.sum() / n
        norm = (1 - B) + B * words / mean if mean > 0 else np.ones(n)
        tf += weight * occurrences / norm[:, None]
    df = ((counts.title > 0) | (counts.abstract > 0)).sum(axis=0)
    idf = [math.log(1 + (n - int(k) + 0.5) / (int(k) + 0.5)) for k in df]
    out = []
    for row in tf:
        total = 0.0
        for j, x in enumerate(row.tolist()):  # in query order: the same sum, the same bits
            if x:
                total += idf[j] * x / (K1 + x)
        out.append(round(total, DECIMALS))
    return out
