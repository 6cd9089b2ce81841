"""A panel's settings: its voters (`[[<table>.voters]]`, the one parser of a voter) and its state database.

A task that asks the panel (the screen's `[screen]`, the digest's `[digest.judge]`)
reads its own table and hands each voters entry and its `database` key here, so
a voter means the same keys, defaults and checks wherever it is configured.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import Table, http_url, non_negative, positive, positive_seconds
from .prices import PRICES_FILE, default_price
from .store_connect import is_postgres

DEFAULT_LEASE_SECONDS = 300
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_TOKENS = 300
MAX_CONCURRENCY = 256
"""The most requests one voter may have in flight (`max_concurrency`): each 8 take an HTTP client, and a run
claims max_concurrency + batch_size works at once; 100,000 made 12,500 clients and took 318 s for 31 papers."""


@dataclass(frozen=True)
class VoterSettings:
    """One voters entry (`[[screen.<tier>.voters]]`, `[[digest.judge.voters]]`): a model behind an
    OpenAI-compatible Chat Completions API."""

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
    """US dollars per million input tokens (0 for a local server); from prices.json when not configured."""
    price_out_per_mtok: float
    """US dollars per million output tokens; from prices.json when not configured."""
    temperature: float = 0.0
    """Sampling temperature (default 0): part of the generation hash."""
    timeout_seconds: float = 60.0
    """Timeout of one request."""
    structured_output: bool = True
    """Ask for JSON-schema output (`response_format`); false for servers that refuse it. Part of the generation."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    """Upper bound on a reply's tokens (`max_tokens`); a reply cut by it is a `truncated` vote. Part of the generation."""
    price_checked: str | None = None
    """None when the prices were configured; else the date prices.json says they were checked (or `unchecked`)."""
    requests_per_minute: int | None = None
    """The most requests sent in any minute (the client's retries included), over all its concurrency (None:
    no limit); not part of the generation."""
    tokens_per_minute: int | None = None
    """The most tokens (each request's prompt plus max_tokens) sent in any minute (None: no limit)."""


def parse_voter(t: Table) -> VoterSettings:
    """One voters entry (`name`, `base_url`, `model`, `api_key_env`, `max_concurrency`, prices, ...): the one
    parser of a voter, for the screen's tiers and the digest's judges alike."""
    model = t.get("model", str, check=lambda v: None if v.strip() else "must not be empty")
    price_in, price_out, checked = _prices(t, model)
    return VoterSettings(
        name=t.get("name", str, check=lambda v: None if v.strip() else "must not be empty"),
        base_url=t.get("base_url", str, check=http_url),
        model=model,
        api_key_env=t.get("api_key_env", str, None, check=lambda v: None if v.strip() else "must not be empty"),
        max_concurrency=t.get("max_concurrency", int, 8, check=_concurrency),
        price_in_per_mtok=price_in,
        price_out_per_mtok=price_out,
        temperature=t.get("temperature", float, 0.0, check=non_negative),
        timeout_seconds=t.get("timeout_seconds", float, 60.0, check=positive_seconds),
        structured_output=t.get("structured_output", bool, True),
        max_tokens=t.get("max_tokens", int, DEFAULT_MAX_TOKENS, check=positive),
        price_checked=checked,
        requests_per_minute=t.get("requests_per_minute", int, None, check=positive),
        tokens_per_minute=t.get("tokens_per_minute", int, None, check=positive),
    )


def _concurrency(value: int) -> str | None:
    if not 1 <= value <= MAX_CONCURRENCY:
        return (f"must be 1 to {MAX_CONCURRENCY} (requests in flight for this voter), not {value}; run more "
                f"runners at once to go wider")
    return None


def _prices(t: Table, model: str) -> tuple[float, float, str | None]:
    """The voter's prices: as configured, else prices.json's for its model; a model not listed needs both."""
    listed = default_price(model)
    if listed is None:
        for key in ("price_in_per_mtok", "price_out_per_mtok"):
            if key not in t.data:
                raise t.error(key, f"is missing: model {model!r} is not in the default price table "
                                   f"({PRICES_FILE}); set price_in_per_mtok and price_out_per_mtok "
                                   f"(dollars per million tokens; 0 for a local server)")
    price_in = t.get("price_in_per_mtok", float, None, check=non_negative)
    price_out = t.get("price_out_per_mtok", float, None, check=non_negative)
    if listed is None or (price_in is not None and price_out is not None):
        return price_in, price_out, None
    return (listed.in_per_mtok if price_in is None else price_in,
            listed.out_per_mtok if price_out is None else price_out, listed.checked)


def parse_voters(table: Table, entries: list[Table], counts: tuple[int, ...]) -> tuple[VoterSettings, ...]:
    """The `[[<table>.voters]]` entries of `table` (read with `table.tables("voters")`): as many as `counts`
    allows, each with its own name."""
    voters = []
    for entry in entries:
        voters.append(parse_voter(entry))
        entry.done()
    if len(voters) not in counts:
        allowed = f"exactly {counts[0]}" if len(counts) == 1 else " or ".join(map(str, counts))
        raise table.error("voters", f"must hold {allowed} [[{table.name}.voters]] entries, not {len(voters)}")
    names = [v.name for v in voters]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise table.error("voters", f"names {twice!r} twice; each voter needs its own name")
    return tuple(voters)


def parse_budget(table: Table) -> float | None:
    """`budget`: US dollars the current generations of the table's tasks may spend over all their runs (None:
    no budget); the runner reads what they spent from the state database (`budget.py`)."""
    return table.get("budget", float, None, check=lambda v: None if v > 0 else
                     "must be a positive number of US dollars (leave the key out for no budget)")


def parse_password_env(table: Table, database: str) -> str | None:
    """`password_env`: the environment variable holding the PostgreSQL password of `database` (None: libpq's own
    ways, the URL, PGPASSWORD or ~/.pgpass). Like a voter's `api_key_env`, the password itself is never written."""
    name = table.get("password_env", str, None, check=lambda v: None if v.strip() else "must not be empty")
    if name is not None and not is_postgres(database):
        raise table.error("password_env", "goes with a postgresql:// database (a SQLite file has no password)")
    return name


def parse_database(table: Table, default: str) -> str:
    """`database`: a postgresql:// URL as it is, else a SQLite path resolved against the workspace."""
    database = table.get("database", str, default, check=lambda v: None if v else "must not be empty")
    if not is_postgres(database):
        database = str((table.root / database).resolve())
    return database
