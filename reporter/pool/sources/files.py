"""Reading a source file: gzip, UTF-8, JSON and JSONL, XML without DTD tricks, and the fields of a record.

Shared by every source reader (reporter.pool.sources) and by the
normalized-record reader (reporter.digest.read). Anything unreadable is an
InputError naming the file and the position.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...files import parse_json

GZIP_MAGIC = b"\x1f\x8b"

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


def jsonl_items(path: Path, data: bytes) -> Iterator[tuple[str, Any]]:
    """(`FILE: line N`, parsed value) for every non-blank line of JSONL bytes."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            where = f"{path}: line {number}"
            yield where, parse_json(decode(path, raw, where), where)


_ISO_DATE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ][0-9:.]+(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?")
LEADING = re.compile(rb"(?:\xef\xbb\xbf)?\s*")
_NON_SPACE = re.compile(rb"\S")
ASCII_DIGITS = re.compile(r"[0-9]+")


def head(data: bytes, n: int = 8) -> bytes:
    """The first n bytes after a byte order mark and white space (no copy of the whole file)."""
    start = LEADING.match(data).end()
    return data[start:start + n]


def is_json_document(data: bytes) -> bool:
    """True when the bytes are one JSON document (a list, or one object over several lines), not JSONL."""
    start = LEADING.match(data).end()
    if data.startswith(b"[", start):
        return True
    if not data.startswith(b"{", start):
        return False
    end = data.find(b"\n", start)
    if end < 0 or _NON_SPACE.search(data, end) is None:
        return True  # one line: one object
    try:
        json.loads(data[start:end])
    except (ValueError, RecursionError):
        return True  # the first line is not a whole object: a document spread over lines
    return False


def json_items(path: Path, data: bytes, list_key: str = "results") -> list[tuple[str, Any]]:
    """(position, item) of a JSON document (a list, `{list_key: [...]}`, one object) or JSONL.

    Items of a document are `FILE: record N`; JSONL items are `FILE: line N`.
    """
    if not is_json_document(data):
        return list(jsonl_items(path, data))
    doc = parse_json(decode(path, data), str(path))
    if isinstance(doc, dict) and isinstance(doc.get(list_key), list):
        doc = doc[list_key]
    elif isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(f"{path}: expected a JSON list or object of records, got {type(doc).__name__}")
    return [(f"{path}: record {n}", item) for n, item in enumerate(doc, start=1)]

# --- XML: refuse DTD tricks, then parse -----------------------------------------------------------

class _Root(Exception):
    """Ends the pre-scan at the root element: nothing after it can declare a DTD."""


def xml_root(path: Path, data: bytes) -> str:
    """The root element's name (`{namespace}name`) after a pre-scan that refuses DTD tricks (InputError).

    A `<!DOCTYPE … PUBLIC "…" "….dtd">` naming an external DTD, as PubMed's
    efetch writes, is allowed: expat never fetches it. An internal subset
    (`<!DOCTYPE x [ … ]>`) is where entity declarations (and entity bombs)
    live, so it is refused; an entity used without a declaration is then a
    parse error. The scan stops at the root element: nothing after it can
    declare a DTD.
    """
    names: list[str] = []

    def doctype(name: str, sysid: str | None, pubid: str | None, internal: int) -> None:
        if internal:
            raise InputError(f"{path}: XML with a DTD internal subset (<!DOCTYPE {name} [ ... ]>) is refused: "
                             f"it can declare entities, and papers files never need one")

    def root(name: str, *_: Any) -> None:
        names.append("{" + name.replace(" ", "}", 1) if " " in name else name)
        raise _Root

    scan = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    scan.StartDoctypeDeclHandler = doctype
    scan.StartElementHandler = root
    try:
        scan.Parse(data, True)
    except _Root:
        return names[0]
    except xml.parsers.expat.ExpatError as exc:
        message = xml.parsers.expat.errors.messages[exc.code]
        raise InputError(f"{path}: line {exc.lineno}: not well-formed XML ({message})") from None
    raise InputError(f"{path}: XML without a root element")


def parse_xml(path: Path, data: bytes) -> ET.Element:
    """The parsed document, after xml_root's pre-scan; InputError naming the line when it is not well-formed."""
    xml_root(path, data)
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise InputError(f"{path}: line {exc.position[0]}: not well-formed XML ({exc})") from None


def xml_text(element: ET.Element | None) -> str | None:
    """All text inside an element (inline markup such as <i> flattened), whitespace collapsed."""
    return None if element is None else clean("".join(element.itertext()))

# --- fields of a source record --------------------------------------------------------------------

def clean(text: str | None) -> str | None:
    """Whitespace collapsed (the sources hard-wrap titles and abstracts); None when nothing is left."""
    if text is None:
        return None
    out = " ".join(text.split())
    return out or None


def text_field(item: Mapping[str, Any], key: str, where: str) -> str | None:
    """A string field of a JSON record (trimmed, None when absent, null or blank); InputError otherwise."""
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: {key!r} must be a string or null, got {value!r:.60}")
    return value.strip() or None


def text_list(item: Mapping[str, Any], key: str, where: str, what: str) -> tuple[str, ...]:
    """A list-of-strings field of a JSON record, each trimmed, blanks left out (() when absent or null);
    InputError naming `what` the list should hold otherwise."""
    value = item.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {key!r} must be a list of {what}, got {value!r:.60}")
    return tuple(v.strip() for v in value if v.strip())


def iso_date(value: str | None, where: str, key: str) -> str | None:
    """The ISO date (YYYY-MM-DD) of a date or a timestamp that starts with one; InputError when it is neither."""
    if value is None:
        return None
    m = _ISO_DATE.fullmatch(value.strip())
    try:
        if m is None:
            raise ValueError
        dt.date.fromisoformat(m.group(1))
    except ValueError:
        raise InputError(f"{where}: {key!r} must be a date (YYYY-MM-DD), got {value!r:.40}") from None
    return m.group(1)


def required(where: str, rid: str | None, title: str | None, what: str) -> tuple[str, str]:
    if rid is None:
        raise InputError(f"{where}: record without {what}; every record needs an id and a title")
    if title is None:
        raise InputError(f"{where} (id {rid}): record without a title")
    return rid, title


def json_object(item: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: {what} must be a JSON object, got {type(item).__name__}")
    return item
