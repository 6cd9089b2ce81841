"""published.json beside a release: its name and the date it was first written (docs/release-format.md).

A release's name (`2026-W27`) is what `--label` and reporter.toml's `label` give, and
published.json stores it under `label`: those words are the contract. In the code it
is the release name, so that "label" means one thing there, a review label
(labels.csv: include or exclude).

Not one of the release's inputs or files. Kept apart from release.py so that reading a
workspace (the `label` key) and the release reader (artifacts.py) need not load the routing engine.
"""

from __future__ import annotations

from ..errors import InputError

PUBLISHED_FILE = "published.json"
"""Beside the release's files, not one of them: its name and the date it was first written
(docs/release-format.md). It is read with `reporter.routing.artifacts.load_published`."""
NAME_CHARS = 100
"""The longest release name: it is a name for a list and a page title, not a description."""


def check_release_name(name: str | None, where: str) -> str | None:
    """A release name as published.json stores it: None, or one printable line of at most NAME_CHARS.

    Leading and trailing spaces are dropped (the reader strips them too);
    `where` names the flag or key it came from (`--label`), so the message says what to fix.
    """
    if name is None:
        return None
    text = name.strip()
    if not text or len(text) > NAME_CHARS or not text.isprintable():
        raise InputError(f"{where}: a release label must be one line of printable text of 1 to {NAME_CHARS} "
                         f"characters (e.g. 2026-W27), not {name!r}")
    return text
