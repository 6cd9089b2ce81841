"""The relevance-criteria document: Markdown sections of bullets, each bullet a concept (docs/digest.md).

Five sections, named by their heading (any level, case-insensitive, `-` or
`_` read as a space, a trailing `:` ignored): In scope, Out of scope,
Partly in scope, Required, Reduced fit. A section runs to the next heading of any level.
Each bullet (or numbered item; a nested one is a concept of its own) is a
concept: its prose is what a rationale quotes, its backticked terms are
what is matched (phrases of the rule language, through
`reporter.routing.match_phrases`), and its line is what a rationale cites
(`criteria.md:12 "Clinical trial enrollment reports"`).

Refused, naming the file and the line: no In scope section (or one without
a bullet); a bullet in one of the four sections without a backticked term
(it could never match; with a criteria judge configured, `need_terms=False`,
such a bullet is a concept of prose alone, which the judge reads and the
keyword rule never matches); a bullet with backticked terms under any other
heading or before the first one (a misspelt section name would otherwise
match nothing, silently); a term the rule language refuses. Paragraphs,
code blocks and bullets without terms elsewhere are prose: kept for the
reader, never matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import InputError
from .watchlist import check_phrases, read_text

IN_SCOPE, OUT_OF_SCOPE, REQUIRED, REDUCED_FIT = "in scope", "out of scope", "required", "reduced fit"
PARTLY_IN_SCOPE = "partly in scope"
SECTIONS = (IN_SCOPE, OUT_OF_SCOPE, PARTLY_IN_SCOPE, REQUIRED, REDUCED_FIT)
"""The section names, in the order the scoring reads them."""
_TITLES = {IN_SCOPE: "In scope", OUT_OF_SCOPE: "Out of scope", PARTLY_IN_SCOPE: "Partly in scope", REQUIRED: "Required",
           REDUCED_FIT: "Reduced fit"}


@dataclass(frozen=True)
class Concept:
    """One bullet of the criteria document."""

    section: str
    """One of SECTIONS."""
    prose: str
    """The bullet's words before its first term (what a rationale quotes)."""
    terms: tuple[str, ...]
    """The backticked phrases (what is matched)."""
    line: int
    """The bullet's first line in the document (1-based)."""


@dataclass(frozen=True)
class Criteria:
    """A parsed criteria document."""

    name: str
    """The file's name (`criteria.md`), as rationales cite it."""
    concepts: tuple[Concept, ...]
    """Every concept, in document order."""

    def section(self, name: str) -> tuple[Concept, ...]:
        """The concepts of one section, in document order."""
        return tuple(c for c in self.concepts if c.section == name)

    def cite(self, concept: Concept) -> str:
        """`criteria.md:12 "Clinical trial enrollment reports"`: the line and prose a rationale quotes."""
        return f'{self.name}:{concept.line} "{concept.prose}"'


def load_criteria(path: Path, *, need_terms: bool = True) -> Criteria:
    """Read and check a criteria document; InputError naming the file and line.

    `need_terms=False` (a criteria judge is configured): a concept needs no backticked term.
    """
    return parse_criteria(read_text(path, "criteria document", "criteria"), str(path), need_terms=need_terms)


def section_name(heading: str) -> str:
    """A heading as a section name: lower-case, `-`/`_` as spaces, whitespace collapsed, trailing `:` dropped."""
    return " ".join(re.sub(r"[-_]", " ", heading).lower().split()).rstrip(":").strip()


def parse_criteria(text: str, where: str, *, need_terms: bool = True) -> Criteria:
    """Parse a criteria document's Markdown; `where` names the file in errors; `need_terms`: every concept needs a
    backticked term (False with a criteria judge, which reads the prose)."""
    tokens = MarkdownIt("commonmark").parse(text.removeprefix("\ufeff"))
    section, heading, heading_line = None, None, 0
    items: list[dict] = []  # the open list items, innermost last
    found: list[tuple[str | None, str | None, int, list]] = []
    seen_sections = set()
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and i and tokens[i - 1].type == "heading_open":
            heading, heading_line = tok.content.strip(), tok.map[0] + 1
            name = section_name(heading)
            section = name if name in SECTIONS else None
            seen_sections.add(section)
        elif tok.type == "list_item_open":
            items.append({"line": tok.map[0] + 1, "level": tok.level, "children": []})
        elif tok.type == "inline" and items and tokens[i - 1].type == "paragraph_open" \
                and tokens[i - 1].level == items[-1]["level"] + 1:
            if items[-1]["children"]:
                items[-1]["children"].append(Token("softbreak", "", 0))
            items[-1]["children"] += tok.children or []
        elif tok.type == "list_item_close":
            item = items.pop()
            found.append((section, heading, heading_line, [item["line"], item["children"]]))
    concepts = []
    for section, heading, heading_line, (line, children) in sorted(found, key=lambda f: f[3][0]):
        terms = tuple(c.content for c in children if c.type == "code_inline")
        at = f"{where}:{line}"
        if section is None:
            if terms:
                under = f"under the heading {heading!r} (line {heading_line})" if heading else "before any heading"
                raise InputError(f"{at}: a bullet with terms {under}, which is not a section the digest reads; "
                                 f"name the heading one of In scope, Out of scope, Partly in scope, Required, Reduced fit "
                                 f"(a section runs to the next heading), or drop the backticks")
            continue
        if not terms and need_terms:
            raise InputError(f"{at}: a bullet of {_TITLES[section]} without a backticked term; every concept "
                             f"needs at least one, e.g. - Review articles: `review`, `survey`")
        if any(not t.strip() for t in terms):
            raise InputError(f"{at}: an empty backticked term; write the phrase between the backticks")
        concepts.append(Concept(section, _prose(children), terms, line))
    if IN_SCOPE not in seen_sections:
        raise InputError(f"{where}: no In scope section; add a heading `## In scope` with a bullet per concept, "
                         f"e.g. - Protein language models: `protein language model`, `ESM*`")
    if not any(c.section == IN_SCOPE for c in concepts):
        raise InputError(f"{where}: the In scope section has no bullet; add one per concept with its "
                         f"backticked terms")
    check_phrases([(t, f"{where}:{c.line}") for c in concepts for t in c.terms])
    return Criteria(Path(where).name, tuple(concepts))


def _prose(children: list) -> str:
    """The words before the first term; the whole bullet (terms in backticks) when it starts with one."""
    words = []
    for c in children:
        if c.type == "code_inline":
            break
        words.append(" " if c.type in ("softbreak", "hardbreak") else c.content)
    prose = " ".join("".join(words).split()).rstrip(" :;,-\u2013\u2014").strip()
    if prose:
        return prose
    whole = "".join(f"`{c.content}`" if c.type == "code_inline" else
                    (" " if c.type in ("softbreak", "hardbreak") else c.content) for c in children)
    return " ".join(whole.split())
