"""A paper kept by another topic of the workspace: each week's `also_in` (docs/digest.md, "Topics").

In a workspace with named topics, each week of each topic records, for its
papers that another topic kept in the same week, that topic's name and
title: `also_in: [{"id", "topics": [{"name", "title"}]}]`, by id, the
topics in the workspace's order (`default` first). It is recorded when the
week is decided, from the other topics' weeks published by then (and, in a
build, those it decides with it), so a week's page never changes when a
topic is added later. It is not part of the identity and decides nothing.
A workspace without topics writes no such field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ALSO_SHOWN = 20
"""The most topics one paper names (a hand-edited file cannot grow a page without bound)."""


def also_in(ids: Iterable[str], others: Sequence[tuple[str, str, frozenset[str]]]) -> list[dict[str, Any]]:
    """`also_in` for a week's papers `ids`: `others` is (name, title, the ids it kept that week) per other topic."""
    out = []
    for pid in sorted(set(ids)):
        topics = [{"name": n, "title": t} for n, t, kept in others if pid in kept]
        if topics:
            out.append({"id": pid, "topics": topics})
    return out


def kept_ids(document: Mapping[str, Any]) -> frozenset[str]:
    """The ids a decisions.json document kept."""
    return frozenset(str(d.get("id")) for d in document.get("decisions", ()) if d.get("decision") == "KEEP")


def read_also_in(value: Any, ids: Iterable[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The document's `also_in` read back: id -> ((name, title), ...); TypeError or ValueError when it is not as the
    digest writes it (a paper not of the week, listed twice, or too many topics)."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise TypeError("also_in is not a list")
    known, out = set(ids), {}
    for e in value:
        pid, topics = e["id"], e["topics"]
        if pid not in known or pid in out:
            raise ValueError(f"also_in names {str(pid)[:60]!r}, not a paper of the week (or twice)")
        if not isinstance(topics, list) or not 0 < len(topics) <= ALSO_SHOWN or not all(
                isinstance(t.get("name"), str) and isinstance(t.get("title"), str) for t in topics):
            raise TypeError(f"also_in: the topics of {pid} are not [{{name, title}}]")
        out[pid] = tuple((t["name"], t["title"]) for t in topics)
    return out
