"""Model parts every page family shares: a page's meta, how a page names a release and links a rule,
a CSV download, the flow diagram's table rows."""

from __future__ import annotations

import posixpath

from ..routing.artifacts import Release
from .links import GLOSSARY, Href, href, release_path, rule_path
from .models import Crumb, Download, FlowRow, Link, PageMeta, ReleaseName


def short_id(release_id: str) -> str:
    """The first 12 characters of a release id, as shown in headings."""
    return release_id[:12]


def meta(path: str, title: str, crumbs: list[tuple[str, str]], archived: bool) -> PageMeta:
    """The common part of every page: title, breadcrumbs and the twin link."""
    name = posixpath.basename(path)
    return PageMeta(title=title, path=path,
                    crumbs=tuple(Crumb(label, href(path, target)) for label, target in crumbs),
                    twin=Href(html=name + ".md", md=name + ".html"), archived=archived,
                    glossary=href(path, GLOSSARY) if path != GLOSSARY else None)


def release_name(page: str, rel: Release) -> ReleaseName:
    """How `page` names a release: `2026-W27 (3f2a9c1b2d4e)` with a name given, else its short id; and its date."""
    short = short_id(rel.release_id)
    given = rel.published.name if rel.published is not None else None
    return ReleaseName(release_id=rel.release_id, short_id=short, given_name=given,
                       written=rel.published.first_written if rel.published is not None else None,
                       name=f"{given} ({short})" if given else short, href=href(page, release_path(rel.release_id)))


def download(page: str, path: str, rows: int, note: str) -> Download:
    """A link from `page` to a CSV file of the site (`path` site-relative, with its extension)."""
    start = posixpath.dirname(page) or "."
    rel = posixpath.relpath(path, start)
    return Download(Href(rel, rel), rows, note)


def rule_link(page: str, release_id: str, rule_id: str | None, known: set[str]) -> Link | None:
    """A link to a rule's page (no link for a rule the release does not have)."""
    if rule_id is None:
        return None
    return Link(rule_id, href(page, rule_path(release_id, rule_id)) if rule_id in known else None)


def flow_rows(steps: list) -> tuple[FlowRow, ...]:
    """The flow diagram's numbers as table rows (each box, then its lines), keys shared with the diagram."""
    rows = []
    for step in steps:
        for box, kind in ((step.main, ""), (step.side, "removed"), (step.waiting, "waiting")):
            if box is None:
                continue
            rows.append(FlowRow(box.key, FLOW_NOTES[kind] + box.title, box.count, kind, 0))
            rows += [FlowRow(line.key, line.label, line.count, kind, 2 if line.indent else 1) for line in box.lines]
    return tuple(rows)


FLOW_NOTES = {"": "", "removed": "left the flow: ", "waiting": "waiting: "}
"""What the flow table writes before a box's title, by its kind."""
