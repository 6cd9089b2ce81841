"""`reporter init` and `reporter help` (issue 37, item 1), in process; tests/test_wheel.py does it from the wheel.

A workspace started anywhere builds at once; init never replaces a file; every "no workspace here" error
names `reporter init` and docs/workspace.md; the docs `reporter help` prints are docs/ itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reporter.build import build
from reporter.cli import main
from reporter.commands.help import doc_pages
from reporter.commands.init import starter_files
from reporter.config import load_workspace

ROOT = Path(__file__).resolve().parents[1]


def _listing(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("kind", ["routing", "digest"])
def test_the_starter_readme_has_a_line_for_each_file(kind):
    files = starter_files(kind)
    readme = files["README.md"].decode().split("## What is here", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `([^`]+)`:", readme, flags=re.M)
    assert sorted(listed) == sorted([*files, *(["papers/"] if kind == "digest" else [])])
    toml = files["reporter.toml"].decode()
    assert "docs/workspace.md" in toml and "`reporter help workspace`" in toml


def test_init_writes_a_workspace_that_builds_at_once(tmp_path, capsys, monkeypatch):
    work = tmp_path / "campaign"
    assert main(["init", str(work)]) == 0
    out = capsys.readouterr().out
    assert f"wrote a workspace in {work}: README.md, reporter.toml, specs/piles.json" in out
    assert "next: cd " in out and "reporter build" in out and "docs/workspace.md" in out
    assert sorted(p for p, v in _listing(work).items() if v is not None) == sorted(starter_files("routing"))
    ws = load_workspace(work)
    assert ws.example is not None and ws.example.rows == 20000 and not ws.pool.exists()
    report = build(ws, workers=1, progress=False)
    assert report.created and report.rows == 20000
    stats = json.loads((ws.releases / report.release_id / "rule_stats.json").read_text())
    won = {r["id"]: r["won"] for r in stats["rules"]}
    # Every starter rule that can win wins some invented works: each shows what its kind of rule does.
    assert all(won[r] > 0 for r in ("not-a-paper", "replication-design", "any-replicat-word", "osf-without-text"))
    assert (work / "site" / "index.html").is_file() and (ws.root / "data" / "labels.csv").is_file()


def test_init_digest_only_builds_a_digest_site(tmp_path, capsys):
    work = tmp_path / "weekly"
    assert main(["init", str(work), "--digest-only"]) == 0
    assert (work / "papers").is_dir() and not list((work / "papers").iterdir())
    assert main(["build", "--workspace", str(work)]) == 0
    assert "routed nothing: a digest-only workspace" in capsys.readouterr().out
    assert (work / "site" / "index.html").is_file()


def test_init_never_replaces_a_file_and_writes_nothing_when_it_would(tmp_path, capsys):
    work = tmp_path / "w"
    (work / "specs").mkdir(parents=True)
    (work / "specs" / "piles.json").write_text("{}\n")  # the user's own
    before = _listing(work)
    assert main(["init", str(work)]) == 2
    assert f"{work / 'specs' / 'piles.json'}: is there already, with other content" in capsys.readouterr().err
    assert _listing(work) == before
    # A file with the starter's own bytes (a killed init's) is no conflict: a second run completes it.
    (work / "specs" / "piles.json").write_bytes(starter_files("routing")["specs/piles.json"])
    assert main(["init", str(work)]) == 0
    assert main(["init", str(work)]) == 2  # now a workspace: refused, naming it
    assert f"{work / 'reporter.toml'}: this folder is a workspace already" in capsys.readouterr().err


def test_init_refuses_a_file_where_it_would_make_a_folder_before_writing_anything(tmp_path, capsys):
    """A file named `specs` (or DIR itself a file) is found before the README is written, not after."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "specs").write_text("mine\n")
    before = _listing(work)
    assert main(["init", str(work)]) == 2
    assert f"{work / 'specs'}: is a file where `reporter init` would make a folder" in capsys.readouterr().err
    assert _listing(work) == before
    assert main(["init", str(work / "specs")]) == 2
    assert _listing(work) == before


@pytest.mark.parametrize("argv", [["build"], ["route"], ["render"], ["screen"], ["digest", "--week", "2026-W25"]])
def test_every_no_workspace_error_names_reporter_init_and_the_doc(tmp_path, capsys, monkeypatch, argv):
    """Issue 37, item 1: `reporter build` in an empty folder said to create reporter.toml, not where its format
    is written down. Each command that needs a workspace now says how to make one and where the keys are."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "`reporter init` writes a workspace" in err and "docs/workspace.md (`reporter help workspace`)" in err, err
    assert list(tmp_path.iterdir()) == []


def test_help_lists_and_prints_the_docs(capsys):
    pages = doc_pages()
    assert set(pages) == {p.relative_to(ROOT / "docs").with_suffix("").as_posix()
                          for p in (ROOT / "docs").rglob("*.md")}
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  workspace +The workspace: reporter.toml$", out, flags=re.M), out
    assert main(["help", "workspace"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "workspace.md").read_text(encoding="utf-8")
    assert main(["help", "docs/design/cli.md"]) == 0
    assert capsys.readouterr().out.startswith("# The command line and the workspace")
    assert main(["help", "nope"]) == 2
    assert "no documentation page 'nope'; the pages: architecture," in capsys.readouterr().err


def test_route_before_the_first_build_says_the_build_makes_the_example_pool(tmp_path, capsys, monkeypatch):
    """After `reporter init`, `reporter route` said only that data/labels.csv does not exist."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    capsys.readouterr()
    assert main(["route"]) == 2
    err = capsys.readouterr().err
    assert "data/pool.parquet: the pool does not exist yet; [example] in" in err and "`reporter build`" in err
    assert not (tmp_path / "data").exists() and not (tmp_path / "releases").exists()
