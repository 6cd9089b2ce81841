"""PubMed E-utilities `efetch` XML (PubmedArticleSet) into paper records."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from ...errors import InputError
from ...ids import doi_id
from ..record import Record
from .files import ASCII_DIGITS, iso_date, parse_xml, read_bytes, required, xml_text
from .fold import folded_records

# --- PubMed efetch XML ----------------------------------------------------------------------------

MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                      "dec"), start=1)}


def read_pubmed(path: Path) -> list[Record]:
    """PubMed E-utilities efetch XML (PubmedArticleSet of PubmedArticle) as records."""
    return folded_records(pubmed_records(path, read_bytes(path)))


def pubmed_records(path: Path, data: bytes) -> list[Record]:
    """The articles over bytes already read, as listed (a PMID given twice is two records; read_pubmed folds them)."""
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
    return records


def pubmed_record(article: ET.Element, where: str) -> Record:
    """One PubmedArticle: `pmid:N`, the title, labelled abstract parts joined, "Last, Fore" authors, the DOI."""
    citation = article.find("MedlineCitation")
    pmid = xml_text(citation.find("PMID")) if citation is not None else None
    if pmid is not None and not ASCII_DIGITS.fullmatch(pmid):
        raise InputError(f"{where}: PMID must be a number, got {pmid!r:.40}")
    art = citation.find("Article") if citation is not None else None
    if art is None:
        art = ET.Element("Article")
    title = xml_text(art.find("ArticleTitle")) or xml_text(art.find("VernacularTitle"))
    rid, title = required(where, f"pmid:{pmid}" if pmid else None, title, "a PMID")
    where_id = f"{where} (id {rid})"
    parts = []
    for part in art.findall("Abstract/AbstractText"):
        text = xml_text(part)
        if text:
            label = (part.get("Label") or "").strip()
            parts.append(f"{label}: {text}" if label else text)
    doi = next((doi_id(xml_text(e)) for e in article.findall("PubmedData/ArticleIdList/ArticleId")
                if e.get("IdType") == "doi" and xml_text(e)), None)
    doi = doi or next((doi_id(xml_text(e)) for e in art.findall("ELocationID")
                       if e.get("EIdType") == "doi" and xml_text(e)), None)
    kinds = [t for t in (xml_text(e) for e in art.findall("PublicationTypeList/PublicationType")) if t]
    return Record(id=rid, title=title, abstract="\n".join(parts) or None, source="pubmed", doi=doi,
                  published=_pubmediso_date(art, where_id), type="; ".join(kinds) or None,
                  authors=tuple(_pubmed_authors(art)), venue=xml_text(art.find("Journal/Title")), where=where)


def _pubmed_authors(art: ET.Element) -> Iterator[str]:
    for author in art.findall("AuthorList/Author"):
        last = xml_text(author.find("LastName"))
        fore = xml_text(author.find("ForeName")) or xml_text(author.find("Initials"))
        name = f"{last}, {fore}" if last and fore else last or xml_text(author.find("CollectiveName"))
        if name:
            yield name


def _pubmediso_date(art: ET.Element, where: str) -> str | None:
    """The electronic publication date (ArticleDate) when complete, else the issue's PubDate.

    A PubDate with only a year (or year and month, or a MedlineDate such as
    "2019 Jan-Feb") becomes the first day of that period.
    """
    for date in art.findall("ArticleDate"):
        ymd = [_number(xml_text(date.find(k)), n) for k, n in (("Year", 4), ("Month", 2), ("Day", 2))]
        if all(v is not None for v in ymd):
            return _ymd(ymd[0], ymd[1], ymd[2], where)
    pub = art.find("Journal/JournalIssue/PubDate")
    if pub is None:
        return None
    year, month, day = (xml_text(pub.find(k)) for k in ("Year", "Month", "Day"))
    if year is None:
        medline = xml_text(pub.find("MedlineDate")) or ""
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


def _number(text: str | None, most: int) -> int | None:
    """A number of 1 to `most` ASCII digits, else None (`²⁰²⁶` passes isdigit() and fails int(); 5,000
    digits pass both checks and fail int()'s limit)."""
    text = (text or "").strip()
    return int(text) if len(text) <= most and ASCII_DIGITS.fullmatch(text) else None


def _ymd(year: int, month: int, day: int, where: str) -> str:
    out = f"{year:04d}-{month:02d}-{day:02d}"
    return iso_date(out, where, "date") or out
