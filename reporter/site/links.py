"""Where every page lives and how one page links to another: relative, per page.

A page is named by its site-relative path without extension
(`releases/<id>/rules/<rule>`); its HTML file adds `.html` and its Markdown
twin `.md`. Links are computed from the linking page, so a copied release
folder keeps working, and `file://` works because every link names a file.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from ..ids import paper_url
from ..naming import slug

HOME = "index"
GLOSSARY = "glossary"
"""The glossary page (site-relative, without extension): every page's footer links to it."""


@dataclass(frozen=True)
class Href:
    """One link target as written in each twin."""

    html: str
    """The href used in the HTML page (to `.html` files, fragment kept)."""
    md: str
    """The link used in the Markdown twin (to `.md` files, no fragment)."""


def work_anchor(work_id: str) -> str:
    """The fragment id of a work wherever it is shown."""
    return "w-" + slug(work_id)


def rule_anchor(rule_id: str) -> str:
    """The fragment id of a rule's row in the release page's rule table."""
    return "rule-" + slug(rule_id)


def release_path(release_id: str) -> str:
    """The archived release page."""
    return f"releases/{release_id}/index"


def status_path(release_id: str) -> str:
    """The release's status page, rebuilt at every build."""
    return f"releases/{release_id}/status"


def diff_path(release_id: str) -> str:
    """The diff of a release against the previous one in index.json."""
    return f"releases/{release_id}/diff"


def against_path(release_id: str, base_id: str) -> str:
    """The comparison of a release with an earlier one other than its previous (`reporter render --against`)."""
    return f"releases/{release_id}/against/{base_id}"


def rule_path(release_id: str, rule_id: str) -> str:
    """The archived page of one rule in one release."""
    return f"releases/{release_id}/rules/{slug(rule_id)}"


def href(from_page: str, to_page: str, anchor: str = "") -> Href:
    """The relative link from one page to another (or to an anchor on it)."""
    frag = f"#{anchor}" if anchor else ""
    if to_page == from_page:
        return Href(html=frag or _rel(from_page, to_page, ".html"),
                    md=_rel(from_page, to_page, ".md"))
    return Href(html=_rel(from_page, to_page, ".html") + frag, md=_rel(from_page, to_page, ".md"))


def _rel(from_page: str, to_page: str, ext: str) -> str:
    start = posixpath.dirname(from_page) or "."
    return posixpath.relpath(to_page + ext, start)


def isolated(text: str) -> str:
    """An id placed inside plain text (a page title): wrapped in FSI ... PDI when it is not ASCII.

    A <title> cannot hold a <bdi>; the Unicode isolates do the same there, so
    a U+202E in a rule id cannot reverse the rest of the title. Plain-ASCII ids
    are left as they are (their pages keep their bytes).
    """
    return text if text.isascii() else f"\u2068{text}\u2069"


def paper_href(ids: Sequence[str]) -> Href | None:
    """The page of the first id that names one (doi.org, arxiv.org/abs, PubMed, OpenAlex, OSF), or None.

    Built from the id alone, never from a URL in the data; an id that is not
    well-formed for its scheme gets no link. The one place the site links out; the table of
    schemes is `reporter.ids.paper_url`'s, which the certify sheet's `link` column uses too.
    """
    for paper_id in ids:
        url = paper_url(paper_id)
        if url is not None:
            return Href(url, url)
    return None
