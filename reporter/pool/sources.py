"""The sources' own formats into digest records (reporter.digest.records.Record).

One reader per format, each `read_<format>(path) -> list[Record]`:

- `read_openalex`: OpenAlex works JSON (a list, an API page with `results`, one work, or JSONL);
- `read_pubmed`: PubMed E-utilities `efetch` XML (PubmedArticleSet);
- `read_biorxiv`: bioRxiv/medRxiv `details` API JSON (`collection`), versions of one DOI folded;
- `read_arxiv_atom`: the arXiv API's Atom feed;
- `read_arxiv_listing`: the daily arXiv listing JSONL (crawl_date, id, ..., summary).

A record that cannot be read stops the run: InputError naming the file and
the position (`FILE: line N: ...` for line-based input, `FILE: record N (id
X): ...` otherwise). A record without an id or a title is bad input, never
silently dropped. Ids are scheme-prefixed and normalised: DOIs lower-cased
without a resolver prefix, arXiv ids without their version suffix (kept as
`version`). Everything else about reading a file (gzip, UTF-8, JSON or
JSONL) is shared by the readers and by the normalized-record reader
(reporter.digest.read).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any, Iterator

from ..digest.records import Record  # noqa: F401  (the readers below return Records)
from ..errors import InputError
from ..novelty.keys import normalize_doi

GZIP_MAGIC = b"\x1f\x8b"
MAX_XML_BYTES = 1 << 30
"""The largest XML document read (1 GiB uncompressed); an efetch batch is a few MB."""


# --- reading files: gzip, UTF-8, JSON and JSONL -------------------------------------------------

def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic; InputError when unreadable."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
        if head == GZIP_MAGIC:
            with gzip.open(path, "rb") as g:
                return g.read()
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; name a records file") from None
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(f"{path}: cannot read the file: {exc}") from None


def decode(path: Path, data: bytes, where: str | None = None) -> str:
    """UTF-8 text (a byte order mark skipped); InputError naming the byte offset when it is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = where or str(path)
        raise InputError(f"{at}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON ({exc})") from None


def jsonl_items(path: Path, data: bytes) -> Iterator[tuple[str, Any]]:
    """(`FILE: line N`, parsed value) for every non-blank line of JSONL bytes."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            where = f"{path}: line {number}"
            yield where, _json(decode(path, raw, where), where)


def is_json_document(data: bytes) -> bool:
    """True when the bytes are one JSON document (a list, or one object over several lines), not JSONL."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return True
    if not text.startswith(b"{"):
        return False
    first, _, rest = text.partition(b"\n")
    if not rest.strip():
        return True  # one line: one object
    try:
        json.loads(first)
    except (ValueError, RecursionError):
        return True  # the first line is not a whole object: a document spread over lines
    return False


def json_items(path: Path, data: bytes, list_key: str = "results") -> list[tuple[str, Any]]:
    """(position, item) of a JSON document (a list, `{list_key: [...]}`, one object) or JSONL.

    Items of a document are `FILE: record N`; JSONL items are `FILE: line N`.
    """
    if not is_json_document(data):
        return list(jsonl_items(path, data))
    doc = _json(decode(path, data), str(path))
    if isinstance(doc, dict) and isinstance(doc.get(list_key), list):
        doc = doc[list_key]
    elif isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(f"{path}: expected a JSON list or object of records, got {type(doc).__name__}")
    return [(f"{path}: record {n}", item) for n, item in enumerate(doc, start=1)]


# --- identifiers ---------------------------------------------------------------------------------

_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?")
_ARXIV_OLD = re.compile(r"([a-z][a-z-]*(?:\.[A-Za-z]{2})?/\d{7})(v\d+)?")
_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.I)


def split_arxiv(value: str) -> tuple[str, str | None] | None:
    """(`arxiv:ID`, version or None) of an arXiv id or abs/pdf URL, new (2401.01234v2) or old style
    (hep-th/9901001v1); None when the value is not an arXiv id."""
    v = value.strip()
    v = _ARXIV_URL.sub("", v)
    if v.lower().startswith("arxiv:"):
        v = v[6:]
    if v.lower().endswith(".pdf"):
        v = v[:-4]
    m = _ARXIV_NEW.fullmatch(v) or _ARXIV_OLD.fullmatch(v)
    if m is None:
        return None
    return f"arxiv:{m.group(1)}", m.group(2)


def doi_id(value: str | None) -> str | None:
    """A DOI in normal form (no resolver or `doi:` prefix, lower-cased), or None when blank."""
    if value is None:
        return None
    out = normalize_doi(value)
    return out or None


# --- detecting the format -------------------------------------------------------------------------

def json_kind(path: Path, data: bytes) -> str:
    """The format of JSON or JSONL bytes, decided by the first record (reporter.digest.read)."""
    return "jsonl"


def xml_kind(path: Path, data: bytes) -> str:
    """The format of XML bytes, decided by the root element (reporter.digest.read)."""
    raise InputError(f"{path}: XML papers files are not read yet")
