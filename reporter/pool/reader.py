"""Read pools and overlays: Parquet (file or folder), JSONL and CSV, in record batches.

Bad input gets a clear error before anything is written: a missing required
column, a file that is not what its extension says, a duplicate work_id.
Non-UTF-8 bytes are replaced (U+FFFD) and counted, never fatal.

Odd but valid input reads: a UTF-8 byte order mark, `large_string` columns,
nesting up to MAX_JSON_DEPTH levels in JSONL (deeper is refused naming the
line, before pyarrow's recursive parser could overflow its stack), and rows
of any size up to 2 GiB. JSONL and CSV are parsed in blocks; when
pyarrow finds a row longer than a block ("straddling object"), the file is
scanned once for its longest row and read again with a block that holds it
(rows already handed out are skipped, so the caller sees each row once).
The scans of a file's raw bytes (the longest row, the deepest nesting, a
CSV header) are in rawscan.py.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from ..errors import InputError
from ..hashing import sha256_file, sha256_files
from .rawscan import check_json_depth, csv_names, longest_row, unreadable

REQUIRED_POOL_COLUMNS = ("work_id", "source", "title", "abstract")
TEXT_COLUMNS = ("work_id", "source", "title", "abstract")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
GENERATED_KEY = b"reporter.generated"
JSON_BLOCK = 1 << 20
"""pyarrow's default JSON block; a file with a longer line is read again with a larger one."""
CSV_BLOCK = 1 << 24
"""The first CSV block tried (16 MiB)."""
MAX_BLOCK = (1 << 31) - 1
"""The largest block pyarrow takes (an int32), which is also the most a string column chunk holds."""
T = TypeVar("T")


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
    block_size: int = 0
    """JSONL and CSV: the block size that holds the file's longest row (found by open_table)."""

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

    def _conform(self, batch: pa.RecordBatch, columns: list[str], checked: Iterable[str] = ()) -> pa.RecordBatch:
        """Cast the text columns to string, replacing and counting invalid UTF-8.

        `checked`: string columns the caller has already found to be valid UTF-8.
        """
        arrays, fields = [], []
        for name in columns:
            arr = batch.column(name)
            if name in TEXT_COLUMNS and name not in checked:
                arr, bad = as_utf8(arr, f"{self.path}: column {name!r}")
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
            table, _ = _read_jsonl(self.path)
            for batch in table.select(columns).to_batches(max_chunksize=batch_size):
                yield self._conform(batch, columns)
        else:
            for batch in self._csv_batches():
                yield self._conform(batch.select(columns), columns)

    def _csv_batches(self) -> Iterator[pa.RecordBatch]:
        """The CSV's record batches; on a row longer than the block, again with a larger block, skipping rows seen."""
        done = 0
        while True:
            reader, self.block_size = _sized(self.path, "csv", self.block_size or CSV_BLOCK,
                                             lambda block: _open_csv(self.path, block))
            skip = done
            try:
                for batch in _guarded(self.path, reader):
                    if skip >= batch.num_rows:
                        skip -= batch.num_rows
                        continue
                    batch, skip = batch.slice(skip), 0
                    done += batch.num_rows
                    yield batch
                return
            except _Straddling:
                self.block_size = _larger_block(self.path, "csv", self.block_size)


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
            _check_text_types(f, s, label)
        return TableSource(path, kind, schemas[0], rows, files)
    if kind == "jsonl":
        table, block = _read_jsonl(path)
        _check_text_types(path, table.schema, label)
        return TableSource(path, kind, table.schema, table.num_rows, files, block)
    reader, block = _sized(path, "csv", CSV_BLOCK, lambda size: _open_csv(path, size))
    _check_text_types(path, reader.schema, label)
    return TableSource(path, kind, reader.schema, None, files, block)


def _check_text_types(path: Path, schema: pa.Schema, label: str) -> None:
    """Refuse, naming the file and the column, a text column whose type cannot be read as text."""
    for name in TEXT_COLUMNS:
        if name not in schema.names:
            continue
        kind = schema.field(name).type
        try:
            pa.array([], kind).cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(f"{path}: column {name!r} of the {label} has type {kind}, which cannot be read "
                             "as text; write it as a string (one value per row, not an object or a list)") from None


class _Straddling(Exception):
    """pyarrow met a row longer than its block."""


@contextmanager
def _arrow_errors(path: Path, what: str) -> Iterator[None]:
    """pyarrow's errors reading path as InputError naming it and `what` is wrong (a too-long row as _Straddling)."""
    try:
        yield
    except pa.ArrowInvalid as exc:
        if "straddl" in str(exc):
            raise _Straddling() from None
        raise InputError(f"{path}: {what}: {exc}") from None
    except OSError as exc:
        raise InputError(unreadable(path, exc)) from None


def _guarded(path: Path, batches: Iterator[T]) -> Iterator[T]:
    """Items of a pyarrow CSV reader, its errors as InputError naming the file (a too-long row as _Straddling)."""
    with _arrow_errors(path, "could not read CSV"):
        yield from batches


def _sized(path: Path, kind: str, block: int, attempt: Callable[[int], T]) -> tuple[T, int]:
    """attempt(block) and the block used; again with a block that holds the longest row when one straddles."""
    while True:
        try:
            return attempt(block), block
        except _Straddling:
            block = _larger_block(path, kind, block)


def _larger_block(path: Path, kind: str, block: int) -> int:
    """A block that holds the file's longest row (at least twice the last one), up to MAX_BLOCK."""
    longest = longest_row(path, quoted=kind == "csv")
    if longest > MAX_BLOCK or block >= MAX_BLOCK:
        raise InputError(f"{path}: a row of {longest:,} bytes is longer than the {MAX_BLOCK:,} bytes a row may take; "
                         "shorten its text")
    return min(MAX_BLOCK, max(2 * block, 1 << max(longest - 1, 1).bit_length()))


_JSONL_CACHE: dict[Path, tuple[float, pa.Table, int]] = {}


def _read_jsonl(path: Path) -> tuple[pa.Table, int]:
    """The whole JSONL table (cached while the file's mtime holds) and the block size that read it."""
    key = path.resolve()
    mtime = path.stat().st_mtime
    if key in _JSONL_CACHE and _JSONL_CACHE[key][0] == mtime:
        return _JSONL_CACHE[key][1:]

    check_json_depth(path)

    def attempt(block: int) -> pa.Table:
        with _arrow_errors(path, "not valid JSON lines (one JSON object a line)"), \
                pa.input_stream(str(path), compression="detect") as stream:
            return pajson.read_json(stream, read_options=pajson.ReadOptions(block_size=block))

    table, block = _sized(path, "jsonl", JSON_BLOCK, attempt)
    _JSONL_CACHE.clear()
    _JSONL_CACHE[key] = (mtime, table, block)
    return table, block


def _open_csv(path: Path, block: int) -> pacsv.CSVStreamingReader:
    """A streaming CSV reader with the given block size, text columns as strings."""
    delimiter = "\t" if ".tsv" in path.name.lower() else ","
    with _arrow_errors(path, "not a readable CSV file"):
        names = csv_names(path, delimiter)
        types = {n: pa.string() for n in names if n in TEXT_COLUMNS or n in ("label", "doi", "venue", "type")}
        return pacsv.open_csv(
            str(path),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
            read_options=pacsv.ReadOptions(block_size=block),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                 check_utf8=False),
        )


def as_utf8(arr: pa.Array, where: str = "a text column") -> tuple[pa.Array, int]:
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
        raise InputError(f"{where} has type {arr.type}, which cannot be read as text; "
                         "write it as a string") from None


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
