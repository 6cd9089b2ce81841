"""Folder locks and the sweep of dead runs' debris: the locking half of the file layer.

`locked` holds an exclusive `flock` on a folder while a block runs, so runs
(and threads) that must take turns do; no lock file appears in the folder.
`remove_debris` removes the `.tmp-*` entries that `reporter.files` made for
runs now dead: each run holds a `flock` on every temporary it makes for as
long as the entry lives (the kernel drops it when the run ends, `kill -9`
included), so an entry whose lock can be taken is a dead run's, never a
live one's.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from .files import TEMP_PREFIX, make_dirs, same_entry


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on a folder while the block runs; another run (or thread) waits its turn.

    The lock is a flock on the folder itself, so no lock file appears in it.
    It is re-entrant within a thread: a block that holds a folder's lock may
    call code that takes it again (a build holds the releases folder while it
    publishes into it).
    """
    folder = make_dirs(Path(folder))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    _LOCK_FDS.add(fd)
    try:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        with _TURNS_LOCK:
            turn = _TURNS.setdefault(key, threading.RLock())
        with turn:
            depth = _DEPTH.get(key, 0)
            if depth == 0:
                fcntl.flock(fd, fcntl.LOCK_EX)
            _DEPTH[key] = depth + 1
            try:
                yield
            finally:
                _DEPTH[key] -= 1
                if _DEPTH[key] == 0:
                    del _DEPTH[key]
                    fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        _LOCK_FDS.discard(fd)
        os.close(fd)


_TURNS: dict[tuple[int, int], threading.RLock] = {}
_DEPTH: dict[tuple[int, int], int] = {}
"""Per locked folder: the threads' turn and how deep this process holds its flock."""
_LOCK_FDS: set[int] = set()
"""Descriptors `locked` holds open."""
_TURNS_LOCK = threading.Lock()


def remove_debris(folder: Path, *, recursive: bool = True, targets: Iterable[str] | None = None) -> list[Path]:
    """Remove the temporary files and folders (`.tmp-*`) that dead runs left in folder; returns them.

    An entry is removed only when its lock can be taken, that is when the run
    that made it has ended: a live run's temporaries are never touched, so
    this is safe at any time, beside any number of running commands. With
    `recursive`, sub-folders are swept too (temporary folders are removed whole,
    not entered); `targets` limits the sweep to temporaries of those file names
    (for a folder the tool shares with the user's own files).
    """
    folder = Path(folder)
    removed: list[Path] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return removed
    prefixes = None if targets is None else tuple(f"{TEMP_PREFIX}{t}." for t in targets)
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(TEMP_PREFIX):
            if (prefixes is None or entry.name.startswith(prefixes)) and _remove_if_dead(path, entry):
                removed.append(path)
        elif recursive and entry.is_dir(follow_symlinks=False):
            removed += remove_debris(path, recursive=True, targets=targets)
    return removed


def _remove_if_dead(path: Path, entry: os.DirEntry) -> bool:
    is_dir = entry.is_dir(follow_symlinks=False)
    if not is_dir and not entry.is_file(follow_symlinks=False):
        return False  # a link, a pipe: never one of ours
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if is_dir else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False  # gone already, or not ours to open
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live run holds it (or this file system has no flock): leave it
        if not same_entry(path, fd):
            return False  # renamed into place or replaced meanwhile
        if is_dir:
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


def _drop_inherited_locks() -> None:
    """In a forked child (a routing worker): close the copies of the parent's folder-lock descriptors.

    A flock belongs to the open file, which a fork shares: a worker that kept
    the copies would hold the parent's locks after the parent was killed. The
    parent's own descriptors keep its locks while it lives (the file layer
    drops its temporaries' copies the same way).
    """
    for fd in list(_LOCK_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _LOCK_FDS.clear()
    _DEPTH.clear()


os.register_at_fork(after_in_child=_drop_inherited_locks)
