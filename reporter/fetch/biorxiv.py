"""bioRxiv and medRxiv: the `details` API, paged by an absolute cursor to `messages[0].total`.

GET {base_url}/details/{biorxiv|medrxiv}/{since}/{until}/{cursor}/json[?category=QUERY]

The API serves 100 rows a call; the walk steps by the rows a page actually
holds, never an assumed 100, so a server that serves fewer skips nothing.
Each version of a preprint is its own row: the rows are read by the
digest's details reader (`biorxiv_record`) and folded later (newest
version's text, its version number, a `published` journal DOI as a related
id). A page with no rows before the total is bad (asked again); the
answer "no posts found" is an empty window.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InputError
from ..pool.sources.biorxiv import biorxiv_record
from .config import SourceSettings
from .http import BadPage, Client, Request
from .pages import Page, Window, count, follow, json_page, pages_for, read_items

SERVERS = {"biorxiv": "bioRxiv", "medrxiv": "medRxiv"}
"""The `server` a row names (filled in when a row leaves it out, so the record's source is right)."""
SERVER_PAGE = 100
"""Rows the API serves a call (its help page), for the progress line only."""


def walk(source: SourceSettings, window: Window, client: Client, key: str | None = None) -> Iterator[Page]:
    """Every row posted in the window on the source's server, in the API's order."""
    server = source.name

    def request(cursor: int) -> Request:
        return Request(server, f"{source.base_url}/details/{server}/{window.since}/{window.until}/{cursor}/json",
                       params=(("category", source.query),) if source.query else (), epoch=window.epoch,
                       ends=window.until)

    return follow(client, 0, request, lambda body, cursor, label: parse_page(body, server, cursor, label), server,
                  explain)


def parse_page(body: bytes, server: str, cursor: int, label: str) -> tuple[Page, int | None]:
    """(the page, the next cursor or None at the end); BadPage for an answer that is not a whole page."""
    doc = json_page(body)
    collection = doc.get("collection")
    if not isinstance(collection, list):
        raise BadPage(f"no 'collection' list (got {collection!r:.40})")
    message = _message(doc)
    status = str(message.get("status", "")).strip().lower()
    if status != "ok":
        if not collection and status.startswith("no posts found"):
            return Page((), (), 0, 1), None
        raise InputError(f"the {server} API answered: {message.get('status')!r:.200}")
    total = count(message.get("total"), "messages[0].total")
    if not collection and cursor < total:
        raise BadPage(f"no rows at cursor {cursor} although the total is {total}")
    rows = [{**row, "server": SERVERS[server]} if isinstance(row, Mapping) and not row.get("server") else row
            for row in collection]
    records, skipped = read_items(rows, biorxiv_record, label)
    following = cursor + len(collection)
    return (Page(records, skipped, total, pages_for(total, SERVER_PAGE)),
            following if following < total and collection else None)


def _message(doc: dict[str, Any]) -> Mapping[str, Any]:
    messages = doc.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], Mapping):
        raise BadPage(f"no 'messages' list with the status (got {messages!r:.40})")
    return messages[0]


def explain(body: bytes) -> str | None:
    """The status an error answer carries, for the message."""
    try:
        return str(_message(json_page(body)).get("status")) or None
    except BadPage:
        return None
