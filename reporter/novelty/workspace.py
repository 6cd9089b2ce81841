"""The novelty check of a workspace: its `[novelty] candidates` against its citation `graph`.

What `reporter build` asks of novelty: the graph loaded once (the digest's
KEEPs are checked against it too), the candidates checked into results
lines, and where those lines are written (`state/novelty.jsonl`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .candidate import read_candidate_batch
from .graph import Graph, load_graph
from .results import result_row
from .verdict import check_candidate

if TYPE_CHECKING:
    from ..config import Workspace

NOVELTY_RESULTS = Path("state") / "novelty.jsonl"
"""Where the build writes the novelty results, relative to the workspace folder. Not part of a release:
rewritten at every build from the graph and the candidates (docs/novelty.md)."""


def check_novelty(ws: Workspace, environ: Mapping[str, str] | None = None, *,
                  graph: Graph | None = None) -> list[dict[str, Any]] | None:
    """The results lines for the workspace's `[novelty] candidates` against its `graph`, or None without candidates.

    Every candidate is checked against the workspace's graph (a candidate's own
    `graph.events_jsonl` is not used here; `graph` is that graph already
    loaded, else it is read), with the resolvers `[novelty]` configures (none
    by default: no network call); an API key named there is read from
    `environ` (none when not given).
    """
    settings = ws.novelty
    if settings.candidates is None:
        return None
    if ws.graph is None:
        raise InputError(f"{ws.file}: [novelty] candidates is set but the workspace names no `graph` "
                         f"to check them against")
    resolvers = settings.make_resolvers(environ or {})
    items = read_candidate_batch(settings.candidates)
    graph = graph if graph is not None else load_graph(ws.graph)
    return [result_row(line, item, graph, graph_name(ws), check_candidate(item.candidate, graph, resolvers))
            for line, item in items]


def graph_name(ws: Workspace) -> str:
    """The graph as results name it: relative to the workspace, so the files do not depend on the checkout."""
    assert ws.graph is not None
    return Path(os.path.relpath(ws.graph, ws.root) if ws.root in ws.graph.parents else str(ws.graph)).as_posix()


def load_workspace_graph(ws: Workspace) -> Graph | None:
    """The workspace's citation graph when a check needs it ([novelty] candidates, or [digest]), else None."""
    if ws.graph is None or (ws.novelty.candidates is None and ws.digest is None):
        return None
    return load_graph(ws.graph)
