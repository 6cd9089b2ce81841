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
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import TEMP_PREFIX, parse_json, read_capped, write_json
from ..hashing import sha256_json
from ..naming import slug
from ..plurals import count
from .bound import as_fraction, bonferroni, joint_confidence, max_relevant, recall_lower_bound
from .config import CertifySettings
from .strata import Stratum, parse_stratum

SCHEMA_VERSION = 2
STATE_DIR = "state"
"""The workspace's state folder (beside reporter.toml): certificates go to state/certify/."""
CERTIFY_DIR = "certify"
"""The certificates' folder inside the workspace's state folder (`state/certify/`)."""


def state_dir(root: Path) -> Path:
    """The state folder of the workspace in `root` (where `load_certificates` looks for its certificates)."""
    return Path(root) / STATE_DIR


@dataclass(frozen=True)
class Certificate:
    """What a labelled sample says of one stratum of one release."""

    release: str
    """The release id."""
    stratum: str
    """The stratum's name (`discard`, `discard/rule:ID`, `domain-misses/rule:ID`, `screen:discarded`, ...)."""
    kind: str
    """`pile`, `wins`, `domain-misses` or `screen`."""
    pile: str | None
    """The routing pile of a `pile` or `wins` stratum (the flow box it belongs on), else None."""
    rule: str | None
    """The rule of a `wins` or `domain-misses` stratum (the rule page it belongs on), else None."""
    tier: str | None
    """The screening tier of a `screen` stratum (`expensive`, `cheap`), else None."""
    generation: str | None
    """For a `screen` stratum, the tier's generation whose discards were sampled, else None."""
    N: int
    """Works in the stratum when the sheet was certified."""
    seed: int
    """The sample's seed."""
    n: int
    """The sample size asked for."""
    n_drawn: int
    """Works in the sample (min(n, N)): the sheet's rows."""
    n_labelled: int
    """Rows labelled: the sample the bound is computed on."""
    k_relevant: int
    """Labelled rows that are relevant (include or unsure)."""
    includes: int
    """Rows labelled include."""
    unsure: int
    """Rows labelled unsure (counted relevant)."""
    confidence: float
    """The confidence of the bound (0.95)."""
    max_relevant: int
    """At most this many of the N works are relevant, at that confidence (exact hypergeometric bound)."""
    max_missed_fraction: float
    """max_relevant / N."""
    partial: bool
    """True when some rows of the sheet are not labelled (the bound is over the labelled rows only)."""
    labelled_prefix: bool
    """True when the labelled rows are the sheet's first n_labelled rows: then they are themselves the
    seeded sample of that size and a partial certificate is as valid as a complete one of its size."""
    admitted_relevant: int | None
    """Works the expensive screen admitted (current generation) that the workspace's labels call include, or
    None without labels or screen verdicts."""
    recall_low: float | None
    """admitted_relevant / (admitted_relevant + max_relevant): a lower bound on the recall against this
    stratum's losses, at the same confidence; None when admitted_relevant is None (or both are 0)."""
    stratum_sha256: str
    """sha256 of the stratum's sorted work ids: a later change to the stratum makes the certificate stale."""
    sheet: str
    """The sheet certified, as given (relative to the workspace when inside it)."""
    sheet_sha256: str
    """The sheet's sha256."""
    strata: list[str]
    """The discarding strata the certificate speaks for: the joint stratum's parts, else its own name."""
    found: int | None
    """Relevant works handed on, counting the sample's own relevant works (rescued into the hand-off): the
    workspace's labels of the admitted works or `--found N`, plus k_relevant; None when unknown."""
    found_from: str | None
    """Where `found` came from: `--found` or `labels`; None when unknown."""
    recall_lower_bound: float | None
    """found / (found + max_relevant - k_relevant): recall is at least this, at `confidence`, when the
    certificate speaks for every discarding stratum (`strata`); None otherwise or when found is unknown."""
    min_recall: float | None
    """`[certify] min_recall` when certified (the recall target), or None."""
    joint_confidence: float
    """The confidence at which the hand-off's gate holds when this certificate gates it with the release's other
    discarding strata (Bonferroni: 1 - m (1 - confidence) for m strata); its own confidence when it speaks for
    all of them."""
    rescued: list[str]
    """The sample's relevant works (include or unsure), in sheet order: they join the hand-off."""
    rescued_rules: list[str]
    """The rule that routed each rescued work (empty when none did)."""
    labeller: str | None
    """Who labelled the sheet (`--labeller`), or None when not said."""
    criteria: str | None
    """What relevant means: the criteria document ([screen] criteria), else the labels file, as a path."""
    criteria_sha256: str | None
    """That file's sha256."""
    drawn_by: str | None
    """Who drew the sheet (the seed registry)."""
    drawn_at: str | None
    """When the sheet was drawn (UTC, ISO 8601)."""
    reseed: str | None
    """Why this sample's seed is not the stratum's first (`--reseed REASON`), or None."""
    samples_drawn: int
    """Sheets drawn for this stratum of this release when certified (the seed registry)."""
    sample_number: int
    """Which of them this certificate uses (1 is the first)."""
    certified_at: str
    """When it was certified (UTC, ISO 8601)."""
    supersedes: str | None
    """The id of the certificate of the stratum it replaced in the view, or None."""
    id: str
    """sha256 of every other field (canonical JSON): the certificate's name for good."""

    @property
    def summary(self) -> str:
        """One line, as the status page's flow box shows it:
        `355,211 works; 400 sampled, 1 relevant: at most 4,120 relevant (1.2%), 95%`."""
        labelled = f", {self.n_labelled:,} labelled" if self.partial else ""
        partial = " (partial)" if self.partial else ""
        return (f"{count(self.N, 'work')}; {self.n_drawn:,} sampled{labelled}, {self.k_relevant:,} relevant: at most "
                f"{self.max_relevant:,} relevant ({percent(self.max_missed_fraction)}), "
                f"{percent(self.confidence)}{partial}")

    def standing(self, settings: CertifySettings) -> tuple[bool | None, str]:
        """(meets, in words) against [certify]: True meets the target, False misses it, None no target set.

        A partial certificate, or one below `[certify] confidence`, never meets a target.
        """
        target = settings.max_missed_fraction
        if self.partial:
            return (False if target is not None else None,
                    f"partial: {self.n_labelled:,} of {count(self.n_drawn, 'row')} labelled")
        if self.confidence < settings.confidence:
            return (False if target is not None else None,
                    f"computed at {percent(self.confidence)}, below the {percent(settings.confidence)} required")
        if target is None:
            return None, "no target set ([certify] max_missed_fraction)"
        if self.max_missed_fraction <= target:
            return True, (f"meets the target: at most {percent(self.max_missed_fraction)} relevant, within "
                          f"{percent(target)}")
        return False, f"misses the target: at most {percent(self.max_missed_fraction)} relevant, above {percent(target)}"

    def to_json(self) -> dict[str, Any]:
        """The state file's document."""
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    def recall_standing(self) -> tuple[bool | None, str]:
        """(meets, words) against the recall target recorded (`min_recall`): None when none is set."""
        if self.min_recall is None:
            return None, "no recall target set ([certify] min_recall)"
        if self.found is None:
            return False, ("the recall bound needs the number of relevant works found: give --found N, or a labels "
                           "file that labels the admitted works")
        if self.recall_lower_bound is None:
            return False, "the recall bound covers only this stratum; the hand-off is gated jointly"
        low = floor_percent(self.recall_lower_bound)
        if self.recall_lower_bound >= self.min_recall:
            return True, f"meets the recall target: recall at least {low}, at least {percent(self.min_recall)} required"
        return False, f"misses the recall target: recall at least {low} only, {percent(self.min_recall)} required"


def with_id(cert: Certificate) -> Certificate:
    """The certificate with its id: the sha256 of its other fields."""
    doc = asdict(cert)
    doc.pop("id")
    return replace(cert, id=sha256_json(doc))


def floor_percent(share: float) -> str:
    """A lower bound as a percentage, rounded down to a tenth (never up): 0.9499 -> 94.9%."""
    return f"{math.floor(round(share * 1000, 6)) / 10:.1f}%"


def percent(share: float) -> str:
    """A share as a percentage with two significant digits below 10%: 0.95 -> 95%, 0.0118 -> 1.2%, 0.00746 -> 0.75%."""
    value = share * 100
    if value == 0:
        return "0%"
    digits = 0 if value >= 10 else 1 if value >= 1 else 1 - math.floor(math.log10(value))
    text = f"{value:.{digits}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


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
MAX_COUNT = 2 ** 63 - 1
"""The largest count (N, n, ...) a certificate or a sheet may hold."""
MAX_SEED = 2 ** 64 - 1
"""The largest seed: the sample's hash is 64-bit, so seeds are 0..2^64-1 (a larger one would wrap)."""
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


def recall_of(c: Certificate) -> float | None:
    """The recall lower bound a certificate's numbers give (found / (found + max_relevant - k_relevant))."""
    if c.found is None:
        return None
    low = recall_lower_bound(c.found, c.k_relevant, c.max_relevant)
    return None if low is None else float(low)


def recall_bound(admitted: int | None, most: int) -> float | None:
    """admitted / (admitted + most): the lower bound on recall (None without admissions, or when both are 0)."""
    return None if admitted is None or admitted + most == 0 else admitted / (admitted + most)


def rescued_works(state_dir: Path, release_id: str) -> dict[str, str]:
    """Work id -> the id of the release's current certificate whose sample found it relevant (the first by
    stratum name, when two did): what `reporter export` adds to the hand-off."""
    found: dict[str, str] = {}
    for cert in load_certificates(state_dir, release_id):
        for work_id in cert.rescued:
            found.setdefault(work_id, cert.id)
    return found


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
