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

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..plurals import count
from ..screening.scope import STATS_FILE, read_release_doc
from .certificate import state_dir, stratum_digest
from .results import Certificate, load_certificates
from .strata import SCREEN_STRATA, StratumWorks, stratum_named, stratum_works


def discarding_strata(ws: Any, release_dir: Path) -> tuple[StratumWorks, ...]:
    """The release's discard piles that hold works, then each configured tier's discards when it has any."""
    stats = read_release_doc(release_dir, STATS_FILE)
    found = [stratum_works(ws, release_dir, stratum_named(p["name"])) for p in stats["pile_order"]
             if p["kind"] == "discard" and stats["piles"].get(p["name"])]
    if ws.screen is not None:
        from ..screening.plan import readonly_store
        with readonly_store(ws) as store:
            for name, tier in SCREEN_STRATA.items():
                if getattr(ws.screen, tier):
                    works = stratum_works(ws, release_dir, stratum_named(name), store=store)
                    if works.work_ids:
                        found.append(works)
    return tuple(found)


def shortfall(ws: Any, works: StratumWorks, cert: Certificate | None) -> str | None:
    """Why a stratum is not certified (None when its certificate meets the target)."""
    if cert is None:
        return "no certificate"
    if cert.stratum_sha256 != stratum_digest(works):
        return (f"its certificate is stale: the stratum held {count(cert.N, 'work')} then and "
                f"{len(works.work_ids):,} now")
    meets, words = cert.standing(ws.certify)
    counts = meets is True or (meets is None and not cert.partial and cert.confidence >= ws.certify.confidence)
    return None if counts else words


def require_certified(ws: Any, release_dir: Path) -> None:
    """Refuse (InputError, exit 2) while a discarding stratum of the release lacks a certificate meeting the target."""
    strata = discarding_strata(ws, release_dir)
    if not strata:
        return
    certs = {c.stratum: c for c in load_certificates(state_dir(ws), strata[0].release_id)}
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
