"""The hand-off: the works the expensive screen admitted, rebuilt from the pool, as Parquet or CSV.

There is no hand-off file to drift. `iter_export_rows` takes the works the
release routes to a paying pile (a pile of kind `screen`, either tier) whose
expensive verdict in the current generation is `admit` (verdicts are keyed
without the release, so a verdict follows its work into a new release),
and rebuilds each row from the pool with the overlay applied; `screen_columns`
adds the screen's answer. A work with one vote has no verdict and is held
back; a verdict of an older generation does not count. Stage 3 reads the
same two functions.

A relevant work that a certification sample found in a discard (`reporter
certify`) joins the hand-off too: `rescued` maps each such work to the id
of the certificate that found it, and every row says it in the column
`rescued_by_certificate` (empty for the screen's own admissions). A rescued
work comes after the admitted ones, in release order, with its pile, its
rule and the screen's answer when it has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from ..csvcells import csv_bytes, utf8_text
from ..errors import InputError
from ..files import atomic_path, write_bytes
from ..hashing import canonical_json
from ..pool.reader import TEXT_COLUMNS, open_table
from ..panel.config import VoterSettings
from ..panel.prompt import generation_for
from .config import WHERE, ScreenWorkspace
from .prompt import load_prompt
from .run import screen_settings
from ..pool.overlay import pool_batches
from .scope import check_text_inputs, read_routing, screen_piles

ROUTE_COLUMNS = ("pile", "winner")
"""What the release says of each exported work: its pile and the rule that won it."""

VOTE_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("name", pa.string()), ("model", pa.string()), ("label", pa.string()), ("reason", pa.string()),
    ("invalid_cause", pa.string()), ("input_tokens", pa.int64()), ("output_tokens", pa.int64()),
    ("cost_usd", pa.float64()))
"""Per voter, in configured order, the columns `screen_voter<N>_<field>`."""

SUFFIXES = (".csv", ".parquet")


def screen_fields(voters: tuple[VoterSettings, ...]) -> list[pa.Field]:
    """The screen's columns and their types: outcome, generation, then each voter's vote."""
    fields = [pa.field("screen_outcome", pa.string()), pa.field("screen_generation", pa.string())]
    for i, _ in enumerate(voters, 1):
        fields += [pa.field(f"screen_voter{i}_{name}", kind) for name, kind in VOTE_FIELDS]
    return fields


def screen_columns(verdict: str, votes: Mapping[str, Any], voters: tuple[VoterSettings, ...]) -> dict[str, Any]:
    """The screen's answer for one work: its verdict, generation and each voter's vote (`votes`: voter -> VoteRow)."""
    generation = next((row.generation for row in votes.values()), None)
    out: dict[str, Any] = {"screen_outcome": verdict, "screen_generation": generation}
    for i, voter in enumerate(voters, 1):
        row = votes.get(voter.name)
        vote = row.vote if row is not None else None
        values = {"name": voter.name, "model": voter.model,
                  "label": vote.answer if vote else None, "reason": vote.reason if vote else None,
                  "invalid_cause": vote.invalid_cause if vote else None,
                  "input_tokens": row.input_tokens if row else None,
                  "output_tokens": row.output_tokens if row else None,
                  "cost_usd": row.cost_usd if row else None}
        out.update({f"screen_voter{i}_{name}": values[name] for name, _ in VOTE_FIELDS})
    return out


def admitted_works(ws: ScreenWorkspace, release_dir: Path, *, store: Any) -> pl.DataFrame:
    """work_id, pile and winner of the release's paying-pile works admitted in the current generation, in release order."""
    settings = screen_settings(ws)
    routing = _paying(release_dir)
    if store is None or not settings.expensive or not len(routing):
        return routing.clear()
    generation = generation_for("expensive", settings.expensive, load_prompt(settings)).id
    verdicts = store.verdicts("expensive", generation, routing["work_id"].to_list())
    admitted = [w for w, outcome in verdicts.items() if outcome == "admit"]
    return routing.filter(pl.col("work_id").is_in(admitted))


def _paying(release_dir: Path) -> pl.DataFrame:
    piles = screen_piles(release_dir)
    paying = list(piles["cheap"] + piles["expensive"])
    routing = read_routing(release_dir, ["work_id", *ROUTE_COLUMNS])
    return routing.filter(pl.col("pile").is_in(paying))


RESCUED_COLUMN = "rescued_by_certificate"
"""The id of the certificate whose sample found the work relevant, or empty (the screen admitted it)."""


def iter_export_rows(ws: ScreenWorkspace, release_dir: Path, *, store: Any,
                     rescued: Mapping[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """One row per admitted work (release order), then per rescued work not admitted (release order): the pool's
    columns (overlay applied), pile, winner, the screen's columns, `rescued_by_certificate`."""
    settings = screen_settings(ws)
    rescued = rescued or {}
    admitted = admitted_works(ws, release_dir, store=store)
    taken = set(admitted["work_id"].to_list())
    extra = read_routing(release_dir, ["work_id", *ROUTE_COLUMNS]).filter(
        pl.col("work_id").is_in([w for w in rescued if w not in taken])) if rescued else admitted.clear()
    if not len(admitted) and not len(extra):
        return
    generation = generation_for("expensive", settings.expensive, load_prompt(settings)).id \
        if settings.expensive else None
    ids = admitted["work_id"].to_list() + extra["work_id"].to_list()
    votes = store.votes("expensive", generation, ids) if store is not None and generation is not None else {}
    verdicts = store.verdicts("expensive", generation, extra["work_id"].to_list()) \
        if store is not None and generation is not None and len(extra) else {}
    pool = _pool_rows(ws, release_dir, ids)
    for wid, pile, winner in admitted.iter_rows():
        yield {**pool[wid], "pile": pile, "winner": winner,
               **screen_columns("admit", votes.get(wid, {}), settings.expensive), RESCUED_COLUMN: rescued.get(wid)}
    for wid, pile, winner in extra.iter_rows():
        yield {**pool[wid], "pile": pile, "winner": winner,
               **screen_columns(verdicts.get(wid), votes.get(wid, {}), settings.expensive),
               RESCUED_COLUMN: rescued[wid]}


def _pool_rows(ws: ScreenWorkspace, release_dir: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The pool's rows of `ids`, every column, the overlay applied, as routing saw them."""
    check_text_inputs(ws, release_dir)
    names = [n for n in open_table(ws.pool, "pool").schema.names if n not in ROUTE_COLUMNS]
    rows = {row["work_id"]: row for batch in pool_batches(ws.pool, ws.overlay, ids, names)
            for row in batch.to_pylist()}
    missing = [w for w in ids if w not in rows]
    if missing:
        raise InputError(f"{ws.pool}: {len(missing):,} admitted work(s) are not in the pool, e.g. {missing[0]!r}; "
                         f"export the release the pool was routed with")
    return rows


def export_schema(ws: ScreenWorkspace) -> pa.Schema:
    """The hand-off's columns: the pool's (text columns as strings), pile, winner, then the screen's."""
    source = open_table(ws.pool, "pool")
    pool = [pa.field(f.name, pa.string() if f.name in TEXT_COLUMNS else f.type)
            for f in source.schema if f.name not in ROUTE_COLUMNS]
    return pa.schema([*pool, *(pa.field(n, pa.string()) for n in ROUTE_COLUMNS),
                      *screen_fields(screen_settings(ws).expensive), pa.field(RESCUED_COLUMN, pa.string())])


def check_out(out: Path) -> Path:
    """The output path, refused unless it ends in .csv or .parquet."""
    if Path(out).suffix.lower() not in SUFFIXES:
        raise InputError(f"{out}: name a .csv or .parquet file (the format follows the suffix)")
    return Path(out)


def write_export(rows: Iterable[Mapping[str, Any]], out: Path, *, schema: pa.Schema | None = None,
                 metadata: Mapping[bytes, bytes] | None = None) -> int:
    """Write rows as Parquet or CSV (by suffix), atomically; same rows, same bytes. Returns the row count.

    CSV goes through the site's one CSV writer (`reporter.csvcells`): a cell
    that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a
    carriage return first) gets an apostrophe in front; numbers stay numbers.
    CSV cannot hold nested values: lists and structs are written as canonical
    JSON text. A lone surrogate (a voter's reason may hold one), which neither
    format can hold, is written as its escape (`\\ud800`). `metadata` goes into a Parquet file's key-value
    metadata (the provenance: `provenance.py`); CSV has nowhere to hold it.
    """
    out = check_out(out)
    rows = [{k: utf8_text(v) if isinstance(v, str) else v for k, v in row.items()} for row in rows]
    if schema is None:
        table = pa.Table.from_pylist(rows) if rows else pa.table({"work_id": pa.array([], pa.string())})
    else:
        table = pa.Table.from_pylist(rows, schema=schema)
    if out.suffix.lower() == ".parquet":
        if metadata:
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
        with atomic_path(out) as tmp:
            pq.write_table(table, tmp, compression="zstd", write_statistics=True, store_schema=True)
    else:
        flat = _flat(table)
        write_bytes(out, csv_bytes(flat.schema.names, zip(*(c.to_pylist() for c in flat.columns))))
    return table.num_rows


def _flat(table: pa.Table) -> pa.Table:
    """Nested columns as canonical JSON text, for CSV."""
    columns = []
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_nested(field.type):
            column = pa.array([None if v is None else canonical_json(v) for v in column.to_pylist()], pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.schema.names)


def export_release(ws: ScreenWorkspace, release_dir: Path, out: Path, *,
                   rescued: Mapping[str, str] | None = None, provenance: Any = None) -> int:
    """Write the release's hand-off to `out` (the state database read-only; none yet: no rows but the rescued).

    `rescued`: work id -> the certificate whose sample found it relevant; `provenance(rows) -> document`
    (`provenance.py`): the document a Parquet file carries in its metadata."""
    from ..panel.readonly import open_readonly
    check_out(out)
    with open_readonly(ws.screen.database, WHERE) as store:
        rows = list(iter_export_rows(ws, release_dir, store=store, rescued=rescued))
    metadata = None
    if provenance is not None:
        from .provenance import parquet_metadata
        metadata = parquet_metadata(provenance(len(rows)))
    return write_export(rows, out, schema=export_schema(ws), metadata=metadata)
