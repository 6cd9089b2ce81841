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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..csvcells import csv_bytes, uncell
from ..errors import InputError
from ..files import write_bytes
from ..hashing import sha256_file
from ..ids import paper_url
from ..screening.scope import ScopeWork

SHEET_COLUMNS = ("release", "stratum", "seed", "n", "work_id", "title", "abstract", "link", "label")
"""The sheet's header, in order."""
LABELS = ("include", "exclude", "unsure")
"""What a label may say; empty is unlabelled."""
RELEVANT = frozenset({"include", "unsure"})
"""The labels that count as relevant: an unsure work counts against the pile, never for it."""


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

    def labels(self) -> dict[str, str]:
        """work_id -> label of the labelled rows."""
        return {r.work_id: r.label for r in self.rows if r.label is not None}


def sheet_bytes(release: str, stratum: str, seed: int, n: int, works: Sequence[ScopeWork],
                labels: Mapping[str, str]) -> bytes:
    """The sheet's CSV bytes: the works in sample order (the text routing saw: `screening.scope.load_works`),
    each with its link and its label from `labels` (or empty)."""
    return csv_bytes(SHEET_COLUMNS, [
        (release, stratum, seed, n, w.work_id, w.title, w.abstract, paper_url(w.work_id), labels.get(w.work_id))
        for w in works])


def fill_labels(path: Path, labels: Mapping[str, str]) -> int:
    """Write `labels` (work_id -> label) into a sheet's empty label cells, every other cell as it was (the same
    bytes the writer gave them); returns how many rows were labelled. What a labelling script does."""
    read_sheet(path, "sheet")  # a sheet, whole, before anything is rewritten
    with open(path, newline="", encoding="utf-8-sig") as f:  # newline="": a cell's own CRLF kept as it is
        records = [[uncell(c) for c in r] for r in csv.reader(f)][1:]
    at, filled = SHEET_COLUMNS.index("work_id"), 0
    for record in records:
        if not record[-1].strip() and record[at] in labels:
            record[-1], filled = labels[record[at]], filled + 1
    write_bytes(path, csv_bytes(SHEET_COLUMNS, records))
    return filled


def read_sheet(path: Path, flag: str = "--sheet") -> Sheet:
    """Read and check a sheet: its header, one release, stratum, seed and n on every row, each label known."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{flag} {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")  # a spreadsheet may save a byte order mark
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 ({exc}); save the sheet as CSV in UTF-8") from None
    records = list(csv.reader(io.StringIO(text, newline="")))
    if not records or tuple(records[0]) != SHEET_COLUMNS:
        raise InputError(f"{path}: the header must be {','.join(SHEET_COLUMNS)}; this is not a sheet "
                         f"`reporter certify --out` wrote (or its columns were moved)")
    body = [(i, r) for i, r in enumerate(records[1:], start=2) if any(cell.strip() for cell in r)]
    if not body:
        raise InputError(f"{path}: holds no rows; draw a sheet with `reporter certify --pile NAME --n N --out ...`")
    first = body[0][1]
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
    return Sheet(path=path, release=release, stratum=stratum, seed=_integer(seed, "seed", path, None),
                 n=_integer(n, "n", path, 1), rows=tuple(rows), sha256=sha256_file(path))


def _label(cell: str, where: str, work_id: str) -> str | None:
    label = uncell(cell).strip().lower()
    if not label:
        return None
    if label not in LABELS:
        raise InputError(f"{where} (work {work_id}): label {cell!r} is not include, exclude or unsure; write one "
                         f"of them, or leave the cell empty for a work not labelled yet")
    return label


def _integer(text: str, column: str, path: Path, least: int | None) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or (least is not None and value < least):
        at_least = "" if least is None else f" of at least {least}"
        raise InputError(f"{path}: {column} {text!r} must be a whole number{at_least}; the sheet was edited")
    return value
