"""[route] of reporter.toml: where `reporter route` runs its batches."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import Table


@dataclass(frozen=True)
class RouteSettings:
    """The [route] table."""

    dask: str | None = None
    """Address of a Dask scheduler (`tcp://host:8786`) whose workers route the pool; None: local processes."""


def parse_route(table: Table | None) -> RouteSettings | None:
    """Parse [route]; None when the workspace has none."""
    if table is None:
        return None
    dask = table.get("dask", str, None, check=lambda v: None if "://" in v or ":" in v else
                     "must be a scheduler address such as tcp://host:8786")
    return RouteSettings(dask=dask)
