"""The one file layer: atomic writes with explicit modes, temporaries locked by their run, capped reads.

Every file the tool writes goes through here. A write lands under a unique
temporary name in the target's folder and is renamed into place, so a
reader (or a run killed at any point) sees the old file or the new one,
never half of one, and two runs at once never share a temporary name.
Modes are explicit: files 0644 and folders 0755, less what the user's umask
takes away (a temporary file or folder from `tempfile` would be 0600/0700).

A run holds an exclusive `flock` on every temporary file or folder it makes,
for as long as that entry lives; the kernel drops the lock when the run
ends, however it ends (`kill -9` included). `reporter.locks.remove_debris`
removes the `.tmp-*` entries whose lock it can take, which are exactly those
of dead runs: never a live run's. A run that finds its new entry removed
before it took the lock (a sweep got there first) makes another. Folder locks and the sweep: `reporter/locks.py`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .errors import InputError
from .hashing import dump_json
from .text import json_loads

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
    try:
        path.mkdir(parents=True, exist_ok=True, mode=dir_mode())
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), path)
        raise InputError(f"{path}: cannot make this folder: {blocker} is a file; "
                         f"name a folder (or move the file aside)") from None
    return path


def check_output_file(path: Path, flag: str) -> Path:
    """The file a command was told to write (`--out`), refused unless a regular file may be put there.

    An `InputError` (exit 2) naming the flag and the path when the path is a
    folder, a symbolic link (even one to a regular file: the link would be
    replaced, not its target), a FIFO, a device or a socket (never replaced by
    a regular file), or when its folder does not exist or is not a folder
    (never made silently: a typo would scatter files anywhere). A regular
    file there is replaced atomically, as every write is.
    """
    path = Path(path)
    what = f"{flag} {path}"
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # the folder is checked below
    except OSError as exc:
        raise InputError(f"{what}: cannot be checked ({os.strerror(exc.errno or 0).lower()}); "
                         f"name a file in a folder that exists") from None
    except ValueError:  # a NUL in the path (never from a command line, which cannot hold one)
        raise InputError(f"{flag} {str(path)!r}: a path cannot hold a NUL character; name a file") from None
    if st is not None:
        kind = _KINDS.get(stat.S_IFMT(st.st_mode))
        if kind == "a folder":
            raise InputError(f"{what}: is a folder; name a file inside it (e.g. {path / 'out'}{path.suffix})")
        if kind is not None:
            raise InputError(f"{what}: is {kind}, which would be replaced by a regular file; "
                             f"name a regular file (or a new one)")
        return path
    parent = path.parent
    if not parent.is_dir():
        why = "is not a folder" if os.path.lexists(parent) else "does not exist"
        raise InputError(f"{what}: the folder {parent} {why}; make it first (it is never made for you), "
                         f"or name a file in a folder that exists")
    return path


_KINDS = {stat.S_IFDIR: "a folder", stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO (named pipe)",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
"""What an output path may be that is not a regular file (none of them is ever replaced)."""


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a unique temporary path beside `path`; on success it is renamed onto `path`.

    For writers that want a file name rather than bytes (Parquet, CSV). On any
    exception the temporary file is removed and `path` is left as it was. The
    temporary file is locked by this run until it is renamed or removed.
    """
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def _temp_beside(path: Path) -> tuple[int, Path]:
    """A new temporary file beside `path` (its folder made), locked by this run: its descriptor and path."""
    make_dirs(path.parent)
    while True:
        fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name}.", dir=path.parent)
        if _claim(Path(name), fd):
            return fd, Path(name)
        os.close(fd)


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


def write_new(path: Path, data: bytes) -> bool:
    """Write bytes to `path` only if nothing is there, atomically: False (nothing written) when it exists.

    The bytes go to a locked temporary file beside `path` (as `atomic_path`'s), which is then hard-linked to
    `path` (a link never replaces an entry) and removed: a reader, or a run killed at any point, sees no file
    or the whole one, and a killed run's temporary is debris that `remove_debris` takes.
    """
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        with open(fd, "wb", closefd=False) as f:
            f.write(data)
        os.chmod(tmp, file_mode())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new, uniquely named temporary folder inside parent, with the folder mode, locked by this run.

    The lock lasts until `remove_tree` (or the end of the run); a folder renamed
    into place keeps it until then, which is harmless: only `.tmp-*` names are swept.
    """
    make_dirs(parent)
    while True:
        tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{name}-", dir=parent))
        try:
            fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            # Another run's sweep took the new folder before it could be opened, let alone
            # locked (mkdtemp and open are two steps): make another, as _claim does.
            continue
        if _claim(tmp, fd):
            break
        os.close(fd)
    with _REGISTRY:
        _TEMP_DIRS[tmp] = fd
    os.chmod(tmp, dir_mode())
    return tmp


def remove_tree(path: Path) -> None:
    """Remove a temporary folder (ignoring one already gone or renamed into place) and drop its lock."""
    shutil.rmtree(path, ignore_errors=True)
    with _REGISTRY:
        fd = _TEMP_DIRS.pop(Path(path), None)
    if fd is not None:
        os.close(fd)


_TEMP_DIRS: dict[Path, int] = {}
"""Open descriptors of this run's temporary folders: each holds the folder's lock."""
_REGISTRY = threading.Lock()


def _claim(path: Path, fd: int) -> bool:
    """Lock a temporary entry just made; False when a sweep removed it before the lock was taken.

    A sweep removes only what it has locked, so once this run holds the lock
    and the entry is still at its path, no sweep will touch it. On a file
    system without flock the entry goes unlocked, and no sweep removes it either.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        return True
    return same_entry(path, fd)


def same_entry(path: Path, fd: int) -> bool:
    """Whether `path` is still the entry open as `fd` (same device and inode): False once gone or replaced."""
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _drop_inherited_locks() -> None:
    """In a forked child (a routing worker): close the copies of the parent's temporary-folder descriptors.

    A flock belongs to the open file, which a fork shares: a worker that kept the copies would hold the parent's
    locks after it was killed, and a re-run's sweep (`reporter.locks.remove_debris`) would leave its dead temporaries.
    """
    for fd in list(_TEMP_DIRS.values()):
        with contextlib.suppress(OSError):
            os.close(fd)
    _TEMP_DIRS.clear()


os.register_at_fork(after_in_child=_drop_inherited_locks)


def replace_files(files: Mapping[Path, bytes], stage_in: Path) -> None:
    """Write several files all or nothing: every one under a temporary name first, then renamed into place.

    The new bytes are written into one temporary folder inside `stage_in` (on
    the same file system as the targets); only when all are written are they
    renamed onto their targets, in the mapping's order (put what links to the
    others last). On an OSError (a full disk, a read-only file system) every
    target is put back as it was, the folders this call made are removed, the
    temporaries too, and the error is raised again. Each replaced file is kept
    (hard-linked) in the temporary folder until the end, so it can be put back.
    """
    stage = make_temp_dir(stage_in, "write")
    made: list[Path] = []
    done: list[tuple[Path, Path | None]] = []
    try:
        staged = []
        for i, (target, data) in enumerate(files.items()):
            tmp = stage / f"new-{i}"
            _write_new(tmp, data)
            staged.append((Path(target), tmp))
        for i, (target, tmp) in enumerate(staged):
            made += _make_parents(target.parent)
            backup = None
            if os.path.lexists(target):
                backup = stage / f"old-{i}"
                try:
                    os.link(target, backup, follow_symlinks=False)
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                        raise
                    os.rename(target, backup)  # a file system without hard links: move the old one aside
            done.append((target, backup))
            os.replace(tmp, target)
    except BaseException:
        for target, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is None:
                    target.unlink(missing_ok=True)
                else:
                    os.replace(backup, target)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    finally:
        remove_tree(stage)


def _write_new(path: Path, data: bytes) -> None:
    """Write a new file (it must not exist) with the file mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, file_mode())
    with open(fd, "wb") as f:
        f.write(data)


def _make_parents(folder: Path) -> list[Path]:
    """mkdir -p, returning the folders it made, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=dir_mode())
    return list(reversed(missing))


# Failures of the machine's resources rather than of the tool: the user can fix them (exit 2, a message).
RESOURCE_ERRORS = {
    errno.ENOSPC: "free some space and run again",
    errno.EDQUOT: "free some space (or raise the quota) and run again",
    errno.EACCES: "make it writable by this user, or choose another folder",
    errno.EROFS: "the file system is read-only; choose another folder",
}


def resource_error(exc: OSError) -> str | None:
    """What to tell the user about a full disk, a quota, a permission or a read-only file system; else None.

    E.g. `no space left on device (ENOSPC); free some space and run again`.
    Arrow may report the errno only in its message (`[errno 28] ...`); that is read too.
    """
    code = exc.errno
    if code is None:
        found = re.search(r"\[errno (\d+)\]", str(exc), re.IGNORECASE)
        code = int(found.group(1)) if found else None
    if code not in RESOURCE_ERRORS:
        return None
    where = f"{exc.filename}: " if exc.filename and TEMP_PREFIX not in str(exc.filename) else ""
    return f"{where}{os.strerror(code).lower()} ({errno.errorcode.get(code, code)}); {RESOURCE_ERRORS[code]}"


MiB = 1024 * 1024


def read_capped(path: Path, limit: int, what: str) -> bytes:
    """A regular file's bytes, refused (InputError naming `what` and the path) when it is larger than `limit`.

    The size is taken from the opened file (`fstat`), so a link to a huge file,
    or a file that grows between a check and the read, is refused before more
    than `limit` bytes are read: at most `limit + 1` bytes ever reach memory. A
    folder, a FIFO or a device is refused too (a FIFO would block the read).
    FileNotFoundError passes through: callers decide what a missing file means.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except IsADirectoryError:
        raise InputError(f"{what} {path}: is a folder; name a file") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot be read ({os.strerror(exc.errno or 0).lower()})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise InputError(f"{what} {path}: is {kind}; name a regular file")
    with os.fdopen(fd, "rb") as handle:
        if st.st_size > limit:
            raise InputError(f"{what} {path}: {st.st_size:,} bytes, more than the {limit:,} such a file may hold; "
                             f"it is not one this tool wrote (restore it, or remove it)")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{what} {path}: grew past the {limit:,} bytes such a file may hold while it was read")
    return data


def parse_json(text: str | bytes, where: str) -> Any:
    """text.json_loads (`\\ud800` read as U+FFFD), with bad or too deep JSON an InputError naming `where` (a file)."""
    try:
        return json_loads(text)
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read; no input of ours nests more than a "
                         f"few dozen levels") from None
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON ({exc})") from None

