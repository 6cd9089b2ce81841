"""[example] of reporter.toml: the seeded, made-up example pool `reporter build` generates when absent."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import Table

MAX_ROWS = 50_000_000
"""The most works the generator makes: its work_id schemes stay unique below this (OSF ids have 5 characters)."""


@dataclass(frozen=True)
class ExampleSettings:
    """The [example] table."""

    rows: int = 200_000
    """How many made-up works to generate (1 to 50,000,000)."""
    seed: int = 0
    """The generator's seed: same rows and seed, same bytes."""


def parse_example(table: Table | None) -> ExampleSettings | None:
    """Parse [example]; None when the workspace has none (its pool must then exist)."""
    if table is None:
        return None
    rows = table.get("rows", int, 200_000,
                     check=lambda n: None if 1 <= n <= MAX_ROWS else f"must be from 1 to {MAX_ROWS:,}, not {n}")
    return ExampleSettings(rows=rows, seed=table.get("seed", int, 0))
