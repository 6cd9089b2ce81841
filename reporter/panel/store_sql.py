"""The state store's SQL: its text escaping, the two dialects, and the schema.

Every string parameter goes in through `store_text` and every string read
comes out through `stored_text` (see reporter.panel.store); SQLite and
PostgreSQL differ only in the small SQL pieces of `Dialect`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

TEXT_MARK = "\ufffe"
"""Starts an escaped code point in stored text (a noncharacter: no text of ours holds it)."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff\ufffe]")
_ESCAPED = re.compile("\ufffe([0-9a-f]{4})")


def store_text(text: str) -> str:
    """`text` as the state database stores it: NUL, lone surrogates and U+FFFE as U+FFFE plus 4 hex digits.

    Reversible (`stored_text`), the same for SQLite and PostgreSQL, and the
    identity on text without those code points.
    """
    return _UNSTORABLE.sub(lambda m: f"{TEXT_MARK}{ord(m.group()):04x}", text)


def stored_text(text: str) -> str:
    """The text `store_text` stored, as it was."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text) if TEXT_MARK in text else text


def store_param(value: Any) -> Any:
    return store_text(value) if isinstance(value, str) else value


def stored_row(row: Sequence[Any]) -> tuple:
    return tuple(stored_text(v) if isinstance(v, str) else v for v in row)


class StoredCursor:
    """A driver's cursor whose rows come out through `stored_text`."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    def fetchone(self) -> tuple | None:
        row = self._cur.fetchone()
        return None if row is None else stored_row(row)

    def fetchall(self) -> list[tuple]:
        return [stored_row(r) for r in self._cur.fetchall()]


# --- the two dialects -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Dialect:
    """The SQL pieces in which SQLite and PostgreSQL differ; every statement is written once with `?`."""

    placeholder: str
    """`?` (sqlite3) or `%s` (psycopg)."""
    now: str
    """The database's clock in epoch seconds."""
    begin: str
    """Starts a write transaction."""
    claim_lock: str
    """Suffix of the claim query: lock the rows it picks, skipping rows another transaction holds."""
    row_lock: str
    """Suffix of a query that locks the rows it reads until the transaction ends."""
    ids: str
    """A table (work_id, pos) of a list of ids passed as one parameter (pos counts from 0)."""
    among_ids: str
    """`work_id` is in the list of ids passed as one parameter. PostgreSQL's `= ANY(array)` searches the
    primary key per id whatever the statistics say (a join with `unnest` can turn into a scan of the whole
    generation while the planner still thinks the table is empty)."""
    has_table: str
    """Counts the tables named by its one parameter in the store's schema."""
    schema_lock: str
    """Serialises concurrent schema creation ('' where `begin` already does)."""
    pack_ids: Callable[[Sequence[str]], Any]
    """The parameter `ids` reads."""
    analyze: str
    """Refreshes the planner's statistics of the tables named by `{tables}` ('' where none are needed).
    Without statistics PostgreSQL guesses that `tier = ?` keeps 0.5% of the rows and plans a table of 100k
    as if it held a few (nested loops over the whole table, minutes per query) until autovacuum analyses
    it, a minute or more later; SQLite's plans here need no statistics."""

    def sql(self, text: str) -> str:
        """`text` with this dialect's placeholders (statements never hold a literal `?` or `%`)."""
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


SQLITE = Dialect(
    placeholder="?",
    now="((julianday('now') - 2440587.5) * 86400.0)",
    begin="BEGIN IMMEDIATE",
    claim_lock="",
    row_lock="",
    ids="(SELECT value AS work_id, key AS pos FROM json_each(?))",
    among_ids="work_id IN (SELECT value FROM json_each(?))",
    has_table="SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
    schema_lock="",
    pack_ids=lambda ids: json.dumps(list(ids)),
    analyze="",
)

POSTGRES = Dialect(
    placeholder="%s",
    now="CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)",
    begin="BEGIN",
    claim_lock=" FOR UPDATE SKIP LOCKED",
    row_lock=" FOR UPDATE",
    ids="(SELECT t.work_id, t.pos - 1 AS pos FROM unnest(CAST(? AS TEXT[])) WITH ORDINALITY AS t(work_id, pos))",
    among_ids="work_id = ANY(CAST(? AS TEXT[]))",
    has_table="SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() "
              "AND table_name = ?",
    schema_lock="SELECT pg_advisory_xact_lock(4242010)",
    pack_ids=list,
    analyze="ANALYZE {tables}",
)


OUTCOME_CHECK: Final = ("CHECK ((tier = 'cheap' AND outcome IN ('discard', 'proceed')) OR (tier = 'expensive' AND "
                        "outcome IN ('admit', 'discard')) OR (tier NOT IN ('cheap', 'expensive') AND outcome = 'done'))")
"""The outcomes a verdict may store, as schema version 1 wrote them when the screen's two tiers were the only tasks:
the tasks `cheap` and `expensive` store their gates' outcomes, any other task (the digest's judge) stores DONE. It
is the schema's text, kept verbatim so every database made before reads the same (tests/test_screen_gate.py checks
the screen's gates against it); a new task stores DONE."""


# Column types both databases accept (SQLite maps them to its affinities). `done` is 0/1, not a boolean,
# so one statement reads the same in both.
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS generations (
  generation TEXT PRIMARY KEY, tier TEXT NOT NULL, definition TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS scope (
  release_id TEXT NOT NULL, tier TEXT NOT NULL, work_id TEXT NOT NULL, seq BIGINT NOT NULL,
  PRIMARY KEY (release_id, tier, work_id));
CREATE TABLE IF NOT EXISTS jobs (
  tier TEXT NOT NULL, generation TEXT NOT NULL, work_id TEXT NOT NULL, seq BIGINT NOT NULL,
  claimed_by TEXT, lease_until DOUBLE PRECISION, done INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tier, generation, work_id));
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (tier, generation, seq, work_id) WHERE done = 0;
CREATE INDEX IF NOT EXISTS jobs_claimed ON jobs (claimed_by) WHERE claimed_by IS NOT NULL;
CREATE TABLE IF NOT EXISTS votes (
  tier TEXT NOT NULL, generation TEXT NOT NULL, work_id TEXT NOT NULL, voter TEXT NOT NULL,
  label TEXT, invalid_cause TEXT, reason TEXT NOT NULL,
  input_tokens BIGINT, output_tokens BIGINT, cost_usd DOUBLE PRECISION NOT NULL,
  raw_file TEXT NOT NULL, raw_offset BIGINT NOT NULL, runner TEXT NOT NULL, recorded_at DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (tier, generation, work_id, voter),
  CHECK ((label IS NULL) <> (invalid_cause IS NULL)));
CREATE INDEX IF NOT EXISTS votes_raw ON votes (raw_file, raw_offset);
CREATE TABLE IF NOT EXISTS verdicts (
  tier TEXT NOT NULL, generation TEXT NOT NULL, work_id TEXT NOT NULL, outcome TEXT NOT NULL,
  runner TEXT NOT NULL, recorded_at DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (tier, generation, work_id), {OUTCOME_CHECK});
CREATE TABLE IF NOT EXISTS failures (
  tier TEXT NOT NULL, generation TEXT NOT NULL, work_id TEXT NOT NULL, voter TEXT NOT NULL, cause TEXT NOT NULL,
  runner TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS failures_generation ON failures (tier, generation);
CREATE TABLE IF NOT EXISTS runners (
  runner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, started_at DOUBLE PRECISION NOT NULL,
  heartbeat_at DOUBLE PRECISION, finished_at DOUBLE PRECISION);
"""

REQUESTS_TABLE = """
CREATE TABLE IF NOT EXISTS requests (
  runner TEXT PRIMARY KEY, sent BIGINT NOT NULL DEFAULT 0, answered BIGINT NOT NULL DEFAULT 0)"""
"""Per runner (one run), the requests it sent and those whose answer (a reply or a failure) it recorded.

Added to schema version 1 without changing it: made when absent, by every
writer that opens the database, and read as absent (no counts) by readers of
an older database. A reporter that does not know it leaves it alone."""

VOTE_DETAILS_TABLE = """
CREATE TABLE IF NOT EXISTS vote_details (
  tier TEXT NOT NULL, generation TEXT NOT NULL, work_id TEXT NOT NULL, voter TEXT NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY (tier, generation, work_id, voter))"""
"""A vote's answer fields beyond its label and reason (`Vote.detail`: the judge's cited lines), written in the
same transaction as the vote; the screen's votes have none.

Added to schema version 1 without changing it, like `requests`: made when absent by every writer, read as
empty in an older database."""

VOTE_COLUMNS = ("tier, generation, work_id, voter, label, invalid_cause, reason, input_tokens, output_tokens, "
                 "cost_usd, raw_file, raw_offset")
