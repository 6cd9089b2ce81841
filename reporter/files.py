"""The one file layer: atomic writes with explicit modes, the release index, locks.

Every file the tool writes goes through here. A write lands under a unique
temporary name in the target's folder and is renamed into place, so a
reader (or a run killed at any point) sees the old file or the new one,
never half of one, and two runs at once never share a temporary name.
Modes are explicit: files 0644 and folders 0755, less what the user's umask
takes away (a temporary file or folder from `tempfile` would be 0600/0700).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import InputError
from .hashing import dump_json

INDEX = "index.json"
TEMP_PREFIX = ".tmp-"
"""Every temporary file or folder this layer makes starts with this prefix."""


def _read_umask() -> int:
    # os.umask can only be read by setting it; set it straight back. Read once, at import,
    # because the umask is process-wide and a worker thread may be creating files meanwhile.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def file_mode() -> int:
    """0644 less the umask: the mode of every file the tool writes."""
    return 0o644 & ~_UMASK


def dir_mode() -> int:
    """0755 less the umask: the mode of every folder the tool makes."""
    return 0o755 & ~_UMASK


def make_dirs(path: Path) -> Path:
    """mkdir -p with the folder mode; returns the path."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=dir_mode())
    return path


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a unique temporary path beside `path`; on success it is renamed onto `path`.

    For writers that want a file name rather than bytes (Parquet, CSV). On any
    exception the temporary file is removed and `path` is left as it was.
    """
    path = Path(path)
    make_dirs(path.parent)
    fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name}.", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes) -> None:
    """Write bytes atomically (unique temporary name, then rename), mode 0644 less the umask."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, value: Any) -> None:
    """Write a value as readable canonical JSON (sorted keys, 2-space indent), atomically."""
    write_text(path, dump_json(value))


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new, uniquely named temporary folder inside parent, with the folder mode."""
    make_dirs(parent)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{name}-", dir=parent))
    os.chmod(tmp, dir_mode())
    return tmp


def remove_tree(path: Path) -> None:
    """Remove a temporary folder, ignoring one that is already gone."""
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def locked(folder: Path, name: str = ".lock") -> Iterator[None]:
    """Hold an exclusive lock on folder/name while the block runs; a second run waits its turn."""
    make_dirs(folder)
    with open(Path(folder) / name, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read_index(folder: Path) -> list[str]:
    """Release ids of a releases folder in the order first written (index.json); [] when absent."""
    path = Path(folder) / INDEX
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid UTF-8 JSON ({exc}); it should be a list of release ids") from None
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise InputError(f"{path}: should be a JSON list of release id strings")
    if len(set(data)) != len(data):
        raise InputError(f"{path}: lists a release id twice")
    return data


def append_index(folder: Path, release_id: str) -> None:
    """Add a release id at the end of index.json (once), under the folder's lock."""
    with locked(folder):
        ids = read_index(folder)
        if release_id not in ids:
            write_text(Path(folder) / INDEX, json.dumps([*ids, release_id], indent=2) + "\n")
