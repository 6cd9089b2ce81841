"""`reporter export --require-certified`: no hand-off until the release's discards are certified, jointly.

The discarding strata of a release are its piles of kind `discard` that hold
works, and what each configured screening tier discarded in its current
generation (`screen_cheap:discarded`, `screen:discarded`) when it discarded
anything. The hand-off is gated by one valid joint statement about all of
them:

- a certificate of the joint stratum `discarded` (their union) that counts:
  one simple sample bounds everything not handed on, at its own confidence;
- else a certificate of each discarding stratum, combined by Bonferroni: with
  m strata each bound is recomputed (exactly, from the certificate's N, n and
  k) at confidence 1 - (1 - c)/m, c being `[certify] confidence` (or the
  certificate's own when higher), so all m hold together at c.

A certificate counts when it is complete (not partial), at least at `[certify]
confidence`, of the stratum as it is now (a screen that discarded more since
makes it stale), and recomputed from its sheet (`verify`). The targets:
`[certify] max_missed_fraction` for each stratum's bound, and `[certify]
min_recall` for found / (found + the sum of the bounds on what was missed),
each when set. `gating_certificates` gives the ids of the certificates that
let a hand-off through (for the export's provenance).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import InputError
from ..files import read_capped
from ..hashing import sha256_bytes
from ..plurals import count
from .certificate import admitted_relevant, confidence_of, measure, state_dir, stratum_digest
from .plan import Plan, make_plan, needs_found
from .results import Certificate, certificate_path, joint_statement, load_certificates, percent
from .sheet import MAX_SHEET_BYTES, parse_sheet
from .strata import JOINT, StratumWorks, discarding_parts, joint_works
from .config import CertifyWorkspace


def discarding_strata(ws: CertifyWorkspace, release_dir: Path) -> tuple[StratumWorks, ...]:
    """The release's discard piles that hold works, then each configured tier's discards when it has any."""
    return discarding_parts(ws, release_dir)


@dataclass(frozen=True)
class Verdict:
    """What the gate says of a release's hand-off."""

    ok: bool
    """True when the hand-off may go."""
    gating: tuple[Certificate, ...]
    """The certificates that let it through (empty when refused, or when nothing was discarded)."""
    joint_confidence: float | None
    """The confidence at which the gating statement holds (None when refused or nothing to gate)."""
    found: int | None
    """Relevant works handed on, the rescued ones counted (None when unknown)."""
    recall_lower_bound: float | None
    """found / (found + the bound on what was missed), when found is known and the gate passed its bounds."""
    missing: tuple[tuple[StratumWorks, str], ...]
    """Each discarding stratum short of a certificate, and why."""
    joint: str | None
    """Why the joint stratum's certificate did not gate (None when it did, or there is none)."""
    plan: Plan | None
    """The sample of `discarded` that would meet the target (None without a target, or when found is unknown)."""
    plan_problem: str | None
    """Why there is no plan, in words."""


def basic_shortfall(works: StratumWorks, cert: Certificate | None, required: float) -> str | None:
    """Why a certificate cannot count whatever its bound: none, stale, partial, or too little confidence."""
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
    if cert.partial:
        return f"partial: {cert.n_labelled:,} of {count(cert.n_drawn, 'row')} labelled"
    if cert.confidence < required:
        return f"computed at {percent(cert.confidence)}, below the {percent(required)} required"
    return None


def judge(ws: CertifyWorkspace, parts: tuple[tuple[StratumWorks, Certificate], ...], base: int | None,
          joint: bool) -> tuple[list[tuple[StratumWorks, str]], float, int | None, float | None]:
    """Bounds of complete, current certificates, held to the targets together (`joint_statement`): (each stratum
    that misses and why, the joint confidence, found, the recall lower bound)."""
    said = joint_statement(tuple(c for _, c in parts), ws.certify, base, needs_found(ws))
    return [(parts[i][0], why) for i, why in said.misses], said.confidence, said.found, said.recall_lower_bound


def verdict(ws: CertifyWorkspace, release_dir: Path, *, check_sheets: bool = True) -> Verdict:
    """The gate's verdict for the release; `check_sheets`: recompute every gating certificate from its sheet
    (`verify`: an InputError when one disagrees)."""
    strata = discarding_strata(ws, release_dir)
    if not strata:
        return Verdict(True, (), None, None, None, (), None, None, None)
    release_id = strata[0].release_id
    certs = {c.stratum: c for c in load_certificates(state_dir(ws.root), release_id)}
    required = ws.certify.confidence
    admitted = admitted_relevant(ws, release_dir)
    union = joint_works(ws, release_dir, parts=strata)

    def base_of(chosen: list[Certificate]) -> int | None:
        recorded = [c.found - c.k_relevant for c in chosen if c.found is not None and c.found_from == "--found"]
        return admitted if admitted is not None else min(recorded) if recorded else None

    joint_cert = certs.get(JOINT)
    why_joint = basic_shortfall(union, joint_cert, required) if joint_cert is not None else None
    if joint_cert is not None and why_joint is None:
        missing, conf, found, low = judge(ws, ((union, joint_cert),), base_of([joint_cert]), True)
        if not missing:
            if check_sheets:
                verify(ws, union, joint_cert, release_dir)
            return Verdict(True, (joint_cert,), conf, found, low, (), None, None, None)
        why_joint = missing[0][1]
    short = [(w, why) for w in strata if (why := basic_shortfall(w, certs.get(w.stratum.name), required))]
    if not short:
        parts = tuple((w, certs[w.stratum.name]) for w in strata)
        missing, conf, found, low = judge(ws, parts, base_of([c for _, c in parts]), False)
        if not missing:
            if check_sheets:
                for w, c in parts:
                    verify(ws, w, c, release_dir)
            return Verdict(True, tuple(c for _, c in parts), conf, found, low, (), why_joint, None, None)
        short = missing
    plan, problem = None, None
    try:
        plan = make_plan(ws, union, admitted)
    except InputError as exc:
        problem = str(exc)
    return Verdict(False, (), None, None, None, tuple(short), why_joint, plan, problem)


RECOMPUTED_ELSEWHERE = ("sheet", "admitted_relevant", "recall_low", "found", "found_from", "recall_lower_bound",
                        "min_recall", "joint_confidence", "labeller", "criteria", "criteria_sha256", "drawn_by",
                        "drawn_at", "reseed", "samples_drawn", "sample_number", "certified_at", "supersedes", "id")
"""Fields `verify` does not compare: the sheet is what it reads; the screen's admitted includes may have grown
since (the reader checks recall_low against them); the rest say who, when and against what, not what the sheet
shows (the reader checks the id is the hash of them all)."""


def verify(ws: CertifyWorkspace, works: StratumWorks, cert: Certificate, release_dir: Path) -> None:
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
    again = measure(ws, parse_sheet(data, sheet_path), works, confidence_of(cert.confidence, f"{path}: confidence"),
                    release_dir)
    wrong = [(f.name, getattr(cert, f.name), getattr(again, f.name)) for f in fields(Certificate)
             if f.name not in RECOMPUTED_ELSEWHERE and getattr(cert, f.name) != getattr(again, f.name)]
    if wrong:
        said = "; ".join(f"field {name!r} records {old!r}, recomputed {new!r}" for name, old, new in wrong)
        raise InputError(f"{path}: disagrees with its sheet {sheet_path}: {said}. A certificate is written by "
                         f"reporter certify --sheet, never by hand; certify the sheet again")


def refusal(v: Verdict, release_id: str) -> str:
    """The words of a refused hand-off: each stratum short of a certificate and why, and the plan's n."""
    lines = "; ".join(f"{w.stratum.name} ({count(len(w.work_ids), 'work')}): {why}" for w, why in v.missing)
    joint = f" The joint stratum {JOINT}'s certificate does not gate it: {v.joint}." if v.joint else ""
    if v.plan is not None:
        n0 = v.plan.n_for_k["0"]
        draw = (f" Plan: {v.plan.words()}. Draw one sample of everything discarded (reporter certify --pile {JOINT} "
                f"--n {n0 if n0 is not None else v.plan.N} --out {JOINT}.csv), label it, then certify it (reporter "
                f"certify --sheet ...); reporter certify --plan --pile {JOINT} says the same; docs/certify.md")
    else:
        draw = (f" No plan: {v.plan_problem} Draw and label a sample (reporter certify --pile {JOINT} --n N --out "
                f"{JOINT}.csv), then certify it (reporter certify --sheet ...); docs/certify.md")
    return (f"--require-certified: release {release_id[:12]} has "
            f"{count(len(v.missing), 'discarding stratum', 'discarding strata')} without a certificate that meets "
            f"the target: {lines}. Nothing was written.{joint}{draw}")


def require_certified(ws: CertifyWorkspace, release_dir: Path) -> tuple[str, ...]:
    """Refuse (InputError, exit 2) while the release's discards lack a certificate meeting the target; else the
    ids of the certificates that let the hand-off through."""
    v = verdict(ws, release_dir)
    if not v.ok:
        raise InputError(refusal(v, discarding_strata(ws, release_dir)[0].release_id))
    return tuple(c.id for c in v.gating)


def gating_certificates(ws: CertifyWorkspace, release_dir: Path) -> tuple[str, ...]:
    """The ids of the certificates that allow the release's hand-off (each recomputed from its sheet), in the
    order of the discarding strata (one: the joint stratum's); empty when nothing was discarded. An InputError
    (exit 2) names what is short when the hand-off is not certified. For the export's provenance."""
    return require_certified(ws, release_dir)
