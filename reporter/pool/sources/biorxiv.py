"""bioRxiv/medRxiv `details` API JSON (`collection`) into paper records, versions of one DOI folded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...ids import doi_id
from ..record import Record
from .files import clean, iso_date, json_items, json_object, read_bytes, required, text_field
from .fold import folded_records

# --- bioRxiv / medRxiv `details` ------------------------------------------------------------------

def read_biorxiv(path: Path) -> list[Record]:
    """bioRxiv/medRxiv `details` API JSON (a page, a list of pages, or JSONL of pages): versions of a DOI folded."""
    return folded_records(biorxiv_records(path, read_bytes(path)))


def biorxiv_records(path: Path, data: bytes) -> list[Record]:
    """The versions over bytes already read, as listed (one record per version). Items are `FILE: record N`, N
    counting across the pages."""
    items = []
    for where, page in json_items(path, data, list_key="pages"):
        collection = json_object(page, where, "a bioRxiv/medRxiv details page").get("collection")
        if not isinstance(collection, list):
            raise InputError(f"{where}: a details page needs a 'collection' list, got {collection!r:.60}")
        items.extend(collection)
    return [biorxiv_record(item, f"{path}: record {n}") for n, item in enumerate(items, start=1)]


def biorxiv_record(item: Any, where: str) -> Record:
    """One version of a preprint: `doi:10.1101/…`, version, and a `published` journal DOI as a related id."""
    post = json_object(item, where, "a collection item")
    doi = doi_id(text_field(post, "doi", where))
    rid, title = required(where, f"doi:{doi}" if doi else None, clean(text_field(post, "title", where)), "a 'doi'")
    where_id = f"{where} (id {rid})"
    version = post.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    published = text_field(post, "published", where_id)
    related = () if published is None or published.upper() == "NA" else (f"doi:{doi_id(published)}",)
    server = text_field(post, "server", where_id) or ""
    authors = tuple(a.strip() for a in (text_field(post, "authors", where_id) or "").split(";") if a.strip())
    category = text_field(post, "category", where_id)
    return Record(id=rid, title=title, abstract=clean(text_field(post, "abstract", where_id)),
                  source=server.lower() or "biorxiv", doi=doi,
                  published=iso_date(text_field(post, "date", where_id), where_id, "date"),
                  type=text_field(post, "type", where_id), authors=authors, venue=server or None, related_ids=related,
                  version=text_field({"version": version}, "version", where_id),
                  categories=(category,) if category else (), where=where)
