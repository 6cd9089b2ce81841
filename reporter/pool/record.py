"""A paper record: what every reader of papers produces, and what `reporter fetch` writes, one JSONL line each.

The pool side's type (docs/architecture.md): the source readers
(reporter.pool.sources), the digest's normalized-record reader and fetch
all make `Record`s; the digest decides on them. It imports nothing of
reporter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Record:
    """One paper of a week: scheme-prefixed id, text, and the ids of its other versions."""

    id: str
    """Scheme-prefixed identity: `arxiv:2608.13940` (no version), `doi:10.1101/...`, `pmid:39000000`, `openalex:W1`."""
    title: str
    """The title as the source gave it (never empty)."""
    abstract: str | None = None
    """The abstract, or None when the source returned none (such a paper is never KEEP)."""
    source: str = ""
    """Where it came from: arxiv, biorxiv, medrxiv, pubmed, openalex, or the file's own `source`."""
    doi: str | None = None
    """The DOI without a resolver prefix, lower-cased (`10.1101/2026.05.07.123456`), or None."""
    published: str | None = None
    """Publication or posting date, ISO `YYYY-MM-DD`, or None."""
    type: str | None = None
    """The source's work type (preprint, journal-article, ...)."""
    authors: tuple[str, ...] = ()
    """Author names in order, as given ("Ada Lovelace" or "Lovelace, Ada")."""
    venue: str | None = None
    """Journal, server or listing."""
    related_ids: tuple[str, ...] = ()
    """Scheme-prefixed ids of other versions of the same work (e.g. its preprint, its journal DOI)."""
    version: str | None = None
    """The source's version of this text (arXiv `v2`, bioRxiv `3`), kept as a field, never part of `id`."""
    categories: tuple[str, ...] = ()
    """The source's subject categories in its order: arXiv's (`cs.CL`, `cs.AI`; the primary first), bioRxiv's
    subject collection (`bioinformatics`); () when the source has none."""
    where: str = ""
    """Where the record was read: `FILE:line N` or `FILE: record N`, for error messages and the merge list."""

    def to_json(self) -> dict[str, Any]:
        """The normalized-record form (one JSONL line of `reporter fetch`)."""
        return {"id": self.id, "title": self.title, "abstract": self.abstract, "source": self.source,
                "doi": self.doi, "published": self.published, "type": self.type, "authors": list(self.authors),
                "venue": self.venue, "related_ids": list(self.related_ids), "version": self.version,
                "categories": list(self.categories)}
