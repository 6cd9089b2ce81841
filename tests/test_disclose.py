"""`reporter disclose` (issue 36): the disclosure drafted from the run records of a screened release, against a
real HTTP server (the fake OpenAI server) and a real SQLite state database.

Its numbers are the release page's and the run records'; a server that answers with another model than the one
configured is flagged; an item no record fills is the author's; model names and prompts are escaped."""

from __future__ import annotations

import json
import re
import sqlite3
from urllib.parse import unquote

from support.fake_openai import Answer, FakeOpenAI, Status
from test_screen_run import KEY, KEY_ENV, make_workspace

from reporter.cli import main
from reporter.routing.artifacts import load_release
from reporter.runs import read_runs
from reporter.site.release_page import build_release_page

HOSTILE = "<script>alert(1)</script> **x** [l](http://e.example) | `t`"


def disclose(root, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert main(["disclose", "--workspace", str(root), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def items(doc: dict) -> dict[str, dict]:
    return {i["id"]: i for i in doc["items"]}


def screened(tmp_path, monkeypatch, capsys, *, reported=None, labels: dict | None = None, script=None, **kinds):
    """A workspace routed (with its route record: `reporter route`) and screened (`reporter screen --run`)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    with FakeOpenAI(script, default=Answer("include"), reported_models=reported) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, **kinds)
        server.titles = w["titles"]
        if labels is not None:
            (w["root"] / "labels.csv").write_text("work_id,label\n" + "".join(
                f"t:{wid},{label}\n" for wid, label in labels.items()), encoding="utf-8")
            toml = w["root"] / "reporter.toml"
            toml.write_text('labels = "labels.csv"\n' + toml.read_text(encoding="utf-8"), encoding="utf-8")
        assert main(["route", "--workspace", str(w["root"])]) == 0
        assert main(["screen", "--workspace", str(w["root"]), "--run"]) == 0
    return w


def test_the_numbers_are_the_release_pages_and_the_run_records(tmp_path, monkeypatch, capsys):
    w = screened(tmp_path, monkeypatch, capsys, cheap=2, screen=3, other=2,
                 labels={"W003": "include", "W004": "exclude", "W005": "include"})
    doc = disclose(w["root"], capsys)
    rid = w["release_dir"].name
    assert doc["release_id"] == rid
    assert {i["id"] for i in doc["items"]} == {"M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9", "R1", "R2", "D1"}
    assert all(i["status"] in ("filled", "partial", "author") for i in doc["items"])
    assert all(b["decided_by"] in ("rule", "model", "person") for b in doc["flow"])
    boxes = {b["id"]: b["count"] for b in doc["flow"]}
    # R1's piles are the release page's piles, and the route record's.
    page = build_release_page(load_release(w["release_dir"].parent, rid))
    piles = {p.name: p.rows for p in page.piles if p.name != "pending"}  # every pile, pending by its reason
    assert {k.removeprefix("pile/"): v for k, v in boxes.items() if k.startswith(("pile/", "pending/"))} == piles
    assert boxes["pool"] == page.rows == 7
    runs = read_runs(w["root"] / "state")
    route = next(r for r in runs if r.kind == "route")
    screen = next(r for r in runs if r.kind == "screen")
    recorded = {k.replace(".", "/", 1): v for k, v in route.counts.items() if k.startswith(("pile.", "pending."))}
    recorded.pop("pile/pending")  # the pending pile, by its reasons below
    assert recorded == {k: v for k, v in boxes.items() if k.startswith(("pile/", "pending/"))}
    # The models' boxes are the screen record's works screened, per tier.
    for tier in ("cheap", "expensive"):
        decided = sum(v for k, v in boxes.items() if k.startswith(f"screen/{tier}/"))
        assert decided == screen.counts[f"{tier}.screened"]
    assert boxes["screen/expensive/admit"] == 3 + 2  # every answer is include: all admitted
    assert boxes["labels/expensive"] == 3  # the people's labels of the scope
    by = items(doc)
    assert by["M2"]["status"] == "filled" and by["M2"]["warnings"] == []
    assert f"{screen.counts['expensive.votes']:,} answers" in by["M2"]["text"]
    assert "the first on 20" in by["M2"]["text"]
    assert any(s.startswith("state/runs/") for s in by["M2"]["sources"]) and "state/raw" in by["M2"]["sources"]
    assert f"cost ${screen.cost_usd:.4f}" in by["M7"]["text"]
    # Two labelled includes admitted, the one labelled exclude admitted too (every answer is include).
    assert "recall 100.0% (95% CI " in by["R2"]["text"] and "specificity 0.0% (95% CI 0.0%-" in by["R2"]["text"]
    assert "labels.csv" in by["R2"]["sources"]
    assert by["M4"]["status"] == "partial" and "search strategy" in by["M4"]["missing"][0]
    # The prompt's text and its hash, as the records give the hash.
    assert by["M6"]["blocks"][0]["caption"].endswith(f"(sha256 {screen.models[0].prompt_sha256}), fragment by fragment")
    # The files: written together, the same bytes a second time.
    out = w["root"] / "state" / "disclosure" / rid
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(first) == ["disclosure.html", "disclosure.json", "disclosure.md"]
    assert json.loads(first["disclosure.json"]) == doc
    links = re.findall(r'<a href="([^"]+)">', first["disclosure.html"].decode())
    assert links and all((out / unquote(h)).exists() for h in links)  # each source links to its record
    disclose(w["root"], capsys)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first


def test_a_model_the_server_names_differently_is_flagged(tmp_path, monkeypatch, capsys):
    w = screened(tmp_path, monkeypatch, capsys, screen=2, reported={"exp-a": "exp-a-2025-06-01"},
                 script={("W002", "exp-b"): Status(400)})
    by = items(disclose(w["root"], capsys))
    [record] = [r for r in read_runs(w["root"] / "state") if r.kind == "screen"]
    assert record.counts["expensive.failures"] == 1
    assert "voter expensive-b has 1 recorded answer (0 invalid) and 1 provider failure after retries" \
        in by["M2"]["text"]
    assert "The server reported the model as exp-b in its 1 answer," in by["M2"]["text"]
    [warning] = by["M2"]["warnings"]
    assert warning == "the server reported exp-a-2025-06-01 for voter expensive-a (expensive), configured as exp-a"
    assert "Warning: " + warning in by["M2"]["text"] and "Warning: " + warning in by["D1"]["text"]
    assert "voter expensive-b" not in warning  # the voter answered as configured is not flagged


def test_a_model_that_changed_during_the_run_is_flagged(tmp_path, monkeypatch, capsys):
    reported = {}
    w = screened(tmp_path, monkeypatch, capsys, screen=2, reported=reported)
    reported["exp-b"] = "exp-b-new"  # a second run answered by another model
    with FakeOpenAI(default=Answer("include"), reported_models=reported) as server:
        toml = w["root"] / "reporter.toml"
        text = toml.read_text(encoding="utf-8")
        toml.write_text(re.sub(r'base_url = "[^"]*"', f'base_url = "{server.base_url}"', text), encoding="utf-8")
        server.titles = w["titles"]
        conn = sqlite3.connect(w["root"] / "state" / "screen.db")
        conn.execute("DELETE FROM votes WHERE voter = 'expensive-b'")  # asked again by the next run
        conn.execute("DELETE FROM verdicts")
        conn.execute("UPDATE jobs SET done = 0")
        conn.commit()
        conn.close()
        assert main(["screen", "--workspace", str(w["root"]), "--run"]) == 0
    by = items(disclose(w["root"], capsys))
    assert "the model the server reported for voter expensive-b (expensive) changed during the run: exp-b, " \
           "exp-b-new" in by["M2"]["warnings"]


def test_an_item_without_a_record_is_the_authors(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, other=1)
    assert main(["route", "--workspace", str(w["root"])]) == 0  # routed, never screened, no labels
    doc = disclose(w["root"], capsys)
    by = items(doc)
    for key in ("M5", "M6", "M8", "M9"):
        assert by[key]["status"] == "author" and by[key]["text"] == "" and by[key]["sources"] == []
    assert by["M9"]["missing"] == ["no evaluation is on record: no labels, no certificate, no reader feedback"]
    assert by["M8"]["missing"][0].startswith("no person's decision is on record")
    assert by["M2"]["status"] == "partial" and "no model run is on record" in by["M2"]["missing"][0]
    assert {b["decided_by"] for b in doc["flow"]} == {"rule"}
    md = (w["root"] / "state" / "disclosure" / w["release_dir"].name / "disclosure.md").read_text(encoding="utf-8")
    assert "## M9. Evaluation (the author's to write)" in md and "- **Author:** no evaluation is on record" in md


def test_hostile_model_names_and_prompts_are_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, KEY)
    crit = "Include </pre><script>alert(2)</script> and\n```\n# not a heading\n"
    with FakeOpenAI(default=Answer("include"), reported_models={HOSTILE: HOSTILE + " v2"}) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, criteria=crit)
        server.titles = w["titles"]
        toml = w["root"] / "reporter.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace('model = "exp-a"', f"model = {json.dumps(HOSTILE)}"),
                        encoding="utf-8")
        assert main(["screen", "--workspace", str(w["root"]), "--run"]) == 0
    out = tmp_path / "out"
    doc = disclose(w["root"], capsys, "--out", str(out))
    by = items(doc)
    assert any(HOSTILE in x for x in by["M2"]["warnings"])  # JSON keeps the string as it is
    page = (out / "disclosure.html").read_text(encoding="utf-8")
    assert page.count("<script>") == 1 and page.count("<script") == 1  # the site's own script, never a record's
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(2)" in page
    md = (out / "disclosure.md").read_text(encoding="utf-8")
    assert "<script>" not in md.split("```")[0]  # outside the prompt's code block, escaped
    assert "\\<script\\>" in md or "&lt;script" in md
    assert "**x**" not in md.replace("\\*\\*x\\*\\*", "")
    fences = re.findall(r"^(`{3,})$", md, re.MULTILINE)
    assert fences[:3] == ["````", "```", "````"]  # the prompt holds ```: its block's fence is longer


def test_the_digests_measured_precision_is_the_feedback_commands(tmp_path, monkeypatch, capsys):
    from test_digest_feedback import KEY, WEEKS
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1783339200")
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2)
    root = w["root"]
    (root / "papers").mkdir()
    for week, papers in WEEKS.items():
        (root / "papers" / f"{week}.jsonl").write_text("".join(
            json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in papers))
    (root / "watchlist.txt").write_text("Gaussian splatting\n")
    (root / "criteria.md").write_text("## In scope\n- Gaussian splatting: `Gaussian splatting`, `novel view*`\n")
    with open(root / "reporter.toml", "a", encoding="utf-8") as f:
        f.write('\n[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\ncriteria = "criteria.md"\n'
                'archive = "digests"\n')
    assert main(["digest", "--workspace", str(root), "--from", "2026-W25", "--to", "2026-W26"]) == 0
    assert main(["feedback", "--workspace", str(root), "--wanted", KEY["doi:10.5555/a"]]) == 0
    capsys.readouterr()
    assert main(["feedback", "--workspace", str(root), "--not-wanted", KEY["doi:10.5555/e"], "--json"]) == 0
    quality = json.loads(capsys.readouterr().out)["quality"]
    by = items(disclose(root, capsys))
    low, high = quality["interval"]
    assert f"Digest KEEP precision: {100 * quality['precision']:.1f}% (95% CI {100 * low:.1f}%-{100 * high:.1f}%), " \
           f"{quality['keep_wanted']} wanted of {quality['keep_marked']} marked." in by["R2"]["text"]
    assert "state/feedback.json" in by["R2"]["sources"] and by["M9"]["status"] == "filled"
    assert sum("feedback" in s for s in by["M8"]["sources"]) == 2  # each feedback run's record


def test_a_certificate_is_the_persons_box_with_the_certify_records_numbers(tmp_path, monkeypatch, capsys):
    import csv
    w = screened(tmp_path, monkeypatch, capsys, screen=2, other=6)
    root = w["root"]
    sheet = root / "state" / "sheet.csv"
    assert main(["certify", "--workspace", str(root), "--pile", "discard", "--n", "4", "--out", str(sheet)]) == 0
    with open(sheet, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        row["label"] = "include" if i == 0 else "exclude"
    with open(sheet, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["certify", "--workspace", str(root), "--sheet", str(sheet), "--labeller", HOSTILE]) == 0
    [record] = [r for r in read_runs(root / "state") if r.kind == "certify"]
    doc = disclose(root, capsys)
    [box] = [b for b in doc["flow"] if b["id"] == "certificate/discard"]
    assert box["decided_by"] == "person" and box["count"] == record.counts["labelled"] == 4
    assert box["detail"] == f"{record.counts['relevant']} relevant of 4 labelled; stratum of 6"
    by = items(doc)
    assert f"by {HOSTILE}" in by["M8"]["text"] and "who labelled" not in " ".join(by["M8"]["missing"])
    assert f"at most {record.counts['max_relevant']:,} of its 6 works are relevant" in by["R2"]["text"]
    md = (root / "state" / "disclosure" / w["release_dir"].name / "disclosure.md").read_text(encoding="utf-8")
    assert HOSTILE not in md and "\\<script\\>" in md


def test_a_release_counts_only_the_answers_on_its_own_works(tmp_path, monkeypatch, capsys):
    """A generation outlives a release: the next release's screen reuses the answers on the works both hold and
    asks only the new ones; each release's disclosure counts the answers on its own works."""
    import pyarrow.parquet as pq
    from support.routing import write_pool
    from test_screen_run import title_of
    w = screened(tmp_path, monkeypatch, capsys, screen=2)
    root, first = w["root"], w["release_dir"].name
    rows = pq.read_table(root / "pool.parquet").to_pylist()
    write_pool(root / "pool.parquet", rows + [{"work_id": "t:W003", "source": "journal",
                                                "title": title_of("W003", "screen"), "abstract": "Abstract."}])
    port = int(re.search(r'base_url = "http://127.0.0.1:(\d+)/', (root / "reporter.toml").read_text()).group(1))
    with FakeOpenAI(default=Answer("include"), port=port) as server:  # the same voters: the same generation
        server.titles = {**w["titles"], title_of("W003", "screen"): "W003"}
        assert main(["route", "--workspace", str(root)]) == 0
        assert main(["screen", "--workspace", str(root), "--run"]) == 0
        assert server.counts() == {("W003", "exp-a"): 1, ("W003", "exp-b"): 1}  # only the new work was asked
    newest, older = items(disclose(root, capsys)), items(disclose(root, capsys, "--release", first))
    assert "exp-a in its 3 answers," in newest["M2"]["text"]
    assert "exp-a in its 2 answers," in older["M2"]["text"]
    assert len([s for s in older["M2"]["sources"] if "-screen-" in s]) == 1  # its own screen run's record only


def test_a_prompt_changed_since_the_run_is_not_shown_as_the_one_that_ran(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, criteria="Include studies of X.\n")
        server.titles = w["titles"]
        assert main(["screen", "--workspace", str(w["root"]), "--run"]) == 0
    ran = items(disclose(w["root"], capsys))["M6"]
    assert ran["status"] == "filled" and "Include studies of X." in ran["blocks"][0]["text"]
    (w["root"] / "criteria.md").write_text("Include studies of Y.\n", encoding="utf-8")
    m6 = items(disclose(w["root"], capsys))["M6"]
    assert m6["status"] == "partial" and "has changed since" in m6["missing"][0]
    assert not any("studies of Y" in b["text"] for b in m6["blocks"])
