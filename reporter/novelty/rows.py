"""The rows of the ingested graph, typed: a paper, a claim, a references check, a stored ingest error.

`reporter.novelty.graph` folds the events file into these (and re-exports them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Paper:
    """An ingested paper row."""

    lom_id: str
    """The node's id (`doi:…`, `arxiv:…`, `openalex:W…`), normalised."""
    keys: Mapping[str, str]
    """Its normalised keys by scheme (doi, arxiv, openalex, s2); absent keys are left out."""
    title: str | None
    """Its title, when the row gives one."""
    read: bool
    """True when its text or reference list was ingested."""


@dataclass(frozen=True)
class Claim:
    """An ingested claim row."""

    claim_id: str
    """The claim's id."""
    about_lom_id: str
    """The node the claim is about (canonical)."""
    statement: str
    """The statement as written."""


@dataclass(frozen=True)
class ReferencesChecked:
    """A record that a node's references were looked up (`ok`) or that the lookup failed."""

    lom_id: str
    """The node whose references were checked (canonical)."""
    source: str
    """Where the references came from (e.g. `openalex`)."""
    checked_ts: str
    """When, as recorded (an ISO timestamp string)."""
    n_refs: int | None
    """How many references were found; 0 is a checked zero, authoritative when status is ok."""
    status: str
    """`ok` (the count is authoritative) or `failed` (it stays a gap)."""


@dataclass(frozen=True)
class IngestError:
    """A stored failed lookup from an earlier ingest."""

    lom_id: str
    """The node the lookup was for (canonical)."""
    scheme: str
    """The service asked (`s2`, `openalex`)."""
    http_status: int | None
    """The HTTP status it answered, or None (a timeout, a network failure)."""
    lookup: str | None
    """The lookup as sent (e.g. `ARXIV:2608.13940`)."""

    def entry(self) -> dict[str, Any]:
        """The `ingest_errors_blocking` entry for this error."""
        return {"scheme": self.scheme, "http_status": self.http_status, "lookup": self.lookup}


__all__ = ["Claim", "IngestError", "Paper", "ReferencesChecked"]
