"""The certificates a release's status page shows (`reporter certify`): read once, drawn on the flow, listed.

A certificate arrives after its release is published, and the release and
rule pages are archived (written once, never rewritten), so certificates are
shown on the release's status page, which is rebuilt at every build: each on
the flow diagram's box of its stratum (the box listing its pile, or the box
of what its screening tier discarded), and every one in a list with its
sheet, a rule's wins or domain misses linked to the rule's page. The state
is read only through `reporter.certify.results`, once per render.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..certify.results import Certificate, CertifySettings, load_certificates, state_dir
from ..plurals import count
from ..routing.artifacts import Release
from ..screening.report import ScreenReport
from . import compute
from .charts import FlowNote, FlowStep
from .links import slug
from .models import CertificateView
from .page_parts import rule_link

TONES = {True: "ok", False: "bad", None: "neutral"}
"""The class of a standing's text: its colour repeats what its words say (meets, misses, no target)."""

NO_WORKSPACE = ("This page was rendered without its workspace, so it shows no certificates: reporter build, or "
                "reporter render --workspace DIR, reads them from the workspace's state/certify/.")
"""The certificates section's note when the site was rendered from a releases folder alone."""

NONE_YET = ("No stratum of this release is certified yet. reporter certify --pile discard --n 400 --out "
            "discard.csv draws a sample of its discard pile to label; reporter certify --sheet discard.csv then "
            "bounds how many relevant works the pile can still hold (docs/certify.md). The next build shows it here.")
"""The note when the workspace holds no certificate of the release."""


@dataclass(frozen=True)
class Certified:
    """The certificates of the releases a render shows, read once from the workspace's state, and their target."""

    by_release: Mapping[str, tuple[Certificate, ...]]
    """Release id -> its certificates, by stratum name (a release without any is absent)."""
    settings: CertifySettings
    """[certify]: the target each certificate is held to."""

    def of(self, release_id: str) -> tuple[Certificate, ...]:
        """One release's certificates (none of another release's)."""
        return self.by_release.get(release_id, ())


def read_certified(root: Path, settings: CertifySettings, releases: Sequence[Release]) -> Certified:
    """Every shown release's certificates in the state of the workspace in `root` (`load_certificates`), and its
    [certify] (`settings`)."""
    state = state_dir(root)
    found = {rel.release_id: load_certificates(state, rel.release_id) for rel in releases}
    return Certified({rid: certs for rid, certs in found.items() if certs}, settings)


def certificate_parts(page: str, rel: Release, steps: list[FlowStep], screening: ScreenReport | None,
                      certified: Certified | None) -> tuple[list[FlowStep], tuple[CertificateView, ...], str]:
    """The flow with each certificate on its stratum's box, the list of the release's certificates, and the
    list's note (why it is empty, else empty)."""
    if certified is None:
        return steps, (), NO_WORKSPACE
    certs = certified.of(rel.release_id)
    if not certs:
        return steps, (), NONE_YET
    known = rel.stats.rule_ids()
    notes: dict[str, tuple[FlowNote, ...]] = {}
    views = []
    for cert in certs:
        meets, words = standing(cert, certified.settings, screening)
        box = compute.box_of(steps, cert.pile, cert.tier) if cert.kind != "domain-misses" else None
        if box is not None:
            note = FlowNote(f"Certificate of {cert.stratum}: {cert.summary}", words, TONES[meets])
            notes[box.key] = (*notes.get(box.key, ()), note)
        views.append(CertificateView(
            stratum=cert.stratum, anchor=f"cert-{slug(cert.stratum)}",
            rule=rule_link(page, rel.release_id, cert.rule, known),
            summary=cert.summary, standing=words, tone=TONES[meets], labelled=labelled(cert),
            recall_low=recall_low(cert), sheet=cert.sheet, sheet_sha256=cert.sheet_sha256,
            shown_on=box.title if box is not None else "not on the diagram"))
    return compute.with_notes(steps, notes), tuple(views), ""


def standing(cert: Certificate, settings: CertifySettings, screening: ScreenReport | None) -> tuple[bool | None, str]:
    """(meets, words) against [certify]; a certificate of a tier's discards that has discarded more since, or
    in another generation, is stale and counts for nothing (as `reporter export --require-certified` says)."""
    tier = next((t for t in screening.tiers if t.tier == cert.tier), None) if screening is not None else None
    if cert.kind != "screen" or tier is None:
        return cert.standing(settings)
    now = dict(tier.outcomes).get("discard", 0) if tier.configured else 0
    if tier.generation == cert.generation and now == cert.N:
        return cert.standing(settings)
    then = "in an earlier generation" if tier.generation != cert.generation else "then"
    return False, (f"stale: the tier had discarded {count(cert.N, 'work')} {then} and has discarded {now:,} in its "
                   f"current generation; certify a new sample")


def labelled(cert: Certificate) -> str:
    """How much of the sheet is labelled, and what a partial sheet's bound holds for."""
    rows = f"{cert.n_labelled:,} of {count(cert.n_drawn, 'row')} labelled (seed {cert.seed})"
    if not cert.partial:
        return rows
    if cert.labelled_prefix:
        return (f"partial: {rows}, the sheet's first rows, themselves the seeded sample of "
                f"{count(cert.n_labelled, 'work')}")
    return (f"partial: {rows}, not the sheet's first rows: the bound holds only if which rows were labelled had "
            f"nothing to do with their relevance")


def recall_low(cert: Certificate) -> str:
    """The lower bound on the screen's recall against this stratum's losses, rounded down; a dash without one."""
    if cert.recall_low is None:
        return "—"
    low = math.floor(round(cert.recall_low * 1000, 6)) / 10  # a lower bound is never rounded up
    return (f"at least {low:.1f}% ({count(cert.admitted_relevant or 0, 'labelled include')} admitted by the screen, "
            f"at most {cert.max_relevant:,} lost here)")
