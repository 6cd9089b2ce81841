"""A digest-only workspace (issue 23, item 7): `site` and `[digest]`, no pool, specs or releases.

`reporter build`, `reporter digest --workspace` and `reporter render` work on one, and the home page
shows the digest, not "No release has been routed yet"; the commands that route or screen say which
keys to add. A routing-only workspace is unchanged (tests/test_site_golden.py).
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from support.site import parse_html

from reporter.build import build
from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digest"
DIGEST = ('[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\ncriteria = "criteria.md"\n'
          'archive = "digests"\n')
AFTER_W26 = date(2026, 6, 29)


def workspace(tmp: Path, *, listing: bool = False, extra: str = "") -> Path:
    """The example digest (2026-W25 and W26 of cs.GT) as a digest-only workspace; `listing`: as one file."""
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    for name in ("watchlist.txt", "criteria.md"):
        shutil.copy(EXAMPLE / name, ws / name)
    (ws / "papers").mkdir()
    if listing:  # one file of both weeks, named after neither: each row on its crawl_date
        (ws / "papers" / "cs-gt-listing.jsonl").write_bytes(
            b"".join((EXAMPLE / "papers" / f"2026-W{n}.jsonl").read_bytes() for n in (25, 26)))
    else:
        for n in (25, 26):
            shutil.copy(EXAMPLE / "papers" / f"2026-W{n}.jsonl", ws / "papers")
    (ws / "reporter.toml").write_text(f'site = "site"\n{extra}{DIGEST}', encoding="utf-8")
    return ws


def home(ws: Path):
    return parse_html((ws / "site" / "index.html").read_text(encoding="utf-8"))


def test_a_digest_only_workspace_builds_publishes_its_weeks_and_the_home_page_shows_the_digest(tmp_path, capsys):
    ws = workspace(tmp_path)
    loaded = load_workspace(ws)
    assert (loaded.pool, loaded.specs, loaded.releases, loaded.has_routing) == (None, None, None, False)
    report = build(loaded, progress=False, as_of=AFTER_W26)
    assert report.release_id is None and report.rows == 0 and report.site.releases == ()
    assert report.digest == ("2026-W25", "2026-W26") and report.site.digests == 2
    for week in report.digest:
        assert (ws / "digests" / week / "decisions.json").is_file()
        assert (ws / "site" / "digest" / f"{week}.html").is_file()
        assert (ws / "site" / "digest" / f"{week}.eml").is_file()
    assert not (ws / "releases").exists()
    page = home(ws)
    assert not page.find_all("section", id="latest") and not page.find_all("section", id="archive")
    assert "No release has been routed yet" not in page.text() and "routed" not in page.text()
    digest = page.find("section", id="digest")
    assert digest.find("a").attrs["href"] == "digest/2026-W26.html"
    assert page.find("h1").text() == "The weekly digest"
    twin = (ws / "site" / "index.md").read_text(encoding="utf-8")
    assert "No release has been routed yet" not in twin and "[Week 2026-W26](digest/2026-W26.md)" in twin
    # The relisted papers are listed again in 2026-W26 (item 6), here through the build.
    w26 = json.loads((ws / "digests" / "2026-W26" / "decisions.json").read_text(encoding="utf-8"))
    assert {a["id"] for a in w26["listed_again"]} == {"arxiv:2606.19618"}  # 2606.19968 was kept: decided again
    # The same build again changes nothing; the command says it routed nothing.
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert main(["build", "--workspace", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "routed nothing: a digest-only workspace" in out and "2 digest weeks" in out
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before


def test_a_listing_file_of_both_weeks_builds_the_same_weeks(tmp_path):
    ws = workspace(tmp_path, listing=True)
    report = build(load_workspace(ws), progress=False, as_of=AFTER_W26)
    assert report.digest == ("2026-W25", "2026-W26")
    apart = workspace(tmp_path / "apart")
    build(load_workspace(apart), progress=False, as_of=AFTER_W26)
    for week in report.digest:
        one, two = (json.loads((w / "digests" / week / "decisions.json").read_text()) for w in (ws, apart))
        assert one["decisions"] == two["decisions"] and one["listed_again"] == two["listed_again"]
        assert one["inputs"]["papers"]["file"] == "cs-gt-listing.jsonl"


def test_weeks_that_have_not_ended_wait_in_a_digest_only_build(tmp_path):
    ws = workspace(tmp_path)
    report = build(load_workspace(ws), progress=False, as_of=date(2026, 6, 24))
    assert report.digest == ("2026-W25",) and report.digest_later == ("2026-W26",)


def test_digest_and_render_work_on_a_digest_only_workspace(tmp_path, capsys, monkeypatch):
    ws = workspace(tmp_path)
    assert main(["digest", "--workspace", str(ws), "--from", "2026-W25", "--to", "2026-W26"]) == 0
    assert "2026-W26: " in capsys.readouterr().out
    site = tmp_path / "rendered"
    assert main(["render", "--workspace", str(ws), "--digests", str(ws / "digests"), "--out", str(site),
                 "--quiet"]) == 0
    assert "rendered 0 releases and 2 digest weeks" in capsys.readouterr().out
    page = parse_html((site / "index.html").read_text(encoding="utf-8"))
    assert not page.find_all("section", id="latest") and "2026-W26" in page.find("section", id="digest").text()
    assert main(["render", "--digests", str(ws / "digests"), "--out", str(tmp_path / "bare"), "--quiet"]) == 0
    monkeypatch.chdir(tmp_path)  # a folder without a reporter.toml: nothing to render from
    assert main(["render", "--out", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert "nothing to render: give --releases DIR" in err and "`reporter init` writes a workspace" in err
    assert "docs/workspace.md (`reporter help workspace`)" in err


@pytest.mark.parametrize("argv", [["route", "--workspace", "{ws}"], ["screen", "--workspace", "{ws}"]])
def test_commands_that_route_or_screen_name_the_keys_to_add(tmp_path, capsys, argv):
    ws = workspace(tmp_path, extra='[screen]\ndatabase = "state/screen.db"\nraw_dir = "state/raw"\n'
                                   'criteria = "criteria.md"\n' if argv[0] == "screen" else "")
    if argv[0] == "screen":
        pytest.importorskip("reporter.panel.runner")
    code = main([a.format(ws=ws) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "missing key 'pool' (and 'specs', 'releases')" in err and "this workspace is digest-only" in err
    assert 'add pool = "PATH"' in err


@pytest.mark.parametrize("toml, message", [
    ('site = "site"\npool = "pool.parquet"\n' + DIGEST,
     "missing key 'specs': pool, specs, releases go together (the routing side); add 'specs' and 'releases', "
     "or leave out 'pool' for a digest-only workspace"),
    ('site = "site"\nlabels = "labels.csv"\n' + DIGEST, "key 'labels' is for the routing side"),
    ('site = "site"\n', "missing key 'pool' (a path relative to the file); a workspace routes a pool"),
])
def test_a_half_routing_side_is_refused_naming_the_keys(tmp_path, toml, message):
    (tmp_path / "reporter.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_workspace(tmp_path)


def test_the_routing_accessor_is_the_one_message(tmp_path):
    ws = load_workspace(workspace(tmp_path))
    with pytest.raises(InputError, match=r"reporter.toml: missing key 'pool' .* reporter route needs the routing side"):
        ws.routing("reporter route")


def test_the_home_page_says_why_the_digest_week_and_the_release_can_differ_only_when_both_exist(
        site_build, tmp_path):
    """Issue 23, item 9: one sentence, shown when the site has a release and a digest."""
    from reporter.build import render_site
    ws = workspace(tmp_path / "digest")
    build(load_workspace(ws), progress=False, as_of=AFTER_W26)
    render_site(site_build["releases"], tmp_path / "both", digests_dir=ws / "digests", progress=False)
    note = parse_html((tmp_path / "both" / "index.html").read_text(encoding="utf-8")).find("p", id="digest-weeks-note")
    assert "a digest week is published only once it has ended" in note.text()
    assert "a release is routed whenever the pool is" in (tmp_path / "both" / "index.md").read_text(encoding="utf-8")
    assert not home(ws).find_all("p", id="digest-weeks-note")  # a digest alone
    routing_only = parse_html((site_build["site"] / "index.html").read_text(encoding="utf-8"))
    assert not routing_only.find_all("p", id="digest-weeks-note")  # a release alone


def test_digest_and_render_without_workspace_read_this_folders_reporter_toml(tmp_path, capsys, monkeypatch):
    """Issue 37, item 3: `build`, `route`, `screen`, ... read ./reporter.toml; `digest --week` and `render`
    refused without `--workspace .`. Now every command finds it the same way (commands.find_workspace)."""
    ws = workspace(tmp_path)
    monkeypatch.chdir(ws)
    assert main(["digest", "--week", "2026-W25"]) == 0
    assert "2026-W25: " in capsys.readouterr().out
    assert (ws / "digests" / "2026-W25" / "decisions.json").is_file()
    assert list((ws / "state" / "runs").iterdir()), "the run is recorded in the workspace's state, as --workspace ."
    assert main(["render", "--quiet"]) == 0  # no flags: what the workspace has (its digest archive), into its site
    assert f"rendered 0 releases and 1 digest week into {ws.resolve() / 'site'}:" in capsys.readouterr().out
    assert (ws / "site" / "digest" / "2026-W25.html").is_file()
    # Flags that name the inputs still stand alone: the four digest paths, or render's --digests.
    assert main(["render", "--digests", "digests", "--out", str(tmp_path / "bare"), "--quiet"]) == 0
    assert "rendered 0 releases and 1 digest week" in capsys.readouterr().out
