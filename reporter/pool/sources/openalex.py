"""OpenAlex works JSON (a list, an API page with `results`, one work, or JSONL) into paper records."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...ids import arxiv_doi_id, doi_id, normalize_openalex
from ..record import Record
from .files import ASCII_DIGITS, clean, iso_date, json_items, json_object, read_bytes, required, text_field
from .fold import folded_records

# --- OpenAlex works -------------------------------------------------------------------------------

def read_openalex(path: Path) -> list[Record]:
    """OpenAlex works (a JSON list, an API page with `results`, one work, or JSONL) as records."""
    return folded_records(openalex_records(path, read_bytes(path)))


def openalex_records(path: Path, data: bytes) -> list[Record]:
    """The works over bytes already read, as listed (a work listed twice is two records; read_openalex folds them)."""
    return [openalex_record(item, where) for where, item in json_items(path, data, "results")]


def openalex_record(item: Any, where: str) -> Record:
    """One OpenAlex work as a record: `openalex:W…`, abstract rebuilt, DOI and PMID as related ids."""
    work = json_object(item, where, "an OpenAlex work")
    raw_id = text_field(work, "id", where)
    wid = normalize_openalex(raw_id) if raw_id else None
    if wid is not None and not re.fullmatch(r"W[0-9]+", wid):
        raise InputError(f"{where}: 'id' must be an OpenAlex work id (https://openalex.org/W…), got {raw_id!r:.60}")
    title = clean(text_field(work, "title", where) or text_field(work, "display_name", where))
    rid, title = required(where, f"openalex:{wid}" if wid else None, title, "an 'id'")
    where_id = f"{where} (id {rid})"
    ids = json_object(work.get("ids") or {}, where_id, "'ids'")
    doi = doi_id(text_field(work, "doi", where_id) or text_field(ids, "doi", where_id))
    related = []
    pmid = text_field(ids, "pmid", where_id)
    if pmid:
        digits = pmid.rstrip("/").rsplit("/", 1)[-1]
        if not ASCII_DIGITS.fullmatch(digits):
            raise InputError(f"{where_id}: 'ids.pmid' must be a PubMed id or its URL, got {pmid!r:.60}")
        related.append(f"pmid:{digits}")
    arxiv = arxiv_doi_id(doi)
    if arxiv:
        related.append(arxiv)
    location = json_object(work.get("primary_location") or {}, where_id, "'primary_location'")
    source = json_object(location.get("source") or {}, where_id, "'primary_location.source'")
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
    return clean(" ".join(word for _, word in placed))


def _openalex_authors(work: Mapping[str, Any], where: str) -> tuple[str, ...]:
    authorships = work.get("authorships") or []
    if not isinstance(authorships, list):
        raise InputError(f"{where}: 'authorships' must be a list, got {type(authorships).__name__}")
    names = []
    for k, authorship in enumerate(authorships):
        at = f"{where}: authorships[{k}]"
        author = json_object(json_object(authorship, at, "an authorship").get("author") or {}, at, "'author'")
        name = text_field(author, "display_name", at) or text_field(authorship, "raw_author_name", at)
        if name:
            names.append(name)
    return tuple(names)
