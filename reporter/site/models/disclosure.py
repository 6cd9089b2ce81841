"""The disclosure page: a release's methods disclosure (PRISMA-trAIce, RAISE), as kept at a hand-off (archived)
or as `reporter disclose` drafts it now (a file of its own, outside the site)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .common import Href, PageMeta


@dataclass(frozen=True)
class DisclosureSource:
    """A record a sentence comes from."""

    path: str
    """The record's path in the workspace (a run record, the release's manifest, a certificate, a raw log)."""
    href: Href | None
    """Where to read it: the release page in the site, the file itself beside a drafted disclosure; None where
    the record is not published."""


@dataclass(frozen=True)
class DisclosureBlock:
    """A text shown exactly as it was recorded: a prompt, an answer schema."""

    caption: str
    """What it is."""
    text: str
    """The text, verbatim."""


@dataclass(frozen=True)
class DisclosureItem:
    """One checklist item: what the records say, and what the author must add."""

    id: str
    """The PRISMA-trAIce item (`M2` .. `M9`, `R1`, `R2`, `D1`); also the section's anchor."""
    title: str
    """The item's heading."""
    status: str
    """`filled`, `partial` or `author`."""
    mark: str
    """The status in words, after the heading."""
    tone: str
    """The class that colours the status: `ok` (filled), `bad` (the author's), `neutral` (partly)."""
    text: str
    """The sentences the records fill, to paste into a methods section."""
    warnings: tuple[str, ...]
    """What a reviewer must see (a model reported under another name, or changed during a run)."""
    blocks: tuple[DisclosureBlock, ...]
    """Texts shown exactly (the prompt, the answer schema)."""
    missing: tuple[str, ...]
    """What no record says: the author's to write."""
    sources: tuple[DisclosureSource, ...]
    """The records its sentences come from."""


@dataclass(frozen=True)
class DisclosureBox:
    """A box of the flow of decisions (R1): who decided a step, and how many works."""

    label: str
    """The step."""
    decided_by: str
    """`rule`, `model` or `person`."""
    count: str
    """Its works, formatted."""
    detail: str
    """Which rules, models or samples."""


@dataclass(frozen=True)
class DisclosurePage:
    """A release's methods disclosure drafted from the run records: one section per PRISMA-trAIce item, the flow of
    who decided. In the site it is the disclosure as kept at a hand-off, archived: never rewritten."""

    TEMPLATE: ClassVar[str] = "disclosure"
    meta: PageMeta
    """Title, path, twin link."""
    release: str
    """The release, as its label or short id."""
    release_id: str
    """The release's full id."""
    release_href: Href | None
    """The release's archived page (None outside the site)."""
    kept: str
    """When and with which hand-off this disclosure was kept (empty for a draft made now)."""
    intro: str
    """Where the text comes from and how to use it."""
    counts: str
    """How many items the records fill, partly fill, and leave to the author."""
    items: tuple[DisclosureItem, ...]
    """The checklist's items, in order."""
    flow: tuple[DisclosureBox, ...]
    """The flow of decisions (R1), in order."""
    flow_intro: str = ("Each step with who decided it: rules (the rule book), a model tier (its models and "
                       "generation), or people (labels and certification samples); the same numbers as the release "
                       "page and the run records.")
    """What the flow table shows."""
    author_word: str = "Author"
    """The word before each part the author must write."""
    warning_word: str = "Warning"
    """The word before each warning."""
    sources_word: str = "Sources"
    """The word before an item's records."""


@dataclass(frozen=True)
class KeptDisclosureView:
    """A disclosure kept at a hand-off, as the release's status page lists it."""

    id: str
    """Its short id (12 hex of the sha256 of its JSON)."""
    page: Href
    """Its archived page."""
    kept: str
    """When and with which hand-off it was kept."""
    counts: str
    """How many items the records fill, partly fill, and leave to the author."""
