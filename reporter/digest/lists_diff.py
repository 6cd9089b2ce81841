"""The watchlist and criteria a week was decided with, and what changed since the week before (issue 33, item 5).

A reader applies a proposal (`reporter feedback --proposals`) by editing the
watchlist or the criteria; the next week's page shows what they changed.
Each week decided with rules `digest.4` from now on records the text of both
files (`lists`: per file its name and text, the text null when it is longer
than LIST_TEXT_CHARS or not UTF-8), and the lines added and removed since the
newest of its prior weeks (`lists_diff`), computed when the week is decided
from that week's `lists`: the week's page reads its own folder only, so a
later re-publish of the week before never changes an archived page.

`lists_diff` is null without a prior week (the first week, `--no-prior`, a
given prior). Otherwise `{"since": WEEK, "watchlist": {...}, "criteria":
{...}}`, each file with `file` (its name now), `changed` (its sha256 or name
differs from the prior week's), `shown` (both texts were recorded, so the
lines below are the whole change) and `added` / `removed`: `{"line": N,
"text": T}`, N the line in the new file (added) or the old one (removed).
Blank lines are not compared. A week before this was recorded has no `lists`:
the next week says the file changed (by its sha256) without its lines.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_capped

LIST_TEXT_CHARS = 100_000
"""The longest watchlist or criteria text a week records (a longer one is recorded as changed, without lines)."""
LIST_READ_CAP = 4 * LIST_TEXT_CHARS
"""Bytes read to record a text (UTF-8 holds a character in at most 4)."""
LISTS = ("watchlist", "criteria")


def list_texts(files: Mapping[str, Path]) -> dict[str, Any]:
    """decisions.json's `lists`: per file (`watchlist`, `criteria`) its name and its text (None when too long or
    not UTF-8)."""
    out: dict[str, Any] = {}
    for role in LISTS:
        path = Path(files[role])
        text: str | None
        try:
            data = read_capped(path, LIST_READ_CAP, f"the {role}")
            text = data.decode("utf-8")
        except (InputError, UnicodeDecodeError):  # too long, or not UTF-8: recorded as changed, without lines
            text = None
        if text is not None and len(text) > LIST_TEXT_CHARS:
            text = None
        out[role] = {"file": path.name, "text": text}
    return out


def lists_diff(lists: Mapping[str, Any], inputs: Mapping[str, Any], since: str | None,
               then_lists: Any, then_inputs: Any) -> dict[str, Any] | None:
    """decisions.json's `lists_diff`: what changed in the watchlist and the criteria since the week `since`
    (its document's `lists` and `inputs`); None without such a week."""
    if since is None:
        return None
    then_lists = then_lists if isinstance(then_lists, dict) else {}
    then_inputs = then_inputs if isinstance(then_inputs, dict) else {}
    out: dict[str, Any] = {"since": since}
    for role in LISTS:
        now, then = lists[role], then_lists.get(role)
        was = then_inputs.get(role) if isinstance(then_inputs.get(role), dict) else {}
        changed = was.get("sha256") != inputs[role]["sha256"] or was.get("file") != inputs[role]["file"]
        old = then.get("text") if isinstance(then, dict) else None
        shown = isinstance(old, str) and now["text"] is not None
        added, removed = _lines(old, now["text"]) if shown and changed else ([], [])
        out[role] = {"file": now["file"], "changed": changed, "shown": shown, "added": added, "removed": removed}
    return out


def _lines(old: str, new: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The non-blank lines removed from `old` and added in `new` (difflib's matching blocks: deterministic)."""
    a = [(i, t) for i, t in enumerate(old.splitlines(), 1) if t.strip()]
    b = [(i, t) for i, t in enumerate(new.splitlines(), 1) if t.strip()]
    matcher = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b], autojunk=False)
    added, removed = [], []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("replace", "delete"):
            removed += [{"line": n, "text": t} for n, t in a[i1:i2]]
        if op in ("replace", "insert"):
            added += [{"line": n, "text": t} for n, t in b[j1:j2]]
    return added, removed


@dataclass(frozen=True)
class FileChange:
    """One file's change since the week before."""

    role: str
    """`watchlist` or `criteria`."""
    file: str
    changed: bool
    shown: bool
    """Both texts were recorded: `added` and `removed` are the whole change."""
    added: tuple[tuple[int, str], ...]
    removed: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class ListsDiff:
    """`lists_diff` read back."""

    since: str
    files: tuple[FileChange, ...]


def read_lists_diff(value: Any) -> ListsDiff | None:
    """The document's `lists_diff`, typed (TypeError or ValueError when it is not as the digest writes it)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("since"), str):
        raise TypeError("lists_diff is not an object with since")
    files = []
    for role in LISTS:
        f = value[role]
        if not isinstance(f["file"], str) or not all(isinstance(f[k], bool) for k in ("changed", "shown")):
            raise TypeError(f"lists_diff: {role} is not as the digest writes it")
        lines = {k: tuple(_line(x) for x in f[k]) for k in ("added", "removed")}
        files.append(FileChange(role, f["file"], f["changed"], f["shown"], lines["added"], lines["removed"]))
    return ListsDiff(value["since"], tuple(files))


def _line(x: Any) -> tuple[int, str]:
    n, t = x["line"], x["text"]
    if isinstance(n, bool) or not isinstance(n, int) or not isinstance(t, str):
        raise TypeError("lists_diff: a line is not {line: number, text}")
    return n, t
