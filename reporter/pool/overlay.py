"""The overlay: text the pool lacks, filled in before routing, never overwriting."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .reader import as_utf8, open_table, read_whole, require_columns


def _blank(arr: pa.Array) -> np.ndarray:
    """Null or whitespace only."""
    return pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(arr)), 0), True).to_numpy(
        zero_copy_only=False)


@dataclass
class Overlay:
    """A loaded overlay and what it has filled so far."""

    ids: pa.Array
    abstract: pa.Array
    title: pa.Array | None
    digest: str
    seen: np.ndarray
    abstracts_filled: int = 0
    titles_filled: int = 0
    _blank_abstract: np.ndarray = field(default=None, repr=False)
    _blank_title: np.ndarray = field(default=None, repr=False)

    def __post_init__(self):
        self._blank_abstract = _blank(self.abstract)
        self._blank_title = _blank(self.title) if self.title is not None else None

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Fill null or blank title/abstract values of a batch from the overlay."""
        idx = pc.index_in(batch.column("work_id"), value_set=self.ids)
        found = idx.is_valid().to_numpy(zero_copy_only=False)
        if not found.any():
            return batch
        pos = np.where(found, idx.fill_null(0).to_numpy(zero_copy_only=False), 0)
        self.seen[pos[found]] = True
        cols = {name: batch.column(name) for name in batch.schema.names}
        for name, values, blank_src in (("abstract", self.abstract, self._blank_abstract),
                                        ("title", self.title, self._blank_title)):
            if values is None:
                continue
            fill = found & _blank(cols[name]) & ~blank_src[pos]
            if fill.any():
                cols[name] = pc.if_else(pa.array(fill), values.take(pa.array(pos)), cols[name])
                if name == "abstract":
                    self.abstracts_filled += int(fill.sum())
                else:
                    self.titles_filled += int(fill.sum())
        return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))

    def summary(self) -> dict:
        """Counts for the release's statistics (routing writes them; `reporter.routing.artifacts.RuleStats.overlay`)."""
        return {"rows": len(self.ids), "abstracts_filled": self.abstracts_filled,
                "titles_filled": self.titles_filled, "unknown_ids": int((~self.seen).sum())}


def load_overlay(path: Path) -> Overlay:
    """Read an overlay file (work_id, abstract[, title]); a duplicate work_id is bad input."""
    source = open_table(path, "overlay")
    require_columns(source, ("work_id", "abstract"), "overlay")
    cols = ["work_id", "abstract"] + (["title"] if "title" in source.schema.names else [])
    table = read_whole(source, cols)
    ids = as_utf8(table.column("work_id").combine_chunks())[0]
    import polars as pl  # here only: a route without an overlay does not pay for importing it
    series = pl.Series("work_id", ids)
    if series.null_count():
        raise InputError(f"{path}: {series.null_count()} overlay row(s) have no work_id")
    dup = series.filter(series.is_duplicated()).unique(maintain_order=True)
    if len(dup):
        raise InputError(f"{path}: duplicate work_id in the overlay, e.g. {', '.join(dup.head(5).to_list())}; "
                         "each work may be supplied once")
    abstract = as_utf8(table.column("abstract").combine_chunks())[0]
    title = as_utf8(table.column("title").combine_chunks())[0] if "title" in cols else None
    return Overlay(ids=ids, abstract=abstract, title=title, digest=source.digest(),
                   seen=np.zeros(len(ids), dtype=bool))


def pool_batches(pool: Path, overlay: Path | None, work_ids: Iterable[str],
                 columns: Sequence[str], progress: Any = None) -> Iterator[pa.RecordBatch]:
    """The pool's rows of `work_ids` (their `columns`, work_id first), the overlay applied, batch by batch.

    The pool reader routing uses, filtered with `is_in` before the overlay, so a
    large pool costs one pass over the columns asked for. Rows come in pool order.
    `progress` (a `reporter.progress.Progress`, or None) advances by the pool rows read.
    The one "these works from the pool" reader: diagnose, the screen, the export
    and the site's titles all read through it.
    """
    wanted = pa.array(sorted(set(work_ids)), pa.string())
    if not len(wanted):
        return
    source = open_table(pool, "pool")
    names = ["work_id", *(c for c in columns if c != "work_id")]
    require_columns(source, tuple(names), "pool")
    ov = load_overlay(overlay) if overlay is not None else None
    for batch in source.batches(names):
        if progress is not None:
            progress.advance(batch.num_rows)
        keep = pc.is_in(batch.column("work_id"), value_set=wanted)
        if not pc.any(keep).as_py():
            continue
        batch = batch.filter(keep)
        yield ov.apply(batch) if ov is not None else batch
