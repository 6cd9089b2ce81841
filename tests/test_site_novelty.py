"""The novelty page: its model from a results file, the HTML and Markdown views, the render flag, the build.

The fixture (tests/fixtures/site_workspace/novelty) holds seven made-up
candidates with hostile ids, checked by `reporter novelty --batch` in the
`novelty_site` fixture: duplicate 1, neighborhood 2, novel 2, unknown 2
(one insufficient_edges against a second graph, one lookup_failed).
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support.site import parse_html

from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.novelty import load_novelty_results
from reporter.build import render_site
from reporter.site.novelty_page import SHOWN_IDS, build_novelty_page

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "site_workspace"
HOSTILE_IDS = ["<script>alert('id')</script>", "a|b|c", "**bold** _x_ [l](http://evil.example)"]


@pytest.fixture(scope="module")
def results(novelty_site):
    return load_novelty_results(novelty_site["novelty"])


# ---- the page model ---------------------------------------------------------

def test_the_page_model_counts_each_verdict_and_status(results):
    page = build_novelty_page(results, "novelty.jsonl")
    assert {v.name: v.count for v in page.verdicts} == {"duplicate": 1, "neighborhood": 2, "novel": 2, "unknown": 2}
    assert [v.key for v in page.verdicts] == ["v-duplicate", "v-neighborhood", "v-novel", "v-unknown"]
    # incomparable is reserved and absent from the file, so it gets no row
    assert {s.name: s.count for s in page.statuses} == {"ok": 5, "lookup_failed": 1, "insufficient_edges": 1}
    assert all(v.meaning for v in page.verdicts + page.statuses)
    rows = page.candidates
    assert [c.verdict for c in rows] == ["duplicate", "neighborhood", "novel", "novel", "unknown", "unknown",
                                         "neighborhood"]
    assert [c.id for c in rows][:3] == HOSTILE_IDS and rows[3].id is None
    assert [c.line for c in rows] == [1, 2, 3, 4, 5, 6, 7]
    anchors = [c.anchor for c in rows]
    assert len(set(anchors)) == 7 and anchors[3] == "c-line-4" and anchors[6] == anchors[1] + "-2"
    assert all(re.fullmatch(r"c-[A-Za-z0-9._-]+", a) for a in anchors)
    # the duplicate: its lom_id is the matched paper's; it still shows the neighbour it cites
    dup = rows[0]
    assert dup.exact_match == dup.lom_id == "doi:10.5555/site.2"
    assert (dup.in_sample.n, dup.holdout.n, dup.holdout_ids.ids) == (1, 0, ("doi:10.5555/site.1",))
    assert [c.holdout_applied for c in rows] == [True, True, True, False, True, True, False]
    assert rows[4].status == "insufficient_edges" and rows[4].coverage_gap.ids == ("doi:10.5555/site.1",)
    assert rows[5].blocking == ("s2 DOI:10.5555/site.9: HTTP 429",)
    assert rows[3].kind == "claim" and rows[3].statement.startswith("<img")
    # two graphs: each row names its own, and the graph table counts them
    assert [(g.events_jsonl, g.candidates) for g in page.graphs] == [("events.jsonl", 6), ("events_gap.jsonl", 1)]
    assert rows[4].graph.startswith("events_gap.jsonl (sha256 ")


def _row(**result_changes):
    result = {"status": "ok", "lom_id": "doi:10.5555/x", "verdict": "neighborhood",
              "exact_key_match": {"hit": False, "matched_lom_id": None},
              "citation_overlap": {"in_sample": {"n_shared": 0, "shared_lom_ids": []},
                                   "holdout": {"n_shared": 0, "shared_lom_ids": []}},
              "coverage_gap": [], "ingest_errors_blocking": [], "embedding": {"used": False},
              "holdout_applied": False, "not_a_ranker": True}
    result.update(result_changes)
    return {"schema_version": 1, "line": 1, "id": "x",
            "candidate": {"kind": "paper", "keys": {"doi": "10.5555/x"}, "statement": None,
                          "holdout_lom_ids": None, "references": []},
            "graph": {"events_jsonl": "g.jsonl", "sha256": "0" * 64}, "result": result}


def test_long_evidence_lists_are_bounded_with_their_full_count():
    shared = [f"doi:10.5555/n{i:02d}" for i in range(45)]
    row = _row(citation_overlap={"in_sample": {"n_shared": 45, "shared_lom_ids": shared},
                                 "holdout": {"n_shared": 45, "shared_lom_ids": shared}})
    page = build_novelty_page([row])
    c = page.candidates[0]
    assert (c.in_sample.n, len(c.in_sample.ids), c.in_sample.more) == (45, SHOWN_IDS, 45 - SHOWN_IDS)
    assert c.graph is None, "one graph for every candidate: not repeated per row"


@pytest.mark.parametrize("change, message", [
    ({"not_a_ranker": False}, "not_a_ranker is not true"),
    ({"verdict": "unknown"}, "verdict unknown with status ok"),
    ({"status": "lookup_failed"}, "verdict neighborhood with status lookup_failed"),
    ({"citation_overlap": {"in_sample": {"n_shared": 2, "shared_lom_ids": ["doi:1"]},
                           "holdout": {"n_shared": 0, "shared_lom_ids": []}}}, "n_shared 2 but 1 ids"),
    ({"exact_key_match": {"hit": True, "matched_lom_id": None}}, "hit without a matched_lom_id"),
    ({"holdout_applied": "no"}, "holdout_applied"),
])
def test_inconsistent_results_are_refused_naming_the_line(change, message):
    with pytest.raises(InputError, match=f"r.jsonl: results line 1: .*{re.escape(message)}"):
        build_novelty_page([_row(**change)], "r.jsonl")


def test_a_bad_results_file_writes_nothing(site_build, tmp_path):
    bad = tmp_path / "novelty.jsonl"
    bad.write_text(json.dumps(_row(not_a_ranker=False)) + "\n")
    with pytest.raises(InputError, match="not_a_ranker"):
        render_site(site_build["releases"], tmp_path / "site", novelty=bad, progress=False)
    bad.write_text("{not json\n")
    with pytest.raises(InputError, match="line 1: not valid JSON"):
        render_site(site_build["releases"], tmp_path / "site", novelty=bad, progress=False)
    assert not (tmp_path / "site").exists()


# ---- the HTML page and its Markdown twin ---------------------------------------

def test_the_html_lists_every_candidate_with_its_verdict(novelty_site, results):
    tree = parse_html((novelty_site["site"] / "novelty.html").read_text())
    table = tree.find("table", id="candidate-table")
    assert "sortable" not in table.attrs.get("class", ""), "candidates are never re-ordered"
    rows = table.find("tbody").find_all("tr")
    assert len(rows) == len(results) == 7
    for tr, line in zip(rows, results):
        result = line["result"]
        link = tr.find("a")
        assert link.attrs["href"] == "#" + tr.attrs["id"] and tr.attrs["id"].startswith("c-")
        assert link.text() == (line["id"] if line["id"] is not None else "(no id)")
        cell = tr.find("td", **{"data-verdict": result["verdict"]})
        assert cell is not None and cell.find("strong").text() == result["verdict"]
        assert result["status"] in cell.text()
        assert ("nothing held out" in cell.text()) == (not result["holdout_applied"])
        assert result["lom_id"] in tr.text()
        for node in result["citation_overlap"]["in_sample"]["shared_lom_ids"] + result["coverage_gap"]:
            assert node in tr.text()
    counts = Counter(line["result"]["verdict"] for line in results)
    shown = {td.attrs["data-key"]: int(td.text()) for td in tree.find("table", id="verdict-table").find_all("td")
             if "data-key" in td.attrs}
    assert shown == {f"v-{v}": counts.get(v, 0) for v in ("duplicate", "neighborhood", "novel", "unknown")}
    assert "not a ranking" in tree.find("p", id="not-a-ranker").text()


def test_hostile_ids_render_as_text_in_html(novelty_site):
    html = (novelty_site["site"] / "novelty.html").read_text()
    tree = parse_html(html)
    assert len(tree.find_all("script")) == 1 and not tree.find_all("img") and not tree.find_all("b")
    assert not [n for n in tree.iter() if any(k.startswith("on") for k in n.attrs)]
    assert "&lt;script&gt;alert(&#39;id&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt; | a new | claim" in html
    ids = [a.text() for a in tree.find("table", id="candidate-table").find_all("a")]
    assert ids[:3] == HOSTILE_IDS


def test_the_page_shows_no_score(novelty_site):
    """Each page says a verdict is never a score, and no other word of it is one ("scores", "scored")."""
    for name in ("novelty.html", "novelty.md", "index.html", "index.md"):
        text = (novelty_site["site"] / name).read_text()
        text = re.sub(r"<style>.*?</style>|<script>.*?</script>", "", text, flags=re.DOTALL).lower()
        assert text.count("never a score") >= 1, f"{name} does not say a verdict is never a score"
        assert text.count("score") == text.count("never a score"), name


def _md_table_rows(text: str):
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    assert not [t for t in tokens if t.type == "html_block"]
    assert not [c for t in tokens if t.type == "inline" for c in t.children if c.type == "html_inline"]
    tables, rows, cells, cell = [], None, None, None
    for t in tokens:
        if t.type == "table_open":
            rows = []
        elif t.type == "tr_open":
            cells = []
        elif t.type in ("th_open", "td_open"):
            cell = ""
        elif t.type == "inline" and cell is not None:
            cell += t.content
        elif t.type in ("th_close", "td_close"):
            cells.append(cell)
            cell = None
        elif t.type == "tr_close":
            rows.append(cells)
        elif t.type == "table_close":
            tables.append(rows)
    return md, tables


def test_hostile_ids_do_not_break_the_markdown_twin(novelty_site, results):
    text = (novelty_site["site"] / "novelty.md").read_text()
    md, tables = _md_table_rows(text)
    for rows in tables:
        assert len({len(r) for r in rows}) == 1, "every row has the header's number of cells"
    candidates = next(rows for rows in tables if rows[0][0] == "candidate")
    assert len(candidates) == 1 + len(results) and len(candidates[0]) == 7
    rendered = md.render(text)
    assert "<script" not in rendered and "<img" not in rendered and "<strong>bold</strong>" not in rendered
    assert "&lt;script&gt;alert('id')&lt;/script&gt; (paper, batch line 1)" in rendered
    assert "<td>a|b|c (paper, batch line 2)" in rendered
    # a word joiner (U+2060) keeps the bare URL in pieces (docs/site.md, "Markdown escaping")
    assert "**bold** _x_ [l](http://evil.example) (paper" in rendered.replace("\u2060", "")
    assert "&lt;img src=x onerror=alert(1)&gt; | a new | claim" in rendered
    verdicts = next(rows for rows in tables if rows[0][0] == "verdict")
    assert {r[0].strip("*"): int(r[1]) for r in verdicts[1:]} == {
        "duplicate": 1, "neighborhood": 2, "novel": 2, "unknown": 2}


def test_the_home_page_links_to_the_novelty_page_only_when_there_is_one(novelty_site, site_build):
    home = parse_html((novelty_site["site"] / "index.html").read_text())
    section = home.find("section", id="novelty")
    assert section.find("a").attrs["href"] == "novelty.html"
    shown = {s.attrs["data-key"]: int(s.text()) for s in section.find_all("strong")}
    assert shown == {"home-candidates": 7, "home-v-duplicate": 1, "home-v-neighborhood": 2, "home-v-novel": 2,
                     "home-v-unknown": 2}
    assert "](novelty.md)" in (novelty_site["site"] / "index.md").read_text()
    assert parse_html((site_build["site"] / "index.html").read_text()).find_all("section", id="novelty") == []
    assert not (site_build["site"] / "novelty.html").exists()


def test_the_novelty_page_is_rebuilt_not_archived(novelty_site, tmp_path):
    manifest = json.loads((novelty_site["site"] / "manifest.json").read_text())
    assert manifest["files"]["novelty.html"]["archived"] is False
    assert manifest["files"]["novelty.md"]["archived"] is False
    site = tmp_path / "site"
    shutil.copytree(novelty_site["site"], site)
    fewer = tmp_path / "fewer.jsonl"
    lines = novelty_site["novelty"].read_text().splitlines(keepends=True)
    fewer.write_text("".join(lines[:2]))
    report = render_site(novelty_site["releases"], site, novelty=fewer, workspace=novelty_site["workspace"],
                         progress=False)
    assert report.novelty == 2 and report.written == 4  # novelty and home, each with its twin
    table = parse_html((site / "novelty.html").read_text()).find("table", id="candidate-table")
    assert len(table.find("tbody").find_all("tr")) == 2


def test_render_command_takes_novelty(novelty_site, tmp_path, capsys):
    releases = novelty_site["releases"]
    assert main(["render", "--releases", str(releases), "--out", str(tmp_path / "a"), "--json",
                 "--novelty", str(novelty_site["novelty"])]) == 0
    assert json.loads(capsys.readouterr().out)["novelty"] == 7
    assert (tmp_path / "a" / "novelty.html").read_bytes() == (novelty_site["site"] / "novelty.html").read_bytes()
    assert main(["render", "--releases", str(releases), "--out", str(tmp_path / "b"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["novelty"] is None
    assert main(["render", "--releases", str(releases), "--out", str(tmp_path / "c"),
                 "--novelty", str(tmp_path / "missing.jsonl")]) == 2
    assert "novelty results file not found" in capsys.readouterr().err
    assert "--novelty PATH" in _help(capsys, ["render", "--help"])


def _help(capsys, argv) -> str:
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().out


# ---- the build ---------------------------------------------------------------

def _workspace(tmp_path: Path, novelty: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "graph").mkdir(parents=True)
    shutil.copy(FIXTURE / "novelty" / "events.jsonl", ws / "graph" / "events.jsonl")
    shutil.copy(FIXTURE / "novelty" / "candidates.jsonl", ws / "cands.jsonl")
    (ws / "reporter.toml").write_text(
        f'pool = "{FIXTURE / "pool.jsonl"}"\nspecs = "{FIXTURE / "specs"}"\nreleases = "releases"\n'
        f'site = "site"\n{novelty}')
    return ws


def test_build_checks_the_candidates_and_renders_the_page(tmp_path, capsys):
    ws = _workspace(tmp_path, 'graph = "graph/events.jsonl"\n[novelty]\ncandidates = "cands.jsonl"\n')
    assert main(["build", "--workspace", str(ws)]) == 0
    out = capsys.readouterr().out
    lines = load_novelty_results(ws / "state" / "novelty.jsonl")
    # the workspace's graph is used for every candidate (the `gap` candidate's own graph entry is not)
    assert {line["graph"]["events_jsonl"] for line in lines} == {"graph/events.jsonl"}
    counts = Counter(line["result"]["verdict"] for line in lines)
    assert counts == {"duplicate": 1, "neighborhood": 2, "novel": 3, "unknown": 1}
    assert "novelty: checked 7 candidates: duplicate 1, neighborhood 2, novel 3, unknown 1" in out
    tree = parse_html((ws / "site" / "novelty.html").read_text())
    assert {td.attrs["data-key"]: int(td.text()) for td in tree.find("table", id="verdict-table").find_all("td")
            if "data-key" in td.attrs} == {f"v-{v}": counts.get(v, 0) for v in
                                           ("duplicate", "neighborhood", "novel", "unknown")}
    first = (ws / "state" / "novelty.jsonl").read_bytes()
    assert main(["build", "--workspace", str(ws)]) == 0
    assert (ws / "state" / "novelty.jsonl").read_bytes() == first, "the same inputs give the same results file"


@pytest.mark.parametrize("novelty, message", [
    ('[novelty]\ncandidates = "cands.jsonl"\n', "names no `graph`"),
    ('graph = "graph/events.jsonl"\n[novelty]\ncandidates = 3\n', "[novelty]: key 'candidates' must be a string"),
    ('graph = "graph/events.jsonl"\n[novelty]\ncandidates = "cands.jsonl"\nresolver = ["s2"]\n',
     "unknown key 'resolver'"),
    ('graph = "graph/events.jsonl"\n[novelty]\ncandidates = "nope.jsonl"\n', "batch file not found"),
])
def test_build_refuses_a_bad_novelty_setup_before_writing(tmp_path, capsys, novelty, message):
    ws = _workspace(tmp_path, novelty)
    assert main(["build", "--workspace", str(ws)]) == 2
    assert message in capsys.readouterr().err
    assert not (ws / "releases").exists() and not (ws / "site").exists()


def test_a_workspace_without_candidates_builds_no_novelty_page(tmp_path):
    ws = _workspace(tmp_path, 'graph = "graph/events.jsonl"\n')
    assert main(["build", "--workspace", str(ws)]) == 0
    # no novelty page and no results file (the state folder holds the build's run records: docs/runs.md)
    assert not (ws / "site" / "novelty.html").exists() and not (ws / "state" / "novelty.jsonl").exists()


def test_the_example_workspace_shows_every_verdict_it_documents():
    from reporter.novelty.workspace import check_novelty
    ws = load_workspace(REPO)
    lines = check_novelty(ws.novelty, ws.graph, root=ws.root, file=ws.file)
    by_id = {line["id"]: (line["result"]["verdict"], line["result"]["status"], line["result"]["holdout_applied"])
             for line in lines}
    assert by_id == {
        "repeat-of-the-registered-report": ("duplicate", "ok", True),
        "anchoring-claim-again": ("duplicate", "ok", False),
        "new-meta-analysis": ("neighborhood", "ok", True),
        "facial-feedback-rerun": ("neighborhood", "ok", False),
        "power-follow-up": ("novel", "ok", True),
        "stubs-only": ("novel", "ok", True),
        "warm-drinks-claim": ("novel", "ok", False),
        "blocked-lookup": ("unknown", "lookup_failed", True),
    }
    assert {line["graph"]["events_jsonl"] for line in lines} == {"examples/novelty/events.jsonl"}
    readme = (REPO / "examples" / "novelty" / "README.md").read_text()
    assert "Counts: duplicate 2, neighborhood 2, novel 3, unknown 1." in readme
    assert "made-up" in readme.lower() and all(line["result"]["not_a_ranker"] is True for line in lines)


def test_the_page_speaks_to_a_reader_not_in_field_names(tmp_path):
    """Issue 37, item 7: no field names (not_a_ranker, lom_id, S2), no stubs, holdout or in-sample, and no pointer at
    novelty.md as if a reader could open it; in the page and its twin, every wording of the model included."""
    from reporter.site.novelty_page import STATUS_MEANINGS, VERDICT_MEANINGS, build_novelty_page
    from reporter.site import env
    page = build_novelty_page([])
    # The words a reader reads (the twin's own file name is a link a reader can open, not a reference).
    words = " ".join([*VERDICT_MEANINGS.values(), *STATUS_MEANINGS.values(), page.not_a_ranker, page.rules_note,
                      page.candidates_note, parse_html(env.render_html(page)).text(),
                      env.render_md(page).replace("(novelty.md)", "")])
    for jargon in ("not_a_ranker", "lom_id", "S2", "stub", "holdout", "in-sample", "novelty.md", "node"):
        assert jargon not in words, jargon
