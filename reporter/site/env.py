"""The two template environments, made once: HTML (autoescaped) and Markdown (its own escaping).

HTML: `autoescape=True` for every template whatever its name, and
`StrictUndefined`, so a misspelt field is an error rather than an empty
cell. Markdown: every `{{ ... }}` goes through `md_escape` (the environment's
`finalize`), so data can neither open markup (`**`, `[`, `<script>`) nor
break a table (`|`, line breaks); a value that is already Markdown is an
`Md` string and passes untouched.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import fields
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from ..errors import InternalError

TEMPLATES = resources.files("reporter") / "templates"
"""The templates: package data of `reporter`, found in an installed wheel as in a checkout."""
# ASCII punctuation that CommonMark or GFM could read as markup inside a line
# (data never starts a line in our templates, so list and heading markers are safe).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$#])")
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\u0085\u2028\u2029]+")
# Control bytes, and the invisible bidi embedding/override/isolate controls, which in a
# Markdown line (unlike in HTML, where data sits in <bdi>) could reorder the rest of the row.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_URL_SAFE = re.compile(r"[^A-Za-z0-9._~/#%-]")


class Md(str):
    """A string that is already Markdown (escaped or built by a filter): not escaped again."""


def md_escape(value: Any) -> str:
    """Text as literal Markdown: special characters backslash-escaped, one line, no control bytes."""
    if value is None:
        return ""
    if isinstance(value, Md):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        return str(value)
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", value))
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_url(value: str) -> Md:
    """A link destination for Markdown: anything outside a safe set percent-encoded."""
    return Md(_URL_SAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), value))


def md_mark(value: str) -> Md:
    """Text shown bold (the matched span): escaped, with its outer spaces kept outside the markers."""
    text = md_escape(value)
    core = text.strip()
    if not core:
        return Md(text)
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return Md(f"{lead}**{core}**{trail}")


def num(value: int | None) -> str:
    """1234567 -> 1,234,567; None -> —."""
    return "—" if value is None else f"{value:,}"


def _static(name: str) -> str:
    path = TEMPLATES / "static" / name
    if not path.is_file():
        raise InternalError(f"{path}: the vendored file is missing from the package's templates")
    return path.read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def _common(env: jinja2.Environment) -> jinja2.Environment:
    env.filters["num"] = num
    return env


@lru_cache(maxsize=1)
def html_env() -> jinja2.Environment:
    """The HTML environment: autoescaped, strict, with the vendored style and script as globals."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("reporter", "templates/html"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    style, script = _static("style.css"), _static("sort.js")
    env.globals["static_style"] = Markup(style)
    env.globals["static_script"] = Markup(script)
    # The page runs only its own script and style: even an escaping bug could not run injected code.
    env.globals["csp"] = ("default-src 'none'; img-src data:; base-uri 'none'; form-action 'none'; "
                          f"style-src {_csp_hash(style)}; script-src {_csp_hash(script)}")
    return _common(env)


@lru_cache(maxsize=1)
def md_env() -> jinja2.Environment:
    """The Markdown environment: every expression escaped for Markdown unless it is `Md`."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("reporter", "templates/md"), autoescape=False,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, finalize=md_escape)
    env.filters["url"] = md_url
    env.filters["mark"] = md_mark
    # A macro's output is Markdown whose data was escaped inside the macro.
    env.filters["md"] = Md
    return _common(env)


def context(page: Any) -> dict[str, Any]:
    """A page model's fields as the template's variables (nothing else)."""
    return {f.name: getattr(page, f.name) for f in fields(page)}


def render_html(page: Any) -> str:
    """A page model as HTML."""
    return html_env().get_template(f"{page.TEMPLATE}.html").render(context(page))


def render_md(page: Any) -> str:
    """A page model as its Markdown twin."""
    return md_env().get_template(f"{page.TEMPLATE}.md").render(context(page))
