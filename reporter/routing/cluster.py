"""Routing on a Dask distributed cluster: the same pieces and the same `route_piece`, on its workers.

The client (the machine running `reporter route --dask ADDRESS`) cuts the
pool into pieces, sends the run's Setup to every worker once, and submits
one task per piece; each worker reads its piece's row groups from the pool
at the same path (shared or mounted object storage) and routes it. Results
come back to the client in pool order, where the release is written and the
counts summed exactly as for a local run, so the bytes are the same. The
pool's path is made absolute first (`stage_release`: a worker's folder is
not the client's), and a file some worker cannot open at that path is
refused before anything is sent: shipping its rows from the client instead
cost about 40 MB a piece, silently. See docs/scale.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pyarrow as pa

from ..errors import InputError
from ..pool.reader import TableSource
from .parquet_parts import encode_groups
from .pieces import PieceResult, Setup, plan_pieces, route_piece
from .workers import in_order

CONNECT_TIMEOUT = "30s"


def run_dask(address: str, setup: Setup, source: TableSource, columns: list[str],
             bind: Callable[[Callable[[pa.Table], Future] | None], None] | None = None) -> Iterator[PieceResult]:
    """Route the pool's pieces on the Dask cluster at `address`, yielding the results in pool order; `bind`
    as for workers.run_local (routing-table row groups encoded on the cluster)."""
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
        _refuse_unreadable(address, client, [str(f) for f in source.files])
        threads = sum(client.nthreads().values()) or 1
        shared = client.scatter(setup, broadcast=True)
        executor = client.get_executor(pure=False)
        pieces = plan_pieces(source, columns, setup.batch_rows)
        if bind is not None:
            bind(lambda table: executor.submit(encode_groups, table, setup.group_rows))
        try:
            yield from in_order(executor, route_piece, pieces, 2 * threads, shared)
        finally:
            if bind is not None:
                bind(None)  # before the client closes: its futures would be cancelled
    finally:
        client.close()


def _refuse_unreadable(address: str, client, files: list[str]) -> None:
    """An InputError naming the first pool file some worker cannot open at the client's path, and which workers,
    before anything is sent."""
    answers = client.run(_can_read, files)
    for f in files:
        blind = sorted(worker for worker, ok in answers.items() if f not in ok)
        if blind:
            missing = sum(1 for g in files if any(g not in ok for ok in answers.values()))
            raise InputError(f"--dask {address}: {f}: {len(blind)} of {len(answers)} Dask workers cannot open it "
                             f"at this path ({', '.join(blind[:3])}{', ...' if len(blind) > 3 else ''}; "
                             f"{missing:,} of the pool's {len(files):,} files are unreadable there); put the pool "
                             f"on storage every worker mounts at the same absolute path, or route here without "
                             f"--dask. Nothing was sent")


def _can_read(files: list[str]) -> list[str]:
    return [f for f in files if os.access(f, os.R_OK)]
