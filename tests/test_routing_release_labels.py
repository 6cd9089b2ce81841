"""Release labels and first-written dates: published.json beside a release, written once, never an input."""

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
from support.routing import write_pool, write_specs
from support.routing_fixture import ROWS, RULES

from reporter.build import build
from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.build import render_site

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "site_workspace"
EPOCH_2026_07_06 = "1783339200"  # 2026-07-06 12:00 UTC: the same day in every time zone within ±11 h
EPOCH_2026_08_05 = "1785931200"  # 2026-08-05 12:00 UTC: a later build's day


@pytest.fixture()
def ws(tmp_path):
    specs = write_specs(tmp_path, RULES)
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    return tmp_path, pool, specs


def _route(args, monkeypatch, epoch=EPOCH_2026_07_06):
    """`reporter route ... --json` in process, with SOURCE_DATE_EPOCH: (exit code, printed JSON)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["route", *map(str, args), "--workers", "1", "--json"])
    return code, json.loads(out.getvalue()) if code == 0 else None


def _published(releases: Path, release_id: str) -> dict:
    return json.loads((releases / release_id / "published.json").read_text())


def test_a_label_is_published_beside_the_release_and_never_changes_its_id(ws, monkeypatch):
    root, pool, specs = ws
    code, plain = _route(["--pool", pool, "--specs", specs, "--out", root / "plain"], monkeypatch)
    assert code == 0 and plain["created"]
    code, named = _route(["--pool", pool, "--specs", specs, "--out", root / "named", "--label", " 2026-W27 "],
                         monkeypatch)
    assert code == 0 and named["created"] and named["release_id"] == plain["release_id"]
    assert _published(root / "plain", plain["release_id"]) == {"label": None, "first_written": "2026-07-06"}
    assert _published(root / "named", named["release_id"]) == {"label": "2026-W27", "first_written": "2026-07-06"}
    assert named["published"] == {"label": "2026-W27", "first_written": "2026-07-06"}
    # every release file is byte-identical: the label lives beside them, not in them
    for name in ("release.json", "routing.parquet", "rule_stats.json", "samples.json"):
        assert ((root / "plain" / plain["release_id"] / name).read_bytes()
                == (root / "named" / named["release_id"] / name).read_bytes())
    manifest = json.loads((root / "named" / named["release_id"] / "release.json").read_text())
    assert "published.json" not in manifest["files"]


def test_a_second_route_never_rewrites_published_json(ws, monkeypatch, capsys):
    root, pool, specs = ws
    out = root / "releases"
    _, first = _route(["--pool", pool, "--specs", specs, "--out", out, "--label", "week one"], monkeypatch)
    before = (out / first["release_id"] / "published.json").read_bytes()
    code, again = _route(["--pool", pool, "--specs", specs, "--out", out, "--label", "week two"], monkeypatch,
                         epoch="1785931200")  # 2026-08-05
    assert code == 0 and not again["created"] and again["release_id"] == first["release_id"]
    assert (out / first["release_id"] / "published.json").read_bytes() == before
    assert again["published"] == {"label": "week one", "first_written": "2026-07-06"}
    # the text report says the new label was not applied
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1785931200")
    assert main(["route", "--pool", str(pool), "--specs", str(specs), "--out", str(out), "--workers", "1",
                 "--label", "week two"]) == 0
    captured = capsys.readouterr()
    assert "label week one, first written 2026-07-06" in captured.out
    assert "label 'week two' not applied" in captured.err
    assert (out / first["release_id"] / "published.json").read_bytes() == before


@pytest.mark.parametrize("label", ["", "   ", "two\nlines", "tab\there", "x" * 101])
def test_a_bad_label_is_refused_with_nothing_written(ws, monkeypatch, capsys, label):
    root, pool, specs = ws
    code, _ = _route(["--pool", pool, "--specs", specs, "--out", root / "releases", "--label", label], monkeypatch)
    assert code == 2
    assert "--label: a release label must be one line of printable text of 1 to 100 characters" in capsys.readouterr().err
    assert not (root / "releases").exists()


def test_a_label_of_100_characters_is_kept(ws, monkeypatch):
    root, pool, specs = ws
    code, result = _route(["--pool", pool, "--specs", specs, "--out", root / "releases", "--label", "é" * 100],
                          monkeypatch)
    assert code == 0 and _published(root / "releases", result["release_id"])["label"] == "é" * 100


def test_a_release_is_found_by_its_folder_id_prefix_or_label(ws, monkeypatch):
    from reporter.routing.published import find_release
    root, pool, specs = ws
    out = root / "releases"
    _, first = _route(["--pool", pool, "--specs", specs, "--out", out, "--label", "week one"], monkeypatch)
    write_specs(root, {**RULES, "screen.json": RULES["screen.json"][:-1]})  # a rule fewer: another id
    _, second = _route(["--pool", pool, "--specs", specs, "--out", out], monkeypatch)
    one, two = out / first["release_id"], out / second["release_id"]
    assert find_release(out, None) == two, "the newest of index.json"
    assert find_release(out, "week one") == find_release(out, first["release_id"]) == one
    assert find_release(out, first["release_id"][:6]) == find_release(out, one) == one
    copy = root / "copy"
    shutil.copytree(one, copy)
    assert find_release(out, copy) == copy, "a release folder anywhere"
    for name, why in ((first["release_id"][:5], "names no release"), ("week two", "names no release")):
        with pytest.raises(InputError, match=why):
            find_release(out, name, flag="--release")
    common = next(i for i in range(64) if first["release_id"][i] != second["release_id"][i])
    if common >= 6:  # two ids that share a prefix of 6 or more: the prefix names neither
        with pytest.raises(InputError, match="names more than one release"):
            find_release(out, first["release_id"][:common])
    with pytest.raises(InputError, match="no releases yet"):
        find_release(root / "none", None)


def _workspace(tmp_path: Path, extra: str = "") -> Path:
    """The site fixture workspace (40 works), with `extra` top-level keys in its reporter.toml."""
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    shutil.copy(FIXTURE / "pool.jsonl", ws / "pool.jsonl")
    shutil.copytree(FIXTURE / "specs", ws / "specs")
    (ws / "reporter.toml").write_text(f'{extra}pool = "pool.jsonl"\nspecs = "specs"\nreleases = "releases"\n'
                                      f'site = "site"\n')
    return ws


def test_the_workspace_label_is_read_and_a_flag_wins(tmp_path, monkeypatch):
    ws = _workspace(tmp_path, 'label = "2026-W26"\n')
    monkeypatch.chdir(ws)
    code, from_file = _route(["--workspace", ws], monkeypatch)
    assert code == 0 and from_file["published"]["label"] == "2026-W26"
    assert load_workspace(ws).release_name == "2026-W26"
    other = _workspace(tmp_path / "b", 'label = "2026-W26"\n')
    code, flagged = _route(["--workspace", other, "--label", "by flag"], monkeypatch)
    assert code == 0 and flagged["published"]["label"] == "by flag"
    assert flagged["release_id"] == from_file["release_id"]


@pytest.mark.parametrize("value", ['"a\\nb"', '""', "7"])
def test_a_bad_workspace_label_names_the_key(tmp_path, value):
    ws = _workspace(tmp_path, f"label = {value}\n")
    with pytest.raises(InputError, match=r"reporter.toml: key 'label'"):
        load_workspace(ws)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_label_and_date_on_the_home_release_and_status_pages_after_route(ws, monkeypatch):
    root, pool, specs = ws
    out = root / "releases"
    _, routed = _route(["--pool", pool, "--specs", specs, "--out", out, "--label", "2026-W27"], monkeypatch)
    site = root / "site"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH_2026_08_05)  # rendered a month later: the date is the release's
    render_site(out, site, progress=False)
    rid = routed["release_id"]
    named = f'<bdi>2026-W27</bdi> <code class="id">{rid[:12]}</code></a>'
    shown = {site / "index.html": f"{named}, first written 2026-07-06: ",
             site / "releases" / rid / "index.html":
                 f'<p>Release <strong><bdi>2026-W27</bdi></strong>, <code class="id">{rid}</code>, first written 2026-07-06: ',
             site / "releases" / rid / "status.html": f'{named}<span class="muted">, first written 2026-07-06</span>'}
    for page, line in shown.items():
        text = _text(page)
        assert line in text, page
        assert "2026-08-05" not in text, page


def test_build_publishes_the_workspace_label_and_shows_it_before_publishing(tmp_path):
    ws = _workspace(tmp_path, 'label = "2026-W27"\n')
    report = build(load_workspace(ws), as_of=None, environ={"SOURCE_DATE_EPOCH": EPOCH_2026_07_06}, progress=False)
    releases = ws / "releases"
    assert _published(releases, report.release_id) == {"label": "2026-W27", "first_written": "2026-07-06"}
    home = _text(ws / "site" / "index.html")
    assert f'<bdi>2026-W27</bdi> <code class="id">{report.release_id[:12]}</code></a>, first written 2026-07-06: ' in home
    # a rebuild under another label keeps the published one, on disk and on the pages
    (ws / "reporter.toml").write_text(_text(ws / "reporter.toml").replace("2026-W27", "renamed"))
    again = build(load_workspace(ws), environ={"SOURCE_DATE_EPOCH": EPOCH_2026_08_05}, progress=False)
    assert again.release_id == report.release_id and not again.created
    assert _published(releases, report.release_id) == {"label": "2026-W27", "first_written": "2026-07-06"}
    home = _text(ws / "site" / "index.html")
    assert f'<bdi>2026-W27</bdi> <code class="id">{report.release_id[:12]}</code></a>, first written 2026-07-06: ' in home
    assert "renamed" not in home and "2026-08-05" not in home


def test_naming_a_release_later_takes_a_hand_edit_and_a_rerender_of_the_archive(ws, monkeypatch, capsys):
    """What docs/release-format.md says to do: the site refuses a changed label unless the archive is re-rendered."""
    root, pool, specs = ws
    out, site = root / "releases", root / "site"
    _, routed = _route(["--pool", pool, "--specs", specs, "--out", out], monkeypatch)
    assert main(["render", "--releases", str(out), "--out", str(site), "--quiet"]) == 0
    file = out / routed["release_id"] / "published.json"
    file.write_text(json.dumps({"label": "named later", "first_written": "2026-07-06"}))
    assert main(["render", "--releases", str(out), "--out", str(site), "--quiet"]) == 2
    capsys.readouterr()
    assert main(["render", "--releases", str(out), "--out", str(site), "--quiet", "--rerender-archive"]) == 0
    assert "named later" in _text(site / "releases" / routed["release_id"] / "index.html")
