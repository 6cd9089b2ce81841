"""arXiv: the API's Atom query interface, paged by `start` to `opensearch:totalResults`.

GET {base_url}?search_query=(QUERY) AND submittedDate:[YYYYMMDD0000 TO YYYYMMDD2359]
&start=N&max_results=SIZE&sortBy=submittedDate&sortOrder=ascending

`base_url` is the query endpoint (default https://export.arxiv.org/api/query);
a bare host gets `/api/query`, and a URL ending in `/api` gets `/query`.
The date is the submission date of the first version. The API is known to
answer some pages with no entries although the total says more remain: such
a page is bad (asked again), never the end. Entries are read by the
digest's Atom reader (`arxiv_atom_record`). A total above the API's
documented cap of 30,000 results of one query stops the fetch (MAX_RESULTS): `arxiv:ID` without the version,
the version kept as a field, a journal DOI as a related id.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

from ..errors import InputError
from ..pool.sources.arxiv import ATOM, arxiv_atom_record
from .config import SourceSettings
from .http import BadPage, Client, Request
from .pages import Page, Window, count, follow, pages_for, read_items, xml_page

OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
MAX_RESULTS = 30_000
"""The most results the arXiv API serves of one query (its user manual): a query whose total is larger stops."""


def endpoint(base_url: str) -> str:
    """The query endpoint: base_url itself, or `/api/query` under a bare host (`/query` under `…/api`)."""
    path = urllib.parse.urlsplit(base_url).path.rstrip("/")
    if not path:
        return f"{base_url.rstrip('/')}/api/query"
    return f"{base_url.rstrip('/')}/query" if path.endswith("/api") else base_url


def search_query(source: SourceSettings, window: Window) -> str:
    """The `search_query`: the configured query (if any) AND the submission dates of the window."""
    dates = f"submittedDate:[{window.since:%Y%m%d}0000 TO {window.until:%Y%m%d}2359]"
    return f"({source.query}) AND {dates}" if source.query else dates


def walk(source: SourceSettings, window: Window, client: Client, key: str | None = None) -> Iterator[Page]:
    """Every page of the window's submissions, in submission order."""
    def request(start: int) -> Request:
        return Request("arxiv", endpoint(source.base_url), params=(
            ("search_query", search_query(source, window)), ("start", str(start)),
            ("max_results", str(source.size)), ("sortBy", "submittedDate"), ("sortOrder", "ascending")),
            epoch=window.epoch, ends=window.until)

    return follow(client, 0, request, lambda body, start, label: parse_page(body, start, source.size, label),
                  "arxiv", explain)


def parse_page(body: bytes, start: int, size: int, label: str) -> tuple[Page, int | None]:
    """(the page, the next `start` or None at the end); BadPage for a feed that is not a whole answer."""
    root = xml_page(body, label)
    if root.tag != f"{ATOM}feed":
        raise BadPage(f"the root element is <{root.tag}>, not an Atom <feed>")
    entries = root.findall(f"{ATOM}entry")
    message = _error(entries)
    if message is not None:
        raise InputError(f"the arXiv API answered with an error: {message}")
    total = count(root.findtext(f"{OPENSEARCH}totalResults"), "<opensearch:totalResults>")
    if total > MAX_RESULTS:
        raise InputError(f"totalResults is {total:,}, and the arXiv API serves at most {MAX_RESULTS:,} results of "
                         f"one query; narrow [fetch.arxiv] query or fetch a shorter window. Nothing was written")
    if not entries and start < total:
        raise BadPage(f"no entries at start {start} although totalResults is {total}")
    records, skipped = read_items(entries, arxiv_atom_record, label)
    following = start + len(entries)
    return (Page(records, skipped, total, pages_for(total, size)),
            following if following < total and entries else None)


def _error(entries: list) -> str | None:
    """The message of the API's error entry (its id is …/api/errors#…), or None."""
    for entry in entries:
        if "/api/errors" in (entry.findtext(f"{ATOM}id") or ""):
            return " ".join((entry.findtext(f"{ATOM}summary") or "(no message)").split())
    return None


def explain(body: bytes) -> str | None:
    """What an error answer (HTTP 400 with an error feed) says, for the message."""
    try:
        root = xml_page(body, "arxiv error")
    except BadPage:
        return None
    return _error(root.findall(f"{ATOM}entry"))

