"""`reporter certify --plan`: the sample a stratum needs before anyone labels it.

For k = 0, 1, 2 relevant works in the sample, the smallest n whose exact
bound would meet the target ([certify] min_recall with the number of
relevant works found, and max_missed_fraction, each when set), at [certify]
confidence: `n_for_k`, null where no n does. `reporter export
--require-certified` names the same n when it refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .bound import allowed_missed, smallest_n
from .config import CertifyWorkspace
from .strata import StratumWorks

PLANNED_K = (0, 1, 2)
"""The numbers of relevant works in the sample a plan gives n for."""


@dataclass(frozen=True)
class Plan:
    """The sample sizes that would meet the target, for one stratum."""

    release: str
    """The release id."""
    stratum: str
    """The stratum's name."""
    N: int
    """Its works."""
    found: int | None
    """Relevant works found without the sample (--found, or the labels of the admitted works), or None."""
    min_recall: float | None
    """[certify] min_recall."""
    max_missed_fraction: float | None
    """[certify] max_missed_fraction."""
    confidence: float
    """[certify] confidence."""
    n_for_k: dict[str, int | None]
    """"0", "1", "2" -> the smallest n that meets the target if the sample holds that many relevant works, or None
    where none does."""

    def to_json(self) -> dict[str, Any]:
        """What `--plan --json` prints."""
        return {"release": self.release, "stratum": self.stratum, "N": self.N, "found": self.found,
                "min_recall": self.min_recall, "max_missed_fraction": self.max_missed_fraction,
                "confidence": self.confidence, "n_for_k": self.n_for_k}

    def words(self) -> str:
        """The plan in one sentence: `3,039 labels meet the target if none is relevant (3,923 if one is, ...)`."""
        def said(n: int | None) -> str:
            return "no sample size" if n is None else f"{n:,} labels"
        n0, n1, n2 = (self.n_for_k[str(k)] for k in PLANNED_K)
        return (f"{said(n0)} of its {self.N:,} works meet the target if none is relevant ({said(n1)} if one is, "
                f"{said(n2)} if two are)")


def needs_found(ws: CertifyWorkspace) -> str:
    """Why a recall target cannot be planned for without the number of relevant works found."""
    return (f"[certify] min_recall {ws.certify.min_recall} is a recall target, and recall needs the number of "
            f"relevant works found: give --found N (or a labels file that labels the screen's admitted works)")


def make_plan(ws: CertifyWorkspace, works: StratumWorks, found: int | None) -> Plan:
    """The plan for a stratum's works; an InputError when no target is set, or recall is the target and `found`
    is unknown."""
    settings = ws.certify
    if settings.min_recall is None and settings.max_missed_fraction is None:
        raise InputError(f"{ws.file}: [certify] sets no target (min_recall, max_missed_fraction), so any complete "
                         f"sample counts and there is nothing to plan; set min_recall = 0.95, say")
    if settings.min_recall is not None and found is None:
        raise InputError(needs_found(ws))
    big_n = len(works.work_ids)
    n_for_k = {}
    for k in PLANNED_K:
        allowed = allowed_missed(found, k, big_n, settings.min_recall, settings.max_missed_fraction)
        n_for_k[str(k)] = None if allowed is None or k > big_n else smallest_n(big_n, k, settings.confidence,
                                                                               allowed)
    return Plan(works.release_id, works.stratum.name, big_n, found, settings.min_recall,
                settings.max_missed_fraction, settings.confidence, n_for_k)


def found_now(ws: CertifyWorkspace, release_dir: Path, given: int | None) -> int | None:
    """The relevant works found: `--found` when given, else the workspace's labels of the admitted works."""
    if given is not None:
        return given
    from .certificate import admitted_relevant
    return admitted_relevant(ws, release_dir)
