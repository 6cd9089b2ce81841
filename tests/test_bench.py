"""The benchmarks in bench/ still import: a renamed or moved function breaks them here, not months later.

They are run by hand (their docstrings say how); nothing else imports them, so a
refactor of `reporter` that forgets one is caught only by this test.
"""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_every_benchmark_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # as `python bench/x.py` runs it: its siblings importable
    spec = importlib.util.spec_from_file_location(f"bench_{script[:-3]}", BENCH / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports only: each runs its work under `if __name__ == "__main__"`
    assert callable(getattr(module, "main", None)), f"bench/{script} has no main()"


def test_the_shared_measure_reports_the_parents_share_and_pins_a_floor_to_one_core(monkeypatch):
    """bench/measure.py, the one way the benches measure (issue 35, item 6): a command started through
    `parent_argv` reports its parent's own CPU (the serial share), and a floor process runs on one core."""
    import sys

    monkeypatch.syspath_prepend(str(BENCH))
    import measure

    m = measure.measured(measure.parent_argv(["--version"]))
    assert m["stdout"].startswith("reporter ")
    assert 0 < m["parent_cpu_s"] <= m["cpu_s"] + 0.01 and 0 < m["serial_share"] <= 1.01
    probe = "import os, sys; sys.path.insert(0, 'bench'); import measure; measure.floor_process(); " \
            "print(len(os.sched_getaffinity(0)))"
    assert measure.measured([sys.executable, "-c", probe])["stdout"].strip() == "1"


PROBE = r"""
import os, sys
block = bytearray(64 << 20)
block[::4096] = b"x" * len(block[::4096])   # every page resident
if os.fork() == 0:                           # the child shares every page with its parent
    os.write(1, b"child\n")
    sys.stdin.read()
    os._exit(0)
os.write(1, b"parent\n")
sys.stdin.read()
os.wait()
"""


def test_the_tree_memory_counts_pages_a_forked_child_shares_once_as_pss(monkeypatch):
    """RSS counts a page a forked worker shares with its parent twice; PSS splits it (issue 35, item 2)."""
    import subprocess
    import sys
    import time

    monkeypatch.syspath_prepend(str(BENCH))
    import measure

    if not Path("/proc/self/smaps_rollup").exists():
        pytest.skip("no /proc smaps_rollup here")
    proc = subprocess.Popen([sys.executable, "-c", PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert sorted(proc.stdout.readline().strip() for _ in range(2)) == ["child", "parent"]
        sampler = measure.TreeRSS(proc.pid, every=0.01)
        deadline = time.monotonic() + 30  # a bound on a wait for a sample, not a speed check
        while sampler.peak < 2 * (64 << 20) and time.monotonic() < deadline:
            time.sleep(0.01)
        rss, pss, child = sampler.stop(), sampler.peak_pss, sampler.peak_child_pss
    finally:
        proc.stdin.close()
        proc.wait()
    assert rss >= 2 * (64 << 20)                       # both processes map the 64 MB
    assert (64 << 20) <= pss <= rss - (24 << 20)       # PSS holds it once, split between the two
    assert (32 << 20) <= child < pss                  # the child: its half of the shared pages
