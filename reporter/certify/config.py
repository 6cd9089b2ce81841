"""[certify] of reporter.toml: the target a certificate of a discarding stratum must meet."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..screening.config import ScreenWorkspace
from ..settings import Table

DEFAULT_CONFIDENCE = 0.95
"""The confidence of a certificate when `--confidence` is not given, and the least one that counts."""


@dataclass(frozen=True)
class CertifySettings:
    """The [certify] table; every key has a default, so an absent table means no target."""

    max_missed_fraction: float | None = None
    """The most of a discarding stratum that may be relevant (`0.01`: 1%): a certificate whose
    `max_missed_fraction` is at most this meets the target; None: no target (any complete certificate does)."""
    min_recall: float | None = None
    """The least recall the hand-off must have, at `confidence` (`0.95`): a certificate (or the release's
    certificates jointly) meets the target when found / (found + the bound on relevant works missed) is at least
    this; None: no recall target. Needs the number of relevant works found (labels, or `--found N`)."""
    confidence: float = DEFAULT_CONFIDENCE
    """The confidence `reporter certify --sheet` computes at by default, and the least confidence a
    certificate must have to meet the target (`reporter export --require-certified`)."""


def fraction(value: float) -> str | None:
    """A check for `Table.get`: a share above zero and at most one."""
    return None if 0 < value <= 1 else f"must be above 0 and at most 1 (0.01 is 1%), not {value}"


def open_fraction(value: float) -> str | None:
    """A check for `Table.get`: a probability strictly between zero and one."""
    return None if 0 < value < 1 else f"must be above 0 and below 1 (e.g. 0.95), not {value}"


def parse_certify(table: Table | None) -> CertifySettings:
    """Parse [certify]; defaults when the workspace has none."""
    if table is None:
        return CertifySettings()
    return CertifySettings(
        max_missed_fraction=table.get("max_missed_fraction", float, None, check=fraction),
        min_recall=table.get("min_recall", float, None, check=fraction),
        confidence=table.get("confidence", float, DEFAULT_CONFIDENCE, check=open_fraction),
    )


class CertifyWorkspace(ScreenWorkspace, Protocol):
    """What certify reads of a workspace: what screening reads (the screen's results are one of its strata, and
    the sample's text comes from the pool), the releases folder, the rule book and [certify]. reporter.config's
    `Workspace` is one, handed over by the commands and the build; the stage never imports the configuration
    loader."""

    @property
    def releases(self) -> Path | None: ...
    @property
    def specs(self) -> Path | None: ...
    @property
    def certify(self) -> CertifySettings: ...
