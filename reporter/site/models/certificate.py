"""The certificate page: one certificate of one release, archived (its content is fixed by its id)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .common import Href, Link, PageMeta, ReleaseName, Row


@dataclass(frozen=True)
class RescuedWork:
    """A relevant work a certification sample found: it joins the hand-off."""

    work_id: str
    """The work."""
    href: Href | None
    """The paper's own page built from its id, or None."""
    stratum: str
    """The stratum whose sample found it."""
    rule: Link | None
    """The rule that routed it (linked to its page), or None."""
    certificate: str
    """The certificate's short id (12 hex)."""


@dataclass(frozen=True)
class CertificatePage:
    """What a reviewer signs: the population, the sample, what relevant means, who labelled and when, the bound,
    the recall bound and the target, and what happens at the next release. Archived: never rewritten."""

    TEMPLATE: ClassVar[str] = "certificate"
    meta: PageMeta
    """Title, path, twin link."""
    name: ReleaseName
    """The release certified."""
    statement: str
    """The verdict in one paragraph, whole."""
    tone: str
    """The class that colours the verdict's standing (`ok`, `bad`, `neutral`)."""
    rows: tuple[Row, ...]
    """Every part of the certificate, a row each (population, sample, relevant, labeller, dates, confidence, bound,
    recall bound, target, id, supersedes, sheet)."""
    rescued: tuple[RescuedWork, ...]
    """The relevant works its sample found, rescued into the hand-off."""
    status: Href
    """The release's status page, which says which certificate of each stratum is current and which gate."""
    supersedes: Href | None
    """The page of the certificate it superseded, or None."""
    meaning: str
    """What the statement means at its confidence, and what it does not."""
    intro: str = ("Kept as it was written: a later certificate of the same stratum supersedes it on the status page, "
                  "which says which certificate of each stratum is current and which gate the hand-off; this one "
                  "stays readable here.")
    """Why this page never changes, and where the current certificates are."""
    rescued_note: str = ("The relevant works its sample found: reporter export hands them on, marked in the column "
                         "rescued_by_certificate.")
    """What happens to the works listed under `rescued`."""
    supersedes_note: str = "It supersedes the stratum's earlier certificate:"
    """The words before the link to the certificate it superseded."""
    next_release: str = ("At the next release the labels carry over (reporter certify --from this sheet) but this "
                         "certificate does not: a certificate speaks for its release only, as it was when certified.")
    """What happens at the next release."""
