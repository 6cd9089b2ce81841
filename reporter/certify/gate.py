"""`reporter export --require-certified`: no hand-off while a discarding stratum of the release lacks a
certificate that meets the target.

The discarding strata of a release are its piles of kind `discard` that hold
works, and what each configured screening tier discarded in its current
generation (`screen_cheap:discarded`, `screen:discarded`) when it discarded
anything. Each needs its own certificate (a rule's certificate covers that
rule's wins, not its pile), complete (not partial), at least at `[certify]
confidence`, of the stratum as it is now (a screen that discarded more since
makes it stale), and within `[certify] max_missed_fraction` when that is set.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from ..errors import InputError
from ..files import read_capped
from ..hashing import sha256_bytes
from ..plurals import count
from ..routing.artifacts import read_stats
from .certificate import confidence_of, measure, state_dir, stratum_digest
from .results import Certificate, certificate_path, load_certificates
from .sheet import MAX_SHEET_BYTES, parse_sheet
from .strata import SCREEN_STRATA, StratumWorks, stratum_named, stratum_works
from .config import CertifyWorkspace


def discarding_strata(ws: CertifyWorkspace, release_dir: Path) -> tuple[StratumWorks, ...]:
    """The release's discard piles that hold works, then each configured tier's discards when it has any."""
    stats = read_stats(release_dir)
    found = [stratum_works(ws, release_dir, stratum_named(p.name)) for p in stats.pile_order
             if p.kind == "discard" and stats.piles.get(p.name)]
    if ws.screen is not None:
        from ..panel.readonly import open_readonly
        from ..screening.config import WHERE
        with open_readonly(ws.screen.database, WHERE) as store:
            for name, tier in SCREEN_STRATA.items():
                if getattr(ws.screen, tier):
                    works = stratum_works(ws, release_dir, stratum_named(name), store=store)
                    if works.work_ids:
                        found.append(works)
    return tuple(found)


def shortfall(ws: CertifyWorkspace, works: StratumWorks, cert: Certificate | None) -> str | None:
    """Why a stratum is not certified (None when its certificate meets the target). A certificate that would
    count is first recomputed from its sheet (`verify`): one that disagrees is an InputError."""
    if cert is None:
        return "no certificate"
    now = stratum_digest(works)
    if cert.stratum_sha256 != now:
        if cert.N != len(works.work_ids):
            what = f"the stratum held {count(cert.N, 'work')} then and {len(works.work_ids):,} now"
        else:
            what = (f"the stratum holds as many works as then ({len(works.work_ids):,}) but not the same ones "
                    f"(their sha256 was {cert.stratum_sha256[:12]}, is {now[:12]} now)")
        return f"its certificate is stale: {what}"
    meets, words = cert.standing(ws.certify)
    counts = meets is True or (meets is None and not cert.partial and cert.confidence >= ws.certify.confidence)
    if counts:
        verify(ws, works, cert)
    return None if counts else words


RECOMPUTED_ELSEWHERE = ("sheet", "admitted_relevant", "recall_low")
"""Fields `verify` does not compare: the sheet is what it reads, and the screen's admitted includes may have
grown since (the reader checks recall_low against them)."""


def verify(ws: CertifyWorkspace, works: StratumWorks, cert: Certificate) -> None:
    """Recompute a certificate from the sheet it records and refuse it (InputError naming the certificate file,
    the field, the recorded and recomputed values) when the sheet's sha256 or any number disagrees."""
    path = certificate_path(state_dir(ws.root), cert.release, cert.stratum)
    sheet_path = Path(cert.sheet) if Path(cert.sheet).is_absolute() else Path(ws.root) / cert.sheet
    try:
        data = read_capped(sheet_path, MAX_SHEET_BYTES, f"{path}: the sheet it certified,")
    except FileNotFoundError:
        raise InputError(f"{path}: the sheet it certified, {sheet_path}, cannot be read (no such file); "
                         f"--require-certified recomputes every certificate from its sheet: put the sheet back, "
                         f"or certify it again where it is (reporter certify --sheet ...)") from None
    digest = sha256_bytes(data)
    if digest != cert.sheet_sha256:
        raise InputError(f"{path}: field 'sheet_sha256' records {cert.sheet_sha256}, but the sheet {sheet_path} "
                         f"hashes to {digest} now: the sheet changed since it was certified, or the certificate "
                         f"was edited; certify the sheet again (reporter certify --sheet {cert.sheet})")
    again = measure(ws, parse_sheet(data, sheet_path), works, confidence_of(cert.confidence, f"{path}: confidence"))
    wrong = [(f.name, getattr(cert, f.name), getattr(again, f.name)) for f in fields(Certificate)
             if f.name not in RECOMPUTED_ELSEWHERE and getattr(cert, f.name) != getattr(again, f.name)]
    if wrong:
        said = "; ".join(f"field {name!r} records {old!r}, recomputed {new!r}" for name, old, new in wrong)
        raise InputError(f"{path}: disagrees with its sheet {sheet_path}: {said}. A certificate is written by "
                         f"reporter certify --sheet, never by hand; certify the sheet again")


def require_certified(ws: CertifyWorkspace, release_dir: Path) -> None:
    """Refuse (InputError, exit 2) while a discarding stratum of the release lacks a certificate meeting the target."""
    strata = discarding_strata(ws, release_dir)
    if not strata:
        return
    certs = {c.stratum: c for c in load_certificates(state_dir(ws.root), strata[0].release_id)}
    missing = [(w, why) for w in strata if (why := shortfall(ws, w, certs.get(w.stratum.name))) is not None]
    if missing:
        lines = "; ".join(f"{w.stratum.name} ({count(len(w.work_ids), 'work')}): {why}" for w, why in missing)
        first = missing[0][0].stratum.name
        sheet = first.replace(":", "-").replace("/", "-")
        raise InputError(f"--require-certified: release {strata[0].release_id[:12]} has "
                         f"{count(len(missing), 'discarding stratum', 'discarding strata')} without a certificate "
                         f"that meets the target: {lines}. Nothing was written. "
                         f"Draw and label a sample (reporter certify --pile {first} --n 400 --out {sheet}.csv), "
                         f"then certify it (reporter certify --sheet ...); docs/certify.md")
