"""PubMed: E-utilities `esearch` on the history server, then `efetch` XML in batches of `page_size`.

1. GET {base_url}/esearch.fcgi?db=pubmed&term=QUERY&datetype=edat&mindate=Y/M/D&maxdate=Y/M/D
   &usehistory=y&retmax=0&retmode=json: the count, `WebEnv` and `query_key`;
2. GET {base_url}/efetch.fcgi?db=pubmed&query_key=K&WebEnv=W&retstart=N&retmax=SIZE&retmode=xml,
   for N = 0, SIZE, ... up to the count.

The date is the Entrez date (when the record entered PubMed), so each paper
belongs to one week; without a query the term is `all[sb]` (everything).
Every request carries `tool` and `email` (when set), and `api_key` when
[fetch.pubmed] names its variable. The esearch answer is cached like any
page, so a resumed or repeated fetch reuses its WebEnv and asks the same
efetch URLs; each efetch page is keyed by its esearch too (term, dates), as
two searches may be handed the same WebEnv and query_key; a history that has expired on NCBI's side (efetch answers
`<eFetchResult><ERROR>`) is searched again once. Articles are read by the
digest's PubMed reader (`pubmed_record`): `pmid:N`, and the DOI from
`ArticleIdList`. The E-utilities serve at most 10,000 records of one search:
a window that finds more is searched again in halves, day by day at most.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..errors import InputError
from ..pool.sources.pubmed import pubmed_record
from .config import SourceSettings
from .http import BadPage, Client, Request
from .pages import Page, Window, count, follow, json_page, pages_for, read_items, xml_page

TOOL = "reporter"
"""The `tool` NCBI asks every request to name (a string without spaces)."""
ALL = "all[sb]"
"""The term that matches every record: the query when none is configured."""
HISTORY_LIMIT = 10_000
"""The most records the E-utilities serve of one PubMed search, history server included (retstart < 10,000)."""


class HistoryExpired(Exception):
    """efetch could not read the esearch's history (expired WebEnv): search again."""


def walk(source: SourceSettings, window: Window, client: Client, key: str | None = None) -> Iterator[Page]:
    """The esearch answer (a page without records), then every efetch batch of the window's records.

    A window whose search finds more than HISTORY_LIMIT records is searched again in two halves (by day).
    """
    etiquette = (("tool", TOOL),) + ((("email", source.email),) if source.email else ())
    secrets = (("api_key", key),) if key else ()
    search = Request("pubmed", f"{source.base_url}/esearch.fcgi", params=(
        ("db", "pubmed"), ("term", source.query or ALL), ("datetype", "edat"),
        ("mindate", f"{window.since:%Y/%m/%d}"), ("maxdate", f"{window.until:%Y/%m/%d}"), ("usehistory", "y"),
        ("retmax", "0"), ("retmode", "json")), etiquette=etiquette, secrets=secrets, epoch=window.epoch,
        ends=window.until)
    for attempt in (1, 2):
        total, webenv, query_key = client.get(search, parse_search, explain=explain)
        if total > HISTORY_LIMIT:
            yield Page((), (), total, None)
            for half in _halves(window, total):
                yield from walk(source, half, client, key)
            return
        yield Page((), (), total, pages_for(total, source.size, extra=1) if total else 1)
        try:
            yield from _batches(source, window, client, total, webenv, query_key, etiquette, secrets,
                                search.key_text())
            return
        except HistoryExpired as exc:
            if attempt == 2:
                raise InputError(f"pubmed: efetch cannot read the history of a fresh esearch ({exc}); "
                                 f"try again later") from None
            client.forget(search)  # the stored WebEnv has expired: search again, then fetch from the start


def _halves(window: Window, total: int) -> tuple[Window, Window]:
    """The window's first and second half (whole days); InputError for one day that is still too large."""
    days = (window.until - window.since).days + 1
    if days < 2:
        raise InputError(f"pubmed: {total:,} records entered PubMed on {window.since} for this query, and the "
                         f"E-utilities serve at most {HISTORY_LIMIT:,} of one search; narrow [fetch.pubmed] query")
    middle = window.since + dt.timedelta(days=days // 2)
    return (replace(window, until=middle - dt.timedelta(days=1)), replace(window, since=middle))


def _batches(source: SourceSettings, window: Window, client: Client, total: int, webenv: str, query_key: str,
             etiquette: tuple[tuple[str, str], ...], secrets: tuple[tuple[str, str], ...],
             search: str) -> Iterator[Page]:
    """The efetch pages of one esearch; each keyed by that search too (`Request.scope`: its term and dates),
    since NCBI may hand two searches the same WebEnv and query_key."""
    if not total:
        return iter(())

    def request(retstart: int) -> Request:
        return Request("pubmed", f"{source.base_url}/efetch.fcgi", params=(
            ("db", "pubmed"), ("query_key", query_key), ("WebEnv", webenv), ("retstart", str(retstart)),
            ("retmax", str(source.size)), ("retmode", "xml")), etiquette=etiquette, secrets=secrets,
            epoch=window.epoch, scope=search, ends=window.until)

    return follow(client, 0, request, lambda body, retstart, label: parse_fetch(body, retstart, total, label),
                  "pubmed efetch", explain)


def parse_search(body: bytes) -> tuple[int, str, str]:
    """(count, WebEnv, query_key) of an esearch JSON answer; BadPage for one without them or with an ERROR."""
    doc = json_page(body)
    result = doc.get("esearchresult")
    if not isinstance(result, dict):
        raise BadPage(f"no 'esearchresult' object (got {result!r:.40})")
    if result.get("ERROR"):  # a backend failure, or a term it cannot parse: asked again, then reported
        raise BadPage(f"the E-utilities answered {result['ERROR']!r:.200} (a malformed query term is answered so too)")
    webenv, query_key = result.get("webenv"), result.get("querykey")
    if not isinstance(webenv, str) or not webenv or not isinstance(query_key, str) or not query_key:
        raise BadPage("no 'webenv' and 'querykey': the search was not put on the history server")
    return count(result.get("count"), "esearchresult.count"), webenv, query_key


def parse_fetch(body: bytes, retstart: int, total: int, label: str) -> tuple[Page, int | None]:
    """(the page, the next retstart or None at the end) of an efetch XML answer; BadPage for one not whole."""
    root = xml_page(body, label)
    if root.tag == "eFetchResult":
        raise HistoryExpired(" ".join(" ".join(e.itertext()) for e in root.iter("ERROR")) or "eFetchResult")
    if root.tag != "PubmedArticleSet":
        raise BadPage(f"the root element is <{root.tag}>, not <PubmedArticleSet>")
    items = list(root)
    if not items and retstart < total:
        raise BadPage(f"no articles at retstart {retstart} although the count is {total}")
    articles = [item for item in items if item.tag != "DeleteCitation"]  # a delete notice carries no paper
    records, skipped = read_items(articles, _article, label)
    following = retstart + len(items)
    return Page(records, skipped, total), following if following < total and items else None


def _article(item: Any, where: str):
    if item.tag != "PubmedArticle":
        raise InputError(f"{where}: <{item.tag}> is not read (only PubmedArticle)")
    return pubmed_record(item, where)


def explain(body: bytes) -> str | None:
    """The message of an E-utilities error answer (`{"error": ...}`), for the message."""
    try:
        doc = json_page(body)
    except BadPage:
        return None
    message = doc.get("error") or (doc.get("esearchresult") or {}).get("ERROR")
    return str(message) if message else None
