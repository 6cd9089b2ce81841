"""published.json beside a release: its label and the date it was first written (docs/release-format.md).

Not one of the release's inputs or files. Kept apart from release.py so that reading a
workspace (the `label` key) and the release reader (artifacts.py) need not load the routing engine.
"""

from __future__ import annotations

from ..errors import InputError

PUBLISHED_FILE = "published.json"
"""Beside the release's files, not one of them: its label and the date it was first written
(docs/release-format.md). It is read with `reporter.routing.artifacts.load_published`."""
LABEL_CHARS = 100
"""The longest label: it is a name for a list and a page title, not a description."""


def check_label(label: str | None, where: str) -> str | None:
    """A release label as published.json stores it: None, or one printable line of at most LABEL_CHARS.

    Leading and trailing spaces are dropped (the site reads the label stripped);
    `where` names the flag or key it came from, so the message says what to fix.
    """
    if label is None:
        return None
    text = label.strip()
    if not text or len(text) > LABEL_CHARS or not text.isprintable():
        raise InputError(f"{where}: a release label must be one line of printable text of 1 to {LABEL_CHARS} "
                         f"characters (e.g. 2026-W27), not {label!r}")
    return text
