"""Who routes the pieces here: this process, or a pool of worker processes it forks, and the settings of a
process that routes and ends.

`run_local` routes the pieces (pieces.py) in this process or in N forked
worker processes and yields the results in pool order (`in_order`, which a
Dask client uses too: cluster.py). `keep_freed_memory` and `no_huge_pages`
are for the `reporter route` process alone (docs/scale.md, "One core").
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor

import pyarrow as pa

from .normalise import warm_tables
from .parquet_parts import encode_groups
from .pieces import Piece, PieceResult, Setup, route_piece


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def keep_freed_memory() -> bool:
    """Let this process (and the workers it forks) keep freed memory for reuse instead of unmapping it.

    Routing allocates and frees arrays of a batch's size every batch. With
    glibc's defaults many of them go back to the kernel and come again as
    fresh pages: about 400,000 page faults on the 1.07M-row benchmark pool,
    against 130,000 with these settings (system time 2.0-3.3 s against
    1.2-1.9 s in the runs measured; docs/scale.md, "One core"). Only for a process that routes and
    ends (the `reporter route` command). False where there is no glibc
    (tests/test_routing_workers.py checks the effect with mallinfo2).
    """
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
    return all([mallopt(m_mmap_threshold, 32 << 20), mallopt(m_trim_threshold, 1 << 30),
                mallopt(m_top_pad, 64 << 20)])


def no_huge_pages() -> bool:
    """Ask the kernel for no transparent huge pages in this process and the workers it forks.

    numpy and mimalloc (Arrow's allocator) mark their large blocks for huge
    pages. Where the kernel grants those on request (THP "madvise", a common
    default, with defrag "madvise"), each first touch of such a block may
    compact memory to find, then zero, 2 MiB at once, as the faulting process:
    on the real benchmark pool 1.2-1.4 CPU-s of system time with two workers,
    0.6 without, and user time the same (docs/scale.md, "One core"). Only for
    a process that routes and ends (the `reporter route` command). False where
    the kernel has no such switch (not Linux, or older than 3.15).
    """
    import ctypes
    pr_set_thp_disable = 41
    try:
        return ctypes.CDLL(None).prctl(pr_set_thp_disable, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def run_local(setup: Setup, pieces: Iterable[Piece], workers: int,
              bind: Callable[[Callable[[pa.Table], Future] | None], None] | None = None) -> Iterator[PieceResult]:
    """Route the pieces here (1 worker) or in `workers` worker processes, yielding results in pool order.

    `bind` is handed a way to encode a routing-table row group in a worker
    (`parquet_parts.encode_groups`, as a future) while the workers run, and
    None once they are gone (RoutingWriter.use)."""
    if workers <= 1:
        for piece in pieces:
            yield route_piece(setup, piece)
        return
    import multiprocessing as mp
    # Forked workers start with the engine imported and normalisation's tables built (warm_tables): no
    # start-up CPU of their own. The pool forks every worker at the first submit, before the caller
    # starts any thread of its own.
    ctx = mp.get_context("fork")
    warm_tables()
    # Objects the workers inherit are moved out of the collector's reach first: a collection in a
    # worker would otherwise write to every inherited object and copy the parent's whole heap.
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                                 initargs=(setup,)) as pool:
            if bind is not None:
                bind(lambda table: pool.submit(_encode_in_worker, table))
            try:
                yield from in_order(pool, _route_in_worker, pieces, 2 * workers)
            finally:
                if bind is not None:
                    bind(None)
    finally:
        gc.unfreeze()


_SETUP: Setup | None = None


def _init_worker(setup: Setup) -> None:
    global _SETUP
    _SETUP = setup
    parent = os.getppid()

    def watch() -> None:
        # A worker whose parent was killed (kill -9 leaves no one to close its queue) ends itself.
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _route_in_worker(piece: Piece) -> PieceResult:
    return route_piece(_SETUP, piece)


def _encode_in_worker(table: pa.Table) -> bytes:
    return encode_groups(table, _SETUP.group_rows)


def in_order(executor: Executor, fn: Callable, pieces: Iterable[Piece], inflight: int,
             *args) -> Iterator[PieceResult]:
    """Submit fn(*args, piece) for each piece, at most `inflight` at once, and yield the results in order."""
    queue: deque[Future] = deque()
    try:
        for piece in pieces:
            queue.append(executor.submit(fn, *args, piece))
            while len(queue) >= inflight:
                yield queue.popleft().result()
        while queue:
            yield queue.popleft().result()
    finally:
        for fut in queue:
            fut.cancel()
