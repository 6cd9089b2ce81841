"""Certificates as the workspace's state records them: one JSON file per stratum of a release, and its reader.

`state/certify/<release id>/<stratum>.json` (the stratum's name made safe
for a file name by `reporter.naming.slug`: `discard.json`,
`screen-discarded-1a2b3c4d.json`), written through the one file layer
(atomic: the old file or the new one, never half of one). The pages read
them with `load_certificates(state_dir(ws), release_id)` (the site's one
reader of this stage) and show each with `Certificate.summary` and, against
`[certify]`'s target (`CertifySettings`, the workspace's `certify`),
`standing`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import TEMP_PREFIX, parse_json, write_json
from ..naming import slug
from ..plurals import count
from .config import CertifySettings

SCHEMA_VERSION = 1
STATE_DIR = "state"
"""The workspace's state folder (beside reporter.toml): certificates go to state/certify/."""
CERTIFY_DIR = "certify"
"""The certificates' folder inside the workspace's state folder (`state/certify/`)."""


def state_dir(ws: Any) -> Path:
    """The workspace's state folder (where `load_certificates` looks for a workspace's certificates)."""
    return Path(ws.root) / STATE_DIR


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


def write_certificate(state_dir: Path, certificate: Certificate) -> Path:
    """Write the certificate atomically (replacing the stratum's earlier one); returns its path."""
    path = certificate_path(state_dir, certificate.release, certificate.stratum)
    write_json(path, certificate.to_json())
    return path


_FIELDS = {f.name: f for f in fields(Certificate)}
_KINDS = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


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
    """One certificate file, each field checked against its type."""
    doc = parse_json(Path(path).read_bytes(), str(path))
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
        raise InputError(f"{path}: not a certificate of schema_version {SCHEMA_VERSION}")
    values = {}
    for name, field in _FIELDS.items():
        if name not in doc:
            raise InputError(f"{path}: lacks the field {name!r}; certify the sheet again")
        value, kind = doc[name], str(field.type)
        allowed = tuple(t for part in kind.split(" | ") for t in _KINDS.get(part, ()))
        ok = (value is None and "None" in kind) or (isinstance(value, allowed)
                                                   and (bool not in allowed) == (not isinstance(value, bool)))
        if not ok:
            raise InputError(f"{path}: field {name!r} must be {kind}, not {value!r}")
        values[name] = float(value) if kind.startswith("float") and value is not None else value
    return Certificate(**values)
