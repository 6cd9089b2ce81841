"""arXiv into paper records: the API's Atom feed and the daily listing JSONL (crawl_date, id, ..., summary).

Both carry the paper's arXiv categories (`categories`, the primary one first): the listing's `categories`
list, the feed's `arxiv:primary_category` and `category` terms.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...ids import doi_id, split_arxiv
from ..record import Record
from .files import (clean, iso_date, json_items, json_object, parse_xml, read_bytes, required, text_field, text_list,
                    xml_text)
from .fold import folded_records

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"

# --- the arXiv listing JSONL ----------------------------------------------------------------------

def read_arxiv_listing(path: Path) -> list[Record]:
    """The daily arXiv listing JSONL (crawl_date, id, categories, pdf, abs, authors, title, comment, summary).

    Repeated listings of one id are one record (fold_same_id): the last
    listing's text, the first listing's `crawl_date` as `published`.
    """
    return folded_records(arxiv_listing_records(path, read_bytes(path)))


def arxiv_listing_records(path: Path, data: bytes) -> list[Record]:
    """The listing's rows over bytes already read, as listed: a paper listed on three days is three records."""
    return [arxiv_listing_record(item, where) for where, item in json_items(path, data)]


def arxiv_listing_record(item: Any, where: str) -> Record:
    """One listing row as a record: `arxiv:ID` without version, `crawl_date` as `published`."""
    row = json_object(item, where, "a listing row")
    raw_id = text_field(row, "id", where)
    found = split_arxiv(raw_id) if raw_id else None
    if raw_id and found is None:
        raise InputError(f"{where}: 'id' must be an arXiv id (2401.01234 or hep-th/9901001), got {raw_id!r:.60}")
    rid, title = required(where, found[0] if found else None, clean(text_field(row, "title", where)), "an 'id'")
    where_id = f"{where} (id {rid})"
    return Record(id=rid, title=title, abstract=clean(text_field(row, "summary", where_id)), source="arxiv",
                  published=iso_date(text_field(row, "crawl_date", where_id), where_id, "crawl_date"), type="preprint",
                  authors=text_list(row, "authors", where_id, "names"), venue="arXiv",
                  version=found[1] if found else None,
                  categories=tuple(dict.fromkeys(text_list(row, "categories", where_id, "arXiv categories"))),
                  where=where)

# --- arXiv API Atom -------------------------------------------------------------------------------

def read_arxiv_atom(path: Path) -> list[Record]:
    """The arXiv API's Atom feed (feed/entry) as records: `arxiv:ID` without version, the version kept."""
    return folded_records(arxiv_atom_records(path, read_bytes(path)))


def arxiv_atom_records(path: Path, data: bytes) -> list[Record]:
    """The feed's entries over bytes already read, as listed (an id given twice is two records)."""
    root = parse_xml(path, data)
    if root.tag != f"{ATOM}feed":
        raise InputError(f"{path}: the root element is <{root.tag}>, not an Atom <feed> (the arXiv API's answer)")
    return [arxiv_atom_record(entry, f"{path}: record {n}")
            for n, entry in enumerate(root.findall(f"{ATOM}entry"), start=1)]


def arxiv_atom_record(entry: ET.Element, where: str) -> Record:
    """One Atom entry; the API's error entry (id …/api/errors#…) is refused with its message."""
    raw_id = xml_text(entry.find(f"{ATOM}id")) or ""
    if "/api/errors" in raw_id:
        raise InputError(f"{where}: the arXiv API answered with an error: {xml_text(entry.find(f'{ATOM}summary'))}")
    found = split_arxiv(raw_id) if raw_id else None
    if raw_id and found is None:
        raise InputError(f"{where}: <id> must be an arXiv abs URL (http://arxiv.org/abs/2401.01234v2), "
                         f"got {raw_id!r:.60}")
    rid, title = required(where, found[0] if found else None, xml_text(entry.find(f"{ATOM}title")), "an <id>")
    where_id = f"{where} (id {rid})"
    dois = [xml_text(entry.find(f"{ARXIV}doi"))]
    dois += [link.get("href") for link in entry.findall(f"{ATOM}link") if link.get("title") == "doi"]
    related = dict.fromkeys(f"doi:{d}" for d in (doi_id(x) for x in dois if x) if d)
    authors = tuple(n for n in (xml_text(a.find(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")) if n)
    primary = entry.find(f"{ARXIV}primary_category")
    terms = [primary.get("term")] if primary is not None else []
    terms += [c.get("term") for c in entry.findall(f"{ATOM}category")]
    categories = tuple(dict.fromkeys(t.strip() for t in terms if t and t.strip()))  # the primary first, each once
    return Record(id=rid, title=title, abstract=xml_text(entry.find(f"{ATOM}summary")), source="arxiv",
                  published=iso_date(xml_text(entry.find(f"{ATOM}published")), where_id, "published"), type="preprint",
                  authors=authors, venue="arXiv", related_ids=tuple(related), version=found[1] if found else None,
                  categories=categories, where=where)
