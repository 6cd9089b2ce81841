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

import datetime as dt
import gzip
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..digest.records import Record
from ..errors import InputError
from ..novelty.keys import normalize_doi, normalize_openalex
from ..text import json_without_surrogates, may_hold_surrogates

GZIP_MAGIC = b"\x1f\x8b"
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"


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
    """JSON text parsed, a lone surrogate (`\\ud800`, no character) read as U+FFFD (reporter.text)."""
    try:
        value = json.loads(text)
        return json_without_surrogates(value) if may_hold_surrogates(text) else value
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


_ISO_DATE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ][0-9:.]+(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?")
_LEADING = re.compile(rb"(?:\xef\xbb\xbf)?\s*")
_NON_SPACE = re.compile(rb"\S")


def head(data: bytes, n: int = 8) -> bytes:
    """The first n bytes after a byte order mark and white space (no copy of the whole file)."""
    start = _LEADING.match(data).end()
    return data[start:start + n]


def is_json_document(data: bytes) -> bool:
    """True when the bytes are one JSON document (a list, or one object over several lines), not JSONL."""
    start = _LEADING.match(data).end()
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
    doc = _json(decode(path, data), str(path))
    if isinstance(doc, dict) and isinstance(doc.get(list_key), list):
        doc = doc[list_key]
    elif isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(f"{path}: expected a JSON list or object of records, got {type(doc).__name__}")
    return [(f"{path}: record {n}", item) for n, item in enumerate(doc, start=1)]


# --- identifiers ---------------------------------------------------------------------------------

_ARXIV_NEW = re.compile(r"([0-9]{4}\.[0-9]{4,5})(v[0-9]+)?")
_ARXIV_OLD = re.compile(r"([a-z][a-z-]*(?:\.[A-Za-z]{2})?/[0-9]{7})(v[0-9]+)?")
_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.IGNORECASE)


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


def arxiv_doi_id(doi: str | None) -> str | None:
    """`arxiv:ID` when a DOI is arXiv's own DataCite DOI (10.48550/arxiv.ID), else None."""
    if doi and doi.startswith("10.48550/arxiv."):
        found = split_arxiv(doi[len("10.48550/arxiv."):])
        return found[0] if found else None
    return None


# --- one paper seen several times: fold into one record -------------------------------------------

def _version_number(version: str | None) -> tuple[int, int, str]:
    """A version's number as a sort key, compared as a number of any length (no int(): Python refuses to
    convert more than 4,300 digits); a version without digits sorts first."""
    digits = "".join(str(unicodedata.decimal(c)) for c in re.findall(r"\d", version or ""))
    if not digits:
        return (0, 0, "")
    number = digits.lstrip("0") or "0"
    return (1, len(number), number)


def fold_same_id(records: Iterable[Record]) -> list[tuple[Record, tuple[Record, ...]]]:
    """Records sharing an id folded into one, in the order ids first appear: (folded, its members).

    The newest member (highest version number, then latest `published`, then
    last read) gives the text, authors, venue, type and version; `published`
    is the earliest member's (when the paper first appeared); `doi` is the
    newest member's that has one; related ids are the union.
    """
    groups: dict[str, list[tuple[int, Record]]] = {}
    for index, record in enumerate(records):
        groups.setdefault(record.id, []).append((index, record))
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append((members[0][1], (members[0][1],)))
            continue
        ordered = [r for _, r in sorted(members, key=lambda m: (_version_number(m[1].version),
                                                                 m[1].published or "", m[0]))]
        newest = ordered[-1]
        dates = [r.published for r in ordered if r.published]
        doi = next((r.doi for r in reversed(ordered) if r.doi), None)
        related = dict.fromkeys(i for r in ordered for i in r.related_ids if i != newest.id)
        folded = Record(id=newest.id, title=newest.title, abstract=newest.abstract, source=newest.source, doi=doi,
                        published=min(dates) if dates else None, type=newest.type, authors=newest.authors,
                        venue=newest.venue, related_ids=tuple(related), version=newest.version, where=newest.where)
        out.append((folded, tuple(r for _, r in members)))
    return out


def _folded(records: Iterable[Record]) -> list[Record]:
    return [folded for folded, _ in fold_same_id(records)]


# --- fields of a source record --------------------------------------------------------------------

def _clean(text: str | None) -> str | None:
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


def _required(where: str, rid: str | None, title: str | None, what: str) -> tuple[str, str]:
    if rid is None:
        raise InputError(f"{where}: record without {what}; every record needs an id and a title")
    if title is None:
        raise InputError(f"{where} (id {rid}): record without a title")
    return rid, title


def _object(item: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: {what} must be a JSON object, got {type(item).__name__}")
    return item


# --- OpenAlex works -------------------------------------------------------------------------------

def read_openalex(path: Path) -> list[Record]:
    """OpenAlex works (a JSON list, an API page with `results`, one work, or JSONL) as records."""
    return openalex_records(path, read_bytes(path))


def openalex_records(path: Path, data: bytes) -> list[Record]:
    """read_openalex over bytes already read; a work listed twice is folded (fold_same_id)."""
    return _folded(openalex_record(item, where) for where, item in json_items(path, data, "results"))


def openalex_record(item: Any, where: str) -> Record:
    """One OpenAlex work as a record: `openalex:W…`, abstract rebuilt, DOI and PMID as related ids."""
    work = _object(item, where, "an OpenAlex work")
    raw_id = text_field(work, "id", where)
    wid = normalize_openalex(raw_id) if raw_id else None
    if wid is not None and not re.fullmatch(r"W[0-9]+", wid):
        raise InputError(f"{where}: 'id' must be an OpenAlex work id (https://openalex.org/W…), got {raw_id!r:.60}")
    title = _clean(text_field(work, "title", where) or text_field(work, "display_name", where))
    rid, title = _required(where, f"openalex:{wid}" if wid else None, title, "an 'id'")
    where_id = f"{where} (id {rid})"
    ids = _object(work.get("ids") or {}, where_id, "'ids'")
    doi = doi_id(text_field(work, "doi", where_id) or text_field(ids, "doi", where_id))
    related = []
    pmid = text_field(ids, "pmid", where_id)
    if pmid:
        digits = pmid.rstrip("/").rsplit("/", 1)[-1]
        if not _ASCII_DIGITS.fullmatch(digits):
            raise InputError(f"{where_id}: 'ids.pmid' must be a PubMed id or its URL, got {pmid!r:.60}")
        related.append(f"pmid:{digits}")
    arxiv = arxiv_doi_id(doi)
    if arxiv:
        related.append(arxiv)
    location = _object(work.get("primary_location") or {}, where_id, "'primary_location'")
    source = _object(location.get("source") or {}, where_id, "'primary_location.source'")
    published = iso_date(text_field(work, "publication_date", where_id), where_id, "publication_date")
    return Record(id=rid, title=title, abstract=rebuild_abstract(work.get("abstract_inverted_index"), where_id),
                  source="openalex", doi=doi, published=published,
                  type=text_field(work, "type", where_id), authors=_openalex_authors(work, where_id),
                  venue=text_field(source, "display_name", where_id), related_ids=tuple(related), where=where)


def rebuild_abstract(index: Any, where: str) -> str | None:
    """The abstract from OpenAlex's `abstract_inverted_index` (word -> positions): words in position order."""
    if index is None:
        return None
    if not isinstance(index, Mapping):
        raise InputError(f"{where}: 'abstract_inverted_index' must be an object of word: [positions], "
                         f"got {type(index).__name__}")
    placed = []
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0
                                                      for p in positions):
            raise InputError(f"{where}: 'abstract_inverted_index' entry {word!r:.40} must be a list of word "
                             f"positions (whole numbers from 0), got {positions!r:.60}")
        placed.extend((p, word) for p in positions)
    placed.sort(key=lambda pw: pw[0])  # stable: a position given twice keeps the first word listed first
    return _clean(" ".join(word for _, word in placed))


def _openalex_authors(work: Mapping[str, Any], where: str) -> tuple[str, ...]:
    authorships = work.get("authorships") or []
    if not isinstance(authorships, list):
        raise InputError(f"{where}: 'authorships' must be a list, got {type(authorships).__name__}")
    names = []
    for k, authorship in enumerate(authorships):
        at = f"{where}: authorships[{k}]"
        author = _object(_object(authorship, at, "an authorship").get("author") or {}, at, "'author'")
        name = text_field(author, "display_name", at) or text_field(authorship, "raw_author_name", at)
        if name:
            names.append(name)
    return tuple(names)


# --- bioRxiv / medRxiv `details` ------------------------------------------------------------------

def read_biorxiv(path: Path) -> list[Record]:
    """bioRxiv/medRxiv `details` API JSON (a page, a list of pages, or JSONL of pages): versions of a DOI folded."""
    return biorxiv_records(path, read_bytes(path))


def biorxiv_records(path: Path, data: bytes) -> list[Record]:
    """read_biorxiv over bytes already read. Items are `FILE: record N`, N counting across the pages."""
    items = []
    for where, page in json_items(path, data, list_key="pages"):
        collection = _object(page, where, "a bioRxiv/medRxiv details page").get("collection")
        if not isinstance(collection, list):
            raise InputError(f"{where}: a details page needs a 'collection' list, got {collection!r:.60}")
        items.extend(collection)
    return _folded(biorxiv_record(item, f"{path}: record {n}") for n, item in enumerate(items, start=1))


def biorxiv_record(item: Any, where: str) -> Record:
    """One version of a preprint: `doi:10.1101/…`, version, and a `published` journal DOI as a related id."""
    post = _object(item, where, "a collection item")
    doi = doi_id(text_field(post, "doi", where))
    rid, title = _required(where, f"doi:{doi}" if doi else None, _clean(text_field(post, "title", where)), "a 'doi'")
    where_id = f"{where} (id {rid})"
    version = post.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    published = text_field(post, "published", where_id)
    related = () if published is None or published.upper() == "NA" else (f"doi:{doi_id(published)}",)
    server = text_field(post, "server", where_id) or ""
    authors = tuple(a.strip() for a in (text_field(post, "authors", where_id) or "").split(";") if a.strip())
    return Record(id=rid, title=title, abstract=_clean(text_field(post, "abstract", where_id)),
                  source=server.lower() or "biorxiv", doi=doi,
                  published=iso_date(text_field(post, "date", where_id), where_id, "date"),
                  type=text_field(post, "type", where_id), authors=authors, venue=server or None, related_ids=related,
                  version=text_field({"version": version}, "version", where_id), where=where)


# --- the arXiv listing JSONL ----------------------------------------------------------------------

def read_arxiv_listing(path: Path) -> list[Record]:
    """The daily arXiv listing JSONL (crawl_date, id, categories, pdf, abs, authors, title, comment, summary).

    Repeated listings of one id are one record (fold_same_id): the last
    listing's text, the first listing's `crawl_date` as `published`.
    """
    return arxiv_listing_records(path, read_bytes(path))


def arxiv_listing_records(path: Path, data: bytes) -> list[Record]:
    """read_arxiv_listing over bytes already read."""
    return _folded(arxiv_listing_record(item, where) for where, item in json_items(path, data))


def arxiv_listing_record(item: Any, where: str) -> Record:
    """One listing row as a record: `arxiv:ID` without version, `crawl_date` as `published`."""
    row = _object(item, where, "a listing row")
    raw_id = text_field(row, "id", where)
    found = split_arxiv(raw_id) if raw_id else None
    if raw_id and found is None:
        raise InputError(f"{where}: 'id' must be an arXiv id (2401.01234 or hep-th/9901001), got {raw_id!r:.60}")
    rid, title = _required(where, found[0] if found else None, _clean(text_field(row, "title", where)), "an 'id'")
    where_id = f"{where} (id {rid})"
    authors = row.get("authors") or []
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise InputError(f"{where_id}: 'authors' must be a list of names, got {authors!r:.60}")
    return Record(id=rid, title=title, abstract=_clean(text_field(row, "summary", where_id)), source="arxiv",
                  published=iso_date(text_field(row, "crawl_date", where_id), where_id, "crawl_date"), type="preprint",
                  authors=tuple(a.strip() for a in authors if a.strip()), venue="arXiv",
                  version=found[1] if found else None, where=where)


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


def _text(element: ET.Element | None) -> str | None:
    """All text inside an element (inline markup such as <i> flattened), whitespace collapsed."""
    return None if element is None else _clean("".join(element.itertext()))


# --- PubMed efetch XML ----------------------------------------------------------------------------

MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                      "dec"), start=1)}


def read_pubmed(path: Path) -> list[Record]:
    """PubMed E-utilities efetch XML (PubmedArticleSet of PubmedArticle) as records."""
    return pubmed_records(path, read_bytes(path))


def pubmed_records(path: Path, data: bytes) -> list[Record]:
    """read_pubmed over bytes already read."""
    root = parse_xml(path, data)
    if root.tag != "PubmedArticleSet":
        raise InputError(f"{path}: the root element is <{root.tag}>, not <PubmedArticleSet> (efetch db=pubmed, "
                         f"retmode=xml)")
    records = []
    for n, article in enumerate(root, start=1):
        where = f"{path}: record {n}"
        if article.tag == "PubmedArticle":
            records.append(pubmed_record(article, where))
        elif article.tag != "DeleteCitation":  # a delete notice carries no paper
            raise InputError(f"{where}: <{article.tag}> is not read (only PubmedArticle); fetch journal articles")
    return _folded(records)


def pubmed_record(article: ET.Element, where: str) -> Record:
    """One PubmedArticle: `pmid:N`, the title, labelled abstract parts joined, "Last, Fore" authors, the DOI."""
    citation = article.find("MedlineCitation")
    pmid = _text(citation.find("PMID")) if citation is not None else None
    if pmid is not None and not _ASCII_DIGITS.fullmatch(pmid):
        raise InputError(f"{where}: PMID must be a number, got {pmid!r:.40}")
    art = citation.find("Article") if citation is not None else None
    if art is None:
        art = ET.Element("Article")
    title = _text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle"))
    rid, title = _required(where, f"pmid:{pmid}" if pmid else None, title, "a PMID")
    where_id = f"{where} (id {rid})"
    parts = []
    for part in art.findall("Abstract/AbstractText"):
        text = _text(part)
        if text:
            label = (part.get("Label") or "").strip()
            parts.append(f"{label}: {text}" if label else text)
    doi = next((doi_id(_text(e)) for e in article.findall("PubmedData/ArticleIdList/ArticleId")
                if e.get("IdType") == "doi" and _text(e)), None)
    doi = doi or next((doi_id(_text(e)) for e in art.findall("ELocationID")
                       if e.get("EIdType") == "doi" and _text(e)), None)
    kinds = [t for t in (_text(e) for e in art.findall("PublicationTypeList/PublicationType")) if t]
    return Record(id=rid, title=title, abstract="\n".join(parts) or None, source="pubmed", doi=doi,
                  published=_pubmediso_date(art, where_id), type="; ".join(kinds) or None,
                  authors=tuple(_pubmed_authors(art)), venue=_text(art.find("Journal/Title")), where=where)


def _pubmed_authors(art: ET.Element) -> Iterator[str]:
    for author in art.findall("AuthorList/Author"):
        last, fore = _text(author.find("LastName")), _text(author.find("ForeName")) or _text(author.find("Initials"))
        name = f"{last}, {fore}" if last and fore else last or _text(author.find("CollectiveName"))
        if name:
            yield name


def _pubmediso_date(art: ET.Element, where: str) -> str | None:
    """The electronic publication date (ArticleDate) when complete, else the issue's PubDate.

    A PubDate with only a year (or year and month, or a MedlineDate such as
    "2019 Jan-Feb") becomes the first day of that period.
    """
    for date in art.findall("ArticleDate"):
        ymd = [_number(_text(date.find(k)), n) for k, n in (("Year", 4), ("Month", 2), ("Day", 2))]
        if all(v is not None for v in ymd):
            return _ymd(ymd[0], ymd[1], ymd[2], where)
    pub = art.find("Journal/JournalIssue/PubDate")
    if pub is None:
        return None
    year, month, day = (_text(pub.find(k)) for k in ("Year", "Month", "Day"))
    if year is None:
        medline = _text(pub.find("MedlineDate")) or ""
        m = re.match(r"([0-9]{4})(?:\s+([A-Za-z]{3}))?", medline)
        if m is None:
            return None
        year, month, day = m.group(1), m.group(2), None
    number = _number(year, 4)
    if number is None:
        raise InputError(f"{where}: PubDate Year must be a year of 4 ASCII digits, got {year!r:.20}")
    mon = _number(month, 2)
    mon = mon if mon is not None else MONTHS.get((month or "")[:3].lower(), 1)
    return _ymd(number, mon, _number(day, 2) or 1, where)


_ASCII_DIGITS = re.compile(r"[0-9]+")


def _number(text: str | None, most: int) -> int | None:
    """A number of 1 to `most` ASCII digits, else None (`²⁰²⁶` passes isdigit() and fails int(); 5,000
    digits pass both checks and fail int()'s limit)."""
    text = (text or "").strip()
    return int(text) if len(text) <= most and _ASCII_DIGITS.fullmatch(text) else None


def _ymd(year: int, month: int, day: int, where: str) -> str:
    out = f"{year:04d}-{month:02d}-{day:02d}"
    return iso_date(out, where, "date") or out


# --- arXiv API Atom -------------------------------------------------------------------------------

def read_arxiv_atom(path: Path) -> list[Record]:
    """The arXiv API's Atom feed (feed/entry) as records: `arxiv:ID` without version, the version kept."""
    return arxiv_atom_records(path, read_bytes(path))


def arxiv_atom_records(path: Path, data: bytes) -> list[Record]:
    """read_arxiv_atom over bytes already read."""
    root = parse_xml(path, data)
    if root.tag != f"{ATOM}feed":
        raise InputError(f"{path}: the root element is <{root.tag}>, not an Atom <feed> (the arXiv API's answer)")
    return _folded(arxiv_atom_record(entry, f"{path}: record {n}")
                   for n, entry in enumerate(root.findall(f"{ATOM}entry"), start=1))


def arxiv_atom_record(entry: ET.Element, where: str) -> Record:
    """One Atom entry; the API's error entry (id …/api/errors#…) is refused with its message."""
    raw_id = _text(entry.find(f"{ATOM}id")) or ""
    if "/api/errors" in raw_id:
        raise InputError(f"{where}: the arXiv API answered with an error: {_text(entry.find(f'{ATOM}summary'))}")
    found = split_arxiv(raw_id) if raw_id else None
    if raw_id and found is None:
        raise InputError(f"{where}: <id> must be an arXiv abs URL (http://arxiv.org/abs/2401.01234v2), "
                         f"got {raw_id!r:.60}")
    rid, title = _required(where, found[0] if found else None, _text(entry.find(f"{ATOM}title")), "an <id>")
    where_id = f"{where} (id {rid})"
    dois = [_text(entry.find(f"{ARXIV}doi"))]
    dois += [link.get("href") for link in entry.findall(f"{ATOM}link") if link.get("title") == "doi"]
    related = dict.fromkeys(f"doi:{d}" for d in (doi_id(x) for x in dois if x) if d)
    authors = tuple(n for n in (_text(a.find(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")) if n)
    return Record(id=rid, title=title, abstract=_text(entry.find(f"{ATOM}summary")), source="arxiv",
                  published=iso_date(_text(entry.find(f"{ATOM}published")), where_id, "published"), type="preprint",
                  authors=authors, venue="arXiv", related_ids=tuple(related), version=found[1] if found else None,
                  where=where)


# --- which format -------------------------------------------------------------------------------

def json_kind(path: Path, data: bytes) -> str:
    """The format of JSON or JSONL bytes, decided by its first record (rule: reporter.digest.read)."""
    if is_json_document(data):
        doc = _json(decode(path, data), str(path))
        first = doc[0] if isinstance(doc, list) and doc else doc
    else:
        start = _LEADING.match(data).end()  # blank lines skipped too
        end = data.find(b"\n", start)
        first = _json(decode(path, data[start:end if end >= 0 else len(data)]), f"{path}: first record")
    if not isinstance(first, Mapping):
        return "jsonl"
    if "collection" in first:
        return "biorxiv"
    if isinstance(first.get("results"), list):
        return "openalex"
    raw_id = first.get("id")
    if ("abstract_inverted_index" in first or "authorships" in first
            or (isinstance(raw_id, str) and raw_id.lower().startswith("https://openalex.org/w"))):
        return "openalex"
    if "crawl_date" in first or {"abs", "pdf", "summary"} <= set(first):
        return "arxiv-listing"
    return "jsonl"


def xml_kind(path: Path, data: bytes) -> str:
    """The format of XML bytes, decided by the root element: PubMed efetch or the arXiv API's Atom feed."""
    root = xml_root(path, data)
    if root == "PubmedArticleSet":
        return "pubmed"
    if root == f"{ATOM}feed":
        return "arxiv-atom"
    raise InputError(f"{path}: XML whose root is <{root}> is not read; expected PubMed efetch XML "
                     f"(<PubmedArticleSet>) or the arXiv API's Atom <feed>")


SOURCE_READERS: dict[str, Callable[[Path, bytes], list[Record]]] = {
    "openalex": openalex_records,
    "biorxiv": biorxiv_records,
    "pubmed": pubmed_records,
    "arxiv-atom": arxiv_atom_records,
    "arxiv-listing": arxiv_listing_records,
}
"""Format name -> reader over (path, bytes); reporter.digest.read.detect_format names the format."""
