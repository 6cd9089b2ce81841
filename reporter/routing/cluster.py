"""Routing on a Dask distributed cluster: the same pieces and the same `route_piece`, on its workers.

The client (the machine running `reporter route --dask ADDRESS`) cuts the
pool into pieces, sends the run's Setup to every worker once, and submits
one task per piece; each worker reads its piece's row groups from the pool
at the same path (shared or mounted object storage) and routes it. Results
come back to the client in pool order, where the release is written and the
counts summed exactly as for a local run, so the bytes are the same. A file
some worker cannot read is read by the client and its rows sent along.
See docs/scale.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..errors import InputError
from ..pool.reader import TableSource
from .pieces import PieceResult, Setup, plan_pieces, route_piece
from .workers import in_order

CONNECT_TIMEOUT = "30s"


def run_dask(address: str, setup: Setup, source: TableSource, columns: list[str]) -> Iterator[PieceResult]:
    """Route the pool's pieces on the Dask cluster at `address`, yielding the results in pool order."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--dask needs Dask's distributed scheduler client: install the dask extra "
                         "(pip install 'reporter[dask]', which brings dask and distributed)") from None
    if source.kind not in ("parquet", "parquet-folder"):
        raise InputError(f"{source.path}: routing on a Dask cluster reads the pool's Parquet row groups on the "
                         "workers; convert the pool to Parquet (a file or a folder of files) first")
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--dask {address}: could not reach the Dask scheduler ({exc}); start it with "
                         "`dask scheduler` and point --dask (or [route] dask in reporter.toml) at it") from None
    try:
        readable = _readable_everywhere(client, [str(f) for f in source.files])
        threads = sum(client.nthreads().values()) or 1
        shared = client.scatter(setup, broadcast=True)
        executor = client.get_executor(pure=False)
        pieces = plan_pieces(source, columns, setup.batch_rows, readable=lambda f: f in readable)
        yield from in_order(executor, route_piece, pieces, 2 * threads, shared)
    finally:
        client.close()


def _readable_everywhere(client, files: list[str]) -> set[str]:
    """The files every worker can open at the client's path."""
    answers = client.run(_can_read, files)
    out = set(files)
    for ok in answers.values():
        out &= set(ok)
    return out


def _can_read(files: list[str]) -> list[str]:
    return [f for f in files if os.access(f, os.R_OK)]
