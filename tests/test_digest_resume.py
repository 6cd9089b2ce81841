"""A killed catch-up is finished by re-running the same command; overlapping catch-ups never decide a week
without its prior (issue 21).

Every run here is a real `reporter digest` subprocess; kills are SIGKILL. The
interleaving of two catch-ups is forced, not hoped for: the test holds the
archive's lock (a flock, as every run takes it) while the other run waits.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reporter.digest.archive import published_weeks
from reporter.digest.config import DigestSettings
from reporter.digest.weeks import run_weeks
from reporter.locks import locked

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
WEEKS = [f"2026-W{k}" for k in range(10, 18)]
ENV = {**os.environ, "PYTHONHASHSEED": "0"}


def write_papers(folder: Path, per_week: int) -> Path:
    """W10..W17; every fifth paper of a week is listed again in other weeks, so priors matter."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(10, 18):
        rows = [{"id": f"doi:10.5555/w{k}-{i}" if i % 5 else f"doi:10.5555/shared-{i % 15}",
                 "title": f"A protein language model for family {k}-{i} enzymes",
                 "abstract": f"We evaluate a protein language model on benchmark {i}; ESM-2 too. " + "pad " * 30,
                 "authors": [f"Author{k}x{i} Person{i}"]} for i in range(per_week)]
        (folder / f"2026-W{k}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def args(papers: Path, archive: Path, *extra: str, watchlist: Path = FIXTURES / "watchlist.txt") -> list[str]:
    return [sys.executable, "-m", "reporter.cli", "digest", "--papers", str(papers), "--watchlist", str(watchlist),
            "--criteria", str(FIXTURES / "criteria.md"), "--archive", str(archive), *extra]


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)


def archive_files(archive: Path) -> dict[str, bytes]:
    return {p.relative_to(archive).as_posix(): p.read_bytes() for p in sorted(archive.rglob("*")) if p.is_file()}


def temporaries(archive: Path) -> list[str]:
    return [p.relative_to(archive).as_posix() for p in archive.rglob(".tmp-*")]


@pytest.fixture(scope="module")
def catch_up(tmp_path_factory):
    """The papers, and the archive an uninterrupted `--from 2026-W10 --to 2026-W17` publishes."""
    root = tmp_path_factory.mktemp("catch-up")
    papers = write_papers(root / "papers", 400)
    done = run(args(papers, root / "reference", "--from", WEEKS[0], "--to", WEEKS[-1]))
    assert done.returncode == 0, done.stderr
    reference = archive_files(root / "reference")
    assert sorted(reference) == [f"{w}/decisions.json" for w in WEEKS]
    return papers, reference


def _kill_when(proc: subprocess.Popen, archive: Path, trigger: str) -> None:
    """SIGKILL the run at a point of its work, watched from outside (or when it ends first)."""
    start = time.monotonic()
    while proc.poll() is None:
        if trigger.startswith("after "):
            hit = time.monotonic() - start >= float(trigger.split()[1])
        elif trigger == "temporary":
            hit = bool(temporaries(archive)) if archive.is_dir() else False
        else:  # "published N"
            hit = archive.is_dir() and len(list(archive.glob("*/decisions.json"))) >= int(trigger.split()[1])
        if hit:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize("trigger", ["after 0.3", "temporary", "published 1", "published 4"])
def test_a_killed_catch_up_is_finished_by_the_same_command(catch_up, tmp_path, trigger):
    papers, reference = catch_up
    archive = tmp_path / "archive"
    cmd = args(papers, archive, "--from", WEEKS[0], "--to", WEEKS[-1])
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _kill_when(proc, archive, trigger)
    partial = archive_files(archive) if archive.is_dir() else {}
    # Whatever the kill left, a published week has the uninterrupted run's bytes.
    assert all(reference[name] == data for name, data in partial.items() if not name.split("/")[-1]
               .startswith(".tmp-")), trigger
    again = run(cmd)
    assert again.returncode == 0, again.stderr
    assert archive_files(archive) == reference  # every week, the same bytes; no temporary, no superseded copy
    lines = again.stdout.splitlines()
    assert len(lines) == len(WEEKS)
    done_before = {name.split("/")[0] for name in partial if name.endswith("/decisions.json")}
    for week, line in zip(WEEKS, lines):
        assert line.startswith(f"{week}: ")
        assert ("already published with the same inputs" in line) == (week in done_before), line


@pytest.mark.slow
def test_the_temporaries_of_a_killed_run_are_removed_by_the_next_run(catch_up, tmp_path):
    papers, reference = catch_up
    archive = tmp_path / "archive"
    # A run killed while writing decisions.json: its temporary is real, made by the file layer, its owner dead.
    code = ("import os, sys\nfrom reporter.files import atomic_path\n"
            "with atomic_path(sys.argv[1]) as tmp:\n"
            "    tmp.write_bytes(b'x' * (2 << 20))\n    os.kill(os.getpid(), 9)\n")
    dead = subprocess.run([sys.executable, "-c", code, str(archive / "2026-W12" / "decisions.json")], env=ENV)
    assert dead.returncode == -signal.SIGKILL
    [left] = temporaries(archive)
    assert left.startswith("2026-W12/.tmp-decisions.json.")
    done = run(args(papers, archive, "--from", WEEKS[0], "--to", WEEKS[-1]))
    assert done.returncode == 0, done.stderr
    assert temporaries(archive) == [] and archive_files(archive) == reference
    # ... and by a re-run that has nothing to publish.
    dead = subprocess.run([sys.executable, "-c", code, str(archive / "2026-W13" / "decisions.json")], env=ENV)
    assert temporaries(archive)
    again = run(args(papers, archive, "--from", WEEKS[0], "--to", WEEKS[-1]))
    assert again.returncode == 0, again.stderr
    assert temporaries(archive) == [] and archive_files(archive) == reference


@pytest.mark.slow
def test_a_week_whose_inputs_changed_needs_force_and_the_refusal_says_which(catch_up, tmp_path):
    papers, reference = catch_up
    archive = tmp_path / "archive"
    assert run(args(papers, archive, "--from", WEEKS[0], "--to", WEEKS[3])).returncode == 0
    watchlist = tmp_path / "watchlist.txt"
    watchlist.write_text((FIXTURES / "watchlist.txt").read_text() + "enzymes\t0.2\n")
    refused = run(args(papers, archive, "--from", WEEKS[0], "--to", WEEKS[-1], watchlist=watchlist))
    assert refused.returncode == 2
    assert "2026-W10/decisions.json: week 2026-W10 is already published with other inputs" in refused.stderr
    assert "the watchlist file \"watchlist.txt\" changed" in refused.stderr and "--force" in refused.stderr
    assert archive_files(archive) == {k: v for k, v in reference.items() if k.split("/")[0] in WEEKS[:4]}
    # A changed prior week: W11 re-published with other decisions makes W12 (whose prior it is) refused.
    forced = run(args(papers, archive, "--week", WEEKS[1], "--max-kept", "3", "--force"))
    assert forced.returncode == 0, forced.stderr
    refused = run(args(papers, archive, "--from", WEEKS[2], "--to", WEEKS[-1]))
    assert refused.returncode == 2
    assert "week 2026-W12 is already published with other inputs (prior week 2026-W11 was re-published since)" \
        in refused.stderr


def _waiting_for_a_lock(pid: int) -> bool:
    """Whether the process is blocked waiting for a flock (a `->` line of /proc/locks)."""
    return any(line.split()[1] == "->" and line.split()[5] == str(pid)
               for line in Path("/proc/locks").read_text().splitlines() if len(line.split()) > 5)


def _start_and_wait_for_the_lock(argv: list[str]) -> subprocess.Popen:
    """Start a catch-up and return once it is blocked on the archive's lock (which the caller holds)."""
    later = subprocess.Popen(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _waiting_for_a_lock(later.pid):
        assert later.poll() is None, later.communicate()
        assert time.monotonic() < deadline, "the run never waited for the archive's lock"
        time.sleep(0.01)
    return later


def test_overlapping_catch_ups_never_decide_a_week_without_its_prior(catch_up, tmp_path):
    """W12-W15 decided while W10-W11 are not there yet, and published after they were: decided again."""
    papers, reference = catch_up
    archive = tmp_path / "archive"
    archive.mkdir()
    with locked(archive):  # another run is publishing: the second one waits for the lock
        later = _start_and_wait_for_the_lock(args(papers, archive, "--from", WEEKS[2], "--to", WEEKS[5]))
        # The first catch-up, in this process (the lock is this thread's), publishes W10 and W11 meanwhile.
        s = DigestSettings(papers=papers, watchlist=FIXTURES / "watchlist.txt",
                           criteria=FIXTURES / "criteria.md", archive=archive)
        run_weeks(s, WEEKS[:2])
    out, err = later.communicate(timeout=120)
    assert later.returncode == 0, err
    w12 = json.loads((archive / "2026-W12" / "decisions.json").read_bytes())
    assert w12["prior_weeks"] == ["2026-W10", "2026-W11"]
    assert archive_files(archive) == {k: v for k, v in reference.items() if k.split("/")[0] in WEEKS[:6]}


def test_two_catch_ups_at_once_publish_one_consistent_archive(catch_up, tmp_path):
    """W10-W13 and W12-W15 started together: whichever goes first, every week has the archive's prior."""
    papers, reference = catch_up
    archive = tmp_path / "archive"
    procs = [subprocess.Popen(args(papers, archive, "--from", a, "--to", b), env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for a, b in ((WEEKS[0], WEEKS[3]), (WEEKS[2], WEEKS[5]))]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for code, err in results:
        assert code == 0 or (code == 2 and "already published with other inputs (prior week" in err), err
    s = DigestSettings(papers=papers, watchlist=FIXTURES / "watchlist.txt", criteria=FIXTURES / "criteria.md",
                       archive=archive)
    weeks = published_weeks(s.archive)
    for week in weeks:
        doc = json.loads((archive / week / "decisions.json").read_bytes())
        expected = [w for w in weeks if w < week and WEEKS.index(week) - WEEKS.index(w) <= 4]
        assert doc["prior_weeks"] == expected, (week, results)
    if weeks[0] == WEEKS[0]:  # the first catch-up went first: everything as one run would publish it
        assert archive_files(archive) == {k: v for k, v in reference.items() if k.split("/")[0] in WEEKS[:6]}


def test_a_prior_week_re_published_while_a_catch_up_waits_is_read_again(catch_up, tmp_path):
    """W12-W13 decided on W11 as it was; W11 is re-published (--force) before they are written: decided again."""
    papers, reference = catch_up
    archive = tmp_path / "archive"
    s = DigestSettings(papers=papers, watchlist=FIXTURES / "watchlist.txt", criteria=FIXTURES / "criteria.md",
                       archive=archive)
    run_weeks(s, WEEKS[:2])
    with locked(archive):
        later = _start_and_wait_for_the_lock(args(papers, archive, "--from", WEEKS[2], "--to", WEEKS[3]))
        from dataclasses import replace
        [w11] = run_weeks(replace(s, max_kept=3), [WEEKS[1]], force=True)
    out, err = later.communicate(timeout=120)
    assert later.returncode == 0, err
    w12 = json.loads((archive / "2026-W12" / "decisions.json").read_bytes())
    assert w12["inputs"]["prior"]["2026-W11"] == hashlib.sha256(w11.path.read_bytes()).hexdigest()
    assert w12["prior_weeks"] == ["2026-W10", "2026-W11"]
