"""What every source's walker shares: the date window, a page of records, and reading a page's parts.

A walker (`reporter.fetch.arxiv.walk`, ...) asks its API page after page
through a `reporter.fetch.http.Client` and yields a `Page` for each answer,
until the API's own total or cursor says the results have ended. Records
are read by the pool's source readers (`reporter.pool.sources`), one record at a
time, so a record the reader refuses is skipped and named (`Page.skipped`)
while the rest of the page is kept: a failure is counted and shown, never
silent and never fatal for the week.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InputError
from ..pool.record import Record
from ..pool.sources.files import parse_xml
from ..text import json_loads
from .http import BadPage, Client, Request

T = TypeVar("T")
C = TypeVar("C")


@dataclass(frozen=True)
class Window:
    """The dates asked, both included."""

    since: dt.date
    """The first day."""
    until: dt.date
    """The last day."""
    epoch: str | None = None
    """None when the window had ended when asked; else that day (ISO), which keys the cache (`Request.epoch`)."""


def make_window(since: dt.date, until: dt.date, as_of: dt.date) -> Window:
    """The window since..until as asked on `as_of`: open (keyed by the day) when it has not ended by then."""
    if since > until:
        raise InputError(f"--since {since} is after --until {until}; the window runs from the first day to the last")
    return Window(since, until, None if until < as_of else as_of.isoformat())


@dataclass(frozen=True)
class Page:
    """One answer read: its records, what was skipped, and where the walk goes next."""

    records: tuple[Record, ...] = ()
    """The page's records as the digest's readers read them (versions not yet folded)."""
    skipped: tuple[str, ...] = ()
    """Records the reader refused, each `SOURCE page N: record K (id X): why`."""
    total: int | None = None
    """The API's own count of results for the query, when it gives one."""
    expected_pages: int | None = None
    """How many answers the walk will read in all, when the total says (for the progress line)."""


def read_items(items: Iterable[T], read_one: Callable[[T, str], Record], label: str) -> tuple[tuple[Record, ...],
                                                                                               tuple[str, ...]]:
    """(records, skipped) of a page's items, each read by `read_one(item, where)`; a refused item is skipped."""
    records, skipped = [], []
    for n, item in enumerate(items, start=1):
        try:
            records.append(read_one(item, f"{label}: record {n}"))
        except InputError as exc:
            skipped.append(str(exc))
    return tuple(records), tuple(skipped)


def json_page(body: bytes) -> dict[str, Any]:
    """A page that must be one JSON object; BadPage (asked again) when it is not."""
    try:
        doc = json_loads(body)  # `\ud800` read as U+FFFD
    except (ValueError, RecursionError) as exc:
        raise BadPage(f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise BadPage(f"a JSON {type(doc).__name__}, not an object")
    return doc


def xml_page(body: bytes, label: str) -> ET.Element:
    """A page that must be well-formed XML (the digest's guarded parser); BadPage when it is not."""
    try:
        return parse_xml(Path(label), body)
    except InputError as exc:
        raise BadPage(str(exc)) from None


COUNT = re.compile(r"[0-9]{1,18}", re.ASCII)
"""A count: ASCII digits only (`²` and `٣` pass `str.isdigit`), and few enough to be one (a 5,000-digit total
would hit Python's limit on int() and is no count anyway)."""


def count(value: Any, what: str) -> int:
    """A count the API gives as a number or a string of ASCII digits; BadPage otherwise."""
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not COUNT.fullmatch(text):
        raise BadPage(f"{what} is {_short(value)}, not a count")
    return int(text)


def _short(value: Any) -> str:
    """A value for a message: its repr, cut to 40 characters (a 5,000-digit int included)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    return f"{value!r:.40}"


def pages_for(total: int, size: int, extra: int = 0) -> int:
    """Answers needed for `total` results at `size` a page (at least one), plus `extra` (a search, an end page)."""
    return max(1, -(-total // size)) + extra


def follow(client: Client, first: C, request: Callable[[C], Request],
           parse: Callable[[bytes, C, str], tuple[Page, C | None]], label: str,
           explain: Callable[[bytes], str | None] | None = None) -> Iterator[Page]:
    """Ask page after page from position `first` (a start, a cursor) until `parse` gives no next position.

    `parse(body, position, "LABEL page N")` reads one answer into (the page, the next position or None).
    A next position asked before (a cursor repeated, two cursors alternating) would never end: the walk stops
    with an InputError, the answer that named it is dropped from the cache (so a later run asks it again), and
    nothing is written. How far a walk may go is bounded by the caller (reporter.fetch.run.Bounds).
    """
    position: C | None = first
    seen: dict[C, int] = {}
    number = 1
    while position is not None:
        asked, where = position, f"{label} page {number}"
        seen[asked] = number
        sent = request(asked)
        page, position = client.get(sent, lambda body, at=asked, name=where: parse(body, at, name), explain)
        if position is not None and position in seen:
            client.forget(sent)
            raise InputError(f"{where}: {sent.shown_url()}: the next position {position!r:.80} was already asked "
                             f"at page {seen[position]}: the server repeats its cursor, so the walk would never "
                             f"end; stopped, nothing was written. Try again later")
        yield page
        number += 1
