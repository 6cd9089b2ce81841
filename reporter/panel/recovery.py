"""Recovery: the replies of runners that ended before recording them, adopted so a reply paid for is never asked again.

A runner whose raw file nobody holds has ended (however it ended). Before
this run claims anything, `recover` frees the ended runners' claims and, for
every task's current generation, adopts their replies that never got a vote
row: each such work is claimed and its replies are read back from the raw
lines (`rawlog.replay`, validated again as if they had just arrived) and
recorded through the run (`runner._Run.record`), with the verdicts they make.
A line that cannot be read back into a row the store can hold (`unstorable`)
is recorded as that voter's failure. It runs on the run's database thread.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .rawlog import RawReply, dead_runners, orphans, replay
from .tier_loop import Asked, Tally, Tier


def recover(run: Any) -> dict[str, int]:
    """Free the claims of ended runners and adopt their replies that have no vote row; task -> replies adopted.

    Every task's current generation at once, before this runner claims
    anything, so a freed job is adopted before another claim can take it.
    """
    dead = [r for r in dead_runners(run.settings.raw_dir) if r != run.runner]
    if not dead:
        return {}
    lines = list(orphans(run.settings.raw_dir, run.store.raw_positions(), runners=dead))
    run.store.free_claims_of(dead)
    adopted: dict[str, int] = {}
    for tier in run.tasks.current():
        found: dict[str, dict[str, RawReply]] = {}
        for line in lines:
            if line.tier == tier.name and line.generation == tier.generation.id and line.voter in tier.by_name:
                found.setdefault(line.work_id, {}).setdefault(line.voter, line)
        adopted[tier.name] = _adopt(run, tier, found)
    # Adopted works still missing a vote go back to the pool of claimable jobs (only that vote is asked).
    run.store.release(run.runner)
    return adopted


def _adopt(run: Any, tier: Tier, found: Mapping[str, Mapping[str, RawReply]]) -> int:
    """Claim each work with orphan replies and record them as votes (plus the verdicts they make).

    A line that cannot be read back into a vote the store can hold is recorded as that voter's failure, with
    the cause, and the recovery goes on (a later run asks that voter again)."""
    from .store_rows import FailureRow, VoteRow
    asked, rows, failures = [], [], []
    for work_id in sorted(found):
        job = run.store.claim_work(tier.name, tier.generation.id, work_id, run.runner,
                                   run.settings.lease_seconds)
        if job is None:
            continue  # decided meanwhile, or held by a live runner
        got = Asked(job)
        for voter, line in sorted(found[work_id].items()):
            if voter in job.votes:
                continue
            try:
                reply = replay(line, tier.by_name[voter], run.environ, tier.answer)
                row = VoteRow(tier.name, tier.generation.id, work_id, voter, reply.vote, reply.input_tokens,
                              reply.output_tokens, reply.cost_usd, line.file, line.offset)
                unstorable(row)
            except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                cause = got.failed[voter] = (f"the raw reply {line.file}@{line.offset} could not be recorded "
                                             f"({type(exc).__name__}: {str(exc)[:200]}); recorded as this "
                                             f"voter's failure")
                failures.append(FailureRow(tier.name, tier.generation.id, work_id, voter, cause))
                continue
            got.replies[voter] = reply
            rows.append(row)
        asked.append(got)
    if not asked:
        return 0
    recorded = run.record(tier, asked, rows, failures, Tally())
    # Those replies were answered (paid), only never recorded: they are no longer in flight for their runner.
    for file, n in sorted(Counter(row.raw_file for row in rows).items()):
        run.store.note_requests(file.removesuffix(".jsonl"), answered=n)
    return recorded.votes


BIGINT = 2**63 - 1
"""The largest count (tokens, offsets) a state database's BIGINT column holds."""


def unstorable(row: Any) -> None:
    """Raise ValueError when a vote row holds a number the state database cannot store (its text always can:
    `store_text`)."""
    for name in ("input_tokens", "output_tokens", "raw_offset"):
        value = getattr(row, name)
        if value is not None and (not isinstance(value, int) or not 0 <= value <= BIGINT):
            raise ValueError(f"{name} {value!r} is not a count the database holds (0 to 2^63-1)")
    if not isinstance(row.cost_usd, float) or not math.isfinite(row.cost_usd) or row.cost_usd < 0:
        raise ValueError(f"cost_usd {row.cost_usd!r} is not a finite amount")
