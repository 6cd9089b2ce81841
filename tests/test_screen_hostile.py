"""Hostile replies against the real run: a real SQLite file or a real PostgreSQL server, the fake OpenAI server.

A voter's reply is hostile text: a lone surrogate (legal JSON: `"\\ud800"`),
a NUL (PostgreSQL text cannot hold it), the voter's own API key echoed back.
One such reply must never stop a workspace: the run records it, and a later
run that finds it in the raw log (its vote row never written) recovers it.
"""

from __future__ import annotations

import base64
import json
import signal
from urllib.parse import quote

import pytest
from support.fake_openai import Answer, Content, FakeOpenAI, Status
from test_screen_crash import WAIT_SECONDS, finish, start_run
from test_screen_run import KEY, MODELS, make_workspace, screen, short

from reporter.config import load_workspace
from reporter.panel.prompt import generation_for
from reporter.panel.rawlog import orphans
from reporter.panel.store import open_store
from reporter.panel.store_sql import store_text, stored_text
from reporter.screening.prompt import load_prompt
from reporter.text import replace_surrogates

LONE = "\ud800 lone"
NUL = "nul \x00 inside"
HOSTILE_REASONS = {"W001": LONE, "W002": NUL, "W003": "both \udfff and \x00 and \ufffe0041 marker"}


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str | None:
    """None: the workspace's own SQLite file; else a fresh PostgreSQL database."""
    return None if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def hostile_script(work: str, model: str, attempt: int):
    if model == "exp-a" and work in HOSTILE_REASONS:
        return Answer("exclude", HOSTILE_REASONS[work])
    if model == "exp-b" and work == "W004":
        return Status(400, body="bad \x00 request")  # a failure whose cause holds a NUL
    if model == "exp-b" and work == "W005":
        return Content('{"label": "\\ud800", "reason": "x"}')  # unknown label, a lone surrogate in it
    return Answer("exclude", "plain")


def stored_votes(w: dict) -> dict[tuple[str, str], object]:
    ws = load_workspace(w["root"])
    generation = generation_for("expensive", ws.screen.expensive, load_prompt(ws.screen)).id
    with open_store(ws.screen.database, where="[screen] database") as store:
        return {(short(wid), voter): row.vote for wid, by in store.votes("expensive", generation).items()
                for voter, row in by.items()}


def test_store_text_round_trips_every_code_point_and_leaves_plain_text_alone():
    assert store_text("plain \\u0000 text é") == "plain \\u0000 text é"
    for text in ("\ud800", "\x00", "a\udfffb\x00c", "\ufffe", "\ufffe0041", "\ufffe" * 3 + "\ud800"):
        encoded = store_text(text)
        assert "\x00" not in encoded
        encoded.encode("utf-8")  # every code point of it is storable
        assert stored_text(encoded) == text


def test_a_hostile_reply_is_recorded_and_the_next_run_goes_on(tmp_path, database):
    with FakeOpenAI(hostile_script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=6, cheap_voters=False,
                           **({"database": database} if database else {}))
        server.titles = w["titles"]
        first = screen(w)
        second = screen(w)  # W004's failed vote is asked again; nothing else
        counts = server.counts()
    [tier] = [t for t in first.tiers if t.tier == "expensive"]
    assert tier.votes == 11 and tier.failures == 1 and tier.screened == 5
    assert second.tiers[-1].votes == 0 and second.tiers[-1].failures == 1
    votes = stored_votes(w)
    for work, reason in HOSTILE_REASONS.items():
        # As the voter gave it, a lone surrogate repaired to U+FFFD (so whatever reads it later can encode it).
        assert votes[(work, "expensive-a")].reason == replace_surrogates(reason)
    assert votes[("W005", "expensive-b")].invalid_cause == "unknown_label"
    assert counts[("W004", "exp-b")] == 2 and all(n == 1 for k, n in counts.items() if k != ("W004", "exp-b"))


def all_hostile(work: str, model: str, attempt: int):
    """Every reply of W001-W003 hostile, so whatever batch the kill cuts holds some."""
    return Answer("exclude", HOSTILE_REASONS[work] + model)


@pytest.mark.slow
def test_a_raw_log_holding_hostile_replies_recovers_after_a_kill(tmp_path, database):
    with FakeOpenAI(all_hostile) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False, batch_size=3,
                           concurrency=3, **({"database": database} if database else {}))
        server.titles = w["titles"]
        killed = start_run(w["root"], kill_at=1)
        killed.communicate(timeout=WAIT_SECONDS)
        assert killed.returncode == -signal.SIGKILL
        on_disk = {(short(r.work_id), r.model) for r in orphans(w["root"] / "state" / "raw", {})}
        assert on_disk, "the hostile replies wait in the raw log, their vote rows never written"
        before = server.counts()
        report = finish(start_run(w["root"]))
        again = finish(start_run(w["root"]))
        after = server.counts()
    assert sum(t["recovered"] for t in report["tiers"]) == len(on_disk)
    assert all(after[k] == before[k] for k in on_disk), "a reply on disk is adopted, never asked again"
    assert [t["votes"] for t in again["tiers"] if t["tier"] == "expensive"] == [0]
    votes = stored_votes(w)
    assert {k: v.reason for k, v in votes.items()} == {
        (x, f"expensive-{v}"): replace_surrogates(HOSTILE_REASONS[x]) + m for x in HOSTILE_REASONS for v, m in zip("ab", MODELS["expensive"])}


HOSTILE_KEY = "sk-te+st/SE&CR=ET-7f3a9c1e5b%41"
"""A key holding `+ / & = %`, so that each encoding differs from the key itself."""


def key_forms(key: str) -> list[str]:
    """The encodings a server echoing the key may use (written out here, apart from the code's own list)."""
    b64 = base64.b64encode(key.encode()).decode()
    return [key, quote(key, safe=""), quote(key), quote(key, safe="").lower(), b64, b64.rstrip("="),
            base64.urlsafe_b64encode(key.encode()).decode(), json.dumps(key)[1:-1].replace("/", "\\/"),
            base64.b64encode(b"user:" + key.encode()).decode()[8:-4]]


def echo_script(work: str, model: str, attempt: int):
    key = HOSTILE_KEY
    escaped = json.dumps(key)[1:-1].replace("/", "\\/")
    reasons = {"W001": f"your key is {key}", "W002": f"see ?api_key={quote(key, safe='')}&x=1",
               "W003": "auth " + base64.b64encode(key.encode()).decode(),
               "W004": "basic " + base64.b64encode(b"user:" + key.encode()).decode()}
    if work in reasons:
        return Answer("exclude", reasons[work])
    if work == "W005":  # the reason's key JSON-escaped inside the content (a `\/` and `\uXXXX` each)
        return Content('{"label": "exclude", "reason": "' + escaped + '"}')
    if work == "W006":
        return Content('{"label": "exclude", "reason": "' + "".join(f"\\u{ord(c):04x}" for c in key) + '"}')
    if work == "W007":
        return Status(400, body=f"upstream said: {quote(key, safe='')}")
    return Answer("exclude", "plain")


def test_a_key_echoed_in_a_reply_reaches_no_file_in_any_encoding(tmp_path, database):
    from reporter.screening.run import run_screen
    with FakeOpenAI(echo_script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=8, cheap_voters=False,
                           **({"database": database} if database else {}))
        server.titles = w["titles"]
        run_screen(load_workspace(w["root"]), w["release_dir"], tiers=("expensive",),
                   environ={"SCREEN_TEST_KEY": HOSTILE_KEY}, progress=False)
    votes = stored_votes(w)
    for work in ("W001", "W002", "W003", "W004", "W005", "W006"):
        assert votes[(work, "expensive-a")].answer == "exclude", work
        assert "[key]" in votes[(work, "expensive-a")].reason, work
    files = [p for p in w["root"].rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files)
    for form in key_forms(HOSTILE_KEY):
        assert [p.name for p in files if form.encode() in p.read_bytes()] == [], form
        if database:
            import psycopg
            with psycopg.connect(database) as conn:
                dumped = " ".join(str(r) for t in ("votes", "failures") for r in conn.execute(f"SELECT * FROM {t}"))
            assert form not in dumped


def test_mask_secret_replaces_each_form_once_and_never_inside_its_own_mark():
    from reporter.masking import KEY_MARK, mask_secret
    for key in ("e", "k", "ey", "[key]", HOSTILE_KEY):
        text = f"a {key} b {quote(key, safe='')} c {base64.b64encode(key.encode()).decode()} d"
        masked = mask_secret(text, key)
        assert masked.count(KEY_MARK) >= 1 and "[k[key]" not in masked and "[key]y]" not in masked, (key, masked)
    assert mask_secret("no secret here", "sk-long-key-1234") == "no secret here"
    # an environment's bytes that are not UTF-8 (U+DCFF here): masked in each form, percent-encoding included
    odd = b"sk-\xffkey-123456".decode("utf-8", "surrogateescape")
    assert mask_secret(f"a {odd} b sk-%FFkey-123456 c sk-%ffkey-123456", odd) == "a [key] b [key] c [key]"


def test_a_raw_line_an_older_reporter_wrote_with_the_key_is_recovered_with_the_key_masked(tmp_path):
    from reporter.panel.rawlog import open_raw_log, raw_line
    with FakeOpenAI(default=Answer("include", "fine")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=1, cheap_voters=False)
        server.titles = w["titles"]
        ws = load_workspace(w["root"])
        generation = generation_for("expensive", ws.screen.expensive, load_prompt(ws.screen)).id
        content = json.dumps({"label": "exclude", "reason": f"echo {KEY}"})
        body = json.dumps({"object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}})
        with open_store(ws.screen.database, where="[screen] database") as store:  # the older runner had seeded the job and claimed it
            store.seed_scope(w["release_dir"].name, "expensive", generation, ["t:W001"])
        with open_raw_log(ws.screen.raw_dir, "older-runner") as raw:  # closed: its runner has ended
            raw.append([raw_line(tier="expensive", generation=generation, work_id="t:W001", voter="expensive-a",
                                 model="exp-a", at="2026-01-01T00:00:00Z", status=200, usage=None, body=body)])
        report = screen(w)
        asked = server.counts()
    assert report.tiers[-1].recovered == 1 and asked == {("W001", "exp-b"): 1}
    assert stored_votes(w)[("W001", "expensive-a")].reason == "echo [key]"


# --- replies that cannot be stored as they are (issue 30, item 3) ---------------------------------------------


def huge_usage_body(label: str = "include") -> Status:
    """A 200 whose usage counts pass what a BIGINT column holds (2^64 tokens)."""
    return Status(200, body=json.dumps({
        "id": "chatcmpl-huge", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": json.dumps({"label": label, "reason": "ok"})}}],
        "usage": {"prompt_tokens": 2**64, "completion_tokens": 2**70, "total_tokens": 2**71}}))


def test_a_usage_count_past_the_column_is_no_count_and_the_run_goes_on(tmp_path):
    with FakeOpenAI(lambda work, model, attempt: huge_usage_body() if work == "W001" else Answer("include")) \
            as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False)
        server.titles = w["titles"]
        first = screen(w)
        second = screen(w)
    assert first.tiers[-1].screened == 3 and second.tiers[-1].votes == 0
    from test_screen_run import db_rows
    [(tin, tout, cost)] = db_rows(w, "SELECT input_tokens, output_tokens, cost_usd FROM votes "
                                     "WHERE work_id = 't:W001' AND voter = 'expensive-a'")
    assert 0 < tin < 10_000 and 0 < tout < 1_000 and cost < 0.01, "counted offline, as for a server sending none"


def test_a_raw_line_with_an_unstorable_usage_is_recovered_not_replayed_into_a_crash(tmp_path):
    from reporter.panel.rawlog import open_raw_log, raw_line
    script = {("W001", "exp-a"): [Status(400), Answer("include")]}  # the first run seeds the jobs, W001 left open
    with FakeOpenAI(script, default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, cheap_voters=False)
        server.titles = w["titles"]
        screen(w)
        ws = load_workspace(w["root"])
        generation = generation_for("expensive", ws.screen.expensive, load_prompt(ws.screen)).id
        body = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": '{"label": "include", "reason": "r"}'}}],
            "usage": {"prompt_tokens": 2**64, "completion_tokens": 3}})
        with open_raw_log(w["root"] / "state" / "raw", "old-runner") as log:  # a runner that ended
            log.append([raw_line(tier="expensive", generation=generation, work_id="t:W001", voter="expensive-a",
                                 model="exp-a", at="2026-01-01T00:00:00Z", status=200, body=body,
                                 usage={"input_tokens": 2**64, "output_tokens": 3, "cost_usd": 1e30,
                                        "estimated": False})])
        report = screen(w)
        again = screen(w)
        counts = server.counts()
    [tier] = [t for t in report.tiers if t.tier == "expensive"]
    from test_screen_run import db_rows
    assert tier.recovered == 1 and again.tiers[-1].votes == 0
    assert db_rows(w, "SELECT COUNT(*) FROM verdicts") == [(2,)]
    assert counts[("W001", "exp-a")] == 1, "the reply on disk was adopted, not asked again"
    votes = stored_votes(w)
    assert votes[("W001", "expensive-a")].answer == "include"
