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
