"""The screen end to end against a real HTTP server (the fake OpenAI server) and a real SQLite file.

A tiny workspace: works whose title says `cheapword` go to the cheap tier's
pile, `screenword` to the expensive screen's, the rest are discarded by
routing. The fake server answers per (work, model) from a script, so every
gate outcome is chosen by the test and checked exactly.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.fake_openai import Answer, Content, FakeOpenAI, Refuse, Status
from support.routing import TODAY, write_pool, write_specs

from reporter.config import load_workspace
from reporter.panel.run_report import RunReport
from reporter.routing.release import route_release
from reporter.screening.run import run_screen

KEY_ENV = "SCREEN_TEST_KEY"
KEY = "sk-test-SECRET-7f3a9c1e5b"
"""An API key that must never reach any file under the workspace."""

PREFIX = "t:"
"""Work ids are `t:W001`...; the fake server and the assertions use the short name `W001`."""

MODELS = {"cheap": ("cheap-a", "cheap-b"), "expensive": ("exp-a", "exp-b")}
"""The model of each voter; the fake server counts requests per (work, model)."""

RULES = [
    {"id": "to-cheap", "description": "cheap tier", "pile": "screen_cheap", "precedence": 20,
     "match": {"field": "title", "any_phrase": ["cheapword"]}},
    {"id": "to-screen", "description": "expensive screen", "pile": "screen", "precedence": 10,
     "match": {"field": "title", "any_phrase": ["screenword"]}},
    {"id": "rest", "description": "everything else", "pile": "discard", "precedence": 1,
     "match": {"field": "title", "any_phrase": ["otherword"]}},
]


def title_of(work_id: str, kind: str) -> str:
    """The title of a work of a kind (cheap, screen or other): it names the work, so the fake knows it."""
    word = {"cheap": "cheapword", "screen": "screenword", "other": "otherword"}[kind]
    return f"Study {work_id} {word}"


def make_workspace(root: Path, base_url: str, *, cheap: int = 0, screen: int = 0, other: int = 0,
                   database: str = "state/screen.db", criteria: str | None = None, batch_size: int = 4,
                   concurrency: int = 4, cheap_voters: bool = True, lease_seconds: int = 300,
                   prices: tuple[float, float] = (1.0, 2.0), timeout: float = 30) -> dict:
    """A workspace with `cheap`, `screen` and `other` works, routed once; returns ws, release_dir and titles."""
    rows, kinds = [], {}
    n = 0
    for kind, count in (("cheap", cheap), ("screen", screen), ("other", other)):
        for _ in range(count):
            n += 1
            wid = f"W{n:03d}"
            kinds[wid] = kind
            rows.append({"work_id": PREFIX + wid, "source": "journal", "title": title_of(wid, kind),
                         "abstract": f"Abstract of {wid}.", "year": str(2000 + n % 20)})
    root.mkdir(parents=True, exist_ok=True)
    write_pool(root / "pool.parquet", rows)
    write_specs(root, RULES)
    voters = []
    for tier in ("cheap", "expensive") if cheap_voters else ("expensive",):
        for i, model in enumerate(MODELS[tier]):
            voters.append(f"""
[[screen.{tier}.voters]]
name = "{tier}-{'ab'[i]}"
base_url = "{base_url}"
model = "{model}"
api_key_env = "{KEY_ENV}"
max_concurrency = {concurrency}
price_in_per_mtok = {prices[0]}
price_out_per_mtok = {prices[1]}
timeout_seconds = {timeout}
""")
    crit = ""
    if criteria is not None:
        (root / "criteria.md").write_text(criteria, encoding="utf-8")
        crit = 'criteria = "criteria.md"\n'
    (root / "reporter.toml").write_text(f"""
pool = "pool.parquet"
specs = "specs"
releases = "releases"
site = "site"

[screen]
database = "{database}"
raw_dir = "state/raw"
lease_seconds = {lease_seconds}
batch_size = {batch_size}
{crit}{''.join(voters)}""", encoding="utf-8")
    result = route_release(root / "pool.parquet", root / "specs", root / "releases", workers=1, progress=False,
                           as_of=TODAY)
    titles = {r["title"]: r["work_id"].removeprefix(PREFIX) for r in rows}
    return {"root": root, "release_dir": result.release_dir, "titles": titles, "kinds": kinds,
            "ws": load_workspace(root)}


def environ(**extra: str) -> dict[str, str]:
    """The environment a run sees: the key, nothing else of the test process's secrets."""
    return {KEY_ENV: KEY, **extra}


def screen(w: dict, tiers=("cheap", "expensive"), **kwargs) -> RunReport:
    """run_screen in this process (a fresh Workspace, so an edited criteria file counts)."""
    return run_screen(load_workspace(w["root"]), w["release_dir"], tiers=tiers, environ=environ(),
                      progress=False, **kwargs)


def db_rows(w: dict, sql: str, params=()) -> list[tuple]:
    """Rows of the workspace's SQLite state database."""
    conn = sqlite3.connect(w["root"] / "state" / "screen.db")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def short(work_id: str) -> str:
    return work_id.removeprefix(PREFIX)


def verdicts(w: dict, tier: str) -> dict[str, str]:
    """short work name -> outcome of every stored verdict of a tier (any generation; tests that change it say so)."""
    return {short(wid): o for wid, o in db_rows(w, "SELECT work_id, outcome FROM verdicts WHERE tier = ?", (tier,))}


def per_work(kinds: dict[str, str], kind: str) -> list[str]:
    return sorted(w for w, k in kinds.items() if k == kind)


# --- the tests ------------------------------------------------------------------------------------


def test_every_work_is_asked_once_per_voter_and_the_gates_decide(tmp_path):
    # Cheap tier (W001-W006): two excludes discard; one include, an invalid reply or a failure pass it on.
    # Expensive screen (W007-W012 plus what the cheap tier passes on): two excludes discard, the rest admit.
    script = {
        ("W001", "cheap-a"): Answer("exclude"), ("W001", "cheap-b"): Answer("exclude"),       # discard
        ("W002", "cheap-a"): Answer("exclude"), ("W002", "cheap-b"): Answer("include"),       # proceed
        ("W003", "cheap-a"): Answer("exclude"), ("W003", "cheap-b"): Content("no json here"),  # invalid: proceed
        ("W004", "cheap-a"): Answer("exclude"), ("W004", "cheap-b"): Status(400),            # failure: proceed
        ("W005", "cheap-a"): Answer("cannot_be_determined"), ("W005", "cheap-b"): Answer("exclude"),
        ("W006", "cheap-a"): Answer("exclude"), ("W006", "cheap-b"): Answer("exclude"),       # discard
        ("W007", "exp-a"): Answer("exclude"), ("W007", "exp-b"): Answer("exclude"),           # discard
        ("W008", "exp-a"): Answer("exclude"), ("W008", "exp-b"): Answer("include"),           # admit
        ("W009", "exp-a"): Refuse(), ("W009", "exp-b"): Answer("exclude"),                    # invalid: admit
        ("W010", "exp-a"): Answer("maybe"), ("W010", "exp-b"): Answer("exclude"),             # unknown label
        ("W011", "exp-a"): [Status(429, retry_after=0.01), Answer("exclude")],               # retried
        ("W011", "exp-b"): Answer("exclude"),                                                 # discard
        ("W012", "exp-a"): Content('{"label": "include", "reason": "cut', finish_reason="length"),
    }
    with FakeOpenAI(script, default=Answer("exclude", "Default."), titles=None) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=6, screen=6, other=3)
        server.titles = w["titles"]
        report = screen(w)
        counts = server.counts()
    cheap_works, exp_works = per_work(w["kinds"], "cheap"), per_work(w["kinds"], "screen")
    passed_on = ["W002", "W003", "W004", "W005"]
    expected = {(wid, m): 1 for wid in cheap_works for m in MODELS["cheap"]}
    expected |= {(wid, m): 1 for wid in exp_works + passed_on for m in MODELS["expensive"]}
    expected[("W011", "exp-a")] = 2  # the 429, then the answer: the client's retry, not a second vote
    assert counts == expected
    assert verdicts(w, "cheap") == {"W001": "discard", "W002": "proceed", "W003": "proceed", "W004": "proceed",
                                    "W005": "proceed", "W006": "discard"}
    assert verdicts(w, "expensive") == {
        "W002": "discard", "W003": "discard", "W004": "discard", "W005": "discard",  # default answers: excludes
        "W007": "discard", "W008": "admit", "W009": "admit", "W010": "admit", "W011": "discard", "W012": "admit"}
    invalid = dict(((short(wid), voter), cause) for wid, voter, cause in db_rows(
        w, "SELECT work_id, voter, invalid_cause FROM votes WHERE invalid_cause IS NOT NULL"))
    assert invalid == {("W003", "cheap-b"): "unparseable", ("W009", "expensive-a"): "refusal",
                       ("W010", "expensive-a"): "unknown_label", ("W012", "expensive-a"): "truncated"}
    assert db_rows(w, "SELECT work_id, voter FROM failures") == [("t:W004", "cheap-b")]
    cheap, expensive = report.tiers
    assert (cheap.screened, cheap.votes, cheap.failures) == (6, 11, 1)
    assert (expensive.screened, expensive.votes, expensive.failures) == (10, 20, 0)
    assert report.spend_usd > 0 and not report.stopped_by_max_cost


def test_a_second_run_asks_nothing_and_invalid_replies_are_final(tmp_path):
    script = {("W001", "exp-a"): Content("garbage"), ("W002", "exp-a"): Status(400)}
    with FakeOpenAI(script, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False)
        server.titles = w["titles"]
        screen(w, max_cost=None)
        first = server.counts()
        # W002's exp-a failed after retries: no vote, no verdict; the run released it, so a re-run asks only it.
        assert verdicts(w, "expensive") == {"W001": "admit", "W003": "admit"}
        server.script = {}
        screen(w)
        second = server.counts()
    assert first[("W001", "exp-a")] == 1
    assert {k: second[k] - first.get(k, 0) for k in second if second[k] != first.get(k, 0)} == {("W002", "exp-a"): 1}
    assert verdicts(w, "expensive") == {"W001": "admit", "W002": "admit", "W003": "admit"}


def test_a_changed_prompt_makes_old_verdicts_stop_counting_and_keeps_old_answers(tmp_path):
    from reporter.screening.plan import plan_screen
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False,
                           criteria="Include replication studies.")
        server.titles = w["titles"]
        screen(w)
        assert all(n == 1 for n in server.counts().values())
        (w["root"] / "criteria.md").write_text("Include replication studies of psychology only.")
        ws = load_workspace(w["root"])
        [_, plan] = plan_screen(ws, w["release_dir"])
        assert plan.works == 3, "the old verdicts no longer count: every work would be sent again"
        screen(w)
        counts = server.counts()
        assert plan_screen(load_workspace(w["root"]), w["release_dir"])[1].works == 0
    assert counts == {(f"W00{i}", m): 2 for i in (1, 2, 3) for m in MODELS["expensive"]}
    generations = db_rows(w, "SELECT generation, COUNT(*) FROM verdicts GROUP BY generation")
    assert sorted(n for _, n in generations) == [3, 3], "both generations' verdicts are kept"
    lines = [json.loads(line) for f in sorted((w["root"] / "state" / "raw").glob("*.jsonl"))
             for line in f.read_text().splitlines()]
    assert len(lines) == 12 and len({line["generation"] for line in lines}) == 2, "the old answers are on disk"


def test_the_dry_run_sends_nothing_and_creates_no_database(tmp_path, capsys):
    from reporter.cli import main
    with FakeOpenAI() as server:
        w = make_workspace(tmp_path / "ws", server.base_url, cheap=2, screen=3, other=1)
        assert main(["screen", "--workspace", str(w["root"])]) == 0
        text = capsys.readouterr().out
        assert main(["screen", "--workspace", str(w["root"]), "--json", "--tier", "expensive"]) == 0
        plan = json.loads(capsys.readouterr().out)
        assert server.total == 0
    assert "Nothing was claimed or sent" in text
    assert [t["tier"] for t in plan["tiers"]] == ["expensive"] and plan["tiers"][0]["works"] == 3
    assert not (w["root"] / "state").exists(), "a dry run writes nothing, not even the database"


def test_the_api_key_never_reaches_a_file(tmp_path):
    script = {("W001", "exp-a"): Status(401), ("W002", "exp-b"): Content("not json"), ("W003", "exp-a"): Refuse()}
    with FakeOpenAI(script, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=4, cheap_voters=False)
        server.titles = w["titles"]
        screen(w)
        sent = [r["headers"].get("authorization") for r in server.requests]
    assert sent and all(h == f"Bearer {KEY}" for h in sent), "the key was sent, so it was in memory"
    files = [p for p in w["root"].rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files) and any(p.name == "screen.db" for p in files)
    leaked = [p for p in files if KEY.encode() in p.read_bytes()]
    assert leaked == []


@pytest.mark.parametrize("cap", [0.0, -1.0, float("nan"), float("inf")])
def test_a_max_cost_that_is_no_cap_is_refused_before_anything_is_asked(tmp_path, cap):
    """Issue 30, adversarial: `--max-cost inf` (and 1e309, which float() reads as inf) was taken and shown as
    `$inf`; a cap that caps nothing is refused like 0, negatives and NaN, naming the flag."""
    from reporter.errors import InputError

    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, cheap_voters=False)
        server.titles = w["titles"]
        with pytest.raises(InputError, match="--max-cost .*give a positive, finite number of US dollars"):
            screen(w, tiers=("expensive",), max_cost=cap)
        assert server.total == 0


def test_max_cost_stops_claiming(tmp_path):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=8, cheap_voters=False, batch_size=2,
                           concurrency=1)
        server.titles = w["titles"]
        report = screen(w, tiers=("expensive",), max_cost=1e-9)
        asked = server.total
    [tier] = report.tiers
    # The first request's worst case (its prompt plus max_tokens at the voter's prices) passes the cap: none is sent.
    assert asked == 0 and tier.screened == 0 and tier.stopped_by_max_cost and report.stopped_by_max_cost
    assert report.spend_usd == 0
    assert db_rows(w, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)]


@pytest.mark.parametrize("cap", [0.001, 0.004, 0.01])
def test_max_cost_reserves_each_requests_worst_case_so_the_spend_stays_under_the_cap(tmp_path, cap):
    from reporter.panel.budget import Budget
    from reporter.screening.prompt import load_prompt
    from reporter.panel.tier_loop import tier_messages
    from reporter.screening.run import screen_tier
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=30, cheap_voters=False, batch_size=4,
                           concurrency=2, prices=(1.0, 3.0))
        server.titles = w["titles"]
        report = screen(w, tiers=("expensive",), max_cost=cap)
        asked = server.total
    voter = w["ws"].screen.expensive[0]
    work = type("W", (), {"title": "Study W030 screenword", "abstract": "Abstract of W030.", "title_only": False})
    tier = screen_tier("expensive", w["ws"].screen.expensive, load_prompt(w["ws"].screen), None, None, {})
    worst = Budget(cap).worst_case(voter, tier_messages(tier, work))
    assert 0 <= report.spend_usd <= cap, "the spend never passes the cap"
    assert report.stopped_by_max_cost and asked < 60
    # It stopped only when the next worst case would not fit beside those in flight (2 voters x 2 requests).
    assert cap - report.spend_usd < 5 * worst


def test_a_voter_that_keeps_failing_stops_the_run_naming_it(tmp_path, capsys, monkeypatch):
    from reporter.cli import main
    with FakeOpenAI({(f"W00{i}", "exp-b"): Status(404) for i in range(1, 10)}, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=9, cheap_voters=False, batch_size=2,
                           concurrency=1)
        server.titles = w["titles"]
        monkeypatch.setenv(KEY_ENV, KEY)
        code = main(["screen", "--workspace", str(w["root"]), "--run"])
    err = capsys.readouterr().err
    assert code == 2
    assert "'expensive-b'" in err and server.base_url in err and "HTTP 404" in err and "5 requests in a row" in err
    assert KEY not in err
    assert db_rows(w, "SELECT COUNT(*) FROM jobs WHERE claimed_by IS NOT NULL") == [(0,)]
    assert db_rows(w, "SELECT COUNT(*) FROM verdicts") == [(0,)]
    assert db_rows(w, "SELECT COUNT(*) FROM failures") == [(5,)]


def test_a_missing_key_stops_the_run_before_anything_is_written(tmp_path):
    from reporter.errors import InputError
    w = make_workspace(tmp_path / "ws", "http://127.0.0.1:9/v1", screen=2, cheap_voters=False)
    with pytest.raises(InputError, match=KEY_ENV):
        run_screen(w["ws"], w["release_dir"], tiers=("expensive",), environ={}, progress=False)
    assert not (w["root"] / "state").exists()


def test_progress_shows_works_votes_spend_rate_and_time_left(tmp_path, capsys):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False)
        server.titles = w["titles"]
        run_screen(w["ws"], w["release_dir"], tiers=("expensive",), environ=environ(), progress=True)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("screen expensive (6 votes, $0.00") and "works/s" in last and "left)" in last
    assert "3/3 works" in last
