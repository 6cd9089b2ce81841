"""Certificates as the workspace's state records them: one JSON file per stratum of a release, and its reader.

Every certificate is kept for good at `state/certify/<release id>/<stratum>/<id>.json`
(the stratum's name made safe for a file name by `reporter.naming.slug`; the
id is the sha256 of the certificate's own fields) and never overwritten; the
stratum's current one, the view, is also at `state/certify/<release
id>/<stratum>.json` (`discard.json`, `screen-discarded-1a2b3c4d.json`). A new
certificate supersedes the current one (`supersedes`: its id), except that a
partial one never supersedes a complete one: it is kept beside it and said
so. Written through the one file layer (atomic: the old file or the new one,
never half of one). The pages read
them with `load_certificates(state_dir(root), release_id)` (the site's one
reader of this stage) and show each with `Certificate.summary` and, against
`[certify]`'s target (`CertifySettings`, the workspace's `certify`),
`standing`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..errors import InputError
from ..files import TEMP_PREFIX, parse_json, read_capped, write_json
from ..naming import slug
from .config import CertifySettings
from .joint import JointStatement, joint_statement
from .record import (MAX_COUNT, MAX_SEED, SCHEMA_VERSION, Certificate, floor_percent, percent, recall_bound, recall_of,
                     with_id)
from .strata import SCREEN_STRATA, Stratum, parse_stratum

__all__ = ["CERTIFY_DIR", "MAX_COUNT", "MAX_SEED", "SCHEMA_VERSION", "SCREEN_STRATA", "STATE_DIR", "Certificate",
           "CertifySettings", "JointStatement", "Written", "all_certificates", "archive_path", "certificate_history",
           "certificate_path", "floor_percent", "joint_statement", "load_certificates", "percent", "read_certificate",
           "recall_bound", "rescued_works", "state_dir", "write_certificate"]

STATE_DIR = "state"
"""The workspace's state folder (beside reporter.toml): certificates go to state/certify/."""
CERTIFY_DIR = "certify"
"""The certificates' folder inside the workspace's state folder (`state/certify/`)."""


def state_dir(root: Path) -> Path:
    """The state folder of the workspace in `root` (where `load_certificates` looks for its certificates)."""
    return Path(root) / STATE_DIR


def certificate_path(state_dir: Path, release_id: str, stratum: str) -> Path:
    """state/certify/<release>/<slug of the stratum>.json."""
    return Path(state_dir) / CERTIFY_DIR / release_id / f"{slug(stratum)}.json"


def archive_path(state_dir: Path, release_id: str, stratum: str, cert_id: str) -> Path:
    """state/certify/<release>/<slug of the stratum>/<id>.json: where a certificate is kept for good."""
    return Path(state_dir) / CERTIFY_DIR / release_id / slug(stratum) / f"{cert_id}.json"


@dataclass(frozen=True)
class Written:
    """A certificate just written."""

    certificate: Certificate
    """It, with its id and what it supersedes."""
    path: Path
    """Where it is kept for good."""
    current: bool
    """True when it is now the stratum's certificate in the view."""
    beside: Certificate | None
    """The complete certificate a partial one was kept beside (not superseding it), else None."""


def write_certificate(state_dir: Path, certificate: Certificate) -> Written:
    """Keep the certificate for good (never overwriting one) and make it the stratum's current one, superseding
    the earlier one, unless it is partial and the current one is complete: then it is kept beside it."""
    view = certificate_path(state_dir, certificate.release, certificate.stratum)
    current = read_certificate(view) if view.exists() else None
    beside = current if current is not None and certificate.partial and not current.partial else None
    cert = with_id(replace(certificate, supersedes=None if current is None or beside is not None else current.id))
    path = archive_path(state_dir, cert.release, cert.stratum, cert.id)
    if not path.exists():  # the same id is the same certificate, byte for byte
        write_json(path, cert.to_json())
    if beside is None:
        write_json(view, cert.to_json())
    return Written(cert, path, beside is None, beside)


def all_certificates(state_dir: Path, release_id: str) -> tuple[Certificate, ...]:
    """Every certificate ever written of a release, every stratum, by stratum then oldest first (the pages)."""
    folder = Path(state_dir) / CERTIFY_DIR / release_id
    if not folder.is_dir():
        return ()
    views = load_certificates(state_dir, release_id)
    return tuple(c for view in views for c in certificate_history(state_dir, release_id, view.stratum))


def certificate_history(state_dir: Path, release_id: str, stratum: str) -> tuple[Certificate, ...]:
    """Every certificate ever written of a stratum of a release, oldest first."""
    folder = Path(state_dir) / CERTIFY_DIR / release_id / slug(stratum)
    if not folder.is_dir():
        return ()
    found = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith(TEMP_PREFIX):
            continue
        cert = read_certificate(path)
        if path != archive_path(state_dir, release_id, cert.stratum, cert.id) or cert.stratum != stratum:
            raise InputError(f"{path}: holds the certificate {cert.id[:12]} of {cert.stratum!r} in release "
                             f"{cert.release[:12]}, which belongs elsewhere; a certificate is never moved or edited")
        found.append(cert)
    return tuple(sorted(found, key=lambda c: (c.certified_at, c.id)))


_FIELDS = {f.name: f for f in fields(Certificate)}
_KINDS = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}
MAX_CERTIFICATE_BYTES = 16 * 1024 * 1024
"""The most a certificate file may hold (one is about 2 KB; its rescued works, one id each, are what grows)."""
STRATUM_KINDS = ("pile", "wins", "domain-misses", "screen", "joint")
"""What `kind` may say."""
_HEX64 = re.compile(r"[0-9a-f]{64}")


def load_certificates(state_dir: Path, release_id: str) -> tuple[Certificate, ...]:
    """Every certificate of a release in the workspace state (`state_dir`: its `state/` folder), by stratum
    name; none when there is none. A file that is not a certificate of this release is refused, named."""
    folder = Path(state_dir) / CERTIFY_DIR / release_id
    if not folder.is_dir():
        return ()
    found = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith(TEMP_PREFIX):  # a write in progress, or a killed run's
            continue
        cert = read_certificate(path)
        if cert.release != release_id or path != certificate_path(state_dir, release_id, cert.stratum):
            raise InputError(f"{path}: holds the certificate of {cert.stratum!r} in release {cert.release[:12]}, "
                             f"which belongs elsewhere; certify the sheet again (reporter certify --sheet)")
        found.append(cert)
    return tuple(sorted(found, key=lambda c: c.stratum))


def read_certificate(path: Path) -> Certificate:
    """One certificate file, read with a size cap and checked whole: each field's type, its range (finite
    numbers, counts that fit one another, hashes of 64 hex), and the fields computed from others
    (`max_missed_fraction`, `partial`, `recall_low`). Anything else is an InputError naming the file and field.
    The bound itself is recomputed from the sheet by `reporter export --require-certified` (`verify`)."""
    path = Path(path)
    try:
        data = read_capped(path, MAX_CERTIFICATE_BYTES, "certificate")
    except FileNotFoundError:
        raise InputError(f"certificate {path}: vanished while it was read (or is a link to nothing); "
                         f"certify the sheet again") from None
    doc = parse_json(data, str(path))
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
        raise InputError(f"{path}: not a certificate of schema_version {SCHEMA_VERSION}")
    unknown = sorted(set(doc) - set(_FIELDS) - {"schema_version"})
    if unknown:
        raise InputError(f"{path}: field {unknown[0]!r} is not a field of a certificate; a certificate is written "
                         f"by reporter certify --sheet, never by hand: certify the sheet again")
    values = {}
    for name, field in _FIELDS.items():
        if name not in doc:
            raise InputError(f"{path}: lacks the field {name!r}; certify the sheet again")
        value, kind = doc[name], str(field.type)
        if kind == "list[str]":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InputError(f"{path}: field {name!r} must be a list of strings, not {value!r}")
            values[name] = value
            continue
        allowed = tuple(t for part in kind.split(" | ") for t in _KINDS.get(part, ()))
        ok = (value is None and "None" in kind) or (isinstance(value, allowed)
                                                   and (bool not in allowed) == (not isinstance(value, bool)))
        if not ok:
            raise InputError(f"{path}: field {name!r} must be {kind}, not {value!r}")
        values[name] = float(value) if kind.startswith("float") and value is not None else value
    cert = Certificate(**values)
    problem = _inconsistency(cert)
    if problem is not None:
        name, why = problem
        raise InputError(f"{path}: field {name!r} {why}; a certificate is written by reporter certify --sheet, "
                         f"never by hand: certify the sheet again")
    return cert


def _inconsistency(c: Certificate) -> tuple[str, str] | None:
    """The first field out of its range or disagreeing with the others, and why; None when all hold."""
    for name in ("N", "n", "n_drawn", "n_labelled", "k_relevant", "includes", "unsure", "max_relevant",
                 "admitted_relevant", "found", "samples_drawn", "sample_number"):
        value = getattr(c, name)
        if value is not None and not 0 <= value <= MAX_COUNT:
            return name, f"{value} is not a count from 0 to {MAX_COUNT:,}"
    for name in ("confidence", "max_missed_fraction", "recall_low", "recall_lower_bound", "min_recall",
                 "joint_confidence"):
        value = getattr(c, name)
        if value is not None and not math.isfinite(value):
            return name, f"{value} is not a finite number"
    for name in ("N", "n"):
        if getattr(c, name) < 1:
            return name, "0 is not the size of a stratum or sample that was drawn (at least 1)"
    named = _named(c.stratum)
    checks: list[tuple[str, bool, str]] = [
        ("release", bool(_HEX64.fullmatch(c.release)), f"{c.release!r} is not a release id (64 hex)"),
        ("stratum_sha256", bool(_HEX64.fullmatch(c.stratum_sha256)), f"{c.stratum_sha256!r} is not a sha256"),
        ("sheet_sha256", bool(_HEX64.fullmatch(c.sheet_sha256)), f"{c.sheet_sha256!r} is not a sha256"),
        ("sheet", bool(c.sheet.strip()) and "\0" not in c.sheet, f"{c.sheet!r} is not a file's path"),
        ("stratum", named is not None, f"{c.stratum!r} is not a stratum's name"),
        ("kind", c.kind in STRATUM_KINDS, f"{c.kind!r} is not one of {', '.join(STRATUM_KINDS)}"),
        *((name, getattr(c, name) == getattr(named, name), f"{getattr(c, name)!r} is not the {name} of stratum "
           f"{c.stratum!r}") for name in ("kind", "pile", "rule", "tier") if named is not None),
        ("generation", (c.generation is not None) == (c.kind == "screen") and
         (c.generation is None or bool(_HEX64.fullmatch(c.generation))),
         f"{c.generation!r} is not a screen generation (64 hex) of a {c.kind} stratum"),
        ("seed", 0 <= c.seed <= MAX_SEED, f"{c.seed} is not a seed from 0 to {MAX_SEED}"),
        ("confidence", 0 < c.confidence < 1, f"{c.confidence} is not above 0 and below 1"),
        ("n_drawn", c.n_drawn == min(c.n, c.N), f"{c.n_drawn} is not min(n, N) = {min(c.n, c.N)}"),
        ("n_labelled", c.n_labelled <= c.n_drawn, f"{c.n_labelled} is more than n_drawn {c.n_drawn}"),
        ("k_relevant", c.k_relevant == c.includes + c.unsure,
         f"{c.k_relevant} is not includes + unsure = {c.includes + c.unsure}"),
        ("k_relevant", c.k_relevant <= c.n_labelled, f"{c.k_relevant} is more than n_labelled {c.n_labelled}"),
        ("max_relevant", c.max_relevant >= c.k_relevant, f"{c.max_relevant} is below k_relevant {c.k_relevant}"),
        ("max_relevant", c.max_relevant <= c.N - (c.n_labelled - c.k_relevant),
         f"{c.max_relevant} is more than the {c.N - (c.n_labelled - c.k_relevant):,} works the sample leaves "
         f"possible"),
        ("max_missed_fraction", c.max_missed_fraction == c.max_relevant / c.N,
         f"{c.max_missed_fraction} is not max_relevant / N = {c.max_relevant / c.N}"),
        ("partial", c.partial == (c.n_labelled < c.n_drawn), f"{c.partial} does not say n_labelled < n_drawn"),
        ("labelled_prefix", c.partial or c.labelled_prefix, "false on a sheet whose every row is labelled"),
        ("recall_low", c.recall_low == recall_bound(c.admitted_relevant, c.max_relevant),
         f"{c.recall_low} is not admitted_relevant / (admitted_relevant + max_relevant)"),
        ("strata", bool(c.strata) and (c.kind == "joint" or c.strata == [c.stratum])
         and all(_named(s) is not None for s in c.strata), f"{c.strata!r} is not what stratum {c.stratum!r} "
         f"speaks for"),
        ("found", c.found is None or c.found >= c.k_relevant, f"{c.found} counts fewer than the sample's "
         f"{c.k_relevant} relevant works"),
        ("found_from", (c.found_from is None) == (c.found is None) and c.found_from in (None, "--found", "labels"),
         f"{c.found_from!r} does not say where found ({c.found}) came from"),
        ("recall_lower_bound", c.recall_lower_bound is None or c.recall_lower_bound == recall_of(c),
         f"{c.recall_lower_bound} is not found / (found + max_relevant - k_relevant)"),
        ("min_recall", c.min_recall is None or 0 < c.min_recall <= 1, f"{c.min_recall} is not above 0 and at most 1"),
        ("joint_confidence", 0 <= c.joint_confidence <= c.confidence,
         f"{c.joint_confidence} is not from 0 to the confidence {c.confidence}"),
        ("rescued", len(c.rescued) == c.k_relevant and len(set(c.rescued)) == len(c.rescued),
         f"lists {len(c.rescued)} works, not the sample's {c.k_relevant} relevant ones"),
        ("rescued_rules", len(c.rescued_rules) == len(c.rescued), "is not one rule per rescued work"),
        ("criteria_sha256", (c.criteria is None) == (c.criteria_sha256 is None) and
         (c.criteria_sha256 is None or bool(_HEX64.fullmatch(c.criteria_sha256))),
         f"{c.criteria_sha256!r} is not the sha256 of the criteria {c.criteria!r}"),
        ("sample_number", 1 <= c.sample_number <= c.samples_drawn,
         f"{c.sample_number} is not one of the {c.samples_drawn} samples drawn"),
        ("supersedes", c.supersedes is None or bool(_HEX64.fullmatch(c.supersedes)),
         f"{c.supersedes!r} is not a certificate's id (64 hex)"),
        ("id", c.id == with_id(c).id, f"{c.id!r} is not the sha256 of the certificate's fields: it was edited"),
    ]
    return next(((name, why) for name, ok, why in checks if not ok), None)


def _named(stratum: str) -> Stratum | None:
    """The stratum a certificate's name says (None when it is not a stratum's name)."""
    try:
        return parse_stratum(stratum, "certificate")
    except InputError:
        return None


def rescued_works(state_dir: Path, release_id: str) -> dict[str, str]:
    """Work id -> the id of the release's current certificate whose sample found it relevant (the first by
    stratum name, when two did): what `reporter export` adds to the hand-off."""
    found: dict[str, str] = {}
    for cert in load_certificates(state_dir, release_id):
        for work_id in cert.rescued:
            found.setdefault(work_id, cert.id)
    return found
