"""reporter.build.build: gather everything, then write; a refused build changes nothing."""

import ast
import dataclasses
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import test_digest_workspace as digest_ws

from reporter import build as build_module
from reporter.build import Gathered, build
from reporter.build_steps import BUILD, RENDER, Checked, NoveltyResults, Plan, Sources
from reporter.cli import main
from reporter.digest import weeks
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.site.render import StagePages

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "site_workspace"


def _workspace(tmp_path: Path) -> Path:
    """The site fixture workspace (40 works, two rule books) with the example graph and candidates."""
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(FIXTURE / "pool.jsonl", ws / "pool.jsonl")
    shutil.copy(FIXTURE / "labels.csv", ws / "labels.csv")
    shutil.copytree(FIXTURE / "specs", ws / "specs")
    shutil.copytree(ROOT / "examples" / "novelty", ws / "novelty")
    (ws / "reporter.toml").write_text(
        'pool = "pool.jsonl"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\nlabels = "labels.csv"\n'
        'graph = "novelty/events.jsonl"\n[novelty]\ncandidates = "novelty/candidates.jsonl"\n')
    return ws


def _snapshot(ws: Path) -> dict[str, bytes]:
    """Every file under the workspace's outputs (releases, state, site) with its bytes."""
    return {str(p.relative_to(ws)): p.read_bytes() for sub in ("releases", "state", "site")
            for p in sorted((ws / sub).rglob("*")) if p.is_file()}


def test_build_reports_what_it_did(tmp_path):
    ws = _workspace(tmp_path)
    report = build(load_workspace(ws), progress=False)
    ids = json.loads((ws / "releases" / "index.json").read_text())
    assert ids == [report.release_id] and report.created and report.rows == 40
    assert report.novelty == {"duplicate": 2, "neighborhood": 2, "novel": 3, "unknown": 1}
    assert (ws / "releases" / report.release_id / "labels.json").exists()
    assert (ws / "state" / "novelty.jsonl").exists() and (ws / "site" / "novelty.html").exists()
    assert report.site.releases == (report.release_id,)
    # No temporary folder is left beside the release.
    assert sorted(p.name for p in (ws / "releases").iterdir() if p.name != ".lock") == [report.release_id,
                                                                                        "index.json"]


def test_a_build_refused_by_the_archive_changes_nothing(tmp_path, capsys):
    """The review's reproduction: tamper with an archived page, change a rule, build: exit 2, nothing written."""
    ws = _workspace(tmp_path)
    first = build(load_workspace(ws), progress=False)
    page = ws / "site" / "releases" / first.release_id / "index.html"
    page.write_text(page.read_text().replace("</body>", "<!-- tampered --></body>"))
    rule_file = sorted((ws / "specs" / "rules").glob("*.json"))[0]
    rules = json.loads(rule_file.read_text())
    rules[0]["description"] = "edited so the rule book mints a new release"
    rule_file.write_text(json.dumps(rules, indent=2))
    (ws / "labels.csv").write_text((ws / "labels.csv").read_text())  # labels unchanged
    before = _snapshot(ws)
    assert main(["build", "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"archived pages? would change", err) and "--rerender-archive" in err
    assert _snapshot(ws) == before, "the releases, their index, the state files and the site are as they were"
    assert [p.name for p in (ws / "releases").iterdir() if p.name.startswith(".tmp-")] == []


def test_bad_input_found_late_still_writes_nothing(tmp_path):
    """A candidates file that cannot be read stops the build before routing writes anything."""
    ws = _workspace(tmp_path)
    (ws / "novelty" / "candidates.jsonl").write_text("{not json\n")
    with pytest.raises(InputError, match="candidates.jsonl"):
        build(load_workspace(ws), progress=False)
    assert not (ws / "releases").exists() and not (ws / "site").exists() and not (ws / "state").exists()


def test_removing_labels_removes_the_label_findings(tmp_path):
    ws = _workspace(tmp_path)
    first = build(load_workspace(ws), progress=False)
    labels = ws / "releases" / first.release_id / "labels.json"
    assert labels.exists()
    toml = ws / "reporter.toml"
    toml.write_text(toml.read_text().replace('labels = "labels.csv"\n', ""))
    again = build(load_workspace(ws), progress=False)
    assert again.release_id == first.release_id and not again.created
    assert not labels.exists()
    assert "No labels were given" in (ws / "site" / "releases" / first.release_id / "status.html").read_text()


def test_build_date_comes_from_source_date_epoch(tmp_path):
    ws = _workspace(tmp_path)
    report = build(load_workspace(ws), progress=False, environ={"SOURCE_DATE_EPOCH": "1780000000"})
    assert report.as_of.isoformat() == "2026-05-28"
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        build(load_workspace(ws), progress=False, environ={"SOURCE_DATE_EPOCH": "soon"})


def test_build_takes_the_scan_engine_from_its_environment_as_route_does(tmp_path):
    """REPORTER_SCAN_ENGINE is read at the build's edge: an unknown one is exit 2 before anything is written,
    and either engine gives the same release."""
    ws = _workspace(tmp_path)
    with pytest.raises(InputError, match="REPORTER_SCAN_ENGINE='re2': name one of"):
        build(load_workspace(ws), progress=False, environ={"REPORTER_SCAN_ENGINE": "re2"})
    assert not (ws / "releases").exists()
    one = build(load_workspace(ws), progress=False, environ={"REPORTER_SCAN_ENGINE": "aho-corasick"})
    two = build(load_workspace(ws), progress=False, environ={})
    assert one.release_id == two.release_id and two.created is False


def test_releases_of_the_previous_engine_still_render(tmp_path):
    """An archive outlives engine versions: a routing.1 release (no context_chars) loads with its 80-character window."""
    from reporter.routing.artifacts import load_releases
    ws = _workspace(tmp_path)
    report = build(load_workspace(ws), progress=False)
    folder = ws / "releases" / report.release_id
    samples = json.loads((folder / "samples.json").read_text())
    window = samples.pop("context_chars")
    (folder / "samples.json").write_text(json.dumps(samples))
    manifest = json.loads((folder / "release.json").read_text())
    manifest["files"]["samples.json"] = hashlib.sha256((folder / "samples.json").read_bytes()).hexdigest()
    (folder / "release.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="lacks the field 'context_chars'"):
        load_releases(ws / "releases")
    manifest["engine_version"] = manifest["engine_version"].rsplit("+", 1)[0] + "+routing.1"
    del manifest["files"]  # routing.1 recorded no file digests
    (folder / "release.json").write_text(json.dumps(manifest))
    (release,) = load_releases(ws / "releases").releases
    assert release.samples.context_chars == 80 == window


# --- one orchestrator (issue 31, item 5): `reporter render` is `build` with the render-only plan, the stages'
# pages and the gathered inputs are typed, the build checks the digest's KEEPs, one function publishes a week.


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
