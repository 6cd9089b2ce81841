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
