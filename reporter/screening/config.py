"""[screen] of reporter.toml: the state database, the raw-response folder and each tier's two voters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Table, non_negative, positive

TIERS = ("cheap", "expensive")
VOTERS_PER_TIER = 2
DEFAULT_LEASE_SECONDS = 300


@dataclass(frozen=True)
class VoterSettings:
    """One [[screen.<tier>.voters]] entry: a model behind an OpenAI-compatible Chat Completions API."""

    name: str
    """The voter's id, unique in its tier; votes are recorded under it."""
    base_url: str
    """The API root, e.g. http://127.0.0.1:8000/v1."""
    model: str
    """The model name sent with each request."""
    api_key_env: str | None
    """Name of the environment variable holding the key (the key itself is never written anywhere)."""
    max_concurrency: int
    """Requests in flight at once for this voter (default 8)."""
    price_in_per_mtok: float
    """US dollars per million input tokens (0 for a local server)."""
    price_out_per_mtok: float
    """US dollars per million output tokens."""
    temperature: float = 0.0
    """Sampling temperature (default 0): part of the generation hash."""
    timeout_seconds: float = 60.0
    """Timeout of one request."""


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

    @property
    def is_postgres(self) -> bool:
        """True when the database is a PostgreSQL URL."""
        return self.database.startswith(("postgresql://", "postgres://"))


def _voter(t: Table) -> VoterSettings:
    return VoterSettings(
        name=t.get("name", str, check=lambda v: None if v.strip() else "must not be empty"),
        base_url=t.get("base_url", str, check=lambda v: None if v.startswith(("http://", "https://"))
                       else "must be an http:// or https:// URL"),
        model=t.get("model", str),
        api_key_env=t.get("api_key_env", str, None),
        max_concurrency=t.get("max_concurrency", int, 8, check=positive),
        price_in_per_mtok=t.get("price_in_per_mtok", float, check=non_negative),
        price_out_per_mtok=t.get("price_out_per_mtok", float, check=non_negative),
        temperature=t.get("temperature", float, 0.0, check=non_negative),
        timeout_seconds=t.get("timeout_seconds", float, 60.0, check=positive),
    )


def _tier(table: Table, tier: str) -> tuple[VoterSettings, ...]:
    sub = table.table(tier)
    if sub is None:
        return ()
    entries = sub.tables("voters")
    sub.done()
    voters = []
    for entry in entries:
        voters.append(_voter(entry))
        entry.done()
    if len(voters) != VOTERS_PER_TIER:
        raise sub.error("voters", f"must hold exactly {VOTERS_PER_TIER} [[screen.{tier}.voters]] entries, "
                                  f"not {len(voters)}")
    if voters[0].name == voters[1].name:
        raise sub.error("voters", f"names {voters[0].name!r} twice; each voter needs its own name")
    return tuple(voters)


def parse_screen(table: Table | None) -> ScreenSettings | None:
    """Parse [screen]; None when the workspace does not screen."""
    if table is None:
        return None
    database = table.get("database", str, "state/screen.db", check=lambda v: None if v else "must not be empty")
    if not database.startswith(("postgresql://", "postgres://")):
        database = str((table.root / database).resolve())
    return ScreenSettings(
        database=database,
        raw_dir=table.path("raw_dir", "state/raw"),
        lease_seconds=table.get("lease_seconds", int, DEFAULT_LEASE_SECONDS, check=positive),
        cheap=_tier(table, "cheap"),
        expensive=_tier(table, "expensive"),
    )
