"""The two gates on every combination of two votes, against the table of docs/screening.md written out here.

Each vote is one of: a valid include, exclude or cannot_be_determined; an
invalid reply of each cause; None (not asked yet); FAILED (the provider
failed after its retries). The expected outcome is not computed by the rule
under test: each vote is put in one of four kinds, and the outcome of every
pair of kinds is written out as the design states it.
"""

import sqlite3
from itertools import product

import pytest

from reporter.panel.votes import FAILED, Vote
from reporter.panel.store import open_store
from reporter.screening.answer import (ANSWERS, INVALID_CAUSES, TIER_OUTCOMES, cheap_gate, is_exclude, screen_gate,
                                       tier_gate)

VOTES = {
    **{answer: Vote(answer, reason=f"a {answer} reason") for answer in ANSWERS},
    **{f"invalid:{cause}": Vote(None, cause, reason="what was wrong") for cause in INVALID_CAUSES},
    "missing": None,
    "failed": FAILED,
}
"""Every kind of vote a gate can see, by a readable name."""

KIND = {
    "exclude": "exclude",
    "include": "keep", "cannot_be_determined": "keep",
    **{f"invalid:{cause}": "keep" for cause in INVALID_CAUSES},
    "missing": "missing",
    "failed": "failed",
}
"""exclude: a valid explicit exclude; keep: a paid reply that is not one (a valid include or
cannot_be_determined, or an invalid reply of any cause); missing: not asked; failed: the provider failed."""

SCREEN_TABLE = {
    ("exclude", "exclude"): "discard",
    ("exclude", "keep"): "admit", ("keep", "exclude"): "admit", ("keep", "keep"): "admit",
    **{(k, gap): "incomplete" for k in ("exclude", "keep", "missing", "failed") for gap in ("missing", "failed")},
    **{(gap, k): "incomplete" for k in ("exclude", "keep", "missing", "failed") for gap in ("missing", "failed")},
}
"""screen_gate (docs/screening.md, "Votes and the gates"): a missing vote (not asked, or failed and so not
recorded) gives incomplete; two valid excludes discard; anything else admits."""

CHEAP_TABLE = {
    ("exclude", "exclude"): "discard",
    ("exclude", "missing"): "incomplete", ("missing", "exclude"): "incomplete", ("missing", "missing"): "incomplete",
    **{(k, stop): "proceed" for k in ("exclude", "keep", "missing", "failed") for stop in ("keep", "failed")},
    **{(stop, k): "proceed" for k in ("exclude", "keep", "missing", "failed") for stop in ("keep", "failed")},
}
"""cheap_gate: two valid excludes discard; a vote that can no longer make a discard (keep or failed) proceeds at
once, even while the other is missing; otherwise incomplete."""

PAIRS = list(product(VOTES, repeat=2))


def test_the_tables_cover_every_pair_of_kinds():
    kinds = {"exclude", "keep", "missing", "failed"}
    assert set(SCREEN_TABLE) == set(CHEAP_TABLE) == set(product(kinds, repeat=2))
    assert len(PAIRS) == (len(ANSWERS) + len(INVALID_CAUSES) + 2) ** 2 == 100


@pytest.mark.parametrize("a, b", PAIRS)
def test_screen_gate(a, b):
    assert screen_gate(VOTES[a], VOTES[b]) == SCREEN_TABLE[KIND[a], KIND[b]]


@pytest.mark.parametrize("a, b", PAIRS)
def test_cheap_gate(a, b):
    assert cheap_gate(VOTES[a], VOTES[b]) == CHEAP_TABLE[KIND[a], KIND[b]]


@pytest.mark.parametrize("a, b", PAIRS)
def test_both_gates_are_symmetric_and_tier_gate_picks_them(a, b):
    va, vb = VOTES[a], VOTES[b]
    assert screen_gate(va, vb) == screen_gate(vb, va)
    assert cheap_gate(va, vb) == cheap_gate(vb, va)
    assert tier_gate("expensive", va, vb) == screen_gate(va, vb)
    assert tier_gate("cheap", va, vb) == cheap_gate(va, vb)


def test_only_two_valid_excludes_discard_and_a_cheap_proceed_is_never_an_admit():
    discards = {(a, b) for a, b in PAIRS if screen_gate(VOTES[a], VOTES[b]) == "discard"}
    assert discards == {("exclude", "exclude")}
    assert {(a, b) for a, b in PAIRS if cheap_gate(VOTES[a], VOTES[b]) == "discard"} == discards
    outcomes = {cheap_gate(VOTES[a], VOTES[b]) for a, b in PAIRS}
    assert outcomes == {"discard", "proceed", "incomplete"}
    assert outcomes - {"incomplete"} == set(TIER_OUTCOMES["cheap"])
    assert {screen_gate(VOTES[a], VOTES[b]) for a, b in PAIRS} - {"incomplete"} == set(TIER_OUTCOMES["expensive"])


def test_an_invalid_reply_is_never_read_as_an_exclude():
    for cause in INVALID_CAUSES:
        invalid = VOTES[f"invalid:{cause}"]
        assert not invalid.valid and not is_exclude(invalid)
        assert screen_gate(invalid, VOTES["exclude"]) == "admit"
        assert cheap_gate(invalid, None) == "proceed"


def test_an_unknown_tier_is_refused():
    with pytest.raises(ValueError, match="unknown tier 'medium'"):
        tier_gate("medium", VOTES["exclude"], VOTES["exclude"])


def test_the_state_schema_allows_each_tier_exactly_the_outcomes_of_its_gate(tmp_path):
    """The panel's schema keeps the verdict CHECK as schema version 1 wrote it (`store_sql.OUTCOME_CHECK`); the
    screen's outcomes are screening's (`TIER_OUTCOMES`): each tier's are stored, no other outcome is, and a task
    other than the tiers (the digest's judge) stores `done`."""
    database = tmp_path / "s.db"
    open_store(str(database), where="[screen] database").close()
    conn = sqlite3.connect(database)
    every = {o for outcomes in TIER_OUTCOMES.values() for o in outcomes} | {"done", "incomplete"}
    stored = set()
    for k, (tier, outcome) in enumerate(product([*TIER_OUTCOMES, "judge"], sorted(every))):
        try:
            with conn:
                conn.execute("INSERT INTO verdicts VALUES (?, 'g', ?, ?, 'r', 0)", (tier, f"w{k}", outcome))
            stored.add((tier, outcome))
        except sqlite3.IntegrityError:
            pass
    conn.close()
    assert stored == {(t, o) for t, outcomes in TIER_OUTCOMES.items() for o in outcomes} | {("judge", "done")}
