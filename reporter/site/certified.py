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

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..certify.results import (SCREEN_STRATA, Certificate, CertifySettings, all_certificates, floor_percent,
                               joint_statement, load_certificates, percent, state_dir)
from ..plurals import count
from ..routing.artifacts import Release
from ..screening.report import ScreenReport
from . import compute
from .charts import FlowNote, FlowStep
from .certificate_page import certificate_path
from .links import href, paper_href, slug
from .models import CertificateView, RescuedWork
from .page_parts import rule_link, short_id

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
    """Release id -> its current certificates, by stratum name (a release without any is absent)."""
    settings: CertifySettings
    """[certify]: the target each certificate is held to."""
    history: Mapping[str, tuple[Certificate, ...]] = dataclasses.field(default_factory=dict)
    """Release id -> every certificate ever written of it, superseded ones too (each has its archived page)."""

    def of(self, release_id: str) -> tuple[Certificate, ...]:
        """One release's certificates (none of another release's)."""
        return self.by_release.get(release_id, ())

    def ever(self, release_id: str) -> tuple[Certificate, ...]:
        """Every certificate ever written of one release (the current ones when no history was read)."""
        return self.history.get(release_id, self.of(release_id))


def read_certified(root: Path, settings: CertifySettings, releases: Sequence[Release]) -> Certified:
    """Every shown release's certificates in the state of the workspace in `root` (`load_certificates`), and its
    [certify] (`settings`)."""
    state = state_dir(root)
    found = {rel.release_id: load_certificates(state, rel.release_id) for rel in releases}
    ever = {rel.release_id: all_certificates(state, rel.release_id) for rel in releases}
    return Certified({rid: certs for rid, certs in found.items() if certs}, settings,
                     {rid: certs for rid, certs in ever.items() if certs})


@dataclass(frozen=True)
class HandOff:
    """What the certificates say of the release's hand-off, as the status and home pages show it."""

    words: str
    """The whole verdict, in words."""
    tone: str
    """`ok` (certified), `bad` (not certified), `neutral` (nothing to certify, or no certificates shown)."""
    gating: tuple[str, ...]
    """The strata whose certificates gate it (empty when it is not certified)."""


def certificate_parts(page: str, rel: Release, steps: list[FlowStep], screening: ScreenReport | None,
                      certified: Certified | None
                      ) -> tuple[list[FlowStep], tuple[CertificateView, ...], str, HandOff | None,
                                 tuple[RescuedWork, ...]]:
    """The flow with each certificate on its stratum's box and the hand-off's verdict on its box, the list of the
    release's certificates, the list's note (why it is empty, else empty), the verdict, and the rescued works."""
    if certified is None:
        return steps, (), NO_WORKSPACE, None, ()
    certs = certified.of(rel.release_id)
    gate = hand_off(rel, certs, certified.settings, screening)
    notes: dict[str, tuple[FlowNote, ...]] = {}
    last = steps[-1].main if steps else None
    if last is not None:
        notes[last.key] = (FlowNote("The hand-off's certification:", gate.words, gate.tone),)
    if not certs:
        return compute.with_notes(steps, notes), (), NONE_YET, gate, ()
    known = rel.stats.rule_ids()
    ever = certified.ever(rel.release_id)
    views = []
    for cert in certs:
        meets, words = standing(cert, certified.settings, screening)
        box = compute.box_of(steps, cert.pile, cert.tier) if cert.kind not in ("domain-misses", "joint") else None
        role = ("gates the hand-off" if cert.stratum in gate.gating else
                "diagnosis only: the hand-off is gated by " + ", ".join(gate.gating) if gate.gating else
                "does not gate the hand-off now")
        if box is not None:
            note = FlowNote(f"Certificate of {cert.stratum}: {cert.summary}; {role}", words, TONES[meets])
            notes[box.key] = (*notes.get(box.key, ()), note)
        kept = sum(c.stratum == cert.stratum for c in ever)
        views.append(CertificateView(
            stratum=cert.stratum, anchor=f"cert-{slug(cert.stratum)}",
            rule=rule_link(page, rel.release_id, cert.rule, known),
            summary=cert.summary, standing=words, tone=TONES[meets], labelled=labelled(cert),
            recall_low=recall_low(cert), sheet=cert.sheet, sheet_sha256=cert.sheet_sha256,
            shown_on=box.title if box is not None else "not on the diagram",
            certificate=short_id(cert.id), page=href(page, certificate_path(rel.release_id, cert.id)),
            role=role, kept=(f"{count(kept, 'certificate')} of this stratum kept; this one supersedes "
                             f"{short_id(cert.supersedes)}" if cert.supersedes else
                             f"{count(kept, 'certificate')} of this stratum kept")))
    rescued = tuple(RescuedWork(w, paper_href([w]), cert.stratum, rule_link(page, rel.release_id, r or None, known),
                                short_id(cert.id))
                    for cert in certs for w, r in zip(cert.rescued, cert.rescued_rules))
    return compute.with_notes(steps, notes), tuple(views), "", gate, rescued


def discarding_names(rel: Release, screening: ScreenReport | None) -> tuple[str, ...]:
    """The release's discarding strata as the page knows them: its discard piles that hold works, and what each
    shown screening tier discarded (the same strata `reporter export --require-certified` gates on)."""
    stats = rel.stats
    names = [p.name for p in stats.pile_order if p.kind == "discard" and stats.piles.get(p.name)]
    for tier in (screening.tiers if screening is not None else ()):
        if tier.configured and dict(tier.outcomes).get("discard", 0):
            names.extend(name for name, of in SCREEN_STRATA.items() if of == tier.tier)
    return tuple(names)


def joint_size(rel: Release, screening: ScreenReport | None) -> int | None:
    """How many works the joint stratum holds now: the discard piles' and the shown tiers' discards (None when
    the page does not show the screen, whose discards it would need)."""
    stats = rel.stats
    piles = sum(stats.piles.get(p.name, 0) for p in stats.pile_order if p.kind == "discard")
    if screening is None:
        return None
    return piles + sum(dict(t.outcomes).get("discard", 0) for t in screening.tiers if t.configured)


def hand_off(rel: Release, certs: tuple[Certificate, ...], settings: CertifySettings,
             screening: ScreenReport | None) -> HandOff:
    """The hand-off's certification, from the certificates as recorded (`reporter export --require-certified`
    also recomputes each from its sheet): the joint stratum's certificate when it counts, else every discarding
    stratum's, held to the targets together (Bonferroni)."""
    names = discarding_names(rel, screening)
    if not names:
        return HandOff("nothing was discarded, so there is nothing to certify", "neutral", ())
    by = {c.stratum: c for c in certs}

    size = joint_size(rel, screening)

    def counts(c: Certificate | None) -> bool:
        if c is not None and c.kind == "joint" and (c.strata != list(names) or (size is not None and c.N != size)):
            return False  # the discards changed since: stale
        return (c is not None and not c.partial and c.confidence >= settings.confidence
                and standing(c, settings, screening)[1][:6] != "stale:")

    def said(chosen: tuple[Certificate, ...]) -> HandOff | None:
        base = min((c.found - c.k_relevant for c in chosen if c.found is not None), default=None)
        joint = joint_statement(chosen, settings, base)
        if joint.misses:
            return None
        missed = sum(joint.bounds) - sum(c.k_relevant for c in chosen)  # the samples' relevant works are rescued
        recall = (f"; recall at least {floor_percent(joint.recall_lower_bound)} ({joint.found:,} found)"
                  if joint.recall_lower_bound is not None else
                  "; recall unknown: the number of relevant works found is not recorded" if joint.found is None else "")
        target = (f", {percent(settings.min_recall)} recall required" if settings.min_recall is not None else
                  f", at most {percent(settings.max_missed_fraction)} of each stratum"
                  if settings.max_missed_fraction is not None else ", no target set")
        which = (f"one sample of everything discarded (certificate {short_id(chosen[0].id)})" if len(chosen) == 1
                 and chosen[0].kind == "joint" else
                 f"the certificates of {', '.join(c.stratum for c in chosen)}"
                 + (f", jointly (Bonferroni: each at {joint.each[0] * 100:.4g}%)" if len(chosen) > 1 else ""))
        return HandOff(f"certified by {which}: at most {count(missed, 'relevant work')} missed, at "
                       f"{percent(joint.confidence)}{recall}{target}", "ok", tuple(c.stratum for c in chosen))

    joint = by.get("discarded")
    if counts(joint) and (verdict := said((joint,))) is not None:
        return verdict
    if all(counts(by.get(n)) for n in names) and (verdict := said(tuple(by[n] for n in names))) is not None:
        return verdict
    lacking = [n for n in names if not counts(by.get(n))]
    why = (f"no certificate that counts for {', '.join(lacking)}" if lacking else "the certificates miss the target")
    return HandOff(f"not certified: {why}; one sample of everything discarded would do (reporter certify --plan "
                   f"--pile discarded says how large)", "bad", ())


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
    drawn = (f"sample {cert.sample_number} of the {cert.samples_drawn} drawn of this stratum"
             + (f"; a second seed, because: {cert.reseed}" if cert.reseed else ""))
    rows = f"{cert.n_labelled:,} of {count(cert.n_drawn, 'row')} labelled (seed {cert.seed}; {drawn})"
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
