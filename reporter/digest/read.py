"""Read a week's papers into records: normalized records (JSONL, Parquet, CSV) or a source's own format.

`read_papers(path)` detects the format (docs/digest.md, "Records and merge"):

1. A `.parquet`/`.pq` name, or content starting with `PAR1`: normalized Parquet.
2. A `.csv`/`.tsv` name (optionally `.gz`): normalized CSV/TSV.
3. Otherwise the content decides (gzip is undone first, whatever the name):
   - XML (`<` first): root `PubmedArticleSet` is PubMed efetch XML; root Atom `feed` is the arXiv API;
   - JSON or JSONL: the first record decides. An object with `collection` is bioRxiv/medRxiv
     `details`; with `results` an OpenAlex API page; a record with `abstract_inverted_index`,
     `authorships` or an `https://openalex.org/W...` id is an OpenAlex work; one with `crawl_date`
     (or `abs`, `pdf` and `summary`) is an arXiv listing row; anything else is a normalized record.
   An empty file (or only white space) has no records; any other content is refused, naming the
   formats read.

A source's own format may list one paper several times (the arXiv listing on several days, bioRxiv's
versions): `read_papers` folds those into one record; `read_listed` gives them as listed, for the
digest to fold within each week (reporter.digest.listings). `paper_files` names the files of a papers
folder.

Normalized records have exactly the fields of `Record.to_json` (id, title, abstract, source, doi,
published, type, authors, venue, related_ids, version, categories); an unknown field is an error (it
is most often a misspelt one, which would otherwise silently lose its value). In CSV, `authors`,
`related_ids` and `categories` are `;`-separated and an empty cell is null.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..ids import doi_id, normalize_lom_id, split_arxiv
from ..pool.record import Record
from ..pool.sources.files import decode, head, iso_date, json_items, read_bytes, text_field
from ..pool.sources.fold import folded_records
from ..pool.sources.kinds import SOURCE_READERS, json_kind, xml_kind

FIELDS = ("id", "title", "abstract", "source", "doi", "published", "type", "authors", "venue",
          "related_ids", "version", "categories")
LIST_FIELDS = ("authors", "related_ids", "categories")
"""The fields that hold a list (`;`-separated in CSV)."""
TEXT_FIELDS = ("abstract", "source", "type", "venue")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
PAPER_SUFFIXES = tuple(s + gz for s in (".jsonl", ".json", ".xml", ".csv", ".tsv", ".parquet", ".pq")
                       for gz in ("", ".gz"))
"""The names of the files a papers folder is read from; any other file in it (a README) is not papers."""


def read_papers(path: Path) -> list[Record]:
    """The records of a papers file in any format detect_format names (module docstring), in file order; a
    source format's repeated listings of one paper folded into one record."""
    records, folds = read_listed(path)
    return folded_records(records) if folds else records


def read_listed(path: Path) -> tuple[list[Record], bool]:
    """A papers file's records as it lists them, and whether its format's repeated listings are folded.

    True for a source's own format (read_papers folds a paper listed on
    several days into one record); False for normalized records, which the
    merge's `same id` step folds and lists.
    """
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return read_parquet(path), False
    if name.endswith(CSV_SUFFIXES):
        return read_csv(path), False
    data = read_bytes(path)
    if not head(data):
        return [], False  # an empty file: a week without papers
    kind = detect_format(path, data)
    if kind == "parquet":
        return read_parquet(path), False
    if kind == "jsonl":
        return [normalized_record(item, where) for where, item in json_items(path, data)], False
    return SOURCE_READERS[kind](path, data), True


def paper_files(path: Path) -> list[Path]:
    """The files of a papers path: the file itself, or the papers files of a folder (PAPER_SUFFIXES, not hidden:
    a run's temporaries are), by name; InputError when the path does not exist."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.iterdir()
                      if not p.name.startswith(".") and p.name.lower().endswith(PAPER_SUFFIXES) and not p.is_dir())
    if not path.exists():
        raise InputError(f"{path}: papers file or folder not found")
    return [path]


def detect_format(path: Path, data: bytes | None = None) -> str:
    """The format of a papers file (the rule is the module docstring): parquet, csv, jsonl (normalized
    records), or one of reporter.pool.sources.kinds.SOURCE_READERS' names. `data`: its bytes, when already read."""
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if data is None:
        data = read_bytes(path)
    first = head(data)
    if first.startswith(b"PAR1"):
        return "parquet"
    if first.startswith(b"<"):
        return xml_kind(path, data)
    if first.startswith((b"{", b"[")):
        return json_kind(path, data)
    raise InputError(f"{path}: not a papers file this tool reads: expected normalized records (JSONL, "
                     f"Parquet, CSV), OpenAlex or bioRxiv/medRxiv JSON, PubMed XML, arXiv Atom or "
                     f"an arXiv listing JSONL")


# --- normalized records ---------------------------------------------------------------------------

def read_parquet(path: Path) -> list[Record]:
    """Normalized records from a Parquet file."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a file that is not Parquet
        raise InputError(f"{path}: cannot read as Parquet: {exc}") from None
    _check_columns(path, table.column_names)
    records = []
    for n, row in enumerate(_rows(path, table), start=1):
        records.append(normalized_record(row, f"{path}: record {n}"))
    return records


def _rows(path: Path, table: Any) -> Iterable[dict[str, Any]]:
    """A table's rows as dicts; a string cell whose bytes are not UTF-8 is an InputError naming its record."""
    try:
        return table.to_pylist()
    except UnicodeDecodeError:
        pass
    rows = []
    for n in range(table.num_rows):
        try:
            rows.append(table.slice(n, 1).to_pylist()[0])
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: record {n + 1}: a text cell is not UTF-8 (byte {exc.start}: "
                             f"{exc.object[max(0, exc.start - 8):exc.end + 8]!r}); write the file's text as "
                             f"UTF-8") from None
    return rows


def read_csv(path: Path) -> list[Record]:
    """Normalized records from CSV or TSV (by name), `.gz` or not; `;` separates list items."""
    text = decode(path, read_bytes(path))
    delimiter = "\t" if path.name.lower().endswith(CSV_SUFFIXES[2:]) else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records: list[Record] = []
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: empty file; a CSV of records starts with a header naming id and title")
        _check_columns(path, header)
        line = reader.line_num + 1
        for row in reader:
            where = f"{path}: line {line}"
            line = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise InputError(f"{where}: {len(row)} cells for {len(header)} columns")
            item: dict[str, Any] = {k: (v if v.strip() else None) for k, v in zip(header, row)}
            for key in LIST_FIELDS:
                if item.get(key) is not None:
                    item[key] = [part.strip() for part in item[key].split(";") if part.strip()]
            records.append(normalized_record(item, where))
    except csv.Error as exc:
        raise InputError(f"{path}: line {reader.line_num}: not valid CSV ({exc})") from None
    return records


def _check_columns(path: Path, columns: Iterable[str]) -> None:
    columns = list(columns)
    unknown = [c for c in columns if c not in FIELDS]
    if unknown:
        raise InputError(f"{path}: unknown column(s) {', '.join(map(repr, unknown))}; "
                         f"a records file has {', '.join(FIELDS)}")
    missing = [c for c in ("id", "title") if c not in columns]
    if missing:
        raise InputError(f"{path}: no {' or '.join(missing)} column; every record needs an id and a title")
    if len(set(columns)) != len(columns):
        raise InputError(f"{path}: a column is named twice in the header")


def _id_list(item: dict[str, Any], key: str, where: str) -> list[str]:
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {key!r} must be a list of strings, got {value!r:.60}")
    return [v.strip() for v in value if v.strip()]


def record_id(value: str, where: str, key: str = "id") -> tuple[str, str | None]:
    """(normal id, arXiv version or None) of a scheme-prefixed id; InputError when it has no scheme."""
    low = value.strip().lower()
    if low.startswith(("arxiv:", "http://arxiv.org/", "https://arxiv.org/")):
        arxiv = split_arxiv(value)
        if arxiv is not None:
            return arxiv
    normal = normalize_lom_id(value)
    scheme, sep, rest = normal.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", scheme) or not rest.strip():
        raise InputError(f"{where}: {key} {value!r} has no scheme; write it scheme-prefixed "
                         f"(arxiv:2401.01234, doi:10.1101/..., pmid:39000000, openalex:W1)")
    return f"{scheme.lower()}:{rest.strip()}", None


def normalized_record(item: Any, where: str) -> Record:
    """One normalized record (a dict of FIELDS) as a Record; InputError naming `where` when malformed."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: a record must be an object, got {type(item).__name__}")
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; "
                         f"a record has {', '.join(FIELDS)}")
    raw_id = text_field(item, "id", where)
    if raw_id is None:
        raise InputError(f"{where}: record without an id; every record needs a scheme-prefixed id")
    rid, id_version = record_id(raw_id, where)
    where_id = f"{where} (id {rid})"
    title = text_field(item, "title", where_id)
    if title is None:
        raise InputError(f"{where_id}: record without a title")
    version = item.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    version = text_field({"version": version}, "version", where_id) or id_version
    doi = doi_id(text_field(item, "doi", where_id))
    if doi is None and rid.startswith("doi:"):
        doi = rid[4:]
    related = []
    for value in _id_list(item, "related_ids", where_id):
        other, _ = record_id(value, where_id, "related id")
        if other != rid and other not in related:
            related.append(other)
    published = item.get("published")
    if isinstance(published, (dt.date, dt.datetime)):
        published = published.isoformat()[:10]
    published = iso_date(text_field({"published": published}, "published", where_id), where_id,
                                 "published")
    texts = {key: text_field(item, key, where_id) for key in TEXT_FIELDS}
    return Record(id=rid, title=title, abstract=texts["abstract"], source=texts["source"] or "", doi=doi,
                  published=published, type=texts["type"], authors=tuple(_id_list(item, "authors", where_id)),
                  venue=texts["venue"], related_ids=tuple(related), version=version,
                  categories=tuple(dict.fromkeys(_id_list(item, "categories", where_id))), where=where)
