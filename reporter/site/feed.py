"""The digest's Atom feed (RFC 4287): `digest/feed.xml`, one entry per published week, newest first.

Deterministic like every page: ids are name-based UUIDs (`urn:uuid:`, RFC 4122
version 5) of what the entry is, and `updated` is the last day of the week,
never the clock. An entry's id names the week and the sha256 of its
decisions.json, so a week re-published with other decisions arrives as a new
entry; the feed's id names the archive's first week and its papers file.
Each entry's content is the week's KEEPs as escaped HTML (`type="html"`): each with its authors and the
start of its abstract (site/paper_text.py, as the page and the e-mail show them), its score and rationale.
The XML is built with xml.etree, which escapes every text; characters XML
cannot hold (C0 controls, lone surrogates, U+FFFE/U+FFFF) are dropped first.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from markupsafe import Markup

from ..isoweek import week_start
from .models import DigestWeekPage, PaperView

ATOM = "http://www.w3.org/2005/Atom"
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:reporter:digest")
"""The namespace of the feed's name-based UUIDs."""
TITLE = "Weekly digest"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def entry_id(week: str, decisions_sha256: str) -> str:
    """A week's entry id: the same week with the same decisions.json, the same id."""
    return f"urn:uuid:{uuid.uuid5(NAMESPACE, f'week {week} {decisions_sha256}')}"


def feed_id(first_week: str, papers_sha256: str, topic: str = "") -> str:
    """The feed's id, from the archive's first week and the sha256 of that week's papers file (and a named topic's
    name: two topics read the same papers, and their feeds are two feeds)."""
    name = f"feed {first_week} {papers_sha256}" + (f" topic {topic}" if topic else "")
    return f"urn:uuid:{uuid.uuid5(NAMESPACE, name)}"


def updated(week: str) -> str:
    """The week's last day (its Sunday), as an RFC 3339 date-time."""
    return f"{(week_start(week) + dt.timedelta(days=6)).isoformat()}T00:00:00Z"


def atom_feed(weeks: Sequence[tuple[DigestWeekPage, str]], feed: str, base_url: str | None = None,
              root: str = "digest") -> bytes:
    """The feed of the given week pages, each with its entry id (oldest first in; newest first out).

    Its links are absolute under `base_url` (`[site] base_url`: a feed reader fetches the feed alone, and many
    resolve nothing against its address), with the feed's own address as `rel="self"` (RFC 4287, 4.2.7.2);
    without it they are relative to the feed (`digest/feed.xml`), `self` included."""
    base = f"{base_url}/{root}/" if base_url else ""  # a named topic's feed is in its folder
    root = ET.Element("feed", xmlns=ATOM)  # plain names and the default namespace declared: no ns0: prefixes
    _text(root, "id", feed)
    topic = weeks[-1][0].topic if weeks else ""  # a named topic's feed carries its title
    _text(root, "title", f"{TITLE}: {topic}" if topic else TITLE)
    _text(root, "subtitle", "The papers each week's digest kept, with their authors, the start of their abstracts, "
                            "their scores and rationales.")
    _text(root, "updated", max((updated(page.week) for page, _ in weeks), default="1970-01-01T00:00:00Z"))
    author = ET.SubElement(root, "author")
    _text(author, "name", "reporter")
    ET.SubElement(root, "link", rel="self", type="application/atom+xml", href=f"{base}feed.xml")
    ET.SubElement(root, "link", rel="alternate", type="text/html", href=f"{base}index.html")
    _text(root, "generator", "reporter")
    for page, eid in reversed(weeks):
        entry = ET.SubElement(root, "entry")
        _text(entry, "id", eid)
        _text(entry, "title", f"{TITLE} {page.week}: {page.topic + ', ' if page.topic else ''}{len(page.keep)} kept")
        _text(entry, "updated", updated(page.week))
        ET.SubElement(entry, "link", rel="alternate", type="text/html", href=f"{base}{page.week}.html")
        _text(entry, "summary", _counts(page))
        content = _text(entry, "content", _content(page, base))
        content.set("type", "html")
    ET.indent(root)
    xml = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + xml + "\n").encode("utf-8")


def _text(parent: ET.Element, name: str, text: str) -> ET.Element:
    element = ET.SubElement(parent, name)
    element.text = _NOT_XML.sub("", text)
    return element


def _counts(page: DigestWeekPage) -> str:
    return (f"{page.dates}: {len(page.keep)} kept, {page.review_total} for review, "
            f"{page.dropped_total} dropped.")


def _content(page: DigestWeekPage, base: str = "") -> str:
    """The week's KEEPs as HTML: every data string escaped, titles in <bdi>; links built from ids only."""
    items = "".join(Markup("<li>{}</li>\n").format(_keep(p)) for p in page.keep)
    body = Markup("<p>{}</p>\n").format(_counts(page))
    if items:
        body += Markup("<ol>\n{}</ol>\n").format(Markup(items))
    return str(body + Markup('<p><a href="{}">The whole week</a>: every paper kept, for review and dropped, '
                             'with its rationale.</p>').format(f"{base}{page.week}.html"))


def _keep(p: PaperView) -> Markup:
    """A KEEP: its title (linked), authors and the start of its abstract, then why it was kept."""
    title = Markup("<bdi>{}</bdi>").format(p.title)
    if p.href is not None:
        title = Markup('<a href="{}">{}</a>').format(p.href.html, title)
    authors = Markup("<br><bdi>{}</bdi>").format(p.authors) if p.authors else ""
    snippet = Markup("<br><bdi>{}</bdi>").format(p.snippet) if p.snippet else ""
    verdict = Markup(" Graph verdict: {} ({}).").format(p.graph.verdict, p.graph.status) if p.graph else ""
    return Markup("{}{}{}<br><code><bdi>{}</bdi></code>: score {} (match {}, criteria {}, novelty {}). "
                  "<bdi>{}</bdi>{}").format(title, authors, snippet, p.id, p.score, p.match, p.criteria, p.novelty,
                                            p.rationale, verdict)


__all__ = ["ATOM", "atom_feed", "entry_id", "feed_id", "updated"]
