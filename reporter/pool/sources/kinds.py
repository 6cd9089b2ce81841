"""Which source format a file is (its first record, or its XML root), and the reader of each format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ...errors import InputError
from ...files import parse_json
from ..record import Record
from .arxiv import ATOM, arxiv_atom_records, arxiv_listing_records
from .biorxiv import biorxiv_records
from .files import LEADING, decode, is_json_document, xml_root
from .openalex import openalex_records
from .pubmed import pubmed_records

# --- which format -------------------------------------------------------------------------------

def json_kind(path: Path, data: bytes) -> str:
    """The format of JSON or JSONL bytes, decided by its first record (rule: reporter.digest.read)."""
    if is_json_document(data):
        doc = parse_json(decode(path, data), str(path))
        first = doc[0] if isinstance(doc, list) and doc else doc
    else:
        start = LEADING.match(data).end()  # blank lines skipped too
        end = data.find(b"\n", start)
        first = parse_json(decode(path, data[start:end if end >= 0 else len(data)]), f"{path}: first record")
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
"""Format name -> reader over (path, bytes), giving the records as the file lists them (a paper listed on three
days, or in two versions, is three or two records: reporter.digest.read folds them); reporter.digest.read.detect_format
names the format."""
