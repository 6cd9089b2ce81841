"""The dry run (reporter/screening/plan.py): exact works, token lengths and costs; nothing written."""

from __future__ import annotations

import json

import pytest
from test_screen_scope import ALL_EXPENSIVE, CHEAP, DIRECT, gens, make_workspace, record, route

from reporter.config import load_workspace

from reporter.errors import InputError
from reporter.panel.plan import DEFAULT_OUTPUT_TOKENS, token_stats
from reporter.panel.prompt import messages_for
from reporter.panel.store import open_store
from reporter.panel.tokens import count_message_tokens
from reporter.panel.votes import Vote
from reporter.screening.lengths import LENGTHS_FILE, KeptLengths, cache_key
from reporter.screening.plan import format_plan, plan_json, plan_screen
from reporter.screening.prompt import load_prompt
from reporter.screening.scope import load_works, release_id_of


def expected_lengths(ws, rdir, ids) -> dict[str, int]:
    """Each work's prompt tokens, counted the long way: the whole assembled request, message by message."""
    prompt = load_prompt(ws.screen)
    works = load_works(ws, rdir, ids)
    return {w: count_message_tokens([messages_for(prompt, works[w].title, works[w].abstract,
                                                  works[w].title_only)])[0] for w in ids}


def test_token_stats_on_lengths_a_person_can_check():
    t = token_stats([40, 10, 100, 30, 20])
    assert (t.count, t.min, t.median, t.p90, t.p99, t.max, t.total) == (5, 10, 30, 100, 100, 100, 200)
    assert t.histogram == ((10, 19, 1), (20, 29, 1), (30, 39, 1), (40, 49, 1), (50, 59, 0), (60, 69, 0),
                           (70, 79, 0), (80, 89, 0), (90, 99, 0), (100, 109, 1))
    assert token_stats([7, 7]).histogram == ((7, 7, 2),)
    assert token_stats([1, 2, 3, 4]).median == 2  # nearest rank: the lower middle
    assert token_stats([]) is None


def test_the_plan_sends_the_scope_with_exact_token_counts(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    cheap, expensive = plan_screen(ws, rdir)
    assert (cheap.tier, cheap.configured, cheap.works, cheap.voters) == ("cheap", False, 0, ())
    assert "go straight to the expensive screen" in cheap.note
    assert (expensive.configured, expensive.routed, expensive.decided, expensive.works) == (True, 6, 0, 6)
    lengths = expected_lengths(ws, rdir, ALL_EXPENSIVE)
    t = expensive.tokens
    ordered = sorted(lengths.values())
    assert (t.count, t.min, t.max, t.total) == (6, ordered[0], ordered[-1], sum(ordered))
    assert t.median == ordered[2] and t.p90 == ordered[-1]
    assert sum(c for _lo, _hi, c in t.histogram) == 6
    a, b = expensive.voters
    assert (a.voter, a.model, a.works, a.input_tokens) == ("a", "gpt-4o-mini", 6, sum(ordered))
    assert a.output_tokens_estimate == 6 * DEFAULT_OUTPUT_TOKENS
    assert a.cost_usd == pytest.approx((sum(ordered) * 0.15 + 360 * 0.6) / 1e6)
    assert b.cost_usd == pytest.approx((sum(ordered) * 0.5 + 360 * 1.0) / 1e6)
    assert expensive.total_cost_usd == pytest.approx(a.cost_usd + b.cost_usd)
    assert a.estimate and b.estimate  # no reply recorded yet to size the output (and b is not an OpenAI model)
    text = format_plan((cheap, expensive))
    assert "6 works would be sent" in text and f"max {ordered[-1]:,}" in text and "o200k_base" in text
    doc = plan_json((cheap, expensive))
    assert doc["tiers"][1]["works"] == 6 and sum(h["works"] for h in doc["tiers"][1]["tokens"]["histogram"]) == 6
    json.dumps(doc)


def test_the_dry_run_writes_nothing(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    before = sorted(p for p in tmp_path.rglob("*"))
    plan_screen(ws, rdir)
    assert not (tmp_path / "ws" / "state").exists()  # no database, no raw folder
    assert sorted(p for p in tmp_path.rglob("*")) == before


def test_the_cheap_tier_plans_its_works_and_the_screen_counts_those_to_come(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws", cheap=True))
    cheap, expensive = plan_screen(ws, rdir)
    lengths = expected_lengths(ws, rdir, CHEAP + DIRECT)
    assert (cheap.configured, cheap.works) == (True, 2)
    assert cheap.tokens.total == sum(lengths[w] for w in CHEAP)
    assert (expensive.works, expensive.may_come) == (4, 2)
    assert expensive.tokens.total == sum(lengths[w] for w in DIRECT)
    came = sum(lengths[w] for w in CHEAP)
    assert expensive.may_come_cost_usd == pytest.approx(
        (came * 0.15 + 120 * 0.6) / 1e6 + (came * 0.5 + 120 * 1.0) / 1e6)


def test_verdicts_remove_works_and_a_changed_prompt_brings_them_back(tmp_path):
    root = make_workspace(tmp_path / "ws")
    ws, rdir = route(root)
    gen = gens(ws)["expensive"]
    with open_store(ws.screen.database, where="[screen] database") as store:
        include, exclude = Vote("include", reason="r"), Vote("exclude", reason="r")
        record(store, rdir, "expensive", gen, votes={
            "doi:10.5555/a1": {"a": include, "b": include}, "doi:10.5555/a6": {"a": exclude, "b": exclude},
            "pmid:103": {"a": include}}, verdicts={"doi:10.5555/a1": "admit", "doi:10.5555/a6": "discard"},
            tokens=(100, 30, 0.001))
        _cheap, expensive = plan_screen(ws, rdir, store=store)
        assert (expensive.works, expensive.decided) == (4, 2)
        a, b = expensive.voters
        assert (a.works, b.works) == (3, 4)  # a has already answered pmid:103: only b is asked for it
        lengths = expected_lengths(ws, rdir, ALL_EXPENSIVE)
        assert a.input_tokens == sum(lengths[w] for w in ("pmid:101", "pmid:102", "osf:abc01"))
        assert a.output_tokens_estimate == 3 * 30 and "3 recorded replies" in a.output_basis
        assert not a.estimate and b.estimate  # a: an OpenAI model with replies recorded; b: not OpenAI's
    # The store is opened read-only when not given; it is never written.
    _cheap, expensive = plan_screen(ws, rdir)
    assert expensive.works == 4
    # A changed criteria file is a new prompt, so a new generation: the old verdicts stop counting.
    (root / "criteria.md").write_text("Include replication studies only.")
    _cheap, again = plan_screen(ws, rdir)
    assert again.generation != expensive.generation
    assert (again.works, again.decided) == (6, 0)
    assert all(v.works == 6 and v.output_tokens_estimate == 6 * DEFAULT_OUTPUT_TOKENS for v in again.voters)


def test_a_workspace_without_screen_is_told_how_to_configure(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws", screen=False))
    with pytest.raises(InputError, match=r"add a \[screen\] table"):
        plan_screen(ws, rdir)


def _refuse_counting(monkeypatch) -> None:
    """Any token count from here on fails the test (the kept lengths must serve)."""
    import reporter.panel.tokens as tokens

    def refuse(texts):
        raise AssertionError(f"{len(texts)} texts counted again")
    monkeypatch.setattr(tokens, "count_tokens", refuse)


def test_kept_lengths_serve_an_unchanged_release_and_prompt(tmp_path, monkeypatch):
    """Issue 37, item 4: the dry run's lengths are kept in the state folder under the release and the prompt;
    a second plan counts nothing, and its costs still follow the prices and the store."""
    root = make_workspace(tmp_path / "ws", cheap=True)
    ws, rdir = route(root)
    file = root / "state" / LENGTHS_FILE
    kept = KeptLengths(file)
    first = plan_screen(ws, rdir, lengths_file=kept)
    assert first == plan_screen(ws, rdir)  # the same plan as counting everything
    assert not file.exists()  # written only by commit (a build commits once it has published)
    kept.commit()
    doc = json.loads(file.read_text())
    assert doc["key"] == cache_key(release_id_of(rdir), load_prompt(ws.screen).hash)
    assert doc["lengths"] == expected_lengths(ws, rdir, CHEAP + DIRECT)
    written = file.read_bytes()
    _refuse_counting(monkeypatch)
    assert plan_screen(ws, rdir, lengths_file=kept) == first and kept.pending is None  # nothing counted
    kept.commit()
    assert file.read_bytes() == written  # nothing written
    # Prices are not part of the key: the costs are computed again from the kept lengths.
    (root / "reporter.toml").write_text((root / "reporter.toml").read_text().replace("0.15", "0.30"))
    dearer = plan_screen(load_workspace(root), rdir, lengths_file=kept)[1].voters[0]
    assert dearer.cost_usd == pytest.approx(first[1].voters[0].cost_usd + dearer.input_tokens * 0.15 / 1e6)
    # Verdicts recorded since: fewer works sent, still nothing counted.
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "expensive", gens(ws)["expensive"], votes={"pmid:103": {"a": Vote("include", reason="r"),
                                                                                     "b": Vote("include", reason="r")}},
               verdicts={"pmid:103": "admit"})
    assert plan_screen(ws, rdir, lengths_file=kept)[1].works == first[1].works - 1
    # A changed criteria file is another prompt: counted again, and the file holds the new key only.
    monkeypatch.undo()
    (root / "criteria.md").write_text("Include replication studies only.")
    again = plan_screen(ws, rdir, lengths_file=kept)
    kept.commit()
    doc = json.loads(file.read_text())
    assert doc["key"]["prompt_hash"] == load_prompt(ws.screen).hash != first[1].generation
    assert doc["lengths"] == expected_lengths(ws, rdir, CHEAP + DIRECT) and again == plan_screen(ws, rdir)


def test_a_damaged_lengths_file_is_counted_again_and_a_changed_pool_still_refused(tmp_path):
    root = make_workspace(tmp_path / "ws")
    ws, rdir = route(root)
    file = root / "state" / LENGTHS_FILE
    file.parent.mkdir()
    kept = KeptLengths(file)
    for damaged in ("{", "[]", json.dumps({"key": cache_key(release_id_of(rdir), load_prompt(ws.screen).hash),
                                           "lengths": {w: -5 for w in ALL_EXPENSIVE}})):
        file.write_text(damaged)
        assert plan_screen(ws, rdir, lengths_file=kept) == plan_screen(ws, rdir)
        kept.commit()
        assert json.loads(file.read_text())["lengths"] == expected_lengths(ws, rdir, ALL_EXPENSIVE)
    # Kept lengths are of the release's text: a pool changed since is refused all the same.
    (root / "pool.jsonl").write_text((root / "pool.jsonl").read_text().replace("Replication", "Repetition", 1))
    with pytest.raises(InputError, match="the pool differs from the one release"):
        plan_screen(ws, rdir, lengths_file=kept)
