"""OpenAlex: `/works` with a `filter` on the publication dates, cursor paging from `cursor=*`.

GET {base_url}/works?filter=from_publication_date:SINCE,to_publication_date:UNTIL[,QUERY]
&per_page=SIZE&cursor=C[&mailto=...][&api_key=...]

The configured query is more of OpenAlex's own filter syntax, joined with a
comma (`type:article,primary_topic.field.id:17`). Pages are followed while
`meta.next_cursor` is set; a page without results and without a next cursor
is the end, as OpenAlex documents it. A page without results that still
names a next cursor, or one that is not whole JSON, is bad (asked again).
`mailto` puts the requests in the polite pool; `api_key` (from the
variable [fetch.openalex] names) is sent, never stored. Works are read by
the digest's OpenAlex reader (`openalex_record`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..pool.sources.openalex import openalex_record
from .config import SourceSettings
from .http import BadPage, Client, Request
from .pages import Page, Window, count, follow, json_page, pages_for, read_items


def walk(source: SourceSettings, window: Window, client: Client, key: str | None = None) -> Iterator[Page]:
    """Every work published in the window (and matching the query), page after page."""
    dates = f"from_publication_date:{window.since},to_publication_date:{window.until}"
    etiquette = (("mailto", source.mailto),) if source.mailto else ()
    secrets = (("api_key", key),) if key else ()

    def request(cursor: str) -> Request:
        return Request("openalex", f"{source.base_url}/works", params=(
            ("filter", f"{dates},{source.query}" if source.query else dates), ("per_page", str(source.size)),
            ("cursor", cursor)), etiquette=etiquette, secrets=secrets, epoch=window.epoch,
            ends=window.until)

    return follow(client, "*", request, lambda body, cursor, label: parse_page(body, source.size, label),
                  "openalex", explain)


def parse_page(body: bytes, size: int, label: str) -> tuple[Page, str | None]:
    """(the page, the next cursor or None at the end); BadPage for an answer that is not a whole page."""
    doc = json_page(body)
    results, meta = doc.get("results"), doc.get("meta")
    if not isinstance(results, list) or not isinstance(meta, Mapping):
        raise BadPage("not a /works list page ('meta' and a 'results' list)")
    total = count(meta.get("count"), "meta.count")
    following = meta.get("next_cursor")
    if following is not None and (not isinstance(following, str) or not following):
        raise BadPage(f"meta.next_cursor is {following!r:.40}, not a cursor")
    if not results and following is not None:
        raise BadPage("no results, yet a next cursor")
    records, skipped = read_items(results, openalex_record, label)
    return Page(records, skipped, total, pages_for(total, size, extra=1)), following if results else None


def explain(body: bytes) -> str | None:
    """OpenAlex's error message (`{"error": ..., "message": ...}`), for the message."""
    try:
        doc = json_page(body)
    except BadPage:
        return None
    parts = [str(doc[k]) for k in ("error", "message") if doc.get(k)]
    return ": ".join(parts) or None
