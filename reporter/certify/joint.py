"""Several certificates as one statement: each bound recomputed so that all hold together (Bonferroni), held
to [certify]'s targets. The gate (`reporter export --require-certified`) and the status page both use it."""

from __future__ import annotations

from dataclasses import dataclass

from .bound import as_fraction, bonferroni, joint_confidence, max_relevant, recall_lower_bound
from .config import CertifySettings
from .record import Certificate, floor_percent, percent


@dataclass(frozen=True)
class JointStatement:
    """What complete, current certificates say together of the discards they cover (Bonferroni over m)."""

    misses: tuple[tuple[int, str], ...]
    """(index of the certificate, why) for each target missed; a recall miss names the first certificate."""
    confidence: float
    """The confidence at which every bound holds together."""
    each: tuple[float, ...]
    """The confidence each certificate's bound was recomputed at (1 - (1 - c)/m, or its own when higher)."""
    bounds: tuple[int, ...]
    """Each certificate's bound at that confidence."""
    found: int | None
    """Relevant works handed on, the samples' relevant works (rescued) counted; None when unknown."""
    recall_lower_bound: float | None
    """found / (found + sum of bounds - rescued), or None."""


def joint_statement(certs: tuple[Certificate, ...], settings: CertifySettings, base: int | None,
                    needs_found: str = "the recall bound needs the number of relevant works found") -> JointStatement:
    """The certificates' bounds recomputed (exactly, from N, n and k) so that all hold together at [certify]
    confidence (Bonferroni: each at 1 - (1 - c)/m, or at its own confidence when higher), held to the targets:
    max_missed_fraction for each bound, min_recall for found / (found + the bounds on what was missed). `base`:
    relevant works found without the samples (None: unknown)."""
    m = len(certs)
    each = [max(as_fraction(c.confidence), bonferroni(settings.confidence, m)) for c in certs]
    bounds = [max_relevant(c.N, c.n_labelled, c.k_relevant, conf) for c, conf in zip(certs, each)]
    misses: list[tuple[int, str]] = []
    target = settings.max_missed_fraction
    for i, (cert, conf, most) in enumerate(zip(certs, each, bounds)):
        if target is not None and most / cert.N > target:
            jointly = "" if m == 1 else (f" (jointly: each of the {m} strata at {float(conf) * 100:.4g}%, Bonferroni, "
                                         f"so that all hold at {percent(settings.confidence)})")
            misses.append((i, f"misses the target: at most {percent(most / cert.N)} relevant{jointly}, above "
                              f"{percent(target)}"))
    k = sum(c.k_relevant for c in certs)
    found = None if base is None else base + k
    low = None if found is None else recall_lower_bound(found, k, sum(bounds))
    if settings.min_recall is not None and not misses:
        if found is None:
            misses.append((0, needs_found))
        elif low is not None and low < as_fraction(settings.min_recall):
            names = certs[0].stratum if m == 1 else f"the {m} discarding strata"
            misses.append((0, f"misses the recall target: {names} hold at most {sum(bounds):,} relevant works at "
                              f"{percent(settings.confidence)} jointly, so recall is at least "
                              f"{floor_percent(float(low))} only ({found:,} found), {percent(settings.min_recall)} "
                              f"required"))
    return JointStatement(tuple(misses), float(joint_confidence(each)), tuple(float(c) for c in each), tuple(bounds),
                          found, None if low is None else float(low))
