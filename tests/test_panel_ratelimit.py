"""Rate limits you can see and set (issue 34, item 3): a voter's `requests_per_minute` and `tokens_per_minute`,
honoured across its concurrency and the client's retries; the run's counters (requests sent and answered,
retries, 429s, 5xx) in its record; the progress line's `waiting on 429s: N in the last minute`.

The limiter runs on a fake clock (its sleep advances the clock), so a minute passes at once and every assertion is
a count, never a time. The traffic is real: the fake OpenAI server answers 429s and 5xx over HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from support.fake_openai import Answer, FakeOpenAI, Status
from test_panel_provider import ENV, _messages, _voter_settings
from test_screen_run import KEY, KEY_ENV, make_workspace

from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.panel.provider import ChatVoter
from reporter.panel.ratelimit import WINDOW_SECONDS, RateLimit, Traffic
from reporter.runs import read_runs
from reporter.screening.answer import SCREEN_ANSWER


class FakeClock:
    """A clock whose sleep moves it on at once (and yields to the loop)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def most_in_a_window(times: list[float]) -> int:
    """The most of `times` that fall in any half-open window of WINDOW_SECONDS."""
    times = sorted(times)
    return max((sum(1 for u in times if t <= u < t + WINDOW_SECONDS) for t in times), default=0)


def test_requests_per_minute_holds_across_concurrent_requests():
    clock = FakeClock()
    limit = RateLimit(3, None, clock=clock, sleep=clock.sleep)
    granted: list[float] = []

    async def one() -> None:
        await limit.acquire()
        granted.append(clock())

    async def many() -> None:
        await asyncio.gather(*(one() for _ in range(10)))

    asyncio.run(many())
    assert len(granted) == 10 and most_in_a_window(granted) == 3
    assert granted[-1] - granted[0] >= 3 * WINDOW_SECONDS  # 10 requests at 3 a minute: the 10th in the 4th minute


def test_tokens_per_minute_holds_and_a_request_larger_than_the_limit_goes_alone():
    clock = FakeClock()
    traffic = Traffic(clock)
    limit = RateLimit(None, 1_000, clock=clock, sleep=clock.sleep, traffic=traffic)
    granted: list[tuple[float, int]] = []

    async def one(tokens: int) -> None:
        await limit.acquire(tokens)
        granted.append((clock(), tokens))

    async def many() -> None:
        await asyncio.gather(*(one(t) for t in (400, 400, 400, 1_500, 300)))

    asyncio.run(many())
    assert len(granted) == 5
    for start, _ in granted:
        in_window = [t for when, t in granted if start <= when < start + WINDOW_SECONDS]
        assert sum(in_window) <= 1_000 or in_window == [1_500], "a window holds the limit, or one oversized request"
    assert traffic.waits == 3 and traffic.waited_seconds >= 3 * WINDOW_SECONDS - 1


def test_the_progress_words_say_the_429s_of_the_last_minute_and_the_retries():
    clock = FakeClock()
    traffic = Traffic(clock)
    assert traffic.progress_words() == ""
    for _ in range(12):
        traffic.on_request(0)
        traffic.on_response(429)
        traffic.on_request(1)
        clock.now += 1
    assert traffic.progress_words() == "12 retries; waiting on 429s: 12 in the last minute"
    clock.now += WINDOW_SECONDS
    assert traffic.progress_words() == "12 retries", "the 429s of more than a minute ago are no longer counted"
    assert traffic.counts()["requests.429"] == 12 and traffic.counts()["requests.sent"] == 12


def test_a_voters_limit_holds_over_its_concurrency_and_the_clients_retries_against_a_server_that_429s():
    """Every HTTP attempt, the retries after each 429 included, passes the voter's limiter: the server receives
    no more than requests_per_minute in any (fake) minute, and the counters see every 429 the client retried."""
    clock = FakeClock()
    granted: list[float] = []
    traffic = Traffic(clock)

    class Recording(RateLimit):
        async def acquire(self, tokens: int = 0) -> float:
            waited = await super().acquire(tokens)
            granted.append(self.clock())
            return waited

    def script(work, model, attempt):
        return Status(429, retry_after=0.01) if attempt == 1 and work in ("w1", "w2") else Answer("include")

    async def ask_all(base_url: str) -> list:
        settings = dataclasses.replace(_voter_settings(base_url), max_concurrency=4, requests_per_minute=2)
        limit = Recording(2, None, clock=clock, sleep=clock.sleep, traffic=traffic)
        voter = ChatVoter(settings, ENV, max_retries=3, answer=SCREEN_ANSWER, traffic=traffic, limit=limit)
        try:
            return await asyncio.gather(*(voter.ask(_messages(f"w{i}")) for i in range(1, 6)))
        finally:
            await voter.aclose()

    with FakeOpenAI(script) as server:
        replies = asyncio.run(ask_all(server.base_url))
        total = server.total
    assert [r.vote.answer for r in replies] == ["include"] * 5
    assert total == 7 == len(granted), "5 requests and 2 retries, each through the limiter"
    assert most_in_a_window(granted) == 2
    assert (traffic.sent, traffic.retries, traffic.status_429, traffic.answered) == (5, 2, 2, 5)


def test_a_screen_against_a_server_that_429s_counts_them_in_its_record_and_its_progress_line(
        tmp_path, monkeypatch, capsys):
    def script(work, model, attempt):
        n = int(work.lstrip("W"))
        if attempt == 1 and n % 2:
            return Status(429, retry_after=0.01)
        if attempt == 1 and n == 4:
            return Status(503, retry_after=0.01)
        return Answer("include")

    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=6, cheap_voters=False, batch_size=2)
        server.titles = w["titles"]
        assert main(["screen", "--workspace", str(w["root"]), "--run", "--tier", "expensive"]) == 0
        total = server.total
    err = capsys.readouterr().err
    [record] = read_runs(w["root"] / "state")
    # 6 works x 2 voters; W001, W003, W005 got a 429 first from each voter, W004 a 503
    assert total == 12 + 6 + 2
    assert (record.counts["requests.sent"], record.counts["requests.answered"]) == (12, 12)
    assert (record.counts["requests.retries"], record.counts["requests.429"], record.counts["requests.5xx"]) == \
        (8, 6, 2)
    assert "8 retries; waiting on 429s: 6 in the last minute" in err


def test_rate_limit_keys_are_read_and_checked(tmp_path):
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=1, cheap_voters=False)
    toml = w["root"] / "reporter.toml"
    text = toml.read_text()
    toml.write_text(text.replace('model = "exp-a"\n', 'model = "exp-a"\nrequests_per_minute = 500\n'
                                                      'tokens_per_minute = 200000\n'))
    voter = load_workspace(w["root"]).screen.expensive[0]
    assert (voter.requests_per_minute, voter.tokens_per_minute) == (500, 200_000)
    toml.write_text(text.replace('model = "exp-a"\n', 'model = "exp-a"\nrequests_per_minute = 0\n'))
    with pytest.raises(InputError, match="requests_per_minute.*must be positive"):
        load_workspace(w["root"])


def test_the_run_json_reports_the_traffic(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, cheap_voters=False)
        server.titles = w["titles"]
        assert main(["screen", "--workspace", str(w["root"]), "--run", "--tier", "expensive", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["requests"] == {"sent": 4, "answered": 4, "retries": 0, "429": 0, "5xx": 0, "rate_limit_waits": 0}


def test_a_request_waiting_for_the_rate_limit_at_ctrl_c_is_never_sent():
    """The first attempt waits in `ChatVoter.ask`, so the run's Ctrl-C (`halted`) leaves it unsent (`NotSent`)
    instead of sending it once the minute has room."""
    from reporter.panel.provider import NotSent
    clock = FakeClock()
    waiting = asyncio.Event()
    voters: list[ChatVoter] = []

    async def stopped_sleep(seconds: float) -> None:
        waiting.set()
        voters[0].halted = True  # Ctrl-C while it waits
        clock.now += seconds

    async def ask_two(base_url: str) -> list:
        settings = dataclasses.replace(_voter_settings(base_url), requests_per_minute=1)
        limit = RateLimit(1, None, clock=clock, sleep=stopped_sleep)
        voter = ChatVoter(settings, ENV, max_retries=0, answer=SCREEN_ANSWER, limit=limit)
        voters.append(voter)
        try:
            return await asyncio.gather(voter.ask(_messages("w1")), voter.ask(_messages("w2")),
                                        return_exceptions=True)
        finally:
            await voter.aclose()

    with FakeOpenAI(default=Answer("include")) as server:
        first, second = asyncio.run(ask_two(server.base_url))
        total = server.total
    assert first.vote.answer == "include" and isinstance(second, NotSent) and waiting.is_set()
    assert total == 1
