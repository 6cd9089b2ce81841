"""Faults (issue 8, item 4): `kill -9` at random points, concurrent runs, a full disk.

Every command runs as a subprocess (`python -m reporter.cli`) on a small
workspace: a seeded pool of 5,000 made-up works with labels and the example
novelty candidates, whose first release (the example rule book) is built
once; each scenario then publishes a second release (the rule book with one
description edited, so a new id). The kill trials count the steps an
uninterrupted run takes on the file system (every `os.replace`, `os.rename`,
`os.link`, `os.mkdir`, `os.unlink` and `os.rmdir` of its main process: its
temporaries made, renamed into place, removed), draw one of them from a
seeded RNG, and kill the run with SIGKILL just before it takes that step (no
clock: the same draw kills at the same point on any machine); then run it
again and compare with an uninterrupted run. Each scenario prints a summary line
(`pytest -s` shows them); REPORTER_FAULT_TRIALS sets the trials per command
(default 3) for a longer soak.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reporter import files
from reporter.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
ROWS = 5_000
TRIALS = int(os.environ.get("REPORTER_FAULT_TRIALS", "3"))
SEED = 8_4  # issue 8, item 4
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1780000000", "PYTHONHASHSEED": "0"}
OUTPUTS = ("releases", "site", "state")


# --- helpers -------------------------------------------------------------------------------------

def _cmd(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "reporter.cli", *args]


STEPS = ("replace", "rename", "link", "mkdir", "unlink", "rmdir")
"""The file-system calls a kill trial counts (of the command's main process; workers it forks are not counted)."""
KILL_AT = """
import atexit, os, signal, sys
kill_at, count_file = int(sys.argv[1]), sys.argv[2]
main, taken = os.getpid(), [0]
def counted(call):
    def step(*args, **kwargs):
        if os.getpid() == main:
            taken[0] += 1
            if taken[0] == kill_at:
                os.kill(main, signal.SIGKILL)  # just before the step: what a kill -9 there leaves
        return call(*args, **kwargs)
    return step
for name in %r:
    setattr(os, name, counted(getattr(os, name)))
atexit.register(lambda: open(count_file, "w").write(str(taken[0])))
from reporter.cli import main as cli
sys.exit(cli(sys.argv[3:]))
""" % (STEPS,)


def _cmd_killed_at(args: list[str], step: int, count_file: Path) -> list[str]:
    """The command, SIGKILLed just before its `step`-th file-system step (0: never); the steps it took go to
    `count_file` when it ends by itself."""
    return [sys.executable, "-c", KILL_AT, str(step), str(count_file), *args]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(_cmd(args), cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes (the lock file of older versions aside)."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def _outputs(ws: Path) -> dict[str, bytes]:
    """Every output file, the run records aside: they are the log of what each run did, not state a re-run
    restores (a killed run writes none; its re-run's record says what it found, `created: 0` for a release
    the killed run had published: docs/runs.md)."""
    return {f"{sub}/{rel}": data for sub in OUTPUTS for rel, data in _tree(ws / sub).items()
            if not f"{sub}/{rel}".startswith("state/runs/")}


def _debris(ws: Path) -> list[str]:
    return sorted(p.relative_to(ws).as_posix() for p in ws.rglob(f"{files.TEMP_PREFIX}*"))


def _index(ws: Path) -> list[str]:
    return json.loads((ws / "releases" / "index.json").read_text())


def _release_dirs(ws: Path) -> list[str]:
    return sorted(p.name for p in (ws / "releases").iterdir() if p.is_dir() and not p.name.startswith("."))


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _edited_rulebook(src: Path, dst: Path, text: str) -> None:
    """The rule book with one rule's description changed: same routing, a new release id."""
    shutil.copytree(src, dst)
    first = sorted((dst / "rules").glob("*.json"))[0]
    rules = json.loads(first.read_text())
    rules[0]["description"] += f" ({text})"
    first.write_text(json.dumps(rules, indent=2) + "\n")


TOML = ('pool = "{up}pool.parquet"\nlabels = "{up}labels.csv"\nspecs = "{up}{specs}"\n'
        'releases = "{up}releases"\nsite = "{up}site"\n')
NOVELTY = 'graph = "novelty/events.jsonl"\n[novelty]\ncandidates = "novelty/candidates.jsonl"\n'


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A workspace with its first release built: releases/ (one release), site/, state/."""
    from reporter.build import build
    from reporter.config import load_workspace
    from reporter.example.generate import generate_pool

    ws = tmp_path_factory.mktemp("faults") / "ws"
    ws.mkdir()
    generate_pool(ws / "pool.parquet", rows=ROWS, seed=0, progress=False, labels=ws / "labels.csv")
    shutil.copytree(ROOT / "specs", ws / "specs")
    _edited_rulebook(ws / "specs", ws / "specs_v2", "second edition")
    _edited_rulebook(ws / "specs", ws / "specs_v3", "third edition")
    shutil.copytree(ROOT / "examples" / "novelty", ws / "novelty")
    (ws / "reporter.toml").write_text(TOML.format(up="", specs="specs") + NOVELTY)
    build(load_workspace(ws), progress=False, environ=ENV)
    return ws


def _measured(args: list[str], ws: Path) -> int:
    """Run a command uninterrupted: the file-system steps it took (see STEPS)."""
    count = ws.parent / f"{ws.name}.steps"
    done = subprocess.run(_cmd_killed_at(args, 0, count), cwd=ws, env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return int(count.read_text())


ROUTE = ["route", "--workspace", ".", "--specs", "specs_v2", "--json"]
RENDER = ["render", "--releases", "releases", "--out", "site", "--quiet"]


@pytest.fixture(scope="module")
def routed(base, tmp_path_factory) -> tuple[Path, int]:
    """`reporter route` of the second rule book, uninterrupted, and the file-system steps it took."""
    ws = _copy(base, tmp_path_factory.mktemp("routed") / "ws")
    return ws, _measured(ROUTE, ws)


@pytest.fixture(scope="module")
def rendered(routed, tmp_path_factory) -> tuple[Path, int]:
    """`reporter render` of both releases over the first release's site, uninterrupted, and its steps."""
    ws = _copy(routed[0], tmp_path_factory.mktemp("rendered") / "ws")
    return ws, _measured(RENDER, ws)


def _kill_trials(name: str, make: callable, args: list[str], want: dict[str, bytes], steps: int,
                 check_killed: callable, rng: random.Random, tmp_path: Path, compared: str = "") -> None:
    """Kill the command just before a drawn one of its `steps` file-system steps, check what it left, run it again,
    compare with `want` the outputs whose paths start with `compared` (all of them by default)."""
    rows = []
    assert steps > 0, f"{name}: the uninterrupted run took no file-system step to kill at"
    for trial in range(TRIALS):
        ws = make(tmp_path / f"{name}-{trial}")
        step = rng.randint(1, steps)
        proc = subprocess.run(_cmd_killed_at(args, step, ws.parent / f"{ws.name}.steps"), cwd=ws, env=ENV,
                              capture_output=True, timeout=300)
        killed = proc.returncode == -signal.SIGKILL
        left = _debris(ws)
        problems = check_killed(ws)
        # Run it again (a run the kill missed finished: its outputs are compared as they are).
        again = _run(args, ws) if killed else subprocess.CompletedProcess(args, proc.returncode, "", "")
        got = {k: v for k, v in _outputs(ws).items() if k.startswith(compared)}
        rows.append({"step": step, "killed": killed, "debris_after_kill": len(left),
                     "state_after_kill": problems, "rerun_exit": again.returncode,
                     "same_bytes": got == want,
                     "differ": sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))[:6], "debris_after_rerun": _debris(ws),
                     "index_complete": sorted(_index(ws)) == _release_dirs(ws) if again.returncode == 0 else None,
                     "stderr": again.stderr.strip().splitlines()[-1:] if again.returncode else []})
    killed = sum(r["killed"] for r in rows)
    print(f"\n{name}: {TRIALS} trials, kills drawn over the {steps} file-system steps of an uninterrupted run, "
          f"{killed} killed; "
          f"debris after the kill in "
          f"{sum(bool(r['debris_after_kill']) for r in rows)}; re-run exit 0 in "
          f"{sum(r['rerun_exit'] == 0 for r in rows)}, same bytes in {sum(r['same_bytes'] for r in rows)}, "
          f"debris after the re-run in {sum(bool(r['debris_after_rerun']) for r in rows)}")
    for r in rows:
        assert not r["state_after_kill"], str(r)
        assert r["rerun_exit"] == 0 and r["same_bytes"] and r["index_complete"], str(r)
        assert not r["debris_after_rerun"], str(r)
    assert killed == TRIALS, f"only {killed} of {TRIALS} runs were killed at their drawn step"


def _releases_whole(want: Path) -> callable:
    """After a kill: each release folder is complete (the bytes of an uninterrupted run) or absent,
    and index.json (when present) lists only folders that exist."""
    def check(ws: Path) -> list[str]:
        problems = []
        for rid in _release_dirs(ws):
            core = {k: v for k, v in _tree(ws / "releases" / rid).items() if k != "labels.json"}
            ref = {k: v for k, v in _tree(want / "releases" / rid).items() if k != "labels.json"}
            if core != ref:
                problems.append(f"releases/{rid} is not the complete release")
        if (ws / "releases" / "index.json").exists():
            missing = set(_index(ws)) - set(_release_dirs(ws))
            if missing:
                problems.append(f"index.json lists missing folders {sorted(missing)}")
        return problems
    return check


# --- (a) kill -9 at random points, then run again ---------------------------------------------------

@pytest.mark.slow
def test_route_killed_at_random_points_then_rerun_gives_the_same_release(base, routed, tmp_path):
    want_ws, steps = routed
    want = {k: v for k, v in _outputs(want_ws).items() if k.startswith("releases/")}

    def make(dst: Path) -> Path:
        ws = _copy(base, dst)
        shutil.rmtree(ws / "site")
        shutil.rmtree(ws / "state")
        return ws
    # the releases alone: the reference's state/ holds the records of the build before it too (docs/runs.md)
    _kill_trials("route", make, ROUTE, want, steps, _releases_whole(want_ws), random.Random(SEED), tmp_path,
                 compared="releases/")


@pytest.mark.slow
def test_build_killed_at_random_points_then_rerun_gives_the_same_outputs(base, tmp_path):
    def make(dst: Path) -> Path:
        ws = _copy(base, dst)
        (ws / "reporter.toml").write_text(TOML.format(up="", specs="specs_v2") + NOVELTY)
        return ws
    ref = make(tmp_path / "build-ref")
    steps = _measured(["build", "--workspace", "."], ref)
    _kill_trials("build", make, ["build", "--workspace", "."], _outputs(ref), steps, _releases_whole(ref),
                 random.Random(SEED + 1), tmp_path)


@pytest.mark.slow
def test_render_killed_at_random_points_then_rerun_gives_the_same_site(routed, rendered, tmp_path):
    routed_ws = routed[0]

    def site_ok(ws: Path) -> list[str]:
        return [] if _tree(ws / "releases") == _tree(routed_ws / "releases") else ["render changed the releases"]
    _kill_trials("render", lambda dst: _copy(routed_ws, dst), RENDER, _outputs(rendered[0]), rendered[1], site_ok,
                 random.Random(SEED + 2), tmp_path)


# --- (b) concurrent runs on one workspace -----------------------------------------------------------

def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(_cmd(args), cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(procs: list[subprocess.Popen]) -> list[tuple[int, str]]:
    errs = [p.communicate(timeout=300)[1] for p in procs]
    return [(p.returncode, err) for p, err in zip(procs, errs)]


def test_concurrent_routes_all_succeed_and_list_each_release_once(base, routed, tmp_path):
    ws = _copy(base, tmp_path / "ws")
    first = _index(ws)
    procs = [_start(["route", "--workspace", ".", "--specs", specs, "--json"], ws)
             for specs in ("specs_v2", "specs_v3", "specs_v2")]
    results = _finish(procs)
    print(f"\nconcurrent route x3: exits {[rc for rc, _ in results]}")
    assert [rc for rc, _ in results] == [0, 0, 0], "\n\n".join(err for rc, err in results if rc)
    ids = _index(ws)
    assert ids[:1] == first and len(ids) == 3 and len(set(ids)) == 3 and sorted(ids) == _release_dirs(ws)
    second = _index(routed[0])[-1]
    assert _tree(ws / "releases" / second) == _tree(routed[0] / "releases" / second)
    assert _debris(ws) == []


@pytest.mark.slow
def test_concurrent_builds_all_succeed_and_leave_a_consistent_site(base, tmp_path):
    ws = _copy(base, tmp_path / "ws")
    for name, specs in (("two", "specs_v2"), ("three", "specs_v3")):
        (ws / name).mkdir()
        (ws / name / "reporter.toml").write_text(TOML.format(up="../", specs=specs))
    procs = [_start(["build", "--workspace", name], ws) for name in ("two", "three", "two")]
    results = _finish(procs)
    print(f"\nconcurrent build x3: exits {[rc for rc, _ in results]}")
    assert [rc for rc, _ in results] == [0, 0, 0], "\n\n".join(err for rc, err in results if rc)
    ids = _index(ws)
    assert len(ids) == 3 and len(set(ids)) == 3 and sorted(ids) == _release_dirs(ws)
    assert _debris(ws) == []
    # The site is the one a fresh render of the final releases folder gives (the last build saw every release).
    manifest = json.loads((ws / "site" / "manifest.json").read_text())
    for path, entry in manifest["files"].items():
        assert hashlib.sha256((ws / "site" / path).read_bytes()).hexdigest() == entry["sha256"], path
    # The status pages show the workspace's [screen] state, so the fresh render is told the workspace
    # (both builds' workspaces have no [screen] table, so either gives the same pages).
    fresh = _run(["render", "--releases", "releases", "--out", "fresh", "--quiet", "--workspace", "two"], ws)
    assert fresh.returncode == 0, fresh.stderr
    assert {p: (ws / "site" / p).read_bytes() for p in manifest["files"]} == {
        k: v for k, v in _tree(ws / "fresh").items() if k != "manifest.json"}


def test_concurrent_renders_all_succeed_with_the_same_site(routed, rendered, tmp_path):
    ws = _copy(routed[0], tmp_path / "ws")
    results = _finish([_start(RENDER, ws) for _ in range(3)])
    print(f"\nconcurrent render x3: exits {[rc for rc, _ in results]}")
    assert [rc for rc, _ in results] == [0, 0, 0], results
    assert _tree(ws / "site") == _tree(rendered[0] / "site") and _debris(ws) == []


# --- (c) a full disk -------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs at tmp_path/disk (root only); unmounted afterwards."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs the suite as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _fill(mnt: Path, leave: int) -> None:
    """Write a filler file so that about `leave` bytes stay free."""
    st = os.statvfs(mnt)
    size = st.f_bavail * st.f_frsize - leave
    with open(mnt / "filler", "wb") as f:
        while size > 0:
            size -= f.write(b"\0" * min(size, 1 << 20))


def test_render_on_a_full_disk_exits_2_and_leaves_the_site_as_it_was(base, routed, small_disk):
    site = small_disk / "site"
    shutil.copytree(base / "site", site)  # the first release's site; the render would add the second
    _fill(small_disk, 96 * 1024)
    before = _tree(site)
    done = _run(["render", "--releases", str(routed[0] / "releases"), "--out", str(site), "--quiet"], small_disk)
    print(f"\nrender on a full disk: exit {done.returncode}: {done.stderr.strip()}")
    assert done.returncode == 2, done.stderr
    assert "no space left on device" in done.stderr and str(site) in done.stderr
    assert "Traceback" not in done.stderr
    assert _tree(site) == before and _debris(small_disk) == []


def test_route_on_a_full_disk_exits_2_and_publishes_nothing(base, small_disk):
    ws = small_disk / "ws"
    ws.mkdir()
    shutil.copytree(base / "releases", ws / "releases")
    (ws / "reporter.toml").write_text(TOML.format(up=f"{base}/", specs="specs_v2").replace(
        f'releases = "{base}/releases"', 'releases = "releases"'))
    _fill(small_disk, 48 * 1024)
    before = _tree(ws / "releases")
    done = _run(["route", "--workspace", ".", "--json"], ws)
    print(f"\nroute on a full disk: exit {done.returncode}: {done.stderr.strip()}")
    assert done.returncode == 2, done.stderr
    assert "no space left on device" in done.stderr and str(ws / "releases") in done.stderr
    assert "Traceback" not in done.stderr
    assert _tree(ws / "releases") == before and _debris(small_disk) == []
    (small_disk / "filler").unlink()
    again = _run(["route", "--workspace", ".", "--json"], ws)
    assert again.returncode == 0, again.stderr
    assert len(_index(ws)) == 2


# --- the writer's all-or-nothing path, without a mount -------------------------------------------

def _writer_with_changes(root: Path):
    from reporter.site.writer import SiteWriter
    first = SiteWriter(root)
    for i in range(6):
        first.add(f"releases/r/page{i}.html", f"old {i}", archived=True)
    first.add("index.html", "old home", archived=False)
    first.commit()
    second = SiteWriter(root, rerender_archive=True)
    for i in range(6):
        second.add(f"releases/r/page{i}.html", f"old {i}" if i % 2 else f"new {i}", archived=True)
    for i in range(4):
        second.add(f"releases/s/page{i}.html", f"added {i}", archived=True)
    second.add("index.html", "new home", archived=False)
    return second


@pytest.mark.parametrize("phase, nth", [("write", 1), ("write", 4), ("write", 9), ("rename", 1), ("rename", 5),
                                        ("rename", 9)])
def test_the_writer_changes_nothing_when_a_write_fails(tmp_path, monkeypatch, phase, nth):
    root = tmp_path / "site"
    writer = _writer_with_changes(root)
    before = _tree(root)
    calls = {"n": 0}

    def failing(real):
        def call(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == nth:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(*args, **kwargs)
        return call
    if phase == "write":
        monkeypatch.setattr(files, "_write_new", failing(files._write_new))
    else:
        monkeypatch.setattr(files.os, "replace", failing(os.replace))
    with pytest.raises(InputError, match="no space left on device") as caught:
        writer.commit()
    monkeypatch.undo()
    assert str(root.resolve()) in str(caught.value) and "Nothing was changed" in str(caught.value)
    assert _tree(root) == before, "every file as it was, no new file, no manifest change"
    assert not (root / "releases" / "s").exists(), "the folder made for new pages is removed again"
    assert _debris(root) == []
    report = writer.commit()  # and with space again, the same writer succeeds
    assert (root / "index.html").read_text() == "new home" and len(report.superseded) == 3


def test_the_cli_turns_a_full_disk_into_exit_2(monkeypatch, capsys, tmp_path):
    """The one place an OSError escaping a command becomes exit 2: a full disk, a quota, permissions, read-only."""
    from reporter import build as commands  # `reporter render` runs reporter.build.render_site
    from reporter.cli import main

    def raising(code):
        def render_site(*args, **kwargs):
            raise OSError(code, os.strerror(code), str(tmp_path / "x"))
        return render_site
    argv = ["render", "--releases", str(tmp_path), "--out", str(tmp_path / "site"), "--quiet"]
    monkeypatch.setattr(commands, "render_site", raising(errno.ENOSPC))
    assert main(argv) == 2
    assert f"{tmp_path / 'x'}: no space left on device (ENOSPC); free some space" in capsys.readouterr().err
    monkeypatch.setattr(commands, "render_site", raising(errno.EROFS))
    assert main(argv) == 2
    assert "read-only file system (EROFS)" in capsys.readouterr().err
    monkeypatch.setattr(commands, "render_site", raising(errno.EIO))
    with pytest.raises(OSError):
        main(argv)  # not the user's to fix: a traceback, exit 1


# --- index.json missing ---------------------------------------------------------------------------

def test_a_missing_index_is_refused_by_route_build_and_render(tmp_path, capsys):
    from reporter.cli import main
    fixture = ROOT / "tests" / "fixtures" / "site_workspace"
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("pool.jsonl", "labels.csv", "reporter.toml"):
        shutil.copy(fixture / name, ws / name)
    shutil.copytree(fixture / "specs", ws / "specs")
    shutil.copytree(fixture / "specs_v2", ws / "specs_v2")
    assert main(["build", "--workspace", str(ws)]) == 0
    (ws / "releases" / "index.json").unlink()
    capsys.readouterr()
    before = {sub: _tree(ws / sub) for sub in ("releases", "site")}
    runs = [["route", "--workspace", str(ws), "--specs", str(ws / "specs_v2")],
            ["build", "--workspace", str(ws)],
            ["render", "--releases", str(ws / "releases"), "--out", str(ws / "site"), "--quiet"]]
    for argv in runs:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "index.json: missing, but" in err and "1 release folder(s)" in err
        assert "Restore it from a backup" in err and "oldest first" in err
        assert {sub: _tree(ws / sub) for sub in ("releases", "site")} == before, argv
