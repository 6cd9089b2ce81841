"""The disclosure written out: Markdown (to paste into a methods section), HTML, and JSON (`--json`).

Every string from a record (a model name, a prompt, a file name) is data: escaped in Markdown by the site's
one Markdown escaper (`reporter.site.env`), in HTML by markupsafe, and in JSON by JSON.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import escape

from ..files import make_dirs, replace_files
from ..hashing import dump_json
from ..site.env import md_code, md_code_block, md_escape

FILES = ("disclosure.md", "disclosure.html", "disclosure.json")
"""What `write` puts into the output folder."""

MARK = {"filled": "filled from the records", "partial": "partly filled: the author completes it",
        "author": "the author's to write"}


def markdown(doc: Mapping[str, Any]) -> str:
    """The disclosure as Markdown: one section per item, its sources and what the author must add."""
    out = [f"# Methods disclosure (PRISMA-trAIce, RAISE): release {md_escape(doc['release'])}", "",
           f"Drafted by `reporter disclose` from the run records of release {md_code(doc['release_id'])}. "
           f"Every sentence names the records it comes from; what no record says is marked as the author's.", ""]
    for item in doc["items"]:
        out += [f"## {item['id']}. {md_escape(item['title'])} ({MARK[item['status']]})", ""]
        if item["text"]:
            out += [md_escape(item["text"]), ""]
        for w in item["warnings"]:
            out += [f"> **Warning:** {md_escape(w)}", ""]
        for caption, text in ((b["caption"], b["text"]) for b in item["blocks"]):
            out += [md_escape(caption) + ":", "", md_code_block(text), ""]
        for m in item["missing"]:
            out += [f"- **Author:** {md_escape(m)}"]
        if item["missing"]:
            out.append("")
        if item["sources"]:
            out += ["Sources: " + ", ".join(md_code(s) for s in item["sources"]), ""]
    out += ["## Flow (R1)", "", "| step | decided by | works | detail |", "| --- | --- | ---: | --- |"]
    for b in doc["flow"]:
        cells = [md_escape(b["label"]), b["decided_by"], f"{b['count']:,}", md_escape(b["detail"])]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def html(doc: Mapping[str, Any], out_dir: Path, root: Path) -> str:
    """The disclosure as one HTML page; each source links to the record (relative to the output folder)."""
    def link(path: str) -> str:
        target = Path(path) if os.path.isabs(path) else Path(root) / path
        return (f'<a href="{escape(quote(os.path.relpath(target, out_dir)))}"><code>{escape(path)}</code></a>')
    title = f"Methods disclosure: release {doc['release']}"
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
             f"<title>{escape(title)}</title>",
             "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:1rem auto;padding:0 1rem}"
             "pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}.warn{color:#8a1c00}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .4rem}</style>",
             "</head><body>", f"<h1>{escape(title)}</h1>",
             f"<p>Drafted by <code>reporter disclose</code> from the run records of release "
             f"<code>{escape(doc['release_id'])}</code>. Every sentence names the records it comes from; what no "
             f"record says is marked as the author's.</p>"]
    for item in doc["items"]:
        parts.append(f'<section id="{escape(item["id"])}"><h2>{escape(item["id"])}. {escape(item["title"])} '
                     f'<small>({escape(MARK[item["status"]])})</small></h2>')
        if item["text"]:
            parts.append(f"<p>{escape(item['text'])}</p>")
        parts += [f'<p class="warn"><strong>Warning:</strong> {escape(w)}</p>' for w in item["warnings"]]
        parts += [f"<p>{escape(b['caption'])}:</p><pre>{escape(b['text'])}</pre>" for b in item["blocks"]]
        if item["missing"]:
            parts.append("<ul>" + "".join(f"<li><strong>Author:</strong> {escape(m)}</li>" for m in item["missing"])
                         + "</ul>")
        if item["sources"]:
            parts.append("<p>Sources: " + ", ".join(link(s) for s in item["sources"]) + "</p>")
        parts.append("</section>")
    parts.append("<h2>Flow (R1)</h2><table><tr><th>step</th><th>decided by</th><th>works</th><th>detail</th></tr>")
    parts += [f"<tr><td>{escape(b['label'])}</td><td>{escape(b['decided_by'])}</td><td>{b['count']:,}</td>"
              f"<td>{escape(b['detail'])}</td></tr>" for b in doc["flow"]]
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def write(doc: Mapping[str, Any], out_dir: Path, root: Path) -> list[Path]:
    """Write the three files into `out_dir` together (all or none: `files.replace_files`); their paths."""
    out_dir = make_dirs(Path(out_dir))
    data = {"disclosure.md": markdown(doc), "disclosure.html": html(doc, out_dir, root),
            "disclosure.json": dump_json(doc)}
    replace_files({out_dir / name: data[name].encode("utf-8") for name in FILES}, out_dir)
    return [out_dir / name for name in FILES]
