"""`[digest.judge]` of reporter.toml: the judge's state database, its raw-reply folder and its one or two judges."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...panel.config import DEFAULT_BATCH_SIZE, DEFAULT_LEASE_SECONDS, VoterSettings, parse_budget, parse_database, \
    parse_password_env, parse_voters
from ...settings import Table, positive, positive_seconds

JUDGES = (1, 2)
"""How many `[[digest.judge.voters]]` a judge may have."""
TABLE = "[digest.judge]"
"""How messages name the table."""
WHERE = f"{TABLE} database"
"""How messages name the judge's database."""


@dataclass(frozen=True)
class JudgeSettings:
    """The `[digest.judge]` table (docs/digest.md, "The criteria judge")."""

    database: str
    """The state authority of the judge's answers: a SQLite path (resolved against the workspace) or a
    postgresql:// URL (default `state/judge.db`)."""
    raw_dir: Path
    """Folder of the append-only raw-reply JSONL files, one per runner (default `state/judge-raw`)."""
    voters: tuple[VoterSettings, ...]
    """The one or two judges, with the keys of any panel's voters (`reporter.panel.config`)."""
    workspace: Path
    """The workspace folder (what the `reporter judge` command a refusal names is run in)."""
    lease_seconds: int = DEFAULT_LEASE_SECONDS
    """How long a claim lasts without a heartbeat before other runners may take it over."""
    batch_size: int = DEFAULT_BATCH_SIZE
    """How many papers a runner claims at once."""
    budget: float | None = None
    """`[digest.judge] budget`: US dollars the judge's current generation may spend over all runs (None: none)."""
    password_env: str | None = None
    """`[digest.judge] password_env`: the variable holding the PostgreSQL password (never the password itself)."""


def parse_judge(table: Table | None) -> JudgeSettings | None:
    """Parse `[digest.judge]`; None when the digest has no judge (Axis 2 is the keyword rule)."""
    if table is None:
        return None
    database = parse_database(table, "state/judge.db")
    raw_dir = table.path("raw_dir", "state/judge-raw")
    lease = table.get("lease_seconds", int, DEFAULT_LEASE_SECONDS, check=positive_seconds)
    batch = table.get("batch_size", int, DEFAULT_BATCH_SIZE, check=positive)
    budget = parse_budget(table)
    password_env = parse_password_env(table, database)
    entries = table.tables("voters")
    table.done()
    return JudgeSettings(database=database, raw_dir=raw_dir, voters=parse_voters(table, entries, JUDGES),
                         workspace=table.root, lease_seconds=lease, batch_size=batch,
                         budget=budget, password_env=password_env)
