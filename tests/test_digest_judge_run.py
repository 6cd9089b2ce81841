"""`reporter judge` against a real HTTP server (the fake OpenAI server) and a real SQLite file: the dry run sends
and creates nothing, a run asks each judge once per paper and a re-run nothing, two runners and a SIGKILL never
ask a judge twice for one paper, and the digest reads only recorded answers (issue 24)."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import fields
from pathlib import Path

import pytest
from support.fake_openai import Content, FakeOpenAI, Refuse, Status
from support.judge import KEY, KEY_ENV, MODELS, judge_workspace, judgement
from test_screen_crash import WAIT_SECONDS, finish_together
from test_screen_runners import Gated

from reporter.cli import main
from reporter.config import load_workspace
from reporter.digest.config import DigestSettings
from reporter.digest.judge.run import run_judge
from reporter.digest.publish import gather_digest
from reporter.errors import InputError
from reporter.panel.rawlog import orphans

W1, W2 = "2026-W20", "2026-W21"
KILLED = Path(__file__).resolve().parent / "support" / "judge_killed.py"


def rows(w: dict, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(w["db"])
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def judge(w: dict, weeks=(W1,), **kwargs):
    return run_judge(load_workspace(w["root"]).digest, list(weeks), environ={KEY_ENV: KEY}, progress=False,
                     **kwargs)


def command(w: dict, *args: str, env: dict | None = None) -> subprocess.Popen:
    """`reporter judge --workspace ... ARGS --json` in its own process."""
    return subprocess.Popen([sys.executable, "-m", "reporter.cli", "judge", "--workspace", str(w["root"]), *args,
                             "--json"], env={**os.environ, KEY_ENV: KEY, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=WAIT_SECONDS)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out)


def each_once(server: FakeOpenAI, papers) -> bool:
    return server.counts() == {(p, m): 1 for p in papers for m in MODELS}


# --- the dry run ----------------------------------------------------------------------------------------


def test_the_dry_run_sends_claims_and_creates_nothing(tmp_path, capsys):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3, W2: 2})
        assert main(["judge", "--workspace", str(w["root"]), "--from", W1, "--to", W2]) == 0
        text = capsys.readouterr().out
        assert main(["judge", "--workspace", str(w["root"]), "--from", W1, "--to", W2, "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        assert server.total == 0, "the dry run sent a request"
    assert not (w["root"] / "state").exists(), "the dry run created the database or the raw folder"
    assert f"{W1}: 3 papers would be sent (3 after the merge, 0 already judged)" in text
    assert "all 2 weeks: 5 papers would be sent" in text and "Nothing was claimed or sent" in text
    assert plan["dry_run"] is True and [p["to_judge"] for p in plan["weeks"]] == [3, 2]
    assert [v["voter"] for v in plan["voters"]] == ["judge-a", "judge-b"]
    assert [v["works"] for v in plan["weeks"][0]["voters"]] == [3, 3]
    assert plan["total_cost_usd"] == pytest.approx(sum(v["cost_usd"] for v in plan["voters"]))
    assert plan["total_cost_usd"] > 0
    tokens = plan["weeks"][0]["tokens"]
    assert tokens["count"] == 3 and tokens["min"] <= tokens["median"] <= tokens["max"]
    assert plan["weeks"][0]["tokens"]["histogram"][0]["works"] >= 1


def test_without_a_judge_the_command_says_how_to_add_one(tmp_path, capsys):
    (tmp_path / "reporter.toml").write_text('pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "t"\n[digest]\n'
                                            'papers = "p"\nwatchlist = "w"\ncriteria = "c"\n')
    assert main(["judge", "--workspace", str(tmp_path), "--week", W1]) == 2
    assert "no [digest.judge] table; add one with one or two [[digest.judge.voters]]" in capsys.readouterr().err
    assert main(["judge", "--workspace", str(tmp_path), "--week", W1, "--max-cost", "1"]) == 2


# --- the run ---------------------------------------------------------------------------------------------


def test_a_run_asks_each_judge_once_per_paper_and_a_rerun_sends_nothing(tmp_path, capsys):
    script = {("P002", MODELS[1]): judgement("in_scope", lines=(2,)),  # cites a heading: uncited, a failure
              ("P003", MODELS[0]): [Status(500), judgement("borderline")]}  # a retried 500 is one answer
    with FakeOpenAI(script, default=judgement("in_scope", reason="An LLM judge.")) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 4})
        server.titles = w["titles"]
        report = judge(w)
        first = server.counts()
        again = judge(w)
        assert server.counts() == first, "a re-run on a judged week sent a request"
        assert main(["judge", "--workspace", str(w["root"]), "--week", W1, "--json"]) == 0
        [week_plan] = json.loads(capsys.readouterr().out)["weeks"]
        assert (week_plan["papers"], week_plan["judged"], week_plan["to_judge"]) == (4, 4, 0)
    assert first == {**{(p, m): 1 for p in ("P001", "P002", "P003", "P004") for m in MODELS},
                     ("P003", MODELS[0]): 2}
    [week] = report.tiers
    assert (week.tier, week.scope, week.screened, week.votes, week.failures) == ("judge", 4, 4, 8, 0)
    assert again.tiers[0].screened == 0 and again.tiers[0].votes == 0
    votes = {(w_id[-2:], voter): (label, cause, detail) for w_id, voter, label, cause, detail in rows(
        w, "SELECT v.work_id, v.voter, v.label, v.invalid_cause, d.detail FROM votes v LEFT JOIN vote_details d "
           "USING (tier, generation, work_id, voter) WHERE v.tier = 'judge'")}
    assert votes[("01", "judge-a")] == ("in_scope", None, '{"criteria_lines":[4]}')
    assert votes[("02", "judge-b")] == (None, "uncited", None)
    assert votes[("03", "judge-a")] == ("borderline", None, '{"criteria_lines":[4]}')
    assert rows(w, "SELECT COUNT(*), MIN(outcome) FROM verdicts WHERE tier = 'judge'") == [(4, "done")]
    assert rows(w, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)]
    raw = list(orphans(w["root"] / "state" / "judge-raw", {}))
    assert len(raw) == 8 and {r.tier for r in raw} == {"judge"}
    assert all(KEY not in p.read_text() for p in (w["root"] / "state" / "judge-raw").iterdir())


def test_a_provider_failure_is_asked_again_by_the_next_run_and_only_it(tmp_path):
    down = threading.Event()

    def script(work, model, attempt):
        if work == "P002" and model == MODELS[1] and not down.is_set():
            return Status(400)
        return judgement("partial")

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 2})
        server.titles = w["titles"]
        first = judge(w)
        assert first.tiers[0].screened == 1 and first.tiers[0].failures == 1
        before = server.counts()
        down.set()
        second = judge(w)
        after = server.counts()
    assert {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)} == {("P002", MODELS[1]): 1}
    assert second.tiers[0].screened == 1 and second.tiers[0].votes == 1


def test_a_new_criteria_document_is_a_new_generation_and_the_old_answers_stay(tmp_path):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 2}, judges=1)
        server.titles = w["titles"]
        judge(w)
        (w["root"] / "criteria.md").write_text((w["root"] / "criteria.md").read_text() + "\n- Also this\n")
        judge(w)
        assert server.counts() == {("P001", MODELS[0]): 2, ("P002", MODELS[0]): 2}
    assert rows(w, "SELECT COUNT(DISTINCT generation), COUNT(*) FROM votes") == [(2, 4)]
    assert len(list(orphans(w["root"] / "state" / "judge-raw", {}))) == 4


def test_refusals_and_junk_are_recorded_failures_never_asked_again(tmp_path):
    script = {("P001", MODELS[0]): Refuse(), ("P002", MODELS[0]): Content("Surely in scope!"),
              ("P003", MODELS[0]): Content('{"fit": "relevant", "criteria_lines": [4], "reason": "r"}')}
    with FakeOpenAI(script, default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3}, judges=1)
        server.titles = w["titles"]
        judge(w)
        judge(w)
        assert all(n == 1 for n in server.counts().values())
    assert sorted(c for (c,) in rows(w, "SELECT invalid_cause FROM votes")) == ["refusal", "unknown_fit",
                                                                               "unparseable"]


def test_max_cost_stops_the_claiming(tmp_path):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 12}, batch_size=2, concurrency=1, judges=1)
        server.titles = w["titles"]
        report = judge(w, max_cost=0.002)
        asked = server.total
    # Each request's worst case is reserved before it is sent: the spend stays under the cap.
    assert report.stopped_by_max_cost and 1 <= report.tiers[0].screened < 12 and report.spend_usd <= 0.002
    assert asked == report.tiers[0].votes


# --- runners at once, and killed ---------------------------------------------------------------------------


def test_two_runners_at_once_never_ask_a_judge_twice_for_one_paper(tmp_path):
    gate = threading.Event()

    def script(work, model, attempt):
        return judgement() if gate.is_set() else Gated(gate, judgement())

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 10, W2: 6}, batch_size=2, concurrency=2,
                            timeout=10 * WAIT_SECONDS)
        server.titles = w["titles"]
        procs = [command(w, "--from", W1, "--to", W2, "--run") for _ in range(2)]
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while w["db"].exists() is False or len(_holders(w)) < 2:
                assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                    "the runners never both held claims: " + " | ".join(p.communicate()[1][-1500:] for p in procs)
                time.sleep(0.05)
            gate.set()
            reports = [json.loads(out) for out, _ in finish_together(procs)]
        finally:
            gate.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        assert each_once(server, w["papers"])
    assert rows(w, "SELECT COUNT(*) FROM verdicts") == [(16,)]
    assert len(rows(w, "SELECT DISTINCT runner FROM votes")) == 2, "both runners recorded answers"
    assert sum(t["votes"] for r in reports for t in r["weeks"]) == 32
    assert [t["week"] for t in reports[0]["weeks"]] == [W1, W2]


def _holders(w: dict) -> list:
    try:
        return rows(w, "SELECT DISTINCT claimed_by FROM jobs WHERE claimed_by IS NOT NULL")
    except sqlite3.Error:
        return []


@pytest.mark.parametrize("nth", [1, 2])
def test_a_runner_killed_between_its_raw_lines_and_its_rows_loses_no_paid_reply(tmp_path, nth):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 6}, batch_size=2, concurrency=1)
        server.titles = w["titles"]
        killed = subprocess.Popen([sys.executable, str(KILLED), str(w["root"]), W1, str(nth)],
                                  env={**os.environ, KEY_ENV: KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        killed.communicate(timeout=WAIT_SECONDS)
        assert killed.returncode == -signal.SIGKILL
        on_disk = {(w["ids"][r.work_id], r.model) for r in orphans(w["root"] / "state" / "judge-raw", {})}
        assert on_disk
        before = server.counts()
        report = finish(command(w, "--week", W1, "--run"))
        counts = server.counts()
    asked_again = {k: counts[k] - before.get(k, 0) for k in counts}
    # A reply on disk is adopted, never asked again; a request the kill cut before its reply came is asked once more.
    assert {k for k, n in asked_again.items() if n == 0} == on_disk
    assert all(n == 1 for k, n in asked_again.items() if k not in on_disk)
    assert set(counts) == {(p, m) for p in w["papers"] for m in MODELS}
    assert report["weeks"][0]["recovered"] >= 1
    assert rows(w, "SELECT COUNT(*) FROM verdicts") == [(6,)]
    raw = {(r.file, r.offset) for r in orphans(w["root"] / "state" / "judge-raw", {})}
    assert raw == set(rows(w, "SELECT raw_file, raw_offset FROM votes")), "every raw reply is a row, once"



# --- the digest reads recorded answers only --------------------------------------------------------------


def decisions(w: dict, week: str = W1) -> dict:
    return json.loads((w["root"] / "digests" / week / "decisions.json").read_text())


def test_the_digest_refuses_an_unjudged_week_naming_the_count_and_the_command(tmp_path, capsys):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3})
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 2
        err = capsys.readouterr().err
        assert server.total == 0, "the digest sent a request"
    assert f"week {W1}: 3 of 3 papers are not judged yet" in err
    assert "not answered by judge-a (3), judge-b (3)" in err
    assert f"run `reporter judge --workspace {w['root'].resolve()} --week {W1} --run` first" in err
    assert "--keyword-fallback" in err
    assert not (w["root"] / "digests" / W1).exists() and not (w["root"] / "state").exists()


def test_keyword_fallback_decides_the_unjudged_papers_by_the_keyword_rule(tmp_path, capsys):
    up = threading.Event()

    def script(work, model, attempt):
        return Status(400) if work == "P002" and not up.is_set() else judgement("borderline", reason="Close. But no.")

    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3}, judges=2)
        server.titles = w["titles"]
        judge(w)  # P002 fails at the provider: no answer recorded
        asked = server.total
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 2
        assert "1 of 3 papers are not judged yet" in capsys.readouterr().err
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--keyword-fallback"]) == 0
        assert server.total == asked, "the digest sent a request"
        doc = decisions(w)
        up.set()
        judge(w)
        capsys.readouterr()
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--keyword-fallback"]) == 2
        assert "the judge's recorded answers changed" in capsys.readouterr().err

    by_id = {d["id"]: d for d in doc["decisions"]}
    missing = by_id["arxiv:2605.00002"]
    assert missing["criteria_source"] == "keyword" and "judge-missing" in missing["tags"]
    assert [j["failure"] for j in missing["judges"]] == ["missing", "missing"]
    # The keyword rule, as without a judge: `LLM judge*` once in the abstract is partial (0.4), and it may KEEP.
    assert missing["axes"]["criteria"] == 0.4 and missing["decision"] == "KEEP"
    judged = by_id["arxiv:2605.00001"]
    assert judged["criteria_source"] == "judge" and judged["axes"]["criteria"] == 0.7
    assert judged["judges"] == [{"voter": "judge-a", "model": MODELS[0], "fit": "borderline", "criteria_lines": [4],
                                 "reason": "Close. But no.", "failure": None},
                                {"voter": "judge-b", "model": MODELS[1], "fit": "borderline", "criteria_lines": [4],
                                 "reason": "Close. But no.", "failure": None}]
    assert 'judged by judge-a (judge-model-a) borderline per criteria.md:4 "Models as judges of other models" ' \
           '("Close.")' in judged["rationale"]
    assert doc["inputs"]["judge"]["generation"] and doc["inputs"]["judge"]["answers_sha256"]


def test_a_judged_week_is_decided_from_the_answers_and_a_new_answer_changes_its_identity(tmp_path, capsys):
    with FakeOpenAI(default=judgement("out_of_scope", reason="Vision only.")) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 2}, judges=1)
        server.titles = w["titles"]
        judge(w)
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 0
        first = decisions(w)
        # Match 1.0, criteria 0.0 (out of scope, citing the Out of scope line), novelty 1.0: 55, REVIEW.
        assert {(d["decision"], d["score"], d["tags"][0]) for d in first["decisions"]} == {
            ("REVIEW", 55, "look-alike-trap")}
        capsys.readouterr()
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 0
        assert "already published with the same inputs" in capsys.readouterr().out
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--force"]) == 0
        assert decisions(w) == first, "the same answers, the same bytes"
        (w["root"] / "criteria.md").write_text((w["root"] / "criteria.md").read_text() + "- Also this\n")
        capsys.readouterr()
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 2
        err = capsys.readouterr().err
        assert "already published with other inputs" in err and "the judge's generation changed" in err
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--force"]) == 2
        assert "2 of 2 papers are not judged yet" in capsys.readouterr().err, "the old answers do not count"
        judge(w)
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--force"]) == 0
    assert decisions(w)["inputs"]["judge"]["generation"] != first["inputs"]["judge"]["generation"]


def test_the_build_never_sends_and_refuses_an_unjudged_week(tmp_path):
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {"2026-W10": 2})
        ws = load_workspace(w["root"])
        with pytest.raises(InputError, match="2 of 2 papers are not judged yet"):
            gather_digest(ws.digest, dt.date(2026, 6, 1))
        run = gather_digest(ws.digest, dt.date(2026, 6, 1), keyword_fallback=True)
        assert server.total == 0
    # a flag of the run, not a setting (issue 31, item 7): the digest's settings have no such field
    assert "keyword_fallback" not in {f.name for f in fields(DigestSettings)}
    assert [d.criteria_source for d in run.results[0].outcome.decisions] == ["keyword", "keyword"]


# --- what the reader sees -------------------------------------------------------------------------------


def test_decisions_json_carries_the_source_the_judges_the_weeks_cost_and_the_disagreements(tmp_path):
    from reporter.digest.archive import archived_weeks
    script = {("P001", m): judgement("in_scope") for m in MODELS} | {
        ("P002", m): judgement("borderline") for m in MODELS} | {("P003", m): judgement("silent") for m in MODELS}
    with FakeOpenAI(script) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3})
        server.titles = w["titles"]
        spent = judge(w).spend_usd
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 0
    doc = decisions(w)
    assert doc["rules"] == "digest.4"
    assert all(d["criteria_source"] == "judge" and len(d["judges"]) == 2 for d in doc["decisions"])
    block = doc["judge"]
    assert block["cost_usd"] == pytest.approx(spent, abs=1e-6) and block["cost_usd"] > 0
    assert [(j["voter"], j["answered"], j["failed"], j["missing"]) for j in block["judges"]] == [
        ("judge-a", 3, 0, 0), ("judge-b", 3, 0, 0)]
    # The keyword rule reads each paper as partial (`LLM judge*` once in its abstract): in_scope is two steps
    # from it (a row), borderline one (none); the judge silent where the keyword rule speaks is counted.
    table = block["keyword_disagreements"]
    assert [(r["id"], r["keyword"]["fit"], r["judge"]["fit"]) for r in table["papers"]] == [
        ("arxiv:2605.00001", "partial", "in_scope")]
    assert (table["keyword_silent"], table["judge_silent"]) == (0, 1)
    assert table["note"].startswith("surfaced, never applied")
    [week] = archived_weeks(w["root"] / "digests")
    assert week.judge.cost_usd == pytest.approx(block["cost_usd"])
    assert [(j.voter, j.model, j.answered) for j in week.judge.judges] == [("judge-a", MODELS[0], 3),
                                                                          ("judge-b", MODELS[1], 3)]
    assert [(d.id, d.keyword_fit, d.keyword_lines, d.judge_fit, d.judge_lines) for d in week.judge.disagreements] \
        == [("arxiv:2605.00001", "partial", (4,), "in_scope", (4,))]
    assert (week.judge.keyword_silent, week.judge.judge_silent) == (0, 1)
    keep = next(d for d in week.decisions.decisions if d.id == "arxiv:2605.00001")
    assert keep.criteria_source == "judge" and keep.judges[1].fit == "in_scope" and keep.judges[1].voter == "judge-b"
    # The week page shows the judge's cost per judge and the one disagreement, linked to the paper's entry.
    from reporter.money import dollars
    from reporter.build import render_site
    from support.site import parse_html
    render_site(None, tmp_path / "site", digests_dir=w["root"] / "digests", progress=False)
    page = parse_html((tmp_path / "site" / "digest" / f"{W1}.html").read_text(encoding="utf-8"))
    section = page.find(id="judge")
    assert section.find("h2").text() == f"Criteria judge: {dollars(block['cost_usd'])} this week"
    tables = section.find_all("table")
    spend = [[td.text() for td in tr.find_all("td")] for tr in tables[0].find("tbody").find_all("tr")]
    assert [row[:5] for row in spend] == [["judge-a", MODELS[0], "3", "0", "0"], ["judge-b", MODELS[1], "3", "0", "0"]]
    [row] = tables[1].find("tbody").find_all("tr")
    assert [td.text() for td in row.find_all("td")][1:] == [keep.decision, "partial (line 4)", "in_scope (line 4)"]
    from reporter.site.digest_pages import paper_anchor
    assert row.find("a").attrs["href"] == "#" + paper_anchor("arxiv:2605.00001")
    md = (tmp_path / "site" / "digest" / f"{W1}.md").read_text(encoding="utf-8")
    # The twin escapes Markdown's own characters in the data ($, _) as every twin does.
    assert "## Criteria judge: " + dollars(block["cost_usd"]).replace("$", "\\$") + " this week" in md
    assert "| KEEP | partial (line 4) | in\\_scope (line 4) |" in md


def test_a_week_without_a_judge_says_keyword_and_older_weeks_read_as_keyword(tmp_path):
    from reporter.digest.archive import read_week
    from reporter.hashing import dump_json
    with FakeOpenAI(default=judgement()) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 2})
    toml = w["root"] / "reporter.toml"
    toml.write_text(toml.read_text().split("[digest.judge]")[0])
    (w["root"] / "criteria.md").write_text("## In scope\n- Models as judges: `LLM judge*`\n")  # terms: no judge
    assert main(["digest", "--workspace", str(w["root"]), "--week", W1]) == 0
    doc = decisions(w)
    assert doc["judge"] is None and "judge" not in doc["inputs"]
    assert {(d["criteria_source"], len(d["judges"])) for d in doc["decisions"]} == {("keyword", 0)}
    for d in doc["decisions"]:
        del d["criteria_source"], d["judges"]
    del doc["judge"]
    older = read_week(dump_json({**doc, "rules": "digest.2"}).encode(), "old.json")
    assert older.judge is None and {d.criteria_source for d in older.decisions.decisions} == {"keyword"}


def test_a_judge_reason_with_a_lone_surrogate_is_recorded_so_the_week_can_be_read(tmp_path):
    """Issue 30, item 3: `"\\ud800"` in a reason was recorded as is and every digest of the week died hashing it."""
    from reporter.digest.judge.answers import recorded_answers
    from reporter.digest.judge.prompt import judge_setup
    from reporter.digest.judge.run import week_papers
    with FakeOpenAI(default=Content('{"fit": "in_scope", "criteria_lines": [4], "reason": "odd \\ud800 text"}')) \
            as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 2})
        server.titles = w["titles"]
        judge(w)
    digest = load_workspace(w["root"]).digest
    answers = recorded_answers(digest.judge, judge_setup(digest.judge, digest.criteria), week_papers(digest, W1))
    assert len(answers.sha256) == 64
    assert {e.reason for es in answers.entries.values() for e in es} == {"odd \ufffd text"}
    assert {e.fit for es in answers.entries.values() for e in es} == {"in_scope"}


def test_a_run_whose_every_answer_is_invalid_reports_them_as_failures(tmp_path, capsys, monkeypatch):
    """Issue 30, item 10: every answer invalid was reported as '6 answers, 0 failures'."""
    with FakeOpenAI(default=judgement(fit="in_scope", lines=(1,))) as server:  # line 1 is no concept: uncited
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3})
        server.titles = w["titles"]
        monkeypatch.setenv(KEY_ENV, KEY)
        assert main(["judge", "--workspace", str(w["root"]), "--week", W1, "--run"]) == 0
        text = capsys.readouterr().out
        assert main(["judge", "--workspace", str(w["root"]), "--week", W1, "--run", "--json"]) == 0
    assert "6 answers" in text and "6 failures (6 invalid answers: 6 uncited; 0 requests failed after retries)" in text
    judged = rows(w, "SELECT COUNT(*) FROM votes WHERE invalid_cause = 'uncited'")
    assert judged == [(6,)]


def test_a_week_decided_with_no_judge_answer_says_so_and_groups_its_reviews_by_their_own_reason(tmp_path):
    """Issue 33, item 7: with --keyword-fallback and no answer recorded, the page said Axis 2 came from the judges'
    answers, and every REVIEW fell into one "Not judged yet" group whatever the keyword rule found."""
    from reporter.build import render_site
    from support.site import parse_html
    with FakeOpenAI(default=judgement("in_scope")) as server:
        w = judge_workspace(tmp_path / "ws", server.base_url, {W1: 3})
        assert main(["digest", "--workspace", str(w["root"]), "--week", W1, "--keyword-fallback"]) == 0
        assert server.total == 0
    doc = decisions(w)
    assert all("judge-missing" in d["tags"] for d in doc["decisions"])
    assert all(d["review_reason"] != "judge-missing" for d in doc["decisions"] if d["decision"] == "REVIEW")
    render_site(None, tmp_path / "site", digests_dir=w["root"] / "digests", progress=False)
    page = parse_html((tmp_path / "site" / "digest" / f"{W1}.html").read_text(encoding="utf-8"))
    note = page.find("section", id="judge").find("p").text()
    assert note == ("No judge had answered when the week was decided: the keyword rule decided Axis 2 for all 3 "
                    "papers (--keyword-fallback, tag judge-missing), and no judge's answer was used.")
    twin = (tmp_path / "site" / "digest" / f"{W1}.md").read_text(encoding="utf-8")
    assert "No judge had answered when the week was decided" in twin and "came from the judges'" not in twin
