"""Routing in pieces: the unit of work a local worker process or a Dask worker routes.

A piece is a run of consecutive row groups of one Parquet file of the pool,
read where it is routed (no pool row crosses a process boundary on its way
in), or rows the caller read itself (JSONL and CSV pools, and Parquet row
groups too large to share out) and sends along. `route_piece` routes a piece
in record batches with `route_batch` and returns its routing rows and
partial counts. The caller writes the rows in pool order and sums the
counts (release.py), so a release's bytes depend neither on how the pool
was cut nor on how many processes, or machines, routed it.

Who routes them here (this process or forked worker processes) is
workers.py; a Dask cluster, cluster.py.

The overlay travels with the run's `Setup`; each process fills from its own
copy and a piece reports which overlay rows it used and what it filled,
which the caller adds to its own overlay's counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputError
from ..pool.overlay import Overlay
from ..pool.reader import TableSource
from .engine import route_batch
from .evidence import FIELDS
from .fieldbuffer import FieldBuffer
from .parquet_parts import encode_groups
from .plan import Plan, compile_plan
from .samples import sample_bounds
from .specs import RuleBook
from .stats import add_counts, compile_empty_totals

SAMPLE_K = 20
RULE_SAMPLE_K = 10
PIECE_ROWS = 65_536
"""Consecutive row groups are put together until a piece holds at least this many rows."""
MAX_GROUP_ROWS = 262_144
"""A row group larger than this is read by the caller and shipped in batches, so one huge row group
cannot leave every worker but one idle."""


@dataclass(frozen=True)
class Setup:
    """What every piece of one run is routed with: sent once to each worker process or Dask worker."""

    book: RuleBook
    """The rule book."""
    schema: pa.Schema
    """The pool's schema (the plan checks column types against it)."""
    overlay: Overlay | None
    """The overlay, or None."""
    sample_seed: int
    """Seed of the samples."""
    batch_rows: int
    """Rows per record batch."""
    key: str
    """Identifies the run: a process compiles the plan once per key and engine."""
    engine: str | None = None
    """The literal scanner's engine the command chose (textscan.scan_engine), or None: each process's default."""
    group_rows: int = 65_536
    """Rows of a routing.parquet row group (release.ROW_GROUP_ROWS): a piece encodes the ones wholly inside it."""


@dataclass(frozen=True)
class Piece:
    """Consecutive pool rows routed by one call of `route_piece`."""

    index: int
    """Position in pool order."""
    rows: int
    """Rows it holds."""
    file: str | None = None
    """A Parquet file of the pool to read it from, or None when the rows come along."""
    row_groups: tuple[int, ...] = ()
    """The file's row groups it is."""
    batch: pa.RecordBatch | None = None
    """The rows themselves (already read and conformed by the caller)."""
    start: int = 0
    """Its first row's position in the pool (where the routing table's row groups fall inside it)."""


@dataclass
class PieceResult:
    """A routed piece: its routing rows and partial counts."""

    index: int
    """Position in pool order."""
    rows: int
    """Rows routed."""
    head: pa.Table
    """Routing rows before the first routing.parquet row group that starts inside the piece (all of them
    when none does), for the caller to join with the previous piece's tail."""
    part: bytes | None
    """The routing.parquet row groups wholly inside the piece, encoded (parquet_parts.encode_groups), or None."""
    tail: pa.Table
    """Routing rows after those row groups."""
    counts: dict[str, np.ndarray]
    """Partial counts (stats.COUNTS)."""
    samples: dict[str, list] = field(default_factory=dict)
    """Per sample group: the piece's smallest-key candidates."""
    replaced: int = 0
    """Values whose invalid UTF-8 was replaced while reading the piece."""
    overlay_seen: np.ndarray | None = None
    """Overlay rows whose work_id the piece holds."""
    abstracts_filled: int = 0
    """Abstracts the overlay filled in the piece."""
    titles_filled: int = 0
    """Titles the overlay filled in the piece."""
    ids: IdTally | None = None
    """What the piece found of its work ids, for the caller's duplicate and prefix checks."""


WORK_ID_SCHEME = r"^[A-Za-z][A-Za-z0-9_.+-]*:.+"
"""A work_id starts with its scheme: doi:..., osf:..., openalex:W..."""


@dataclass
class IdTally:
    """The work ids of some rows, as the caller's checks need them: never the ids themselves.

    The caller holds 8 bytes a row instead of every id: a 250M-row route's
    client sorts 2 GB of hashes instead of hashing 5 GB of strings in an
    Arrow table that grew to 8 times their size (docs/scale.md).
    """

    hashes: np.ndarray
    """Per row, samples.id_hashes of its work_id (uint64), in pool order."""
    nulls: int = 0
    """Rows without a work_id."""
    unprefixed: int = 0
    """Work ids without a scheme prefix (WORK_ID_SCHEME)."""
    examples: tuple[str, ...] = ()
    """The first few of those, in pool order."""

    @classmethod
    def of(cls, ids: pa.Array | pa.ChunkedArray, hashes: np.ndarray) -> IdTally:
        prefixed = pc.fill_null(pc.match_substring_regex(ids, WORK_ID_SCHEME), True)
        bad = ids.filter(pc.invert(prefixed))
        return cls(hashes, ids.null_count, len(bad), tuple(bad[:3].to_pylist()))


_PLANS: dict[tuple[str, str | None], tuple[Plan, Overlay | None]] = {}


def _state(setup: Setup) -> tuple[Plan, Overlay | None]:
    """This process's plan and private overlay for a run (compiled once per process and run)."""
    found = _PLANS.get((setup.key, setup.engine))
    if found is None:
        _PLANS.clear()
        ov = setup.overlay
        if ov is not None:
            ov = replace(ov, seen=np.zeros_like(ov.seen), abstracts_filled=0, titles_filled=0)
        found = _PLANS[(setup.key, setup.engine)] = (compile_plan(setup.book, setup.schema, setup.engine), ov)
    return found


def route_piece(setup: Setup, piece: Piece) -> PieceResult:
    """Route one piece in record batches: its routing rows, summed counts and sample candidates."""
    plan, ov = _state(setup)
    if ov is not None:
        ov.seen[:] = False
        ov.abstracts_filled = ov.titles_filled = 0
    source = None
    if piece.file is not None:
        source = TableSource(piece.file, "parquet", setup.schema, piece.rows, (piece.file,))
        batches: Iterable[tuple[pa.RecordBatch, dict]] = _read_groups(source, list(plan.columns), piece.row_groups,
                                                                      setup.batch_rows)
    else:
        batches = [(piece.batch.slice(at, setup.batch_rows), {}) for at in range(0, piece.rows, setup.batch_rows)] \
            if piece.rows else []
    totals = compile_empty_totals(plan)
    tables: list[pa.Table] = []
    hashes: list[np.ndarray] = []
    samples: dict[str, list] = {}
    for batch, high in batches:
        if ov is not None:
            batch, high = ov.apply(batch), {}  # the overlay's text has high bytes of its own
        res = route_batch(plan, batch, setup.sample_seed, SAMPLE_K, RULE_SAMPLE_K, high,
                          sample_bounds(samples, SAMPLE_K, RULE_SAMPLE_K))
        tables.append(res.table)
        hashes.append(res.id_hashes)
        add_counts(totals, res.counts)
        for group, items in res.samples.items():
            samples.setdefault(group, []).extend(items)
    table = pa.concat_tables(tables) if tables else _empty_table()
    ids = IdTally.of(table.column("work_id"), np.concatenate(hashes) if hashes else np.zeros(0, np.uint64))
    head, part, tail = _encode_inside(table, piece.start, setup.group_rows)
    return PieceResult(piece.index, len(table), head, part, tail, totals, _smallest(samples), source.replaced if source else 0,
                       np.flatnonzero(ov.seen) if ov is not None else None,
                       ov.abstracts_filled if ov is not None else 0, ov.titles_filled if ov is not None else 0, ids)


def _encode_inside(table: pa.Table, start: int, group_rows: int) -> tuple[pa.Table, bytes | None, pa.Table]:
    """The piece's routing rows cut at the routing table's row groups: (rows before the first group starting
    inside it, those groups encoded, rows after them).

    The encoding is the caller's no more: it was most of the serial share of a
    parallel route (docs/scale.md). The rows left over are copied out of the
    table, as a slice would take the whole table's buffers along when pickled.
    """
    first = min(len(table), -start % group_rows)
    last = first + (len(table) - first) // group_rows * group_rows
    part = encode_groups(table.slice(first, last - first), group_rows) if last > first else None
    return _copied(table.slice(0, first)), part, _copied(table.slice(last))


def _copied(table: pa.Table) -> pa.Table:
    return pa.concat_tables([table, table.schema.empty_table()]).combine_chunks()


def _empty_table() -> pa.Table:
    from .routing_table import ROUTING_SCHEMA
    return ROUTING_SCHEMA.empty_table()


def _smallest(samples: dict[str, list]) -> dict[str, list]:
    """Per group only the candidates that can still be sampled: the k smallest keys (ties kept)."""
    out = {}
    for group, items in samples.items():
        k = SAMPLE_K if group.startswith("pile:") else RULE_SAMPLE_K
        out[group] = sorted(items, key=lambda it: (it[0], it[1]))[:k] if len(items) > k else items
    return out


def _read_groups(source: TableSource, columns: list[str], groups: tuple[int, ...],
                 batch_rows: int) -> Iterator[tuple[pa.RecordBatch, dict[str, np.ndarray]]]:
    """Record batches of some row groups of a Parquet file, text columns conformed as the pool reader does,
    each with the high-byte positions of its text fields (`_checked_fields`).

    Read on this thread only: pieces are what runs in parallel (worker
    processes, Dask threads), and Arrow's reading threads on top of them
    compete for the same cores and cost about 7% more CPU in all on the
    real benchmark pool (docs/scale.md, "One core"). The file is memory-mapped:
    its pages are read in place instead of copied by a read() call each,
    which cost about 1.5 CPU-s of system time on that pool. A pool must be
    replaced by rename while a run reads it, as every writer of ours does;
    one rewritten in place was never a valid input to a run, and a
    truncated one now ends the reading process (docs/decisions.md).
    """
    try:
        pf = pq.ParquetFile(source.path, memory_map=True)
        for batch in pf.iter_batches(batch_size=batch_rows, row_groups=list(groups), columns=columns,
                                     use_threads=False):
            high = _checked_fields(batch, columns)
            yield source._conform(batch, columns, checked=high), high
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{source.path}: could not read Parquet: {exc}") from None


def _checked_fields(batch: pa.RecordBatch, columns: list[str]) -> dict[str, np.ndarray]:
    """Per text field of type string found to be valid UTF-8 from its high bytes alone: their positions.

    FieldText needs those positions anyway (the ASCII test), and checking
    UTF-8 from them costs a quarter of Arrow's full validation of the
    column (0.04 CPU-s against 0.16 for the real pool's abstracts). A field
    not found valid is left to the reader's own check, which replaces and
    counts what is invalid; so is text where more than one byte in 16 is
    high (CJK, Cyrillic), where numpy over every position costs more than
    Arrow's check of the whole column.
    """
    out = {}
    for name in FIELDS:
        if name in columns and batch.schema.field(name).type == pa.string():
            buf = FieldBuffer.of(batch.column(name))
            high = buf.high_bytes()
            if len(high) * 16 <= len(buf.data) and buf.utf8_valid(high):
                out[name] = high
    return out


def plan_pieces(source: TableSource, columns: list[str], batch_rows: int) -> Iterator[Piece]:
    """The pool cut into pieces, in pool order.

    Parquet row groups are grouped into pieces of at least PIECE_ROWS rows,
    read by whoever routes them; a file with a row group over MAX_GROUP_ROWS
    rows and JSONL and CSV pools are read here (the source counts replaced
    UTF-8) and come along in pieces of one batch.
    """
    index = start = 0
    if source.kind in ("parquet", "parquet-folder"):
        for f in source.files:
            try:
                meta = pq.read_metadata(f)
            except (pa.ArrowInvalid, OSError) as exc:
                raise InputError(f"{f}: could not read Parquet: {exc}") from None
            sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
            if sizes and max(sizes) > MAX_GROUP_ROWS:
                one = TableSource(f, "parquet", source.schema, meta.num_rows, (f,))
                for batch in one.batches(columns, batch_rows):
                    yield Piece(index, batch.num_rows, batch=batch, start=start)
                    index, start = index + 1, start + batch.num_rows
                source.replaced += one.replaced
                continue
            groups: list[int] = []
            rows = 0
            for g, size in enumerate(sizes):
                groups.append(g)
                rows += size
                if rows >= PIECE_ROWS:
                    yield Piece(index, rows, file=str(f), row_groups=tuple(groups), start=start)
                    index, start = index + 1, start + rows
                    groups, rows = [], 0
            if groups:
                yield Piece(index, rows, file=str(f), row_groups=tuple(groups), start=start)
                index, start = index + 1, start + rows
        return
    for batch in source.batches(columns, batch_rows):
        yield Piece(index, batch.num_rows, batch=batch, start=start)
        index, start = index + 1, start + batch.num_rows
