"""The one file layer and its locks (reporter.files, reporter.locks): modes, atomicity, locks, debris."""

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from reporter import files, locks
from reporter.errors import InputError


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_written_files_and_folders_have_explicit_modes(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_text(tmp_path / "a" / "b.txt", "x")
        tmp = files.make_temp_dir(tmp_path, "release")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a" / "b.txt") == 0o644  # mkstemp alone would give 0600
    assert _mode(tmp) == 0o755  # mkdtemp alone would give 0700
    assert tmp.name.startswith(files.TEMP_PREFIX)


def test_a_temporary_folder_swept_before_it_is_opened_is_made_again(tmp_path, monkeypatch):
    """mkdtemp makes the folder, then it is opened and locked: a concurrent run's sweep can remove it in
    between (three builds starting at once each sweep the releases folder). The run makes another."""
    import tempfile
    made = []
    real = tempfile.mkdtemp

    def swept_first(*args, **kwargs):
        path = real(*args, **kwargs)
        made.append(path)
        if len(made) == 1:
            assert locks.remove_debris(tmp_path) == [Path(path)]  # unlocked yet: a sweep takes it
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", swept_first)
    tmp = files.make_temp_dir(tmp_path, "release")
    assert len(made) == 2 and str(tmp) == made[1] and tmp.is_dir()
    assert locks.remove_debris(tmp_path) == []  # locked by this run
    files.remove_tree(tmp)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "doc.json"
    files.write_json(target, {"b": 1, "a": [1, 2]})
    assert target.read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    with pytest.raises(RuntimeError):
        with files.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": [1, 2], "b": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]


# --- debris of killed runs, locks ---------------------------------------------

def _leave_debris(folder):
    """A run that makes a temporary folder and file, then dies without cleaning up (like kill -9)."""
    files.make_temp_dir(folder, "release")
    with files.atomic_path(folder / "index.json"):
        os._exit(0)


def _sweep(folder, queue):
    queue.put(sorted(p.name for p in locks.remove_debris(folder)))


def test_debris_of_dead_runs_is_removed_and_a_live_runs_never(tmp_path):
    ctx = multiprocessing.get_context("fork")
    dead = ctx.Process(target=_leave_debris, args=(tmp_path,))
    dead.start()
    dead.join()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and all(name.startswith(files.TEMP_PREFIX) for name in left)
    live = files.make_temp_dir(tmp_path, "release")  # this run's: held until remove_tree
    (tmp_path / "sub").mkdir()
    with files.atomic_path(tmp_path / "sub" / "page.html") as tmp:
        tmp.write_text("half")
        queue = ctx.Queue()
        other = ctx.Process(target=_sweep, args=(tmp_path, queue))  # another run sweeps meanwhile
        other.start()
        other.join()
        assert queue.get(timeout=5) == left, "the dead run's two entries, not this run's"
        assert live.is_dir() and tmp.exists()
    assert (tmp_path / "sub" / "page.html").read_text() == "half"
    files.remove_tree(live)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]
    assert locks.remove_debris(tmp_path / "missing") == []


def test_a_sweep_with_targets_leaves_other_temporaries_and_never_follows_a_link(tmp_path):
    (tmp_path / ".tmp-notes.txt.abc").write_text("the user's")
    os.symlink("/", tmp_path / ".tmp-link")
    assert locks.remove_debris(tmp_path, targets=["pool.parquet"]) == []
    assert locks.remove_debris(tmp_path) == [tmp_path / ".tmp-notes.txt.abc"]  # unlocked, so dead
    assert (tmp_path / ".tmp-link").is_symlink()


def _try_lock(folder, queue):
    import fcntl
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        queue.put("took it")
    except BlockingIOError:
        queue.put("waits")
    finally:
        os.close(fd)


def test_the_folder_lock_excludes_other_runs_and_is_reentrant_within_one(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    with locks.locked(tmp_path):
        with locks.locked(tmp_path):  # the same run again: no deadlock
            with locks.locked(tmp_path):  # and a function of the run that takes it too
                pass
        p = ctx.Process(target=_try_lock, args=(tmp_path, queue))
        p.start()
        p.join()
        assert queue.get(timeout=5) == "waits"
    p = ctx.Process(target=_try_lock, args=(tmp_path, queue))
    p.start()
    p.join()
    assert queue.get(timeout=5) == "took it"
    assert list(tmp_path.iterdir()) == [], "no lock file in the folder"


def test_replace_files_puts_everything_back_when_a_rename_fails(tmp_path, monkeypatch):
    import errno
    (tmp_path / "a.txt").write_text("old a")
    targets = {tmp_path / "a.txt": b"new a", tmp_path / "new" / "deep" / "b.txt": b"new b",
               tmp_path / "c.txt": b"new c"}
    real = os.replace
    calls = []

    def third_fails(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(src, dst)
    monkeypatch.setattr(files.os, "replace", third_fails)
    with pytest.raises(OSError):
        files.replace_files(targets, tmp_path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old a"
    files.replace_files(targets, tmp_path)
    assert [p.read_bytes() for p in targets] == [b"new a", b"new b", b"new c"]
    assert _mode(tmp_path / "new" / "deep" / "b.txt") == files.file_mode()
    assert not [p for p in tmp_path.rglob(files.TEMP_PREFIX + "*")]


def test_resource_errors_read_as_a_message():
    import errno
    assert files.resource_error(OSError(errno.ENOSPC, "x", "/srv/site/a.html")) == (
        "/srv/site/a.html: no space left on device (ENOSPC); free some space and run again")
    assert files.resource_error(OSError("IOError: [Errno 122] Disk quota exceeded")).startswith("disk quota exceeded")
    assert files.resource_error(OSError(errno.EIO, "x")) is None


def test_a_killed_runs_forked_workers_do_not_keep_its_locks(tmp_path):
    """A routing worker forked while its parent held locks must not keep them once the parent is killed.

    The parent reports its temporary folder only once the child has run past its at-fork hook: killed before
    that, the child would still hold the locks for a moment, and remove_debris found nothing (a full run once
    saw `[]`)."""
    import signal
    import subprocess
    import sys
    import fcntl
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from reporter import files, locks\n"
        "root = Path(sys.argv[1])\n"
        "tmp = files.make_temp_dir(root, 'release')\n"
        "with locks.locked(root / 'held'):\n"
        "    child = os.fork()\n"
        "    if child == 0:\n"
        # os.fork returns in the child only after its at-fork hooks ran: from here on it holds no lock of ours.
        "        (root / 'child-ready').write_text('1')\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "    (root / 'child').write_text(str(child))\n"
        "    while not (root / 'child-ready').exists():\n"
        "        time.sleep(0.01)\n"
        "    print(tmp, flush=True)\n"
        "    time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    tmp = proc.stdout.readline().strip()
    child = int((tmp_path / "child").read_text())
    try:
        assert tmp and os.path.isdir(tmp)
        assert locks.remove_debris(tmp_path) == []  # the parent lives: its temporary is never touched
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        os.kill(child, 0)  # the forked child outlives its parent
        assert [str(p) for p in locks.remove_debris(tmp_path)] == [tmp]
        # The folder lock is free too while the child lives: taken without waiting, or refused at once.
        fd = os.open(tmp_path / "held", os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if the child kept it
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        with locks.locked(tmp_path / "held"):
            pass
    finally:
        os.kill(child, signal.SIGKILL)


def out_targets(root: Path, name: str) -> dict[str, tuple[Path, str]]:
    """Each kind of --out path that must be refused, made under root: kind -> (path, what the message says)."""
    made = {}
    folder = root / "folder" / name
    folder.mkdir(parents=True)
    made["folder"] = (folder, "is a folder")
    real = root / "real.txt"
    real.write_text("keep me")
    (root / f"link-{name}").symlink_to(real)
    made["symlink"] = (root / f"link-{name}", "is a symbolic link")
    (root / f"dangling-{name}").symlink_to(root / "nowhere")
    made["dangling symlink"] = (root / f"dangling-{name}", "is a symbolic link")
    os.mkfifo(root / f"fifo-{name}")
    made["fifo"] = (root / f"fifo-{name}", "is a FIFO")
    if os.geteuid() == 0:
        os.mknod(root / f"dev-{name}", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
        made["device"] = (root / f"dev-{name}", "is a character device")
    else:
        (root / f"devlink-{name}").symlink_to("/dev/null")
        made["device"] = (root / f"devlink-{name}", "is a symbolic link")
    made["missing parent"] = (root / "no" / "such" / name, f"the folder {root / 'no' / 'such'} does not exist")
    made["parent is a file"] = (real / name, f"the folder {real} is not a folder")
    return made


def assert_untouched(root: Path) -> None:
    """Nothing was replaced or made by a refused --out."""
    assert (root / "real.txt").read_text() == "keep me"
    for p in root.rglob("*"):
        assert p.is_symlink() or not p.is_file() or p.name == "real.txt" or stat.S_ISCHR(p.lstat().st_mode), p
    assert not (root / "no").exists()


def test_check_output_file_refuses_what_a_regular_file_must_not_replace(tmp_path):
    for kind, (path, message) in out_targets(tmp_path, "out.csv").items():
        with pytest.raises(InputError, match="--out") as caught:
            files.check_output_file(path, "--out")
        assert message in str(caught.value) and str(path) in str(caught.value), kind
    assert_untouched(tmp_path)
    assert files.check_output_file(tmp_path / "new.csv", "--out") == tmp_path / "new.csv"
    assert files.check_output_file(tmp_path / "real.txt", "--out") == tmp_path / "real.txt"
    assert stat.S_ISFIFO((tmp_path / "fifo-out.csv").lstat().st_mode)
    with pytest.raises(InputError, match="cannot hold a NUL"):
        files.check_output_file(tmp_path / "a\x00b.csv", "--out")
    with pytest.raises(InputError, match="file name too long"):
        files.check_output_file(tmp_path / ("a" * 300 + ".csv"), "--out")


def test_read_capped_refuses_before_reading_a_large_file_behind_a_link(tmp_path):
    """A state file linked to a huge (sparse) file is refused from its size, naming it; nothing is read."""
    from reporter.files import read_capped

    huge = tmp_path / "huge"
    with open(huge, "wb") as handle:
        handle.truncate(256 * 1024 * 1024)
    link = tmp_path / "decisions.json"
    link.symlink_to(huge)
    with pytest.raises(InputError, match=r"decisions\.json: 268,435,456 bytes, more than the 1,024"):
        read_capped(link, 1024, "week file")
    small = tmp_path / "small.json"
    small.write_bytes(b"x" * 1024)
    assert read_capped(small, 1024, "week file") == b"x" * 1024
    with pytest.raises(InputError, match="more than the 1,023"):
        read_capped(small, 1023, "week file")


def test_read_capped_refuses_what_is_not_a_regular_file(tmp_path):
    from reporter.files import read_capped

    with pytest.raises(InputError, match="is a folder"):
        read_capped(tmp_path, 10, "criteria document")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"is a FIFO"):
        read_capped(fifo, 10, "criteria document")
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "missing", 10, "criteria document")
