"""The next week's page shows the watchlist and criteria changes since the week before (issue 33, item 5).

A small archive decided by `reporter digest`: 2026-W25 with one watchlist and criteria; the reader then edits
both (a phrase added, a criteria line rewritten, one with hostile text) and 2026-W26 is decided. Its
decisions.json records both texts (`lists`) and the exact lines added and removed since 2026-W25 (`lists_diff`);
its page and twin show them, escaped; 2026-W25 (no week before it) shows no such section. A week published before
texts were recorded (no `lists`) makes the next one say the file changed, without lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.digest import digest_workspace
from support.site import parse_html

from reporter.build import render_site
from reporter.cli import main

WEEKS = {
    "2026-W25": [("doi:10.5555/a", "Gaussian splatting for scenes", "We evaluate Gaussian splatting.")],
    "2026-W26": [("doi:10.5555/d", "Fast 4D reconstruction", "4D reconstruction renders novel views.")],
}
CRITERIA = "## In scope\n- Gaussian splatting: `Gaussian splatting`, `novel view*`\n"
EDITED = ("## In scope\n- Gaussian splatting: `Gaussian splatting`, `novel view*`, `4D reconstruction`\n"
          "\n- <b>bold</b> | **star** [x](https://evil.example): `dynamic scene*`\n")


def _workspace(root: Path) -> Path:
    return digest_workspace(root, WEEKS, "Gaussian splatting\n", CRITERIA, "semantic = false\n")


def _digest(root: Path, week: str) -> dict:
    assert main(["digest", "--workspace", str(root), "--week", week]) == 0
    return json.loads((root / "digests" / week / "decisions.json").read_text())


@pytest.fixture(scope="module")
def edited(tmp_path_factory) -> Path:
    root = _workspace(tmp_path_factory.mktemp("lists") / "ws")
    _digest(root, "2026-W25")
    (root / "watchlist.txt").write_text("Gaussian splatting\n\n4D reconstruction\n")
    (root / "criteria.md").write_text(EDITED)
    _digest(root, "2026-W26")
    render_site(None, root / "site", digests_dir=root / "digests", progress=False)
    return root


def test_the_week_records_its_texts_and_the_exact_lines_changed(edited):
    first = json.loads((edited / "digests/2026-W25/decisions.json").read_text())
    assert first["lists"] == {"watchlist": {"file": "watchlist.txt", "text": "Gaussian splatting\n"},
                              "criteria": {"file": "criteria.md", "text": CRITERIA}}
    assert first["lists_diff"] is None, "no week before it"
    doc = json.loads((edited / "digests/2026-W26/decisions.json").read_text())
    assert doc["lists"]["criteria"]["text"] == EDITED
    assert doc["lists_diff"] == {
        "since": "2026-W25",
        "watchlist": {"file": "watchlist.txt", "changed": True, "shown": True,
                      "added": [{"line": 3, "text": "4D reconstruction"}], "removed": []},
        "criteria": {"file": "criteria.md", "changed": True, "shown": True,
                     "added": [{"line": 2, "text": EDITED.splitlines()[1]},
                               {"line": 4, "text": EDITED.splitlines()[3]}],
                     "removed": [{"line": 2, "text": CRITERIA.splitlines()[1]}]}}


def test_the_page_and_twin_show_the_lines_escaped(edited):
    tree = parse_html((edited / "site/digest/2026-W26.html").read_text(encoding="utf-8"))
    section = tree.find("section", id="lists")
    assert section.find("h2").text() == "Watchlist and criteria changes since 2026-W25"
    diffs = {p.attrs["data-role"]: p.text() for p in section.find_all("pre")}
    assert diffs["watchlist"] == "+ 3: 4D reconstruction\n"
    assert diffs["criteria"] == (f"- 2: {CRITERIA.splitlines()[1]}\n+ 2: {EDITED.splitlines()[1]}\n"
                                 f"+ 4: {EDITED.splitlines()[3]}\n")
    assert not section.find_all("b"), "a line of the file is text, never markup"
    assert "1 line added, 0 removed" in section.text() and "2 lines added, 1 removed" in section.text()
    assert section.find("a").attrs["href"] == "2026-W25.html"
    twin = (edited / "site/digest/2026-W26.md").read_text(encoding="utf-8")
    assert "## Watchlist and criteria changes since 2026-W25" in twin
    assert "- The watchlist (watchlist\\.txt): 1 line added, 0 removed\n  - \\+ 3: 4D reconstruction\n" in twin
    assert "  - \\+ 4: \\- \\<b\\>bold\\</b\\> \\| \\*\\*star\\*\\*" in twin, "escaped as every twin"


def test_the_first_week_shows_no_section(edited):
    page = (edited / "site/digest/2026-W25.html").read_text(encoding="utf-8")
    assert 'id="lists"' not in page and "Watchlist and criteria changes" not in page
    assert "Watchlist and criteria changes" not in (edited / "site/digest/2026-W25.md").read_text(encoding="utf-8")


def test_unchanged_files_say_so(tmp_path):
    root = _workspace(tmp_path / "ws")
    _digest(root, "2026-W25")
    doc = _digest(root, "2026-W26")
    assert doc["lists_diff"]["watchlist"] == {"file": "watchlist.txt", "changed": False, "shown": True,
                                              "added": [], "removed": []}
    assert doc["lists_diff"]["criteria"]["changed"] is False
    render_site(None, root / "site", digests_dir=root / "digests", progress=False)
    section = parse_html((root / "site/digest/2026-W26.html").read_text(encoding="utf-8")).find("section", id="lists")
    assert "The watchlist (watchlist.txt): unchanged" in section.text() and not section.find_all("pre")


def test_a_week_before_texts_were_recorded_gives_a_change_without_lines(tmp_path):
    root = _workspace(tmp_path / "ws")
    first = _digest(root, "2026-W25")
    del first["lists"], first["lists_diff"]  # as a week published before this was recorded
    (root / "digests/2026-W25/decisions.json").write_text(json.dumps(first, indent=2, sort_keys=True) + "\n")
    (root / "watchlist.txt").write_text("Gaussian splatting\n4D reconstruction\n")
    doc = _digest(root, "2026-W26")
    assert doc["lists_diff"]["watchlist"] == {"file": "watchlist.txt", "changed": True, "shown": False,
                                              "added": [], "removed": []}
    assert doc["lists_diff"]["criteria"]["changed"] is False


def test_a_watchlist_too_long_to_record_is_changed_without_lines(tmp_path):
    root = _workspace(tmp_path / "ws")
    long = "".join(f"phrase number {i:06d}\n" for i in range(5_000))  # 110,000 characters
    (root / "watchlist.txt").write_text(long)
    first = _digest(root, "2026-W25")
    assert first["lists"]["watchlist"] == {"file": "watchlist.txt", "text": None}
    (root / "watchlist.txt").write_text("Gaussian splatting\n")
    doc = _digest(root, "2026-W26")
    assert doc["lists_diff"]["watchlist"] == {"file": "watchlist.txt", "changed": True, "shown": False,
                                              "added": [], "removed": []}


@pytest.mark.parametrize("bad", [
    "not a diff", {"since": "2026-W25"},
    {"since": "2026-W25", "watchlist": {"file": "w", "changed": True, "shown": True, "added": [{"line": "1",
                                                                                                "text": "x"}],
                                        "removed": []},
     "criteria": {"file": "c", "changed": False, "shown": True, "added": [], "removed": []}},
])
def test_a_broken_lists_diff_is_refused_naming_the_file(tmp_path, bad):
    from reporter.digest.archive import read_week
    from reporter.errors import InputError

    root = _workspace(tmp_path / "ws")
    _digest(root, "2026-W25")
    doc = _digest(root, "2026-W26")
    data = json.dumps({**doc, "lists_diff": bad}).encode()
    with pytest.raises(InputError, match="x.json: not a decisions.json this tool wrote"):
        read_week(data, "x.json")
