"""The disclosure written out: Markdown (to paste into a methods section), HTML, and JSON (`--json`).

The Markdown and the HTML are the site's page model of a disclosure (`reporter.site.disclosure_page`) rendered by
the site's templates, the one writer of both, as the archived page of a disclosure kept at a hand-off is: every
string from a record (a model name, a prompt, a file name) is escaped there, in Markdown by the site's one
Markdown escaper, in HTML by Jinja's autoescape. Each source links to the record itself, relative to the output
folder.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..files import make_dirs, replace_files
from ..hashing import dump_json
from ..site.disclosure_page import build_disclosure_page
from ..site.env import render_html, render_md
from ..site.links import Href
from ..site.models import PageMeta

FILES = ("disclosure.md", "disclosure.html", "disclosure.json")
"""What `write` puts into the output folder."""

DRAFT_NOTE = ("Drafted now by reporter disclose from the records as they stand; reporter export keeps the disclosure "
              "with each hand-off, and the site publishes what it kept.")
"""The foot's line of a draft."""


def page(doc: Mapping[str, Any], out_dir: Path, root: Path):
    """The draft's page model: no breadcrumbs (it is not in the site), each source linked relative to `out_dir`."""
    def link(path: str) -> Href:
        target = Path(path) if os.path.isabs(path) else Path(root) / path
        rel = quote(Path(os.path.relpath(target, out_dir)).as_posix())
        return Href(html=rel, md=rel)
    title = f"Methods disclosure (PRISMA-trAIce, RAISE): release {doc['release']}"
    name = posixpath.splitext(FILES[1])[0]
    meta = PageMeta(title=title, path=name, crumbs=(), twin=Href(html=FILES[0], md=FILES[1]), archived=False,
                    glossary=None, rebuilt_note=DRAFT_NOTE)
    return build_disclosure_page(doc, meta, source_href=link)


def write(doc: Mapping[str, Any], out_dir: Path, root: Path) -> list[Path]:
    """Write the three files into `out_dir` together (all or none: `files.replace_files`); their paths."""
    out_dir = make_dirs(Path(out_dir))
    model = page(doc, out_dir, root)
    data = {FILES[0]: render_md(model), FILES[1]: render_html(model), FILES[2]: dump_json(doc)}
    replace_files({out_dir / name: data[name].encode("utf-8") for name in FILES}, out_dir)
    return [out_dir / name for name in FILES]
