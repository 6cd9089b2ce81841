"""`reporter build` end to end on a small copy of the example workspace: generated pool, route, site."""

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

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
    assert any("Generated example data." in n and "seed=0" in n for n in notes.notes), notes.notes
    assert "(generated example data)" in (ws / "site" / "index.html").read_text()
    assert (ws / "site" / "novelty.html").exists()
    # A second build changes nothing: same release, same bytes.
    before = {p: p.read_bytes() for p in (ws / "site").rglob("*") if p.is_file()}
    again = subprocess.run([sys.executable, "-m", "reporter.cli", "build", "--workspace", str(ws)],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "unchanged" in again.stdout
    assert {p: p.read_bytes() for p in (ws / "site").rglob("*") if p.is_file()} == before
