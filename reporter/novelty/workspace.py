"""The novelty check of a workspace: its `[novelty] candidates` against its citation `graph`.

What `reporter build` asks of novelty: the graph loaded once (the digest's
KEEPs are checked against it too), the candidates checked into results
lines, and where those lines are written (`state/novelty.jsonl`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .candidate import read_candidate_batch
from .config import NoveltySettings
from .graph import Graph, load_graph
from .results import result_row
from .verdict import check_candidate

NOVELTY_RESULTS = Path("state") / "novelty.jsonl"
"""Where the build writes the novelty results, relative to the workspace folder. Not part of a release:
rewritten at every build from the graph and the candidates (docs/novelty.md)."""


def check_novelty(settings: NoveltySettings, graph_path: Path | None, *, root: Path, file: Path,
                  environ: Mapping[str, str] | None = None, graph: Graph | None = None) -> list[dict[str, Any]] | None:
    """The results lines for `[novelty] candidates` (`settings`) against the workspace's graph, or None without
    candidates.

    Every candidate is checked against the workspace's graph, `graph_path`
    (a candidate's own `graph.events_jsonl` is not used here; `graph` is that
    graph already loaded, else it is read), with the resolvers `[novelty]`
    configures (none by default: no network call); an API key named there is
    read from `environ` (none when not given). `root` is the workspace folder
    (results name the graph relative to it) and `file` its reporter.toml (named
    in the message when candidates are set and no graph is).
    """
    if settings.candidates is None:
        return None
    if graph_path is None:
        raise InputError(f"{file}: [novelty] candidates is set but the workspace names no `graph` "
                         f"to check them against")
    resolvers = settings.make_resolvers(environ or {})
    items = read_candidate_batch(settings.candidates)
    graph = graph if graph is not None else load_graph(graph_path)
    name = graph_name(graph_path, root)
    return [result_row(line, item, graph, name, check_candidate(item.candidate, graph, resolvers))
            for line, item in items]


def graph_name(graph_path: Path, root: Path) -> str:
    """The graph as results name it: relative to the workspace folder `root`, so the files do not depend on the
    checkout."""
    return Path(os.path.relpath(graph_path, root) if root in graph_path.parents else str(graph_path)).as_posix()


def load_workspace_graph(graph_path: Path | None, needed: bool) -> Graph | None:
    """The workspace's citation graph when a check `needed` it ([novelty] candidates, or [digest]), else None."""
    if graph_path is None or not needed:
        return None
    return load_graph(graph_path)
