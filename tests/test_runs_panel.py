"""The panel's run (screen and judge, one place: panel/runner.py) writes one run record a run: its voters with
their prompt hash and generation, per step its counts, its cost; stopped by --max-cost says so; no API key."""

from __future__ import annotations

import json

from support.fake_openai import Answer, FakeOpenAI
from support.judge import KEY as JUDGE_KEY, KEY_ENV as JUDGE_KEY_ENV, MODELS as JUDGE_MODELS, judge_workspace, \
    judgement
from test_screen_run import KEY, KEY_ENV, MODELS, make_workspace

from reporter.cli import main
from reporter.runs import read_runs

W1 = "2026-W20"


def test_a_screen_run_writes_one_record_with_its_models_counts_and_cost(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=2, screen=3, other=1)
        server.titles = w["titles"]
        argv = ["screen", "--workspace", str(w["root"]), "--run", "--json"]
        assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    [record] = read_runs(w["root"] / "state")
    assert record.kind == "screen" and record.status == "done" and record.command == ("reporter", *argv)
    assert record.counts["expensive.screened"] == 3 + 2 and record.counts["cheap.screened"] == 2
    assert record.counts["expensive.votes"] == 2 * 5 and record.counts["cheap.votes"] == 2 * 2
    assert record.cost_usd == round(out["spend_usd"], 6) and record.cost_usd > 0
    assert [(m.task, m.model) for m in record.models] == [("cheap", m) for m in MODELS["cheap"]] + \
        [("expensive", m) for m in MODELS["expensive"]]
    host = server.base_url.split("//")[1].split("/")[0]
    assert {m.host for m in record.models} == {host}
    assert all(len(m.prompt_sha256) == 64 and len(m.generation) == 64 for m in record.models)
    assert [i.role for i in record.inputs][0] == "release" and record.inputs[0].path.startswith("releases/")
    assert record.settings["tasks"]["cheap"][0]["api_key_env"] == KEY_ENV
    assert all(KEY not in p.read_text() for p in (w["root"] / "state" / "runs").rglob("*.json"))


def test_a_judge_run_writes_one_record_and_max_cost_makes_it_stopped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(JUDGE_KEY_ENV, JUDGE_KEY)
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 12}, batch_size=2, concurrency=1, judges=1)
        server.titles = w["titles"]
        main(["judge", "--workspace", str(w["root"]), "--week", W1, "--run", "--max-cost", "0.002", "--json"])
    [record] = read_runs(w["root"] / "state")
    assert record.kind == "judge" and record.status == "stopped"
    assert 1 <= record.counts["judge.screened"] < 12 and record.counts["judge.scope"] == 12
    assert 0 < record.cost_usd <= 0.002
    assert [(m.task, m.model) for m in record.models] == [("judge", JUDGE_MODELS[0])]
    assert [i.role for i in record.inputs] == ["papers", "criteria"] and all(i.sha256 for i in record.inputs)
    assert record.settings["max_cost"] == 0.002 and record.settings["steps"] == [W1]
    assert all(JUDGE_KEY not in p.read_text() for p in (w["root"] / "state" / "runs").rglob("*.json"))


def test_a_dry_run_writes_no_record(tmp_path, monkeypatch, capsys):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2)
        assert main(["screen", "--workspace", str(w["root"])]) == 0
    assert read_runs(w["root"] / "state") == []
