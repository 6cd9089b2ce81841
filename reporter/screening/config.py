"""[screen] of reporter.toml: the state database, the raw-response folder and each tier's two voters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..panel.config import DEFAULT_BATCH_SIZE, DEFAULT_LEASE_SECONDS, VoterSettings, parse_budget, parse_database, \
    parse_password_env, parse_voters
from ..settings import Table, positive, positive_seconds

TIERS = ("cheap", "expensive")
VOTERS_PER_TIER = 2
WHERE = "[screen] database"
"""How messages name the screen's state database."""


@dataclass(frozen=True)
class ScreenSettings:
    """The [screen] table."""

    database: str
    """The state authority: a SQLite path (resolved against the workspace) or a postgresql:// URL."""
    raw_dir: Path
    """Folder of the append-only raw-response JSONL files."""
    lease_seconds: int = DEFAULT_LEASE_SECONDS
    """How long a claim lasts without a heartbeat before other runners may take it over."""
    cheap: tuple[VoterSettings, ...] = ()
    """The cheap tier's voter pair (empty: the tier is not configured)."""
    expensive: tuple[VoterSettings, ...] = ()
    """The expensive screen's voter pair (empty: not configured)."""
    criteria: Path | None = None
    """`[screen] criteria`: a text or Markdown file of inclusion/exclusion criteria (None: the built-in default)."""
    batch_size: int = DEFAULT_BATCH_SIZE
    """How many works a runner claims at once."""
    budget: float | None = None
    """`[screen] budget`: US dollars both tiers' current generations may spend over all runs (None: no budget)."""
    password_env: str | None = None
    """`[screen] password_env`: the variable holding the PostgreSQL password (never the password itself)."""


def _tier(table: Table, tier: str) -> tuple[VoterSettings, ...]:
    sub = table.table(tier)
    if sub is None:
        return ()
    entries = sub.tables("voters")
    sub.done()
    return parse_voters(sub, entries, (VOTERS_PER_TIER,))


def parse_screen(table: Table | None) -> ScreenSettings | None:
    """Parse [screen]; None when the workspace does not screen."""
    if table is None:
        return None
    database = parse_database(table, "state/screen.db")
    return ScreenSettings(
        database=database,
        raw_dir=table.path("raw_dir", "state/raw"),
        lease_seconds=table.get("lease_seconds", int, DEFAULT_LEASE_SECONDS, check=positive_seconds),
        cheap=_tier(table, "cheap"),
        expensive=_tier(table, "expensive"),
        criteria=table.path("criteria", None),
        batch_size=table.get("batch_size", int, DEFAULT_BATCH_SIZE, check=positive),
        budget=parse_budget(table),
        password_env=parse_password_env(table, database),
    )


class ScreenWorkspace(Protocol):
    """What screening reads of a workspace, and nothing more: the workspace file (named in messages) and its
    folder, [screen], the pool with its overlay, and the labels. reporter.config's `Workspace` is one, handed over
    by the commands and the build; the stage never imports the configuration loader."""

    @property
    def file(self) -> Path: ...
    @property
    def root(self) -> Path: ...
    @property
    def screen(self) -> ScreenSettings | None: ...
    @property
    def pool(self) -> Path | None: ...
    @property
    def overlay(self) -> Path | None: ...
    @property
    def labels(self) -> Path | None: ...
