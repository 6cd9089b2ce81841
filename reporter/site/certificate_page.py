"""Each certificate's own page: archived, like a release page, at `releases/<id>/certificates/<certificate id>`.

A certificate is never overwritten and its id is the sha256 of its fields,
so its page, built from it alone, never changes: it is written once and
kept. It says what a reviewer signs (docs/certify.md): the population, the
sample, what relevant means, who labelled and when, the confidence, the
bound, the recall bound against the target recorded with it, and what
happens at the next release. Which certificate is current and which gate
the hand-off is said on the status page, which is rebuilt.
"""

from __future__ import annotations

from ..certify.results import Certificate, floor_percent, percent
from ..plurals import count
from ..routing.artifacts import Release
from .links import href, paper_href, status_path
from .models import CertificatePage, RescuedWork, Row
from .page_parts import meta, release_name, rule_link, short_id

TONES = {True: "ok", False: "bad", None: "neutral"}


def certificate_path(release_id: str, cert_id: str) -> str:
    """The archived page of one certificate."""
    return f"releases/{release_id}/certificates/{cert_id}"


def statement(cert: Certificate) -> tuple[str, bool | None]:
    """The whole verdict in one paragraph, and whether it meets the recall target recorded with it."""
    strata = (f"everything the release and its screen discarded ({', '.join(cert.strata)})" if cert.kind == "joint"
              else f"the stratum {cert.stratum}")
    text = (f"Of the {count(cert.N, 'work')} of {strata}, a seeded uniform sample of {cert.n_drawn:,} was drawn and "
            f"{cert.n_labelled:,} labelled; {cert.k_relevant:,} of them relevant. With {percent(cert.confidence)} "
            f"confidence, at most {cert.max_relevant:,} of the {count(cert.N, 'work')} are relevant "
            f"({percent(cert.max_missed_fraction)}).")
    if cert.partial:
        text += f" Partial: {cert.n_labelled:,} of {count(cert.n_drawn, 'row')} labelled."
    if cert.joint_confidence < cert.confidence:
        text += (f" It is one of the release's discarding strata: with the others certified at the same confidence, "
                 f"all hold together at {percent(cert.joint_confidence)} only (Bonferroni); the hand-off's gate "
                 f"recomputes each so that together they hold at the confidence required.")
    if cert.recall_lower_bound is not None:
        text += (f" Recall lower bound: {floor_percent(cert.recall_lower_bound)} ({cert.found:,} relevant works "
                 f"found, {cert.k_relevant:,} of them in this sample; at most {cert.max_relevant - cert.k_relevant:,} "
                 f"missed).")
    elif cert.found is None and cert.kind == "joint":
        text += (" The recall bound needs the number of relevant works found (reporter certify --found N, or a "
                 "labels file that labels the admitted works); it was not known.")
    meets, words = cert.recall_standing()
    return f"{text} {words[0].upper()}{words[1:]}.", meets


def build_certificate_page(rel: Release, cert: Certificate) -> CertificatePage:
    """The archived page of one certificate of the release."""
    page = certificate_path(rel.release_id, cert.id)
    known = rel.stats.rule_ids()
    text, meets = statement(cert)
    labelled = (f"{cert.n_labelled:,} of {count(cert.n_drawn, 'row')}"
                + (f" (partial; {'the first rows' if cert.labelled_prefix else 'not the first rows'})"
                   if cert.partial else ""))
    rows = (
        Row("population", f"release {rel.release_id}; {cert.stratum}"
            + (f" (the union of {', '.join(cert.strata)})" if cert.kind == "joint" else "")
            + f"; N = {cert.N:,}"),
        Row("sample", f"seed {cert.seed}, n {cert.n:,} asked, {cert.n_drawn:,} drawn, {labelled} labelled; sample "
            f"{cert.sample_number} of the {cert.samples_drawn} drawn of this stratum"
            + (f"; a second seed, because: {cert.reseed}" if cert.reseed else "")),
        Row("relevant means", (f"{cert.criteria} (sha256 {cert.criteria_sha256})" if cert.criteria else
                               "not recorded: no criteria document or labels file was configured")
            + "; a label of include or unsure"),
        Row("labelled by", cert.labeller or "not said (reporter certify --labeller NAME)"),
        Row("sheet drawn", f"{cert.drawn_at or 'not recorded'} by {cert.drawn_by or 'someone unrecorded'}"),
        Row("certified", cert.certified_at or "not recorded"),
        Row("confidence", percent(cert.confidence)
            + (f"; jointly with the release's other discarding strata {percent(cert.joint_confidence)} (Bonferroni)"
               if cert.joint_confidence < cert.confidence else "")),
        Row("bound", f"at most {cert.max_relevant:,} relevant ({percent(cert.max_missed_fraction)}); "
            f"{cert.k_relevant:,} relevant in the sample ({cert.includes:,} include, {cert.unsure:,} unsure)"),
        Row("recall lower bound", floor_percent(cert.recall_lower_bound) if cert.recall_lower_bound is not None
            else "needs the number of relevant works found, and a certificate of every discard" if cert.found is None
            else "this stratum is one of several: the hand-off's recall is bounded jointly (status page)"),
        Row("recall target", f"{percent(cert.min_recall)} ({cert.recall_standing()[1]})"
            if cert.min_recall is not None else "none set ([certify] min_recall)"),
        Row("sheet", f"{cert.sheet} (sha256 {cert.sheet_sha256})"),
        Row("certificate id", cert.id),
        Row("supersedes", cert.supersedes or "none"),
    )
    rescued = tuple(RescuedWork(w, paper_href([w]), cert.stratum, rule_link(page, rel.release_id, r or None, known),
                                short_id(cert.id)) for w, r in zip(cert.rescued, cert.rescued_rules))
    meaning = (f"Had the discards held more relevant works than the bound, a sample like this one would have shown "
               f"as few as it did less than {percent(1 - cert.confidence)} of the time. It says nothing of works never "
               f"in the pool, and relevance is as the labels say.")
    return CertificatePage(
        meta=meta(page, f"Certificate {short_id(cert.id)} of {cert.stratum}",
                  [("Home", "index"), (f"Release {short_id(rel.release_id)}", status_path(rel.release_id))],
                  archived=True),
        name=release_name(page, rel), statement=text, tone=TONES[meets], rows=rows, rescued=rescued,
        status=href(page, status_path(rel.release_id)),
        supersedes=href(page, certificate_path(rel.release_id, cert.supersedes)) if cert.supersedes else None,
        meaning=meaning)

