"""The sheet: a sample as a CSV a person labels in a spreadsheet, and that sheet read back.

Columns `release, stratum, seed, n, work_id, title, abstract, link, label`,
one row per sampled work in sample order (the seeded rank: the first m rows
are the sample of size m), written by the one CSV writer
(`reporter.csvcells`: formula-like cells neutralised, CRLF, UTF-8). `label`
is `include`, `exclude` or `unsure` (any case, spaces around ignored), or
empty for a work not labelled yet; anything else is refused naming the row.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..csvcells import csv_bytes, uncell
from ..errors import InputError
from ..files import read_capped, write_bytes
from ..hashing import sha256_bytes
from ..ids import paper_url
from ..screening.scope import ScopeWork
from .results import MAX_COUNT, MAX_SEED

SHEET_COLUMNS = ("release", "stratum", "seed", "n", "work_id", "title", "abstract", "link", "label")
"""The sheet's header, in order."""
LABELS = ("include", "exclude", "unsure")
"""What a label may say; empty is unlabelled."""
RELEVANT = frozenset({"include", "unsure"})
"""The labels that count as relevant: an unsure work counts against the pile, never for it."""
SHEET_TEXT = 32_000
"""The most characters of a title or abstract a sheet holds (a spreadsheet cell holds 32,767): a longer text is
cut there, and the cell says so."""
MAX_SHEET_CELL = 1_048_576
"""The most characters one cell of a sheet may hold when it is read back (Python's csv stops at 131,072 unless
told more): far above what the writer puts in one (`SHEET_TEXT`, a lone surrogate's escape at most 6 times it)."""
MAX_SHEET_BYTES = 256 * 1024 * 1024
"""The most a sheet file may hold, read or written (400 rows with their abstracts are about 1 MB)."""


@dataclass(frozen=True)
class SheetRow:
    """One labelled (or not yet labelled) work of a sheet."""

    row: int
    """Its row as a spreadsheet numbers it (the header is row 1)."""
    work_id: str
    """The work."""
    label: str | None
    """`include`, `exclude`, `unsure`, or None when not labelled."""


@dataclass(frozen=True)
class Sheet:
    """A sheet read back: what it says it samples, and its rows in sheet order."""

    path: Path
    """The file."""
    release: str
    """The release id every row names."""
    stratum: str
    """The stratum every row names."""
    seed: int
    """The seed of the sample."""
    n: int
    """The sample size asked for (the sheet holds fewer rows when the stratum is smaller)."""
    rows: tuple[SheetRow, ...]
    """The works, in sheet order."""
    sha256: str
    """The file's sha256, recorded in the certificate."""
    data: bytes = field(default=b"", repr=False, compare=False)
    """The file's bytes, as read (and hashed)."""

    def labels(self) -> dict[str, str]:
        """work_id -> label of the labelled rows."""
        return {r.work_id: r.label for r in self.rows if r.label is not None}


def sheet_bytes(release: str, stratum: str, seed: int, n: int, works: Sequence[ScopeWork],
                labels: Mapping[str, str]) -> bytes:
    """The sheet's CSV bytes: the works in sample order (the text routing saw: `screening.scope.load_works`),
    each with its link and its label from `labels` (or empty)."""
    return csv_bytes(SHEET_COLUMNS, [
        (release, stratum, seed, n, w.work_id, clip(w.title), clip(w.abstract), paper_url(w.work_id),
         labels.get(w.work_id))
        for w in works])


def clip(text: str | None) -> str | None:
    """A title or abstract as a sheet holds it: cut at `SHEET_TEXT` characters, the cut said in the cell."""
    if text is None or len(text) <= SHEET_TEXT:
        return text
    return f"{text[:SHEET_TEXT]} [cut here: the sheet keeps {SHEET_TEXT:,} of its {len(text):,} characters]"


def fill_labels(path: Path, labels: Mapping[str, str]) -> int:
    """Write `labels` (work_id -> label) into a sheet's empty label cells, every other cell as it was (the same
    bytes the writer gave them); returns how many rows were labelled. What a labelling script does."""
    sheet = read_sheet(path, "sheet")  # a sheet, whole, before anything is rewritten
    records = [[uncell(c) for c in r] for r in sheet_records(sheet.data.decode("utf-8-sig"), path)][1:]
    at, filled = SHEET_COLUMNS.index("work_id"), 0
    for record in records:
        if not record[-1].strip() and record[at] in labels:
            record[-1], filled = labels[record[at]], filled + 1
    write_bytes(path, csv_bytes(SHEET_COLUMNS, records))
    return filled


def read_sheet(path: Path, flag: str = "--sheet") -> Sheet:
    """Read and check a sheet: its header, one release, stratum, seed and n on every row, each label known.
    Read with a size cap (`MAX_SHEET_BYTES`); the sha256 is of the bytes read."""
    path = Path(path)
    try:
        data = read_capped(path, MAX_SHEET_BYTES, flag)
    except FileNotFoundError:
        raise InputError(f"{flag} {path}: cannot read it (no such file)") from None
    return parse_sheet(data, path)


@contextmanager
def _cells_up_to(limit: int) -> Iterator[None]:
    """Python's csv field limit raised to `limit` while a sheet is parsed, and put back after."""
    before = csv.field_size_limit()
    csv.field_size_limit(max(before, limit))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def sheet_records(text: str, path: Path) -> list[list[str]]:
    """A sheet's CSV records (the header first); a cell over `MAX_SHEET_CELL` characters is refused naming the
    row (as a spreadsheet numbers it: the header is row 1)."""
    records: list[list[str]] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    with _cells_up_to(MAX_SHEET_CELL + 1):
        try:
            for record in reader:
                if any(len(cell) > MAX_SHEET_CELL for cell in record):
                    raise csv.Error("field larger than field limit")
                records.append(record)
        except csv.Error as exc:
            why = (f"a cell of more than {MAX_SHEET_CELL:,} characters, more than any sheet the tool writes holds"
                   if "field limit" in str(exc) else f"not CSV ({exc})")
            raise InputError(f"{path}: row {len(records) + 1}: {why}; draw the sheet again "
                             f"(reporter certify --pile ... --from {path.name} carries the labels over)") from None
    return records


def parse_sheet(data: bytes, path: Path) -> Sheet:
    """A sheet's bytes, checked (`read_sheet`)."""
    try:
        text = data.decode("utf-8-sig")  # a spreadsheet may save a byte order mark
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 ({exc}); save the sheet as CSV in UTF-8") from None
    records = sheet_records(text, path)
    if not records or tuple(records[0]) != SHEET_COLUMNS:
        raise InputError(f"{path}: the header must be {','.join(SHEET_COLUMNS)}; this is not a sheet "
                         f"`reporter certify --out` wrote (or its columns were moved)")
    body = [(i, r) for i, r in enumerate(records[1:], start=2) if any(cell.strip() for cell in r)]
    if not body:
        raise InputError(f"{path}: holds no rows; draw a sheet with `reporter certify --pile NAME --n N --out ...`")
    first_row, first = body[0]
    rows: list[SheetRow] = []
    seen: dict[str, int] = {}
    for number, record in body:
        where = f"{path}: row {number}"
        if len(record) != len(SHEET_COLUMNS):
            raise InputError(f"{where}: has {len(record)} cells, not {len(SHEET_COLUMNS)}")
        for column in ("release", "stratum", "seed", "n"):
            at = SHEET_COLUMNS.index(column)
            if record[at] != first[at]:
                raise InputError(f"{where}: {column} {uncell(record[at])!r} differs from the first row's "
                                 f"{uncell(first[at])!r}; a sheet samples one stratum of one release")
        work_id = uncell(record[SHEET_COLUMNS.index("work_id")]).strip()
        if not work_id:
            raise InputError(f"{where}: has no work_id")
        if work_id in seen:
            raise InputError(f"{where}: work {work_id!r} is listed twice (first on row {seen[work_id]})")
        seen[work_id] = number
        rows.append(SheetRow(number, work_id, _label(record[SHEET_COLUMNS.index("label")], where, work_id)))
    release, stratum, seed, n = (uncell(first[SHEET_COLUMNS.index(c)]).strip()
                                 for c in ("release", "stratum", "seed", "n"))
    where = f"{path}: row {first_row}"
    return Sheet(path=path, release=release, stratum=stratum, seed=_integer(seed, "seed", where, 0, MAX_SEED),
                 n=_integer(n, "n", where, 1, MAX_COUNT), rows=tuple(rows), sha256=sha256_bytes(data),
                 data=data)


def _label(cell: str, where: str, work_id: str) -> str | None:
    label = uncell(cell).strip().lower()
    if not label:
        return None
    if label not in LABELS:
        raise InputError(f"{where} (work {work_id}): label {cell!r} is not include, exclude or unsure; write one "
                         f"of them, or leave the cell empty for a work not labelled yet")
    return label


def _integer(text: str, column: str, where: str, least: int, most: int) -> int:
    value = int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None
    if value is None or not least <= value <= most:
        raise InputError(f"{where}: {column} {text!r} must be a whole number from {least} to {most}; the sheet "
                         f"was edited")
    return value
