"""One orchestrator (issue 31, item 5): `reporter render` is `build` with the render-only plan, the stages'
pages and the gathered inputs are typed, the build checks the digest's KEEPs, and one function publishes a week."""

from __future__ import annotations

import ast
import dataclasses
import json
import shutil
from pathlib import Path

import test_digest_workspace as digest_ws
from test_build import _workspace

from reporter import build as build_module
from reporter.build import BUILD, RENDER, Gathered, Plan, Sources
from reporter.build_steps import Checked, NoveltyResults
from reporter.cli import main
from reporter.digest import weeks
from reporter.site.render import StagePages

ROOT = Path(__file__).resolve().parents[1]


def _record_plans(monkeypatch) -> list[Plan]:
    plans: list[Plan] = []
    run = build_module.run

    def recording(plan, src, **kwargs):
        plans.append(plan)
        return run(plan, src, **kwargs)
    monkeypatch.setattr(build_module, "run", recording)
    return plans


def test_render_is_build_with_the_render_only_plan(tmp_path, monkeypatch, capsys):
    ws = _workspace(tmp_path)
    plans = _record_plans(monkeypatch)
    assert main(["build", "--workspace", str(ws)]) == 0
    built = {p.relative_to(ws / "site"): p.read_bytes() for p in (ws / "site").rglob("*") if p.is_file()}
    releases = ws / "releases"
    index = (releases / "index.json").read_bytes()
    assert main(["render", "--workspace", str(ws), "--novelty", str(ws / "state" / "novelty.jsonl"),
                 "--out", str(tmp_path / "rendered"), "--quiet"]) == 0
    assert plans == [BUILD, RENDER]
    assert (RENDER.route, RENDER.decide, BUILD.route, BUILD.decide) == (False, False, True, True)
    # The render routes nothing and writes nothing but its site: the same pages a build wrote, byte for byte.
    assert (releases / "index.json").read_bytes() == index
    rendered = {p.relative_to(tmp_path / "rendered"): p.read_bytes()
                for p in (tmp_path / "rendered").rglob("*") if p.is_file()}
    assert rendered == built
    assert "rendered 1 release into" in capsys.readouterr().out


def test_the_stages_pages_and_the_gathered_inputs_are_typed():
    """No `Mapping[str, Any]` is splatted into a constructor: every part a stage fills is a typed field."""
    for cls in (StagePages, Gathered, Sources, Plan, Checked, NoveltyResults):
        for field in dataclasses.fields(cls):
            assert "Mapping" not in str(field.type), (cls.__name__, field.name, field.type)
            assert str(field.type) not in ("Any", "dict", "dict | None"), (cls.__name__, field.name, field.type)
    assert {"home", "report"}.isdisjoint(f.name for f in dataclasses.fields(StagePages))


def test_the_digest_decides_and_publishes_the_build_runs_the_novelty_check():
    """digest/publish.py decides weeks in memory; the novelty check of their KEEPs is the build's."""
    tree = ast.parse((ROOT / "reporter" / "digest" / "publish.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not {m for m in imported if m.startswith("novelty") or m.startswith("..novelty")}, imported
    assert not any(isinstance(node, ast.FunctionDef) and node.name in ("check_keeps", "publish_digest")
                   for node in ast.walk(tree))


def test_reporter_digest_and_reporter_build_publish_a_week_through_one_function(tmp_path, monkeypatch, capsys):
    published: list[tuple[str, str, bool]] = []
    original = weeks.publish_week

    def recording(settings, result, **kwargs):
        published.append((result.week, Path(settings.archive).name, kwargs.get("evidence") is not None))
        return original(settings, result, **kwargs)
    monkeypatch.setattr(weeks, "publish_week", recording)
    one = digest_ws.workspace(tmp_path / "digest")
    assert main(["digest", "--workspace", str(one), "--week", "2026-W25"]) == 0
    assert published == [("2026-W25", "digests", False)]
    two = digest_ws.workspace(tmp_path / "build", extra='graph = "events.jsonl"\n')
    shutil.copy(ROOT / "examples" / "novelty" / "events.jsonl", two / "events.jsonl")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1782734400")  # 2026-06-29: both weeks have ended
    assert main(["build", "--workspace", str(two)]) == 0
    # The build's weeks come through the same function, with the graph's verdicts on their KEEPs beside them.
    assert published[1:] == [("2026-W25", "digests", True), ("2026-W26", "digests", True)]
    for week in ("2026-W25", "2026-W26"):
        rows = [json.loads(line) for line in (two / "digests" / week / "novelty.jsonl").read_text().splitlines()]
        assert all(row["result"]["verdict"] for row in rows)
    capsys.readouterr()
