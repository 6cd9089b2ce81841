"""The seeded example data: a pool of invented works and its labels, for the example workspace and tests.

Not a pipeline stage: `reporter build` calls it only when the workspace's
`[example]` pool is missing. `python -m reporter.example --help` writes one by hand.
"""

from .generate import (GENERATOR_VERSION, INCLUDE_KINDS, KINDS, MARKER_KEY, generate_labels, generate_pool,
                       pool_truth)
from .words import BANKS, HOSTILE_TITLES

__all__ = ["BANKS", "GENERATOR_VERSION", "HOSTILE_TITLES", "INCLUDE_KINDS", "KINDS", "MARKER_KEY",
           "generate_labels", "generate_pool", "pool_truth"]
