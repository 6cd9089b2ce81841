"""A certificate as a record: its fields, its id, and how it reads in words (`reporter.certify.results` is its
store and reader, and re-exports it for the pages)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..hashing import sha256_json
from ..plurals import count
from .bound import recall_lower_bound
from .config import CertifySettings

SCHEMA_VERSION = 2
MAX_COUNT = 2 ** 63 - 1
"""The largest count (N, n, ...) a certificate or a sheet may hold."""
MAX_SEED = 2 ** 64 - 1
"""The largest seed: the sample's hash is 64-bit, so seeds are 0..2^64-1 (a larger one would wrap)."""


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
        """(meets, in words) against [certify]: True meets the target, False misses it, None no target set (or,
        for a recall target, none this certificate can meet alone: it bounds one of several strata).

        A partial certificate, or one below `[certify] confidence`, never meets a target.
        """
        target = settings.max_missed_fraction
        any_target = target is not None or settings.min_recall is not None
        if self.partial:
            return (False if any_target else None,
                    f"partial: {self.n_labelled:,} of {count(self.n_drawn, 'row')} labelled")
        if self.confidence < settings.confidence:
            return (False if any_target else None,
                    f"computed at {percent(self.confidence)}, below the {percent(settings.confidence)} required")
        if not any_target:
            return None, "no target set ([certify] min_recall, max_missed_fraction)"
        said: list[tuple[bool | None, str]] = []
        if target is not None:
            if self.max_missed_fraction > target:
                return False, (f"misses the target: at most {percent(self.max_missed_fraction)} relevant, above "
                               f"{percent(target)}")
            said.append((True, f"meets the target: at most {percent(self.max_missed_fraction)} relevant, within "
                               f"{percent(target)}"))
        if settings.min_recall is not None:
            meets, words = self.recall_standing(settings.min_recall)
            if meets is False:
                return False, words
            said.append((meets, words))
        meets = True if any(m is True for m, _ in said) else None
        return meets, "; ".join(words for _, words in said)

    def to_json(self) -> dict[str, Any]:
        """The state file's document."""
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    def recall_standing(self, min_recall: float | None = None) -> tuple[bool | None, str]:
        """(meets, words) against a recall target (default: the one recorded, `min_recall`): None when none is
        set, or when this certificate bounds one of several strata (the hand-off's recall is bounded jointly)."""
        target = self.min_recall if min_recall is None else min_recall
        if target is None:
            return None, "no recall target set ([certify] min_recall)"
        if self.found is None:
            return False, ("the recall bound needs the number of relevant works found: give --found N, or a labels "
                           "file that labels the admitted works")
        if self.recall_lower_bound is None:
            return None, ("this stratum is one of several: recall is bounded jointly, with the others (the hand-off's "
                          "certification)")
        low = floor_percent(self.recall_lower_bound)
        if self.recall_lower_bound >= target:
            return True, f"meets the recall target: recall at least {low}, at least {percent(target)} required"
        return False, f"misses the recall target: recall at least {low} only, {percent(target)} required"


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


def recall_of(c: Certificate) -> float | None:
    """The recall lower bound a certificate's numbers give (found / (found + max_relevant - k_relevant))."""
    if c.found is None:
        return None
    low = recall_lower_bound(c.found, c.k_relevant, c.max_relevant)
    return None if low is None else float(low)


def recall_bound(admitted: int | None, most: int) -> float | None:
    """admitted / (admitted + most): the lower bound on recall (None without admissions, or when both are 0)."""
    return None if admitted is None or admitted + most == 0 else admitted / (admitted + most)
