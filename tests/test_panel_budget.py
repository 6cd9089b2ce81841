"""A budget that holds (issue 34, item 2): `[screen] budget` and `[digest.judge] budget` over all runs of the current
generations, `--max-cost` for one run; each request's worst case reserved before it is sent; exit 4 and a message
naming the spend, the limit and how to raise it.

Against the fake OpenAI server and a real SQLite state database; every figure is the recorded spend (the vote rows'
`cost_usd`), never a time.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

import pytest
from support.fake_openai import Answer, FakeOpenAI
from support.judge import KEY as JUDGE_KEY, KEY_ENV as JUDGE_KEY_ENV, judge_workspace, judgement
from test_screen_run import KEY, KEY_ENV, make_workspace, screen

from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.panel.budget import Budget
from reporter.panel.run_report import EXIT_BUDGET
from reporter.panel.tier_loop import tier_messages
from reporter.screening.prompt import load_prompt
from reporter.screening.run import screen_tier

WEEK = "2026-W20"


def set_budget(root, table: str, usd: float) -> None:
    """Put `budget = usd` into the workspace's `[table]`."""
    toml = root / "reporter.toml"
    text = toml.read_text()
    head = f"[{table}]\n"
    assert head in text
    toml.write_text(text.replace(head, f"{head}budget = {usd!r}\n", 1))


def recorded_spend(db) -> float:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM votes").fetchone()[0]
    finally:
        conn.close()


def worst_request(w: dict) -> float:
    """The worst case of one expensive-screen request of this workspace (all works' prompts are alike)."""
    settings = load_workspace(w["root"]).screen
    tier = screen_tier("expensive", settings.expensive, load_prompt(settings), None, None, {})
    work = type("W", (), {"title": "Study W030 screenword", "abstract": "Abstract of W030.", "title_only": False})
    return Budget(1.0).worst_case(settings.expensive[0], tier_messages(tier, work))


def test_the_workspace_budget_holds_within_one_batch_and_stops_with_exit_4(tmp_path, monkeypatch, capsys):
    """Issue 34: `--max-cost 0.02` spent $0.0288; now the budget is reserved before each request, so the recorded
    spend stays under it (the overshoot goal was at most one batch's worst case), and the run exits 4 saying why."""
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=40, cheap_voters=False, batch_size=4,
                           concurrency=2, prices=(1.0, 3.0))
        budget = 0.004
        set_budget(w["root"], "screen", budget)
        server.titles = w["titles"]
        monkeypatch.setenv(KEY_ENV, KEY)
        code = main(["screen", "--workspace", str(w["root"]), "--run", "--tier", "expensive"])
        sent = server.total
    out = capsys.readouterr().out
    spend = recorded_spend(w["root"] / "state" / "screen.db")
    worst = worst_request(w)
    batch_worst = 4 * 2 * worst  # one batch of 4 works, two voters each
    assert code == EXIT_BUDGET == 4
    assert 0 < spend <= budget + batch_worst, "the overshoot is at most one batch's worst case"
    assert spend <= budget, "and in fact none: usage never passes the worst case"
    # it stopped only when the next worst case no longer fitted beside those in flight (2 voters x 2 slots)
    assert budget - spend < 5 * worst and sent < 80
    assert "stopped by [screen] budget" in out
    assert f"of [screen] budget $0.004" in out and "raise [screen] budget in" in out


def test_a_re_run_gets_no_fresh_workspace_budget(tmp_path):
    """The spend of the generation's earlier runs is read from the state database: a re-run with the budget
    spent sends nothing (a budget kept in memory would start again at zero)."""
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=20, cheap_voters=False, batch_size=2,
                           concurrency=1, prices=(1.0, 3.0))
        server.titles = w["titles"]
        first = screen(w, tiers=("expensive",), max_cost=0.002)
        assert first.stopped_by_max_cost and not first.stopped_by_budget and first.stop_message.startswith(
            "stopped by --max-cost: this run spent $")
        spent = recorded_spend(w["root"] / "state" / "screen.db")
        assert spent > 0
        set_budget(w["root"], "screen", spent + worst_request(w) / 2)  # less than one more request
        before = server.total
        second = screen(w, tiers=("expensive",))
        assert server.total == before, "nothing is sent: the budget was spent by the earlier run"
        third = screen(w, tiers=("expensive",), max_cost=10.0)  # a larger --max-cost does not lift the budget
        assert server.total == before
    for report in (second, third):
        assert report.stopped_by_budget and not report.stopped_by_max_cost
        assert report.budget_spent == pytest.approx(spent) and report.spend_usd == 0
        assert "raise [screen] budget" in report.stop_message


def test_a_budget_that_is_no_budget_is_refused_naming_the_key(tmp_path):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=1, cheap_voters=False)
        toml = w["root"] / "reporter.toml"
        text = toml.read_text()
        for bad in ("0", "-1", "inf", '"5"'):
            toml.write_text(text.replace("[screen]\n", f"[screen]\nbudget = {bad}\n", 1))
            with pytest.raises(InputError, match=r"\[screen\].*budget"):
                load_workspace(w["root"])


def test_the_judge_is_stopped_by_the_same_mechanism(tmp_path, monkeypatch, capsys):
    """`reporter judge --run` shares the budget: `[digest.judge] budget` over runs, `--max-cost`, exit 4."""
    monkeypatch.setenv(JUDGE_KEY_ENV, JUDGE_KEY)
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {WEEK: 16}, batch_size=2, concurrency=1, judges=1)
        server.titles = w["titles"]
        code = main(["judge", "--workspace", str(w["root"]), "--week", WEEK, "--run", "--max-cost", "0.002"])
        assert code == 4
        out = capsys.readouterr().out
        assert "stopped by --max-cost: this run spent $" in out and "with a larger --max-cost" in out
        spent = recorded_spend(w["db"])
        assert 0 < spent <= 0.002
        set_budget(w["root"], "digest.judge", spent)
        before = server.total
        code = main(["judge", "--workspace", str(w["root"]), "--week", WEEK, "--run"])
        assert code == 4 and server.total == before
    out = capsys.readouterr().out
    assert "stopped by [digest.judge] budget" in out and "raise [digest.judge] budget in" in out


def test_budget_reservations_pass_neither_limit():
    """The mechanism alone: the run's cap and the workspace's budget (with what earlier runs and other runners
    recorded) each refuse the reservation that would pass them, and say which."""
    b = Budget(1.0, 2.0, "[screen] budget")
    b.load([("old-run", "a", 1.5), ("me", "a", 0.1)], "me")  # at the start: 1.6 spent over earlier runs
    assert b.before == pytest.approx(1.6) and b.reserve(0.3) and not b.refused
    b.settle(0.3, 0.2)
    b.load([("old-run", "a", 1.5), ("me", "a", 0.3), ("other", "b", 0.1)], "me")  # another runner spent 0.1
    assert b.workspace_spent == pytest.approx(1.9)
    assert not b.reserve(0.2) and b.refused_by == "budget"
    assert not b.reserve(0.0001), "refused for good"
    c = Budget(0.5)
    assert c.reserve(0.5) and not c.reserve(0.01) and c.refused_by == "max_cost"
    assert Budget(None).reserve(1e9), "no limit: nothing is counted"


def test_a_spent_budget_with_nothing_left_to_do_is_done_not_stopped(tmp_path, monkeypatch, capsys):
    """Adversarial: a re-run of a finished screen whose budget is exactly spent has nothing to send; it exits 0,
    not 4 (a stop would tell the operator work was left)."""
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False)
        server.titles = w["titles"]
        assert screen(w, tiers=("expensive",)).tiers[0].screened == 3
        set_budget(w["root"], "screen", recorded_spend(w["root"] / "state" / "screen.db"))
        monkeypatch.setenv(KEY_ENV, KEY)
        before = server.total
        assert main(["screen", "--workspace", str(w["root"]), "--run", "--tier", "expensive"]) == 0
        assert server.total == before
    assert "stopped by" not in capsys.readouterr().out


@dataclass(frozen=True)
class Billed:
    """A valid answer whose usage bills `factor` times the prompt tokens the fake counts (a server whose own
    tokenizer counts more than the offline one, as any model but OpenAI's may)."""

    factor: int

    async def _reply(self, exchange) -> None:
        reply = exchange.completion_object(json.dumps({"label": "include", "reason": "Fits."}), None, "stop")
        usage = reply["usage"]
        usage["prompt_tokens"] *= self.factor
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        await exchange.json(200, reply)


def test_a_server_that_bills_more_prompt_tokens_than_counted_offline_does_not_break_the_cap(tmp_path):
    """Adversarial: the worst case counts the prompt offline; a server billing three times that made every
    reservation a third of the truth, and the spend passed the cap by what was in flight. The voter's billed
    ratio is learnt from its replies, so once they come the reservations hold again."""
    with FakeOpenAI(default=Billed(3)) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=40, cheap_voters=False, batch_size=2,
                           concurrency=2, prices=(3.0, 0.01))
        server.titles = w["titles"]
        cap = 0.05
        report = screen(w, tiers=("expensive",), max_cost=cap)
    spend = recorded_spend(w["root"] / "state" / "screen.db")
    assert report.stopped_by_max_cost and spend == pytest.approx(report.spend_usd)
    assert spend <= cap, f"spent {spend} of {cap}"


@pytest.mark.parametrize("verb, key", [("screen", "[screen] budget"), ("judge", "[digest.judge] budget")])
def test_exit_4_is_documented_in_the_help_and_the_docs(verb, key, capsys):
    from pathlib import Path
    with pytest.raises(SystemExit) as exit_:
        main([verb, "--help"])
    assert exit_.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert (f"4 when --max-cost or {key} stopped the sending" in help_text
            or f"4 stopped by --max-cost or {key}" in help_text), help_text
    docs = " ".join((Path(__file__).resolve().parents[1] / "docs" / "screening.md").read_text().split())
    assert "4 stopped by `--max-cost` or the workspace's budget" in docs
