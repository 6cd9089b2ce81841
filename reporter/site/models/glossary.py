"""The glossary page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .common import PageMeta

@dataclass(frozen=True)
class Term:
    """One word of ours and what it means."""

    anchor: str
    """Fragment id of its entry (`term-pending`), which pages link to."""
    word: str
    """The word as pages use it (`pending`, `Stage 3`, `specs`)."""
    meaning: str
    """What it means, in a sentence or two of plain words."""


@dataclass(frozen=True)
class GlossaryPage:
    """The glossary: every internal word a page of this site uses, with its plain meaning."""

    TEMPLATE: ClassVar[str] = "glossary"
    meta: PageMeta
    """Title, path, twin link."""
    groups: tuple[tuple[str, tuple[Term, ...]], ...]
    """Terms by topic (routing, releases, screening, digest, novelty), each group's title first."""
    intro: str = ("The words these pages use for what the tool does, each in plain words. Every page links here from "
                  "its foot.")
    """What the glossary is."""
