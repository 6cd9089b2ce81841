"""How every bench measures: a command as a whole process against its floor, measured the same way (issue 35, item 6).

- `measured(cmd)`: run a command to completion; its CPU seconds (user + system of every thread and every
  process it starts, so more cores cannot hide a slower path), wall seconds, and the peak resident memory of
  its whole process tree (sampled from /proc every 50 ms), as RSS and as PSS (shared pages split among the
  processes sharing them: the figure to hold against a memory budget for N workers, `TreeRSS`).
- `parent_argv(argv)`: `reporter ARGV` run so that the parent process reports its own CPU seconds (its
  workers' aside) when it ends: `measured` turns that into `parent_cpu_s` and `serial_share`, the parent's
  share of all the work, which bounds what more workers can gain (Amdahl: 1 / (s + (1 - s) / n)).
- `floor_process(command)`: what a floor's own process does first, so that it runs the way the measured
  command runs: pinned to one core, and with the process settings that command gives itself
  (`reporter.cli.COMMAND_ENVIRONMENT`; for `route`, glibc keeping freed memory and no transparent huge pages,
  reporter/commands/route.py). Without it a floor on a machine whose THP is "madvise" swings between 1.6
  and 12.5 CPU-s of system time on the same file.
- `line(label, m)` and `ratio(floor, m)`: one format for every bench's figures.

A bench alternates its floor and its command in one run (`--repeat`), so a busy machine slows both sides of
a pair; the ratios are per pair, with their median.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARENT_MARK = "bench-parent-cpu "
"""The line `parent_argv`'s wrapper writes to stderr when the command ends."""


class TreeRSS:
    """Samples the resident memory of a process and all its descendants (Linux /proc), keeping the peak.

    Two sums: RSS counts every page each process maps, so the shared
    libraries (about 80 MB of pyarrow, numpy and Hyperscan) and the pages a
    forked worker still shares with its parent are counted once per process;
    PSS (`smaps_rollup`, where the kernel has it) splits each shared page
    among the processes that map it, so the tree's PSS is the memory the
    tree really holds, and `peak_child_pss` the most any one descendant held
    (a worker's, for `reporter route --workers N`). Both are 0 where PSS
    cannot be read.
    """

    def __init__(self, pid: int, every: float = 0.05):
        self.pid, self.every, self.peak, self.peak_pss, self.peak_child_pss = pid, every, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                    children.setdefault(int(fields[1]), []).append(int(entry))
                except (OSError, IndexError, ValueError):
                    continue
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, []))
        return out

    def _run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            total = pss = 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/statm", "rb") as f:
                        total += int(f.read().split()[1]) * page
                    own = _pss(p)
                    pss += own
                    if p != self.pid:
                        self.peak_child_pss = max(self.peak_child_pss, own)
                except (OSError, IndexError, ValueError):
                    continue
            self.peak = max(self.peak, total)
            self.peak_pss = max(self.peak_pss, pss)
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _pss(pid: int) -> int:
    """A process's proportional set size in bytes (0 where /proc has no smaps_rollup)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for text in f:
                if text.startswith(b"Pss:"):
                    return int(text.split()[1]) * 1024
    except OSError:
        pass
    return 0


def parent_argv(argv: list[str]) -> list[str]:
    """`reporter ARGV` (as the console script runs it) in a process that reports its own CPU when it ends."""
    wrapper = ("import json, resource, sys\n"
               "from reporter.cli import main\n"
               "try:\n    code = main(sys.argv[1:])\n"
               "finally:\n"
               "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
               f"    print({PARENT_MARK!r} + json.dumps(r.ru_utime + r.ru_stime), file=sys.stderr)\n"
               "sys.exit(code)\n")
    return [sys.executable, "-c", wrapper, *argv]


def measured(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """Run a command to completion: its CPU seconds (with all its descendants), wall seconds, peak tree RSS;
    with `parent_cpu_s` and `serial_share` when it was started through `parent_argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=cwd or ROOT)
    sampler = TreeRSS(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    peak = sampler.stop()
    peak_pss, child_pss = sampler.peak_pss, sampler.peak_child_pss
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(err)
        raise SystemExit(f"bench: {' '.join(str(c) for c in cmd[:3])} ... failed (exit {proc.returncode})")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    m = {"cpu_s": user + system, "user_s": user, "system_s": system, "wall_s": wall, "peak_rss_mb": peak / 1e6,
         "peak_pss_mb": peak_pss / 1e6, "peak_child_pss_mb": child_pss / 1e6, "stdout": out}
    for text in err.splitlines():
        if text.startswith(PARENT_MARK):
            m["parent_cpu_s"] = float(text[len(PARENT_MARK):])
            m["serial_share"] = m["parent_cpu_s"] / m["cpu_s"] if m["cpu_s"] else 0.0
    return m


def floor_process(command: str | None = None) -> None:
    """Run this (floor) process the way `reporter COMMAND` runs: on one core, with the command's settings."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if command == "route":
        from reporter.routing.workers import keep_freed_memory, no_huge_pages
        keep_freed_memory()
        no_huge_pages()


def floor_env(command: str | None = None) -> dict:
    """The environment a floor process starts with: the command's own (`COMMAND_ENVIRONMENT`), read by libraries
    at load, so it must be set before the floor imports them."""
    from reporter.cli import COMMAND_ENVIRONMENT
    env = dict(os.environ)
    for name, value in COMMAND_ENVIRONMENT.get(command or "", {}).items():
        env.setdefault(name, value)
    return env


def phase_result(**figures) -> None:
    """A phase process's last stdout line: its figures (its peak RSS is what `measured` samples)."""
    print(json.dumps(figures))


def line(label: str, m: dict, rows: int | None = None) -> str:
    """One measured process as a line of text."""
    text = (f"  {label:<30} CPU {m['cpu_s']:7.2f} s (user {m['user_s']:.2f}, sys {m['system_s']:.2f})  "
            f"wall {m['wall_s']:7.2f} s  peak RSS {m['peak_rss_mb']:,.0f} MB"
            + (f" (PSS {m['peak_pss_mb']:,.0f})" if m.get("peak_pss_mb") else ""))
    if rows:
        text += f"  {rows / m['wall_s']:>10,.0f} rows/s"
    if "serial_share" in m:
        text += f"  parent {m['parent_cpu_s']:.2f} CPU-s = serial share {m['serial_share']:.1%}"
    return text


def ratio(floor: dict, m: dict) -> dict:
    """The command against its floor: CPU and wall ratios."""
    return {"cpu": m["cpu_s"] / floor["cpu_s"], "wall": m["wall_s"] / floor["wall_s"]}


def medians(pairs: list[dict]) -> dict:
    """The median of each ratio over the pairs of a run."""
    return {k: statistics.median(p[k] for p in pairs) for k in pairs[0]}


def machine() -> str:
    """The machine, in words: CPUs this process may use, the CPU model, the THP setting, the load."""
    model = ""
    try:
        model = next((x.split(":", 1)[1].strip() for x in Path("/proc/cpuinfo").read_text().splitlines()
                      if x.startswith("model name")), "")
    except OSError:
        pass
    try:
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        thp = "unknown"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{usable} usable CPUs ({model or 'unknown model'}), THP {thp}, load average {load}"


def main() -> int:
    """`python bench/measure.py`: the machine line every bench prints."""
    print(f"machine: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
