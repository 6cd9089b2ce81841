"""The template environments, made once: HTML (autoescaped), Markdown (its own escaping), and the e-mail
edition's HTML and plain text.

HTML: `autoescape=True` for every template whatever its name, and
`StrictUndefined`, so a misspelt field is an error rather than an empty
cell. Markdown: every `{{ ... }}` goes through `md_escape` (the environment's
`finalize`), so data, whatever its type, can neither open markup (`**`, `[`,
`<script>`), nor start a list, heading or rule at a line's start, nor become
a bare link, nor break a table (`|`, line breaks); a value that is already
Markdown is an `Md` string and passes untouched (docs/site.md, "Markdown escaping").
The e-mail edition (templates/email/) has an HTML environment made like the
pages' one, and a plain-text one whose `finalize` is `one_line`, the first
step of the Markdown escaping alone: data as one line, control characters and
bidi controls dropped, no escapes (docs/digest.md, "The e-mail edition").
"""

from __future__ import annotations

import base64
import re
import textwrap
import unicodedata
from dataclasses import fields
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from ..errors import InternalError
from ..hashing import sha256_text
from ..plurals import count

TEMPLATES = resources.files("reporter") / "templates"
"""The templates: package data of `reporter`, found in an installed wheel as in a checkout."""
# --- Markdown: data as literal text (docs/site.md, "Markdown escaping") -----------------------
# Every value is first made one line: control characters (C0 and C1), the byte order mark
# (a reader drops it at a document's start) and the invisible bidi embedding/override/isolate
# controls dropped (in a Markdown line, unlike in HTML where data sits in <bdi>, they could
# reorder the rest of the row), line breaks and tabs read as a space, and a run of spaces at
# either end shortened to one (four at a line's start would open an indented code block, two
# at its end a hard line break).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\u0085\u2028\u2029]+")
_EDGE_SPACES = re.compile(r"^ {2,}| {2,}$")
# Then a backslash goes before each ASCII punctuation character that could be read as markup
# (a backslash-escaped punctuation character renders as itself):
_MD_ESCAPE = re.compile(
    r"[\\`*_\[\]<>|~&$#]"  # emphasis, code, links, raw HTML, entities, tables, strikethrough, math, headings
    # bare links (GFM's autolink extension, linkify): every domain name has a dot before a letter,
    # `www.` is a link by itself, and a scheme needs its colon (`https://`, `mailto:`, `xmpp:`) or `//`
    r"|\.(?=[^\W\d_])|(?<=www)\.|(?<=[a-z]):(?=/)|(?<=mailto):|(?<=xmpp):|(?<=/)/",
    re.IGNORECASE)
# ... and before a line-start marker at the value's start, where a template may put it:
# a list item (`-`, `+`, `1.`, `1)`), a thematic break or setext underline (`---`, `===`).
_LINE_START = re.compile(r" ?(?:([-+=])(?![^\W_])|\d{1,9}([.)])(?=\s|$))")
# GitHub's cmark-gfm links e-mail addresses in the text as resolved, escapes gone (and its
# pages may link URLs so after rendering): an invisible WORD JOINER (U+2060) goes before the
# `@` of an address, the colon of a scheme and the dot of `www.`, so no address or URL is whole.
_LINK_JOIN = re.compile(r"(?<=[\w.+-])@|(?<=[a-z]):(?=/)|(?<=mailto):|(?<=xmpp):|(?<=www)\.", re.IGNORECASE)
WORD_JOINER = "\u2060"
_URL_SAFE = re.compile(r"[^A-Za-z0-9._~/#%-]")


class Md(str):
    """A string that is already Markdown (escaped or built by a filter): not escaped again."""


def _as_text(value: Any) -> str:
    """A value's text without control characters: str() of a non-string, None empty."""
    return _CONTROL.sub("", "" if value is None else value if isinstance(value, str) else str(value))


def one_line(value: Any) -> str:
    """Any value as one line of text: controls dropped, line breaks as spaces, edge spaces shortened."""
    return _EDGE_SPACES.sub(" ", _LINE_BREAKS.sub(" ", _as_text(value)))


def _escaped(text: str, bold: tuple[int, int] | None = None) -> str:
    """One line of text with its escapes and joiners, and `**` around text[start:end] for `bold=(start, end)`.

    A joiner due where the bold ends goes inside it: after `**`, it would keep the run from closing.
    """
    at = {m.start() for m in _MD_ESCAPE.finditer(text)}
    start = _LINE_START.match(text)
    if start:
        at.add(start.start(start.lastindex))
    join = {m.start() for m in _LINK_JOIN.finditer(text)}
    opens, closes = bold or (-1, -1)
    out, last = [], 0
    for i in sorted(at | join | {opens, closes} - {-1}):
        out += [text[last:i], WORD_JOINER if i in join and i == closes else "",
                "**" if i in (opens, closes) else "", WORD_JOINER if i in join and i != closes else "",
                "\\" if i in at else ""]
        last = i
    out.append(text[last:])
    return "".join(out)


def md_escape(value: Any) -> str:
    """Any value as literal Markdown text, wherever a template puts it: one line, every markup escaped.

    None is empty; an `Md` value is already Markdown and passes untouched; any
    other value (a number, a list) is escaped as its `str()`.
    """
    if isinstance(value, Md):
        return value
    return _escaped(one_line(value))


def md_url(value: str) -> Md:
    """A link destination for Markdown: anything outside a safe set percent-encoded (but an `https://` prefix).

    Link targets are computed, never data: relative links between pages, and
    the digest's links to a paper's page, built from its id (`https://doi.org/...`).
    """
    scheme = "https://" if value.startswith("https://") else ""
    rest = value[len(scheme):]
    return Md(scheme + _URL_SAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), rest))


def _plain(ch: str) -> bool:
    """Neither white space nor punctuation (by any CommonMark version: P* and S* categories)."""
    return not ch.isspace() and not unicodedata.category(ch).startswith(("P", "S"))


def _boundary(ch: str | None) -> bool:
    """White space or punctuation by every CommonMark version (ASCII punctuation, P*), or the text's end."""
    return ch is None or ch.isspace() or unicodedata.category(ch).startswith("P") or (
        ch.isascii() and not ch.isalnum())


def md_mark(value: Any, before: Any = "", after: Any = "") -> Md:
    """`value` in bold, escaped, between its escaped context `before` and `after` (the matched span).

    The three are escaped as one text, so together they cannot form a link. The
    bold markers go around the value without its outer white space, and also
    without outer punctuation where a neighbouring letter would keep `**` from
    opening or closing (CommonMark's flanking rules); a value with nothing left
    is shown plain. Outside the three, the template puts white space or punctuation.
    """
    head, core, tail = one_line(before), one_line(value), one_line(after)
    text = head + core + tail
    s, e = len(head), len(head) + len(core)
    while s < e and (text[s].isspace() or not (_plain(text[s]) or _boundary(text[s - 1] if s else None))):
        s += 1
    while e > s and (text[e - 1].isspace() or not (_plain(text[e - 1])
                                                   or _boundary(text[e] if e < len(text) else None))):
        e -= 1
    return Md(_escaped(text, (s, e) if s < e else None))


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def md_code(value: Any) -> Md:
    """A value as an inline code span (one line, shown exactly; not for table cells, where `|` splits)."""
    text = one_line(value) or " "
    fence = "`" * (_longest_backticks(text) + 1)
    if text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip(" ")):
        text = f" {text} "
    return Md(f"{fence}{text}{fence}")


def md_code_block(value: Any, info: str = "") -> Md:
    """A value as a fenced code block, its lines shown exactly (control characters dropped)."""
    text = _as_text(value)
    fence = "`" * max(3, _longest_backticks(text) + 1)
    lines = "".join(line + "\n" for line in text.splitlines())
    return Md(f"{fence}{info}\n{lines}{fence}")


def num(value: int | None) -> str:
    """1234567 -> 1,234,567; None -> —."""
    return "—" if value is None else f"{value:,}"


def _static(name: str) -> str:
    path = TEMPLATES / "static" / name
    if not path.is_file():
        raise InternalError(f"{path}: the vendored file is missing from the package's templates")
    return path.read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(bytes.fromhex(sha256_text(text))).decode() + "'"


def _common(env: jinja2.Environment) -> jinja2.Environment:
    env.filters["num"] = num
    env.filters["count"] = count
    return env


def bdi(value: Any) -> Markup:
    """An identifier from the data, isolated from the text around it when it could reorder it.

    Titles already sit in <bdi>; ids (work ids, rule ids, pile names) get one
    only when they hold a non-ASCII character, so the pages of plain-ASCII ids
    keep their bytes. Without it a U+202E in an id reverses the rest of its cell.
    """
    text = "" if value is None else str(value)
    if text.isascii():
        return Markup.escape(text)
    return Markup("<bdi>") + Markup.escape(text) + Markup("</bdi>")


_HTML_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
"""Characters HTML text may not hold (NUL, and the C0 and C1 controls but tab, line feed, form feed and
carriage return): a browser reads NUL as U+FFFD and the others as parse errors."""


def html_finalize(value: Any) -> Any:
    """A value as the HTML page shows it: a forbidden control character becomes U+FFFD, visibly.

    Runs on every expression before escaping, on escaped Markup too (the
    replacement is the same character either way), so data holding NUL
    yields valid HTML whatever template or filter carries it."""
    if isinstance(value, str) and _HTML_CONTROL.search(value):
        return type(value)(_HTML_CONTROL.sub("\ufffd", value))
    return value


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's cache of compiled templates, where a file that cannot be read or written is only a miss."""

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            pass  # compiled again

    def dump_bytecode(self, bucket: Any) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # kept next time, or never: only speed depends on it


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    try:
        return _QuietBytecodeCache()
    except (OSError, RuntimeError):  # no private folder of this user's can be made in the temporary folder
        return None


_BYTECODE = _bytecode_cache()
"""Compiled templates kept between runs (Jinja's own cache: a private folder of this user's, mode 0700, in the
system's temporary folder, each entry checked against its template's source, written atomically): compiling the
site's templates took about half a CPU-second of every build (issue 37, item 4). Only speed depends on it, never
a page's bytes; a folder that cannot be made, read or written costs only the compiling."""


def _environment(folder: str, *, autoescape: bool, finalize: Any) -> jinja2.Environment:
    """An environment over templates/<folder>: strict (a misspelt field is an error), `finalize` on every value."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("reporter", f"templates/{folder}"), autoescape=autoescape,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, finalize=finalize, bytecode_cache=_BYTECODE)
    return _common(env)


def _html_environment(folder: str) -> jinja2.Environment:
    """An HTML environment over templates/<folder>: autoescaped, forbidden controls made visible."""
    env = _environment(folder, autoescape=True, finalize=html_finalize)
    env.filters["bdi"] = bdi
    return env


@lru_cache(maxsize=1)
def html_env() -> jinja2.Environment:
    """The HTML environment: autoescaped, strict, with the vendored style and script as globals."""
    env = _html_environment("html")
    style, script = _static("style.css"), _static("sort.js")
    env.globals["static_style"] = Markup(style)
    env.globals["static_script"] = Markup(script)
    # The page runs only its own script and style: even an escaping bug could not run injected code.
    env.globals["csp"] = ("default-src 'none'; img-src data:; base-uri 'none'; form-action 'none'; "
                          f"style-src {_csp_hash(style)}; script-src {_csp_hash(script)}")
    return env


@lru_cache(maxsize=1)
def email_html_env() -> jinja2.Environment:
    """The e-mail edition's HTML environment (templates/email/*.html): the pages' escaping, no style or script."""
    return _html_environment("email")


class Plain(str):
    """Plain text already made safe (by `wrap`): not made one line again."""


def plain_text(value: Any) -> str:
    """Any value as plain text for the e-mail edition: `one_line` (controls and bidi controls dropped), no escapes.

    A `Plain` value (wrapped lines) passes untouched.
    """
    return value if isinstance(value, Plain) else one_line(value)


TEXT_WIDTH = 76
"""The longest line of the plain-text e-mail (RFC 5322 asks for at most 78 characters)."""


def wrap(value: Any, indent: int = 0, first: str = "") -> Plain:
    """A value as `one_line` text wrapped at TEXT_WIDTH, `first` before its first line, `indent` spaces before
    the others; a long word (a URL) is never broken."""
    text = one_line(value).strip()
    lines = textwrap.wrap(text, TEXT_WIDTH, initial_indent=first or " " * indent, subsequent_indent=" " * indent,
                          break_long_words=False, break_on_hyphens=False)
    return Plain("\n".join(lines) if lines else first.rstrip())


@lru_cache(maxsize=1)
def text_env() -> jinja2.Environment:
    """The e-mail edition's plain-text environment (templates/email/*.txt): every expression through `plain_text`."""
    env = _environment("email", autoescape=False, finalize=plain_text)
    env.filters["wrap"] = wrap
    # A macro's output is text whose values were made safe inside the macro.
    env.filters["plain"] = Plain
    return env


@lru_cache(maxsize=1)
def md_env() -> jinja2.Environment:
    """The Markdown environment: every expression escaped for Markdown unless it is `Md`."""
    env = _environment("md", autoescape=False, finalize=md_escape)
    env.filters["url"] = md_url
    env.filters["mark"] = md_mark
    env.filters["code"] = md_code
    env.filters["code_block"] = md_code_block
    # A macro's output is Markdown whose data was escaped inside the macro.
    env.filters["md"] = Md
    return env


def context(page: Any) -> dict[str, Any]:
    """A page model's fields as the template's variables (nothing else)."""
    return {f.name: getattr(page, f.name) for f in fields(page)}


def render_html(page: Any) -> str:
    """A page model as HTML."""
    return html_env().get_template(f"{page.TEMPLATE}.html").render(context(page))


def render_md(page: Any) -> str:
    """A page model as its Markdown twin."""
    return md_env().get_template(f"{page.TEMPLATE}.md").render(context(page))
