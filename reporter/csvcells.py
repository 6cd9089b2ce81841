"""CSV cells and bytes: deterministic, and data that a spreadsheet never runs.

The one CSV writer: the site's tables (`reporter/site/`) and the screen's
hand-off (`reporter export`) both write through it. A leaf module (it
imports nothing of ours), so a stage never imports the site to write a CSV.

A cell from the data (a title, a rule id, a work id, a voter's reason) that
starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets an
apostrophe in front: a spreadsheet would read it as a formula (CSV
injection), and with the apostrophe it shows the text. Numbers are written
as numbers. Lines end in CRLF (RFC 4180), the encoding is UTF-8 without a
byte order mark, fields are quoted only where they must be. A lone
surrogate, which no UTF-8 file can hold, is written as its escape (`\\ud800`).
A sheet read back (a certification sheet a person labelled) takes the
apostrophe off again with `uncell`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet may read as the start of a formula."""


def cell(value: str | int | float | None) -> str | int | float:
    """One CSV cell: None empty, a number as it is, text with an apostrophe in front when it could be a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def uncell(text: str) -> str:
    """A text cell as `cell` was given it: the apostrophe `cell` put in front of a formula-like text taken off."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def utf8_text(text: str) -> str:
    """`text` as any UTF-8 file can hold it: a lone surrogate written as its escape (`\\ud800`), the rest as is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[str | int | float | None]]) -> bytes:
    """A header and rows as CSV bytes: the same rows give the same bytes."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([cell(h) for h in header])
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue().encode("utf-8", "backslashreplace")
