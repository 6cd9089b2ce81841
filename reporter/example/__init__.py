"""The seeded example data: a pool of invented works and its labels, for the example workspace and tests.

Not a pipeline stage: `reporter build` calls it only when the workspace's
`[example]` pool is missing. `python -m reporter.example --help` writes one by hand.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Loaded on first use: reading a workspace imports reporter.example.config, and should not
# pay for pyarrow.compute and the word lists (about half a second) unless a pool is generated.
_PUBLIC = {"generate_pool": "generate", "generate_labels": "generate", "pool_truth": "generate",
           "GENERATOR_VERSION": "generate", "INCLUDE_KINDS": "rows", "KINDS": "rows",
           "MARKER_KEY": "generate", "BANKS": "words", "HOSTILE_TITLES": "words"}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
