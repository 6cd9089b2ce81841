"""The reader's feedback (issue 33, item 5): keys, marks kept and never lost, measured precision, forecasts.

A small archive of two made-up weeks, decided by `reporter digest`: the
watchlist is `Gaussian splatting`, the In scope concept `Gaussian splatting`
and `novel view*`. Two papers on 4D reconstruction mention novel views once
(partial fit 0.4, no watchlist phrase: DROP 28); one does not (criteria
silent: DROP 42, never KEEP). Adding `4d reconstruction` to the watchlist
would give the two a match of 1.0: 45 + 18 + 10 = 73, KEEP; the silent one
stays out. So its forecast is exactly: matched 3, wanted 2, not wanted 1,
would keep 2, over both weeks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reporter.cli import main
from reporter.digest.feedback import FEEDBACK_FILE, read_marks
from reporter.digest.records import paper_key

WEEKS = {
    "2026-W25": [("doi:10.5555/a", "Gaussian splatting for scenes", "We evaluate Gaussian splatting."),
                 ("doi:10.5555/b", "4D reconstruction from video", "A 4D reconstruction method for novel views."),
                 ("doi:10.5555/c", "4D reconstruction of humans", "We study 4D reconstruction of bodies.")],
    "2026-W26": [("doi:10.5555/d", "Fast 4D reconstruction", "4D reconstruction renders novel views."),
                 ("doi:10.5555/e", "Gaussian splatting compression", "Gaussian splatting compressed.")],
}
KEY = {i: paper_key(i) for papers in WEEKS.values() for i, _, _ in papers}


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "papers").mkdir(parents=True)
    for week, papers in WEEKS.items():
        (root / "papers" / f"{week}.jsonl").write_text("".join(
            json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in papers))
    (root / "watchlist.txt").write_text("Gaussian splatting\n")
    (root / "criteria.md").write_text("## In scope\n- Gaussian splatting: `Gaussian splatting`, `novel view*`\n")
    (root / "reporter.toml").write_text('site = "site"\n[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\n'
                                        'criteria = "criteria.md"\narchive = "digests"\n')
    assert main(["digest", "--workspace", str(root), "--from", "2026-W25", "--to", "2026-W26"]) == 0
    return root


def feedback(ws: Path, *flags: str) -> int:
    return main(["feedback", "--workspace", str(ws), *flags])


def decided(ws: Path) -> dict[str, tuple[str, int, str]]:
    out = {}
    for week in WEEKS:
        for d in json.loads((ws / "digests" / week / "decisions.json").read_text())["decisions"]:
            out[d["id"]] = (d["decision"], d["score"], d["key"])
    return out


def test_every_decision_has_its_key_and_the_archive_is_as_the_docstring_says(ws):
    assert decided(ws) == {"doi:10.5555/a": ("KEEP", 100, KEY["doi:10.5555/a"]),
                           "doi:10.5555/b": ("DROP", 28, KEY["doi:10.5555/b"]),
                           "doi:10.5555/c": ("DROP", 42, KEY["doi:10.5555/c"]),
                           "doi:10.5555/d": ("DROP", 28, KEY["doi:10.5555/d"]),
                           "doi:10.5555/e": ("KEEP", 100, KEY["doi:10.5555/e"])}
    assert all(re.fullmatch(r"[a-z2-7]{8}", k) for k in KEY.values())


def test_marks_from_keys_ids_and_a_sheet_are_recorded_and_the_latest_wins(ws, capsys, tmp_path):
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"], "doi:10.5555/e") == 0
    sheet = tmp_path / "marks.csv"
    sheet.write_text(f"key,title,mark\n{KEY['doi:10.5555/e']},x,Not wanted\n{KEY['doi:10.5555/b']},y,wanted\n"
                     f"{KEY['doi:10.5555/c']},z,\n", encoding="utf-8")
    assert feedback(ws, "--sheet", str(sheet)) == 0
    marks = read_marks(ws / "state")
    assert [(m.id, m.mark, m.source, m.n) for m in marks] == [
        ("doi:10.5555/a", "wanted", "--wanted", 1), ("doi:10.5555/e", "wanted", "--wanted", 2),
        ("doi:10.5555/e", "not-wanted", "sheet marks.csv", 3), ("doi:10.5555/b", "wanted", "sheet marks.csv", 4)]
    capsys.readouterr()
    assert feedback(ws, "--not-wanted", KEY["doi:10.5555/c"], "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recorded"] == [{"id": "doi:10.5555/c", "key": KEY["doi:10.5555/c"], "week": "2026-W25",
                                "mark": "not-wanted", "source": "--not-wanted", "n": 5}]
    # The latest mark of e (not wanted) counts: 1 of 2 marked KEEPs wanted.
    assert (out["quality"]["keep_marked"], out["quality"]["keep_wanted"]) == (2, 1)


def test_a_key_no_week_decided_records_nothing(ws, capsys):
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"], "zzzzzzzz") == 2
    assert "no published week decided a paper of key or id 'zzzzzzzz'; nothing was recorded" in \
        capsys.readouterr().err
    assert not (ws / "state" / FEEDBACK_FILE).exists()


@pytest.mark.parametrize("flags, said", [
    (("--topic", "agents", "--wanted", "x"), "--topic 'agents': no such topic; this workspace has default"),
    (("--sheet", "nope.csv"), "cannot read it (no such file)"),
])
def test_refusals(ws, capsys, flags, said):
    assert feedback(ws, *flags) == 2
    assert said in capsys.readouterr().err


def test_a_bad_sheet_mark_is_refused_naming_the_row(ws, capsys, tmp_path):
    sheet = tmp_path / "s.csv"
    sheet.write_text(f"key,mark\n{KEY['doi:10.5555/a']},wanted\n{KEY['doi:10.5555/b']},maybe\n")
    assert feedback(ws, "--sheet", str(sheet)) == 2
    assert "row 3: mark 'maybe' is not wanted or not-wanted" in capsys.readouterr().err
    assert read_marks(ws / "state") == []


def test_precision_and_its_wilson_interval_exactly(ws, capsys):
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"], KEY["doi:10.5555/b"], KEY["doi:10.5555/d"]) == 0
    assert feedback(ws, "--not-wanted", KEY["doi:10.5555/e"], KEY["doi:10.5555/c"], "--json") == 0
    q = json.loads(capsys.readouterr().out.splitlines()[-1])["quality"]
    # 1 of 2 marked KEEPs wanted: p = 0.5, Wilson 95% (z = 1.96): 0.5 -/+ 1.96 sqrt(0.125 + 0.2401) / 2.9207.
    assert (q["keep_marked"], q["keep_wanted"], q["precision"], q["interval"]) == (2, 1, 0.5, [0.0945, 0.9055])
    assert q["weeks"] == ["2026-W25", "2026-W26"]
    assert [(m["id"], m["decision"], m["score"], m["missed_by"]) for m in q["wanted_not_keep"]] == [
        ("doi:10.5555/b", "DROP", 28, "match: no watchlist phrase"),
        ("doi:10.5555/d", "DROP", 28, "match: no watchlist phrase")]


def test_a_proposals_forecast_is_exact_and_nothing_is_applied(ws, capsys):
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"], KEY["doi:10.5555/b"], KEY["doi:10.5555/d"]) == 0
    assert feedback(ws, "--not-wanted", KEY["doi:10.5555/e"], KEY["doi:10.5555/c"]) == 0
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and "state" not in p.parts}
    capsys.readouterr()
    assert feedback(ws, "--proposals", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    rows = {(p["kind"], p["phrase"]): p for p in out["proposals"]}
    row = rows[("watchlist", "4d reconstruction")]
    assert {k: row[k] for k in ("kind", "text", "matched", "wanted", "not_wanted", "would_keep", "weeks")} == {
        "kind": "watchlist", "text": "4d reconstruction", "matched": 3, "wanted": 2, "not_wanted": 1,
        "would_keep": 2, "weeks": ["2026-W25", "2026-W26"]}
    assert out["proposals"][0]["phrase"] == "4d reconstruction"  # the most papers it would keep, first
    # As an In scope concept it would lift the two partial fits to 1.0, but with no watchlist match: 55, REVIEW.
    concept = rows[("criteria", "4d reconstruction")]
    assert (concept["text"], concept["matched"], concept["would_keep"]) == (
        "In scope: - 4d reconstruction: `4d reconstruction`", 3, 0)
    assert "never applied" in out["note"]
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and "state" not in p.parts} == before
    capsys.readouterr()
    assert feedback(ws, "--proposals") == 0
    assert "watchlist       3      2          1          2  4d reconstruction" in capsys.readouterr().out


KILLED_WRITE = """
import os, signal, sys
import reporter.files as files
from reporter.cli import main
real = files.os.replace
def replace(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)   # killed after the new file is written, before it is renamed
files.os.replace = replace
sys.exit(main(["feedback", "--workspace", sys.argv[1], "--not-wanted", sys.argv[2]]))
"""


def test_a_killed_write_leaves_the_marks_as_they_were(ws):
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"]) == 0
    before = (ws / "state" / FEEDBACK_FILE).read_bytes()
    run = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(ws), KEY["doi:10.5555/a"]],
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert run.returncode == -9
    assert (ws / "state" / FEEDBACK_FILE).read_bytes() == before
    assert [m.mark for m in read_marks(ws / "state")] == ["wanted"]
    # The next run records on top of it, the debris of the killed one aside.
    assert feedback(ws, "--not-wanted", KEY["doi:10.5555/a"]) == 0
    assert [m.mark for m in read_marks(ws / "state")] == ["wanted", "not-wanted"]


def test_the_site_shows_the_measured_quality_once_there_are_marks(ws):
    from support.site import parse_html
    assert main(["build", "--workspace", str(ws)]) == 0
    index = ws / "site" / "digest" / "index.html"
    assert 'id="quality"' not in index.read_text()  # no mark, no section: the index is as before
    assert feedback(ws, "--wanted", KEY["doi:10.5555/a"], KEY["doi:10.5555/b"], KEY["doi:10.5555/d"]) == 0
    assert feedback(ws, "--not-wanted", KEY["doi:10.5555/e"]) == 0
    assert main(["build", "--workspace", str(ws)]) == 0
    section = parse_html(index.read_text()).find("section", id="quality")
    assert section.find("h2").text() == "Measured quality, 2026-W25 to 2026-W26"
    assert "KEEP precision: 50% (1 of 2 marked KEEPs wanted; 95% interval 9% to 91%)." in section.text()
    items = [li.text() for li in section.find_all("li")]
    assert items == [f"4D reconstruction from video {KEY['doi:10.5555/b']} · 2026-W25, DROP 28 · match: no watchlist "
                     f"phrase", f"Fast 4D reconstruction {KEY['doi:10.5555/d']} · 2026-W26, DROP 28 · match: no "
                     f"watchlist phrase"]
    twin = (ws / "site" / "digest" / "index.md").read_text()
    assert "## Measured quality, 2026-W25 to 2026-W26" in twin and f") {KEY['doi:10.5555/b']} ·" in twin
    # The week pages show each paper's key (a week decided with rules digest.4).
    page = (ws / "site" / "digest" / "2026-W25.html").read_text()
    assert f"key <code>{KEY['doi:10.5555/a']}</code>" in page


def test_recording_marks_writes_one_run_record_and_proposals_none(ws, tmp_path):
    from reporter.runs import read_runs
    sheet = tmp_path / "s.csv"
    sheet.write_text(f"key,mark\n{KEY['doi:10.5555/a']},wanted\n{KEY['doi:10.5555/e']},not-wanted\n")
    assert feedback(ws, "--sheet", str(sheet)) == 0
    assert feedback(ws, "--proposals") == 0  # reads only: no record
    [run] = [r for r in read_runs(ws / "state") if r.kind == "feedback"]
    assert run.counts == {"marks": 2, "wanted": 1, "not_wanted": 1}
    assert [o.path for o in run.outputs] == ["state/feedback.json"] and [i.role for i in run.inputs] == ["sheet"]


def test_a_kept_paper_dropped_again_as_already_covered_counts_as_the_keep_it_was(tmp_path, capsys):
    """The example's real weeks: 2606.19968 is KEEP in 2026-W25 and, listed again, DROP (already covered) in
    2026-W26. Marked wanted, it is a wanted KEEP, not a wanted paper the digest missed."""
    import shutil
    example = Path(__file__).resolve().parents[1] / "examples" / "digest"
    root = tmp_path / "ws"
    shutil.copytree(example / "papers", root / "papers")
    for name in ("watchlist.txt", "criteria.md"):
        shutil.copy(example / name, root / name)
    (root / "reporter.toml").write_text('site = "site"\n[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\n'
                                        'criteria = "criteria.md"\narchive = "digests"\n')
    assert main(["digest", "--workspace", str(root), "--from", "2026-W25", "--to", "2026-W26"]) == 0
    capsys.readouterr()
    assert feedback(root, "--wanted", paper_key("arxiv:2606.19968"), "--json") == 0
    q = json.loads(capsys.readouterr().out)["quality"]
    assert (q["keep_marked"], q["keep_wanted"], q["wanted_not_keep"]) == (1, 1, [])


def test_a_week_published_with_rules_digest_3_stays_as_it_was(ws, capsys):
    """Issue 33, item 4: the Required rule changes decisions, so it is a new rules version; a week published
    before it is neither decided again by a build nor re-published by `reporter digest` without --force."""
    path = ws / "digests" / "2026-W25" / "decisions.json"
    old = json.loads(path.read_text())
    old["rules"] = "digest.3"
    for d in old["decisions"]:
        del d["key"]  # as digest.3 wrote it
    path.write_text(json.dumps(old, indent=2, sort_keys=True))
    before = path.read_bytes()
    assert main(["build", "--workspace", str(ws)]) == 0
    assert path.read_bytes() == before
    page = (ws / "site" / "digest" / "2026-W25.html").read_text()
    assert "key <code>" not in page and 'id="kept"' in page  # its page shows it as decided: no keys
    capsys.readouterr()
    assert main(["digest", "--workspace", str(ws), "--week", "2026-W25"]) == 2
    assert 'rules "digest.3" then, "digest.4" now' in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_sheet_with_no_mark_records_nothing_and_writes_nothing(ws, tmp_path):
    sheet = tmp_path / "s.csv"
    sheet.write_text(f"key,mark\n{KEY['doi:10.5555/a']},\n")
    runs = sorted((ws / "state").rglob("*"))
    assert feedback(ws, "--sheet", str(sheet)) == 0
    assert not (ws / "state" / FEEDBACK_FILE).exists() and sorted((ws / "state").rglob("*")) == runs
