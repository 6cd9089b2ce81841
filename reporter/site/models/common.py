"""What every page model shares: the page's meta, links, counts, rows and sampled works."""

from __future__ import annotations

from dataclasses import dataclass

from ..links import Href

@dataclass(frozen=True)
class Crumb:
    """One step of the breadcrumb trail."""

    label: str
    """What the linked page is."""
    href: Href
    """Where it is."""


@dataclass(frozen=True)
class PageMeta:
    """What every page has: its title, where it is, and how to get home."""

    title: str
    """The page's <title> and <h1>."""
    path: str
    """Site-relative path without extension (`releases/<id>/index`)."""
    crumbs: tuple[Crumb, ...]
    """Breadcrumbs from the home page to the parent of this page."""
    twin: Href
    """From the HTML page: its Markdown twin (`html`); from the twin: the HTML page (`md`)."""
    archived: bool
    """Whether the page is archived (never rewritten) or rebuilt at every build."""
    glossary: Href | None
    """The glossary page, where every word of ours a page uses (pile, pending, Stage 3, ...) is explained
    (None on the glossary itself: its footer does not link to itself)."""
    archived_note: str = "Archived page: published once and never rewritten."
    """The foot's line on an archived page."""
    rebuilt_note: str = "Rebuilt at every build."
    """The foot's line on a page rebuilt at every build."""


@dataclass(frozen=True)
class Link:
    """A named link (a rule, a pile, a page)."""

    label: str
    """What is linked."""
    href: Href | None
    """Where it is, or None when there is no page for it."""


@dataclass(frozen=True)
class Count:
    """A rule (or pile) and a number of works, with a link when there is a page for it."""

    name: str
    """Rule id or pile name."""
    rows: int
    """Works."""
    href: Href | None
    """The rule's page, or None."""


@dataclass(frozen=True)
class Snippet:
    """The matched text in its context, from the normalised field."""

    field: str
    """title or abstract."""
    before: str
    """Text before the match (at most samples.json's `context_chars` characters)."""
    match: str
    """The matched text (highlighted)."""
    after: str
    """Text after the match (at most samples.json's `context_chars` characters)."""
    cut_before: bool
    """The field goes on before the window (an ellipsis is shown)."""
    cut_after: bool
    """The field goes on after the window."""
    cut_match: bool = False
    """The match itself was longer than routing keeps (samples.json `match_cut`); an ellipsis follows it."""


@dataclass(frozen=True)
class ReleaseName:
    """How the pages name a release: its given name and first-written date (published.json) when it has them."""

    release_id: str
    """Full id."""
    short_id: str
    """First 12 hex."""
    given_name: str | None
    """The name it was routed with (`--label 2026-W27`), or None."""
    written: str | None
    """The date it was first written (`2026-07-06`), or None when published.json does not say."""
    name: str
    """What headings call it: `2026-W27 (3f2a9c1b2d4e)` with a given name, else the short id."""
    href: Href
    """Its release page."""


@dataclass(frozen=True)
class Download:
    """A CSV file beside a table: the table's columns and rows (or the full list where the page shows a sample)."""

    href: Href
    """The CSV file (the same file from both twins)."""
    rows: int
    """Data rows in it."""
    note: str
    """What it holds, e.g. `the same rows as the table` or `all 421 moved works`."""


@dataclass(frozen=True)
class WorkView:
    """One sampled work as pages show it."""

    work_id: str
    """Scheme-prefixed id."""
    anchor: str
    """Fragment id of the work on this page."""
    href: Href | None
    """The paper's own page built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex, OSF), or None."""
    source: str
    """Where the pool got it."""
    title: str | None
    """The title (shortened to 300 characters), or None when it has none."""
    state: str
    """Its pile, or pending/<reason>."""
    winner: Link | None
    """The rule that decided it, linked; None when unrouted."""
    title_only: bool
    """Screened on its title alone (title-only source)."""
    snippets: tuple[Snippet, ...]
    """Every matched span in its context, one per text predicate that made the win (empty: none matched)."""


@dataclass(frozen=True)
class Sample:
    """A seeded sample of a pile or of a rule's wins or misses."""

    name: str
    """Pile name or list name."""
    anchor: str
    """Fragment id of the sample's heading."""
    total: int
    """Works in the pile or list."""
    works: tuple[WorkView, ...]
    """The sampled works, ordered by work id."""
    note: str
    """`all 3 works` or `a seeded sample of 20 of 1,234 works (seed 0)`."""


@dataclass(frozen=True)
class Row:
    """A labelled value (a line of a two-column table)."""

    label: str
    """What the value is."""
    value: str
    """The value as shown."""
    key: str = ""
    """data-key of the cell (for tests and charts)."""


@dataclass(frozen=True)
class Fragment:
    """A named piece of text shown as it is: a prompt fragment, or a message of the assembled prompt."""

    name: str
    """The fragment's name, or the message's role."""
    text: str
    """The text, verbatim."""


@dataclass(frozen=True)
class NextStep:
    """What to do next, where there is something to do: a sentence and the command that does it."""

    text: str
    """What the step does and costs, without a closing full stop (the command follows it after a colon)."""
    command: str
    """The command, as one types it (empty: the sentence says what to do)."""
