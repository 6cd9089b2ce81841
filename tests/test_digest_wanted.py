"""The safety net learns from the reader (issue 33, item 2): "close in meaning" reads the papers marked wanted.

A small workspace decided by `reporter digest` with the embedded model: 2026-W25, then the reader marks its
4D-reconstruction paper (a DROP: no watchlist phrase) wanted, then 2026-W26 is decided. Its list names, for
each paper, the wanted paper it is nearest to with the similarity; the 4D-reconstruction paper of 2026-W26,
which the In scope concepts alone put below the KEEP median, is listed first; the wanted papers are part of the
week's identity (a re-run after another mark is refused, naming them); the page shows them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.digest import digest_workspace
from support.site import parse_html

from reporter.build import render_site
from reporter.cli import main
from reporter.digest.records import paper_key

WEEKS = {
    "2026-W25": [("doi:10.5555/a", "Gaussian splatting for scenes", "We evaluate Gaussian splatting."),
                 ("doi:10.5555/b", "4D reconstruction of dynamic humans from monocular video",
                  "We reconstruct moving people in 4D from a single video with deformable neural fields."),
                 ("doi:10.5555/c", "Soil carbon surveys", "Soil samples from farms.")],
    "2026-W26": [("doi:10.5555/d", "Dynamic 4D reconstruction of people from monocular video",
                  "Deformable neural fields reconstruct moving humans in 4D from one video."),
                 ("doi:10.5555/e", "Gaussian splatting compression", "Gaussian splatting compressed."),
                 ("doi:10.5555/f", "Crop yields in dry years", "Farm yields and rainfall.")],
}


def _workspace(root: Path) -> Path:
    return digest_workspace(root, WEEKS, "Gaussian splatting\n",
                            "## In scope\n- Gaussian splatting for scenes: `Gaussian splatting`\n")


def _doc(root: Path, week: str) -> dict:
    return json.loads((root / "digests" / week / "decisions.json").read_text())


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = _workspace(tmp_path_factory.mktemp("wanted") / "ws")
    assert main(["digest", "--workspace", str(root), "--week", "2026-W25"]) == 0
    assert main(["feedback", "--workspace", str(root), "--wanted", paper_key("doi:10.5555/b")]) == 0
    assert main(["digest", "--workspace", str(root), "--week", "2026-W26"]) == 0
    return root


def test_the_list_names_the_nearest_wanted_paper_and_ranks_by_it(ws):
    first, doc = _doc(ws, "2026-W25"), _doc(ws, "2026-W26")
    assert "wanted" not in first["inputs"], "no mark when 2026-W25 was decided"
    assert all("nearest_wanted" not in e for e in first["close_in_meaning"])
    assert doc["inputs"]["wanted"]["papers"] == 1 and doc["inputs"]["wanted"]["file"] == "feedback.json"
    close = doc["close_in_meaning"]
    assert close[0]["id"] == "doi:10.5555/d", close
    assert {e["nearest_wanted"] for e in close} == {"doi:10.5555/b"}
    by_id = {d["id"]: d for d in doc["decisions"]}
    assert by_id["doi:10.5555/d"]["decision"] != "KEEP", "meaning never decides"
    kept = [d for d in doc["decisions"] if d["decision"] == "KEEP"]
    assert close[0]["wanted_similarity"] > close[0]["similarity"]
    assert close[0]["similarity"] < min(d["similarity"] for d in kept), \
        "by the concepts alone it would be under the KEEP median: the wanted paper brought it in"


def test_the_page_and_twin_say_which_wanted_paper(ws):
    render_site(None, ws / "site", digests_dir=ws / "digests", progress=False)
    doc = _doc(ws, "2026-W26")
    first = doc["close_in_meaning"][0]
    row = parse_html((ws / "site/digest/2026-W26.html").read_text(encoding="utf-8")).find(
        "ol", id="close-list").find_all("li")[0]
    assert f"near a paper you wanted, doi:10.5555/b ({first['wanted_similarity']:.4f})" in row.text()
    twin = (ws / "site/digest/2026-W26.md").read_text(encoding="utf-8")
    assert f"near a paper you wanted, doi:10.5555/b ({first['wanted_similarity']:.4f})" in twin


def test_a_new_mark_changes_the_identity_of_a_later_week(ws, capsys):
    assert main(["feedback", "--workspace", str(ws), "--wanted", paper_key("doi:10.5555/a")]) == 0
    capsys.readouterr()
    assert main(["digest", "--workspace", str(ws), "--week", "2026-W26"]) == 2
    assert ("the papers the reader marked wanted in earlier weeks changed (1 then, 2 now: they feed the "
            "close-in-meaning list)") in capsys.readouterr().err
    assert main(["digest", "--workspace", str(ws), "--week", "2026-W25"]) == 0, \
        "a mark on a paper of 2026-W25 does not change 2026-W25 itself"
