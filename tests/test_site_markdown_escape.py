"""Markdown escaping cannot be fooled: data stays text in every Markdown twin (Hypothesis).

Two properties, each checked with three readers: markdown-it-py's CommonMark
preset, its GFM-like preset (tables, strikethrough, raw HTML and linkify, which
finds bare URLs, bare domains, `www.` links and e-mail addresses), and GitHub's
own cmark-gfm (tables, strikethrough, the autolink extension, footnotes, raw HTML):

(a) `md_escape` (and `md_mark`, `md_code`) alone: an escaped value put where a
    template may put it (a line's start, a paragraph's second line, mid-line, a
    heading, a quote, a table cell, a link's text) reads into the same structure
    as a harmless placeholder there, and its text is the value itself, modulo
    the documented normalisation (control characters and bidi
    embedding/override/isolate controls dropped, word joiners added inside
    addresses and URLs, line breaks and runs of white space read as one space,
    as HTML shows them).
(b) every Markdown template: each page model (home, release, rule, status,
    diff, novelty), with every string of its data (titles, work and rule ids,
    descriptions, notes, metadata values, ...) replaced by arbitrary text, has
    exactly the structure (blocks, links and their targets, table cells, code
    spans, headings) it has with placeholders, no bold the placeholders do not
    have, and the text of the placeholder page with each placeholder read as
    its value.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any, ClassVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.digest import graph_rows, week_document
from support.site import toy_rules, toy_works, write_release

from reporter.hashing import dump_json
from reporter.site import env
from reporter.site.charts import Chart
from reporter.site.diff import compute_diff
from reporter.site.diff_page import Pair, build_diff_page
from reporter.site.digest_pages import build_index_page, build_week_page, digest_summary, digest_week
from reporter.site.home_page import build_home
from reporter.site.links import Href
from reporter.routing.artifacts import Published, load_releases
from reporter.site.models import CandidateRow, Comparison, GraphUsed, IdList, NoveltyPage, VerdictCount
from reporter.site.novelty_page import novelty_summary
from reporter.site.page_parts import meta
from reporter.site.release_page import build_release_page, build_rule_pages
from reporter.site.status_page import build_status_page
from reporter.site.titles import Titles

pytest.importorskip("linkify_it", reason="the GFM-like preset needs linkify-it-py (the test extra)")
cmarkgfm = pytest.importorskip("cmarkgfm", reason="GitHub's parser comes with cmarkgfm (the test extra)")

# Things that turn into structure when data starts a line or sits in a cell, and bare links.
FRAGMENTS = [
    "1. ", "1) ", "12345. x", "- ", "+ ", "* ", "> ", "# ", "## x #", "===", "---", "***", "___", "- - -",
    "    ", "\t", "\n", "\r\n", "\r", "  \n", "\\\n", "\u2028", "\u0085", "\x0b", "\x0c",
    "|", "||", "| --- |", "`", "``", "```", "~~~", "~~x~~", "~y~", "$", "$$", "<script>alert(1)</script>",
    "<b>", "<!-- c -->", "<http://a.example>", "&amp;", "&#x3c;", "&copy", "[x](y)", "![i](u)", "[x]: /u",
    "[^1]", "[ ]", "[!NOTE]", "*em*", "**st**", "_u_", "__u__", "https://evil.example/a?b=c",
    "http://", "HTTPS://X.CO", "ftp://f.org", "file:///etc", "www.x.com", "WWW.", "www.1.de", "evil.com",
    "a.io", "a@b.com", "x_y+z@q-r.co.uk", "mailto:a@b.co", "Mailto:", "xmpp:a@b.co", "//localhost/x",
    "localhost:8000", "javascript:alert(1)", "doi:10.1/x", ":", ".", "@", "/", "\\", "(", ")", "!",
    "e.g.", "3.14", "-1", "+1", "\u202e", "\u2066", "\u2069", "\u200f", "\u061c", "\u2060",
    "\x00", "\x1b", "\x1c", "\x7f", "\x9b", "\u00a0", "\u3000", "\ufeff", "\u200b", "é", "دراسة", "𝔘",
    "a", "b", " ",
]
TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=10).map("".join)
# Non-string values a template might show: numbers, booleans, lists and dicts of text.
VALUES = st.one_of(st.integers(), st.floats(), st.booleans(),
                   st.lists(TEXT, max_size=3), st.dictionaries(TEXT, TEXT, max_size=2))
PLACEHOLDER = "Zqxj"


# --- what a value reads as --------------------------------------------------
def readable(value: str) -> str:
    """The documented normalisation: controls, bidi controls, byte order marks and word joiners gone,
    white space runs read as one space."""
    kept = "".join(ch for ch in value
                   if not (unicodedata.category(ch) == "Cc" and ch not in "\t\n\v\f\r\x85")
                   and ch not in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2060\ufeff")
    return re.sub(r"\s+", " ", kept)


def norm(value: str) -> str:
    """What a value reads as on its own (no white space at its ends)."""
    return readable(value).strip()


# --- three readers: (structure, text) of a Markdown document -----------------
# A structure is a list of (element, nesting, link target, cell alignment, code info);
# the text is what a person reads, blocks apart, white space runs as one space.
def _markdown_it(preset: str) -> Callable[[str], tuple[list[tuple], str]]:
    md = MarkdownIt(preset)

    def read(doc: str) -> tuple[list[tuple], str]:
        structure, parts = [], []
        for t in md.parse(doc):
            if t.type == "inline":
                for c in t.children or []:
                    if c.type in ("text", "text_special", "code_inline"):
                        parts.append(c.content)
                    elif c.type in ("softbreak", "hardbreak"):
                        parts.append(" ")
                    if c.type not in ("text", "text_special"):
                        structure.append((c.tag or c.type, c.nesting, c.attrGet("href"), None, ""))
            else:
                structure.append((t.tag or t.type, t.nesting, None, t.attrGet("style"), t.info))
                parts.append(t.content if t.type in ("code_block", "fence") else " ")
        return structure, _spaced("".join(parts))
    return read


class _Html(HTMLParser):
    BLOCKS: ClassVar[set[str]] = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "tr", "blockquote", "pre", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.structure: list[tuple] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.structure.append((tag, 1, a.get("href"), a.get("align"), a.get("lang", "")))
        self.parts.append(" " if tag in self.BLOCKS else "")

    def handle_endtag(self, tag):
        self.structure.append((tag, -1, None, None, ""))
        self.parts.append(" " if tag in self.BLOCKS else "")

    def handle_comment(self, data):
        self.structure.append(("comment", 0, None, None, ""))

    def handle_data(self, data):
        self.parts.append(data)


def _cmark_gfm(doc: str) -> tuple[list[tuple], str]:
    options = cmarkgfm.cmark.Options
    html = _Html()
    html.feed(cmarkgfm.github_flavored_markdown_to_html(
        doc, options=options.CMARK_OPT_UNSAFE | options.CMARK_OPT_FOOTNOTES | options.CMARK_OPT_GITHUB_PRE_LANG))
    html.close()
    return html.structure, _spaced("".join(html.parts))


def _spaced(text: str) -> str:
    return " ".join(text.split())


READERS = {"commonmark": _markdown_it("commonmark"), "gfm-like": _markdown_it("gfm-like"), "cmark-gfm": _cmark_gfm}


@functools.cache
def _read(reader: str, doc: str) -> tuple[list[tuple], str]:
    return READERS[reader](doc)


def _strong(structure: list[tuple]) -> int:
    return sum(1 for s in structure if s[0] == "strong" and s[1] == 1)


def _without_strong(structure: list[tuple]) -> list[tuple]:
    return [s for s in structure if s[0] != "strong"]


def assert_same_structure(doc: str, reference: str, values: dict[str, str], where: str) -> None:
    """`doc` reads like `reference` (no more bold), and as its text with each placeholder read as its value."""
    for name, read in READERS.items():
        got, text = read(doc)
        want, expected = _read(name, reference)
        assert _without_strong(got) == _without_strong(want), f"{where} ({name}): data became structure\n{doc}"
        assert _strong(got) <= _strong(want), f"{where} ({name}): data made bold text\n{doc}"
        for placeholder, value in values.items():
            expected = expected.replace(placeholder, readable(value))
        assert _spaced(text.replace(env.WORD_JOINER, "")) == _spaced(expected), f"{where} ({name}): text changed\n{doc}"


# --- (a) the escaping functions ---------------------------------------------
CONTEXTS = {
    "document start": "{}",
    "second line of a paragraph": "An intro line\n{}",
    "mid-line": "before {} after",
    "heading": "# {}",
    "quote": "> Note: ({})",
    "table cell": "| head | n |\n| --- | ---: |\n| {} | 1 |",
    "link text": "[{}](page.md) › next",
}


def _check_escaped(text: str, escaped: str) -> None:
    if not norm(text):
        # Nothing to read: nothing is written but white space (a blank value can end a block, never open one).
        assert not norm(escaped), repr(escaped)
        return
    for where, ctx in CONTEXTS.items():
        assert_same_structure(ctx.format(escaped), ctx.format(PLACEHOLDER), {PLACEHOLDER: text}, where)


@settings(max_examples=150, deadline=None)
@given(TEXT)
@example("1. x")
@example("- x")
@example("---")
@example("=== ")
@example("    indented code")
@example("see https://evil.example or www.x.com or a@b.com")
@example("evil.com")
def test_escaped_text_stays_text_wherever_a_template_puts_it(text):
    _check_escaped(text, env.md_escape(text))


@settings(max_examples=50, deadline=None)
@given(VALUES)
@example(["- [x](javascript:alert(1))", "<b>"])
@example({"1. k": "**v**"})
@example(-1)
def test_non_string_values_are_escaped_as_their_text(value):
    assert env.md_escape(value) == env.md_escape(str(value))
    _check_escaped(str(value), env.md_escape(value))


def test_none_and_md_values():
    assert env.md_escape(None) == ""
    assert env.md_escape(env.Md("**kept**")) == "**kept**"


@settings(max_examples=100, deadline=None)
@given(TEXT, TEXT, TEXT)
@example("see evil", ".", "com")
@example("x", ".y", "z")
@example("www", ".", "evil.org")
@example("a", " b ", "c")
def test_a_marked_match_is_bold_text_between_its_context(before, match, after):
    marked = env.md_mark(match, before, after)
    plain = f"{PLACEHOLDER}0 **{PLACEHOLDER}1** {PLACEHOLDER}2"
    for ctx in ("title: {}", "| w | title: {} |\n| --- | --- |\n| 1 | title: {} |"):
        assert_same_structure(ctx.replace("{}", marked), ctx.replace("{}", plain),
                              {f"{PLACEHOLDER}0 {PLACEHOLDER}1 {PLACEHOLDER}2": before + match + after},
                              f"marked in {ctx!r}")
    # bold whenever the match has something that can be bold
    if any(not ch.isspace() and not unicodedata.category(ch).startswith(("P", "S", "C")) for ch in match):
        assert _strong(READERS["gfm-like"](f"x: {marked}")[0]) == 1


@settings(max_examples=80, deadline=None)
@given(TEXT)
@example("")
@example("`")
@example(" a ")
def test_a_code_span_shows_its_value(text):
    code = env.md_code(text)
    for ctx in ("Release {} of", "{}"):
        assert_same_structure(ctx.format(code), ctx.format(f"`{PLACEHOLDER}`"), {PLACEHOLDER: text},
                              f"code in {ctx!r}")


# --- (b) every Markdown template --------------------------------------------
@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """One page model of every kind, built from two toy releases (and a hand-made novelty page)."""
    releases = tmp_path_factory.mktemp("md_escape") / "releases"
    works = toy_works()
    labels = {w["work_id"]: ("include" if i % 3 == 0 else "exclude") for i, w in enumerate(works[:30])}
    write_release(releases, works, toy_rules(1), labels=labels)
    write_release(releases, works[:35] + [dict(w, work_id=w["work_id"] + "-v2") for w in works[35:]],
                  toy_rules(2), labels=labels)
    first, second = load_releases(releases).releases
    first = dataclasses.replace(first, published=Published("2026-W19", "2026-05-04"))
    release = dataclasses.replace(build_release_page(first), generated_pool="generated by a seeded generator")
    rules = build_rule_pages(first)
    with_domain = next(p for p in rules if p.domain is not None and p.samples and p.outranked_by)
    novelty = _novelty_page()
    doc = week_document("2026-W20")
    week = digest_week(dump_json(doc).encode(), "decisions.json", graph_rows(doc))
    found = {
        "home": build_home((first, second), novelty=novelty_summary(novelty), digest=digest_summary([week]),
                           changes={first.release_id: "The first release.", second.release_id: "Changed: specs."}),
        "release": release,
        "rule": with_domain,
        "shadow rule": next(p for p in rules if p.rule.shadow),
        "status": build_status_page(second),
        "diff": build_diff_page(second, Pair(second, first, True, compute_diff(first, second, seed=0)), Titles(),
                                (Comparison("2026-W19", "2026-05-04", None, True),), "How to compare."),
        "first diff": build_diff_page(first, None, Titles()),
        "novelty": novelty,
        "digest week": build_week_page(week, ["2026-W19"]),
        "digest index": build_index_page([week]),
    }
    assert found["status"].lost and found["diff"].moved and any(g.works for g in found["diff"].moved)
    assert found["diff"].specs and found["diff"].new_works and found["diff"].left_works
    assert release.domains and release.overlaps and release.shadows
    return {name: shorten(page) for name, page in found.items()}


def remodel(obj: Any, string: Callable[[str], str], items: Callable[[tuple], tuple] = tuple) -> Any:
    """A page model rebuilt with each string through `string` and each list through `items`.

    Links (computed, never data) and charts (not in the Markdown twins) are kept as they are.
    """
    if isinstance(obj, str):
        return string(obj)
    if isinstance(obj, (Href, Chart)) or obj is None:
        return obj
    if isinstance(obj, tuple):
        return tuple(remodel(x, string, items) for x in items(obj))
    if dataclasses.is_dataclass(obj):
        return dataclasses.replace(obj, **{f.name: remodel(getattr(obj, f.name), string, items)
                                           for f in dataclasses.fields(obj)})
    return obj


def shorten(page: Any) -> Any:
    """The page model with every list cut to its first two items: every branch of a template, quicker."""
    return remodel(page, str, lambda items: items[:2])


def _novelty_page() -> NoveltyPage:
    ids = IdList(3, ("lom:a", "lom:b"), 1)
    none = IdList(0, (), 0)
    rows = (
        CandidateRow(anchor="c-1", line=1, id="cand-1", kind="paper", statement=None, lom_id="lom:p",
                     verdict="neighborhood", status="ok", exact_match=None, holdout_applied=True,
                     holdout_ids=ids, in_sample=ids, holdout=ids, coverage_gap=none, blocking=(),
                     graph="events.jsonl (sha256 abc)"),
        CandidateRow(anchor="c-line-2", line=2, id=None, kind="claim", statement="a claim", lom_id="lom:c",
                     verdict="unknown", status="lookup_failed", exact_match="lom:m", holdout_applied=False,
                     holdout_ids=none, in_sample=none, holdout=none, coverage_gap=ids,
                     blocking=("doi lookup: HTTP 429", "arxiv lookup: no answer"), graph="other.jsonl (sha256 def)"),
    )
    counts = tuple(VerdictCount(v, f"v-{v}", n, f"what {v} means") for v, n in
                   (("duplicate", 0), ("neighborhood", 1), ("novel", 0), ("unknown", 1)))
    return NoveltyPage(meta=meta("novelty", "Novelty checks", [("Home", "index")], archived=False),
                       not_a_ranker="Not a ranker.", candidates=rows, verdicts=counts,
                       statuses=(VerdictCount("ok", "s-ok", 1, "fine"),),
                       graphs=(GraphUsed("events.jsonl", "abc", 1), GraphUsed("other.jsonl", "def", 1)), shown=20)


def fill(page: Any, values: list[str]) -> Any:
    """The page model with its strings (every data field) replaced in turn by `values`."""
    slots = itertools.count()
    return remodel(page, lambda _: values[next(slots) % len(values)])


PLACEHOLDERS = [f"{PLACEHOLDER}{i}" for i in range(3)]
_references: dict[str, str] = {}


def _reference(name: str, page: Any) -> str:
    """The page rendered with placeholders."""
    if name not in _references:
        _references[name] = env.render_md(fill(page, PLACEHOLDERS))
    return _references[name]


@settings(max_examples=30, deadline=None)
@given(st.lists(TEXT.filter(norm), min_size=3, max_size=3))
@example(["1. x", "- y", "https://evil.example"])
@example(["===", "a@b.com", "    code"])
@example([" +", "**", "www.x.com"])
def test_data_stays_text_in_every_markdown_template(pages, texts):
    for name, page in pages.items():
        doc = env.render_md(fill(page, texts))
        assert_same_structure(doc, _reference(name, page), dict(zip(PLACEHOLDERS, texts)), f"the {name} page")
