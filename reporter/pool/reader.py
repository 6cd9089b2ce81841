"""Read pools and overlays: Parquet (file or folder), JSONL and CSV, in record batches.

Bad input gets a clear error before anything is written: a missing required
column, a file that is not what its extension says, a duplicate work_id.
Non-UTF-8 bytes are replaced (U+FFFD) and counted, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from ..errors import InputError
from ..hashing import sha256_file, sha256_files

REQUIRED_POOL_COLUMNS = ("work_id", "source", "title", "abstract")
TEXT_COLUMNS = ("work_id", "source", "title", "abstract")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
GENERATED_KEY = b"reporter.generated"


def _kind(path: Path) -> str:
    name = path.name.lower()
    if path.is_dir():
        return "parquet-folder"
    if name.endswith(".parquet") or name.endswith(".pq"):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise InputError(f"{path}: unknown table format; use .parquet (or a folder of them), .jsonl or .csv")


@dataclass
class TableSource:
    """A table on disk read in record batches, in a fixed order."""

    path: Path
    kind: str
    schema: pa.Schema
    num_rows: int | None
    files: tuple[Path, ...]

    def digest(self) -> str:
        """sha256 of the content on disk (a folder: every file's name and digest)."""
        if self.kind == "parquet-folder":
            return sha256_files(list(self.files), self.path)
        return sha256_file(self.path)

    def generated_note(self) -> str | None:
        """The generator's marker in Parquet metadata, if the pool is generated example data."""
        meta = self.schema.metadata or {}
        value = meta.get(GENERATED_KEY)
        return value.decode("utf-8", "replace") if value else None

    replaced: int = 0
    """Values whose invalid UTF-8 bytes were replaced so far (counted, never fatal)."""

    def _conform(self, batch: pa.RecordBatch, columns: list[str]) -> pa.RecordBatch:
        """Cast the text columns to string, replacing and counting invalid UTF-8."""
        arrays, fields = [], []
        for name in columns:
            arr = batch.column(name)
            if name in TEXT_COLUMNS:
                arr, bad = as_utf8(arr)
                self.replaced += bad
            arrays.append(arr)
            fields.append(pa.field(name, arr.type))
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    def batches(self, columns: list[str], batch_size: int = 32_768) -> Iterator[pa.RecordBatch]:
        """Record batches of the named columns, in file order, text columns as strings."""
        if self.kind in ("parquet", "parquet-folder"):
            for f in self.files:
                try:
                    pf = pq.ParquetFile(f)
                    for batch in pf.iter_batches(batch_size=batch_size, columns=columns, use_threads=True):
                        yield self._conform(batch, columns)
                except (pa.ArrowInvalid, OSError) as exc:
                    raise InputError(f"{f}: could not read Parquet: {exc}") from None
        elif self.kind == "jsonl":
            table = _read_jsonl(self.path)
            for batch in table.select(columns).to_batches(max_chunksize=batch_size):
                yield self._conform(batch, columns)
        else:
            reader = _open_csv(self.path)
            try:
                for batch in reader:
                    yield self._conform(batch.select(columns), columns)
            except pa.ArrowInvalid as exc:
                raise InputError(f"{self.path}: could not read CSV: {exc}") from None


def open_table(path: Path, label: str = "pool") -> TableSource:
    """Open a table file or Parquet folder and read its schema (not its rows)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: the {label} does not exist")
    kind = _kind(path)
    if kind == "parquet-folder":
        files = tuple(sorted(p for p in path.rglob("*.parquet") if p.is_file()))
        if not files:
            raise InputError(f"{path}: the {label} folder holds no .parquet files")
    else:
        files = (path,)
    if kind in ("parquet", "parquet-folder"):
        schemas, rows = [], 0
        for f in files:
            try:
                meta = pq.read_metadata(f)
                schemas.append(pq.read_schema(f))
                rows += meta.num_rows
            except (pa.ArrowInvalid, OSError) as exc:
                raise InputError(f"{f}: not a readable Parquet file ({exc})") from None
        names = schemas[0].names
        for f, s in zip(files, schemas):
            if s.names != names:
                raise InputError(f"{f}: its columns {s.names} differ from {files[0].name}'s {names}; "
                                 "every file of a Parquet folder needs the same columns")
        return TableSource(path, kind, schemas[0], rows, files)
    if kind == "jsonl":
        table = _read_jsonl(path)
        return TableSource(path, kind, table.schema, table.num_rows, files)
    reader = _open_csv(path)
    return TableSource(path, kind, reader.schema, None, files)


_JSONL_CACHE: dict[Path, tuple[float, pa.Table]] = {}


def _read_jsonl(path: Path) -> pa.Table:
    key = path.resolve()
    mtime = path.stat().st_mtime
    if key in _JSONL_CACHE and _JSONL_CACHE[key][0] == mtime:
        return _JSONL_CACHE[key][1]
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            table = pajson.read_json(stream)
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: not valid JSON lines (one JSON object a line): {exc}") from None
    _JSONL_CACHE.clear()
    _JSONL_CACHE[key] = (mtime, table)
    return table


def _open_csv(path: Path) -> pacsv.CSVStreamingReader:
    delimiter = "\t" if ".tsv" in path.name.lower() else ","
    try:
        probe = pacsv.open_csv(str(path), parse_options=pacsv.ParseOptions(delimiter=delimiter),
                               read_options=pacsv.ReadOptions(block_size=1 << 16))
        names = probe.schema.names
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: not a readable CSV file: {exc}") from None
    types = {n: pa.string() for n in names if n in TEXT_COLUMNS or n in ("label", "doi", "venue", "type")}
    try:
        return pacsv.open_csv(
            str(path),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
            read_options=pacsv.ReadOptions(block_size=1 << 24),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                 check_utf8=False),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: not a readable CSV file: {exc}") from None


def as_utf8(arr: pa.Array) -> tuple[pa.Array, int]:
    """A string array with invalid UTF-8 replaced by U+FFFD, and how many values were replaced."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.string()), 0
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    if pa.types.is_string(arr.type):
        try:
            arr.validate(full=True)
            return arr, 0
        except pa.ArrowInvalid:
            arr = arr.view(pa.binary())
    if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        out, bad = [], 0
        for v in arr.to_pylist():
            if v is None:
                out.append(None)
                continue
            try:
                out.append(v.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(v.decode("utf-8", "replace"))
                bad += 1
        return pa.array(out, pa.string()), bad
    try:
        return arr.cast(pa.string()), 0
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(f"a text column has type {arr.type}, which cannot be read as text") from None


def require_columns(source: TableSource, required: tuple[str, ...], label: str) -> None:
    """Fail naming the file when a required column is missing."""
    names = set(source.schema.names)
    missing = [c for c in required if c not in names]
    if missing:
        raise InputError(f"{source.path}: the {label} lacks required column(s) {', '.join(missing)}; "
                         f"it has {', '.join(source.schema.names)}")


def read_whole(source: TableSource, columns: list[str]) -> pa.Table:
    """Read the named columns of a (small) table at once."""
    batches = list(source.batches(columns))
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    return pa.Table.from_batches(batches)
