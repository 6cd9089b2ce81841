"""The sample: the n works of a stratum with the smallest seeded hash of their id (bottom-k), as a sheet.

A work's rank is the seeded 64-bit hash of its work_id that routing's own
samples use (`routing.samples.id_hashes`), ties broken by the id itself, so
the sample depends only on the stratum's ids, the seed and n: not on pool
order, batches or time. Each work is equally likely to rank among the n
smallest, so the sample is uniform without replacement. And it stays valid:
the next release's sample of the same stratum keeps every work of this one
that is still in it unless new works rank lower, so most labels carry over
(`--from OLD.csv`); where works only left, it keeps every one that stayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import InputError
from ..files import write_bytes
from ..routing.samples import id_hashes
from ..screening.scope import load_works
from . import sheet as sheets
from .sheet import Sheet, sheet_bytes
from .strata import StratumWorks
from .config import CertifyWorkspace


def bottom_k(work_ids: Sequence[str], seed: int, n: int) -> tuple[str, ...]:
    """The n works with the smallest (seeded hash, work_id), in that order (all of them when there are fewer)."""
    if not len(work_ids) or n < 1:
        return ()
    hashes = id_hashes(pa.array(work_ids, pa.string()), seed)
    if len(work_ids) > n:  # only works hashing no higher than the n-th smallest can be in it
        candidates = np.flatnonzero(hashes <= np.partition(hashes, n - 1)[n - 1])
    else:
        candidates = np.arange(len(work_ids))
    ranked = sorted((int(hashes[i]), work_ids[i]) for i in candidates.tolist())
    return tuple(work_id for _, work_id in ranked[:n])


@dataclass(frozen=True)
class Drawn:
    """A sheet just written."""

    works: StratumWorks
    """The stratum it samples, in its release."""
    seed: int
    """The seed."""
    n: int
    """The size asked for."""
    sample: tuple[str, ...]
    """The sampled works, in rank (sheet) order."""
    carried: int
    """Labels copied from the old sheet (`--from`): works both samples share that it labelled."""
    out: Path
    """The sheet."""


def draw_sheet(ws: CertifyWorkspace, release_dir: Path, works: StratumWorks, *, n: int, seed: int, out: Path,
               old: Sheet | None = None, progress: Any = None) -> Drawn:
    """Write the sheet of the stratum's bottom-n sample to `out` (atomically), labels carried over from `old`;
    `progress` (a `reporter.progress.Progress`) counts the pool rows read for the sample's text."""
    sample = bottom_k(works.work_ids, seed, n)
    # the text routing saw; refuses a pool or overlay that changed
    texts = load_works(ws, release_dir, sample, progress=progress)
    carried = {w: label for w, label in (old.labels() if old is not None else {}).items() if w in texts}
    data = sheet_bytes(works.release_id, works.stratum.name, seed, n, [texts[w] for w in sample], carried)
    if len(data) > sheets.MAX_SHEET_BYTES:  # read back whole under this cap: never write a sheet it would refuse
        raise InputError(f"--n {n}: the sheet of {len(sample):,} works would hold {len(data):,} bytes, more than the "
                         f"{sheets.MAX_SHEET_BYTES:,} a sheet may; draw a smaller sample. Nothing was written")
    write_bytes(out, data)
    return Drawn(works, seed, n, sample, len(carried), Path(out))
