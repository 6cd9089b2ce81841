"""`reporter build` end to end on a small copy of the example workspace: generated pool, route, site."""

import itertools
import json
import shlex
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reporter.certify.results import load_certificates

ROOT = Path(__file__).resolve().parents[1]


class _Notes(HTMLParser):
    """Collects the text of elements with role="note"."""

    def __init__(self):
        super().__init__()
        self.depth, self.notes = 0, []

    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("role") == "note":
            self.depth = 1
            self.notes.append("")
        elif self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.notes[-1] += data


@pytest.mark.slow
def test_build_the_example_workspace_small(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copytree(ROOT / "specs", ws / "specs")
    shutil.copytree(ROOT / "examples", ws / "examples")
    toml = (ROOT / "reporter.toml").read_text().replace("rows = 200000", "rows = 3000")
    assert "rows = 3000" in toml
    (ws / "reporter.toml").write_text(toml)
    done = subprocess.run([sys.executable, "-m", "reporter.cli", "build", "--workspace", str(ws)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (ws / "data" / "pool.parquet").exists() and (ws / "data" / "labels.csv").exists()
    ids = json.loads((ws / "releases" / "index.json").read_text())
    assert len(ids) == 1
    rel = ws / "releases" / ids[0]
    stats = json.loads((rel / "rule_stats.json").read_text())
    assert stats["rows"] == 3000 and sum(stats["piles"].values()) == 3000
    assert (rel / "labels.json").exists()
    page = (ws / "site" / "releases" / ids[0] / "index.html").read_text()
    notes = _Notes()
    notes.feed(page)
    # The banner reads the marker's seed and rows (issue 37, item 10): it names no module that is gone, while
    # the marker, part of the pool's bytes, still does.
    assert any("Generated example data." in n and "It holds 3,000 works drawn with seed 0." in n
               and "python -m reporter.example POOL --rows 3000 --seed 0 makes such a pool." in n
               for n in notes.notes), notes.notes
    assert "reporter.pool.generate" not in page and "reporter.pool.generate" in (rel / "release.json").read_text()
    twin = (ws / "site" / "releases" / ids[0] / "index.md").read_text()
    # The twin's banner is a quote of its own: a blank line before the next paragraph (else it runs into it).
    assert "`python -m reporter.example POOL --rows 3000 --seed 0` makes such a pool.\n\nRelease " in twin
    assert "(generated example data)" in (ws / "site" / "index.html").read_text()
    assert (ws / "site" / "novelty.html").exists()
    # A second build changes nothing: same release, same bytes.
    before = {p: p.read_bytes() for p in (ws / "site").rglob("*") if p.is_file()}
    assert (ws / "state" / "screen-lengths.json").exists()  # the dry run's lengths, kept (issue 37, item 4)
    again = subprocess.run([sys.executable, "-X", "importtime", "-m", "reporter.cli", "build", "--workspace",
                            str(ws)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    # Issue 37, item 4: the status page's estimate comes from the kept lengths: the tokenizer (a second or two
    # to load) is not even imported.
    assert "reporter.panel.tokens" in again.stderr and "bpe_openai" not in again.stderr
    # Issue 37, item 4: known from the inputs' digests, not routed again, and said in one line.
    (line,) = again.stdout.splitlines()
    assert line.startswith(f"unchanged: release {ids[0][:12]} (3,000 works) is already published for these "
                           f"inputs, nothing routed; site ") and line.endswith("none written)"), line
    assert "route:" not in again.stderr and "generating" not in again.stderr
    assert {p: p.read_bytes() for p in (ws / "site").rglob("*") if p.is_file()} == before


def _cli(args, cwd, epoch):
    """`reporter ARGS` in a subprocess in `cwd`, dated by SOURCE_DATE_EPOCH."""
    import os
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch}
    return subprocess.run([sys.executable, "-m", "reporter.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


@pytest.mark.slow
def test_the_demo_recipe_small_two_weeks_and_what_changed(tmp_path):
    """`make demo`'s steps at 3,000 rows: week 26 without 100 works week 27 adds and with 100 it lost,
    last week's rule book; the home page and the diff say what changed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from reporter.example import generate_pool, pool_truth
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copytree(ROOT / "specs", ws / "specs")
    shutil.copytree(ROOT / "examples", ws / "examples")
    (ws / "reporter.toml").write_text((ROOT / "reporter.toml").read_text().replace("rows = 200000", "rows = 3000"))
    # At this size every row is in one row group, whose draws follow its length: both weeks are cut from
    # one 3,100-row pool (at 200,000 rows the weeks share whole row groups, and week 27 is the
    # workspace's own generated pool).
    week26 = generate_pool(ws / "data" / "2026-W26.parquet", 3100, 0, progress=False, without=(2900, 3000))
    generate_pool(ws / "data" / "pool.parquet", 3100, 0, progress=False, without=(3000, 3100),
                  labels=ws / "data" / "labels.csv")
    whole = generate_pool(tmp_path / "whole.parquet", 3100, 0, progress=False)
    kept, full = pq.read_table(week26), pq.read_table(whole)
    assert kept.num_rows == 3000
    assert kept.equals(pa.concat_tables([full.slice(0, 2900), full.slice(3000)]))  # the other rows as they were
    truth = list(pool_truth(whole)[1])
    assert list(pool_truth(week26)[1]) == truth[:2900] + truth[3000:]

    done = _cli(["route", "--pool", "data/2026-W26.parquet", "--specs", "examples/demo/specs-2026-W26",
                 "--out", "releases", "--label", "2026-W26", "--workers", "1"], ws, "1782734400")
    assert done.returncode == 0, done.stderr
    done = _cli(["build", "--label", "2026-W27"], ws, "1783339200")
    assert done.returncode == 0, done.stderr
    ids = json.loads((ws / "releases" / "index.json").read_text())
    assert [json.loads((ws / "releases" / i / "published.json").read_text()) for i in ids] == [
        {"label": "2026-W26", "first_written": "2026-06-29"}, {"label": "2026-W27", "first_written": "2026-07-06"}]
    home = " ".join((ws / "site" / "index.html").read_text().split())
    assert "Rules: 1 added, 1 edited" in _plain(home)
    assert "Works: 100 new, 100 gone" in _plain(home), _plain(home)[-1500:]
    diff = _plain((ws / "site" / "releases" / ids[1] / "diff.html").read_text())
    assert "1 added (reanalysis-reproduction); 1 edited (osf-preregistration)" in diff
    assert '+ "analysis plan",' in diff
    # The Makefile's certify steps, as written there: the discard pile's sheet drawn from the shipped one,
    # whose labels are of the 200,000-row release (none of these 3,000 works: a partial certificate)
    steps = [shlex.split(line.strip().removeprefix("$(BIN)/reporter "))
             for line in _recipe("demo") if line.strip().startswith("$(BIN)/reporter certify")]
    assert len(steps) == 2
    for step in steps:
        done = _cli(step, ws, "1783339200")
        assert done.returncode == 0, done.stderr
    assert "carried over 0 labels from examples/certify/discard.csv" in _cli(steps[0], ws, "1783339200").stdout
    (cert,) = load_certificates(ws / "state", ids[1])
    assert (cert.stratum, cert.partial, cert.n_labelled, cert.max_relevant) == ("discard", True, 0, cert.N)
    # It exports the hand-off (partial), which keeps the disclosure, then builds again, as written there: the same
    # release, its status page showing the certificate and linking the kept disclosure's archived page.
    recipe = _recipe("demo")
    export = recipe[-3].split()
    assert export[:3] == ["SOURCE_DATE_EPOCH=1783339200", "$(BIN)/reporter", "export"]
    done = _cli(export[2:], ws, "1783339200")
    assert done.returncode == 0, done.stderr
    prov = json.loads((ws / "state" / "handoff.csv.provenance.json").read_text())
    last = recipe[-2].split()
    assert last[:3] == ["SOURCE_DATE_EPOCH=1783339200", "$(BIN)/reporter", "build"]
    done = _cli(last[2:], ws, "1783339200")
    assert done.returncode == 0 and f"release {ids[1][:12]} (unchanged)" in done.stdout, done.stderr
    status = _plain((ws / "site" / "releases" / ids[1] / "status.html").read_text())
    assert f"Certificate of discard: {cert.summary}" in status  # in the flow box, wrapped at spaces
    assert f"discard {cert.summary} partial: 0 of {cert.n_drawn:,} rows labelled" in status
    kept = (ws / "site" / prov["disclosure"]["page"]).read_text()
    assert f'href="disclosure/{prov["disclosure"]["id"]}.html"' in (ws / "site" / "releases" / ids[1] /
                                                                  "status.html").read_text()
    assert "M2. Tool, version and provider" in kept and "handoff.csv" in kept
    # Its last step drafts the release's disclosure (docs/disclosure.md) from what ran.
    disclose = recipe[-1].split()
    assert disclose[:2] == ["$(BIN)/reporter", "disclose"]
    done = _cli(disclose[1:], ws, "1783339200")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (ws / "state" / "disclosure" / ids[1]).iterdir()) == [
        "disclosure.html", "disclosure.json", "disclosure.md", "handoffs"]


def _recipe(target: str) -> list[str]:
    """The Makefile's recipe lines of a target, continuation lines joined."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    lines = text.split(f"\n{target}:", 1)[1].split("\n")[1:]
    return [line for line in itertools.takewhile(lambda x: x.startswith("\t"), lines)]


def _plain(page: str) -> str:
    """A page's text with the tags taken out and the spaces collapsed."""
    import html
    import re
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())



def test_without_must_leave_a_range_inside_the_pool(tmp_path, capsys):
    from reporter.example.generate import main
    for bad in ("5", "a:b", "8:5", "0:10", "5:11"):
        assert main([str(tmp_path / "p.parquet"), "--rows", "10", "--without", bad, "--quiet"]) == 2, bad
        assert "without" in capsys.readouterr().err
    assert not (tmp_path / "p.parquet").exists()
    assert main([str(tmp_path / "p.parquet"), "--rows", "10", "--without", "2:4", "--quiet"]) == 0
    assert "(8 rows," in capsys.readouterr().out


def _listing(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None for a folder)."""
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


_EXAMPLE_TOML = ('pool = "data/pool.parquet"\nlabels = "data/labels.csv"\nspecs = "specs"\nreleases = "releases"\n'
                 'site = "site"\n\n[example]\nrows = 500\nseed = 0\n')


def test_a_build_refused_for_a_missing_rule_book_makes_no_example_pool(tmp_path, capsys):
    """Issue 37, item 2: with [example] set and no specs/, `reporter build` wrote data/pool.parquet and its
    labels, then exited 2. Now it refuses before making anything: the folder is as it was."""
    from reporter.cli import main
    (tmp_path / "reporter.toml").write_text(_EXAMPLE_TOML)
    before = _listing(tmp_path)
    assert main(["build", "--workspace", str(tmp_path)]) == 2
    assert "the rule book folder does not exist" in capsys.readouterr().err
    assert _listing(tmp_path) == before == {"reporter.toml": _EXAMPLE_TOML.encode()}


def test_a_build_refused_after_making_the_example_pool_removes_it(tmp_path, capsys):
    """A refusal found once the pool is made (a rule naming a column the pool lacks) takes the pool, its
    labels and the folder made for them away again."""
    from reporter.cli import main
    (tmp_path / "reporter.toml").write_text(_EXAMPLE_TOML)
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    (tmp_path / "specs" / "rules" / "99-nope.json").write_text(json.dumps(
        {"id": "nope", "pile": "hold", "precedence": 1, "match": {"column": "no_such_column", "in": ["x"]}}))
    before = _listing(tmp_path)
    assert main(["build", "--workspace", str(tmp_path), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "generating the example pool" in err and "no_such_column" in err, err
    assert _listing(tmp_path) == before


def test_a_refused_build_removes_the_labels_folder_it_made_beside_the_pools(tmp_path, capsys):
    """Labels in a folder of their own: that folder goes too when the build is refused (and only folders it made)."""
    from reporter.cli import main
    (tmp_path / "reporter.toml").write_text(_EXAMPLE_TOML.replace('labels = "data/labels.csv"',
                                                                  'labels = "truth/deep/labels.csv"'))
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    (tmp_path / "specs" / "rules" / "99-nope.json").write_text(json.dumps(
        {"id": "nope", "pile": "hold", "precedence": 1, "match": {"column": "no_such_column", "in": ["x"]}}))
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "mine.txt").write_text("the user's\n")
    before = _listing(tmp_path)
    assert main(["build", "--workspace", str(tmp_path), "--workers", "1"]) == 2
    assert "no_such_column" in capsys.readouterr().err
    assert _listing(tmp_path) == before
