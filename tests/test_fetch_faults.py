"""Faults: 429 and 503 with Retry-After, backoff with jitter, cut and malformed pages, dropped connections,
timeouts, an empty page before the total, errors that name the source and the URL but never a key, and
each source's etiquette. Waits run on a fake clock: no test sleeps for real."""

from __future__ import annotations

import json
import random

import pytest
from support.fake_sources import ALL, FakeClock, fake_server, run_fetch, write_workspace  # noqa: F401 (fixture)

from reporter.errors import InputError
from reporter.fetch.http import Policy, retry_after_seconds

COUNTS = {"arxiv": 4, "biorxiv": 2, "medrxiv": 2, "pubmed": 3, "openalex": 3}
"""Records of 2026-W20 per source (tests/fixtures/fetch/README.md)."""


def _cached_pages(root):
    return sorted((root / "cache").rglob("*.page"))


@pytest.mark.parametrize("source", ALL)
def test_429_and_503_are_asked_again_after_retry_after(tmp_path, fake, source):
    fake.faults[source] = ["429:7", "503:2"]
    clock = FakeClock()
    report, = run_fetch(write_workspace(tmp_path, fake), (source,), clock=clock).reports
    assert clock.sleeps == [7.0, 2.0]  # what the server asked for, no more, no less
    assert (report.records, report.retried, report.waited_seconds) == (COUNTS[source], 2, 9.0)
    assert report.sent == len(fake.requests(source))
    assert [f.split(": ", 1)[1] for f in report.failures] == [
        "HTTP 429 (Retry-After 7 s)", "HTTP 503 (Retry-After 2 s)"]


def test_openalex_403_is_its_rate_limit_and_is_asked_again(tmp_path, fake):
    fake.faults["openalex"] = ["403"]  # OpenAlex's errors page: 403, "Rate limit exceeded; slow down"
    report, = run_fetch(write_workspace(tmp_path, fake), ("openalex",)).reports
    assert (report.records, report.retried) == (3, 1)
    fake.faults["arxiv"] = ["403"]  # elsewhere a 403 is a refusal
    with pytest.raises(InputError, match=r"^arxiv: \S+: HTTP 403 \(<html><body><h1>403</h1></body></html>\): the API "
                                         r"refused the request"):
        run_fetch(write_workspace(tmp_path, fake), ("arxiv",))


def test_without_retry_after_the_wait_doubles_with_seeded_jitter(tmp_path, fake):
    fake.faults["arxiv"] = ["503", "503", "503"]
    clock = FakeClock()
    run_fetch(write_workspace(tmp_path, fake, fetch="backoff_seconds = 2"), ("arxiv",), clock=clock)
    rng, policy = random.Random(0), Policy(backoff_seconds=2.0)
    assert clock.sleeps == [round(policy.backoff(k, rng), 6) for k in (1, 2, 3)]
    assert 1 <= clock.sleeps[0] <= 2 and 2 <= clock.sleeps[1] <= 4 and 4 <= clock.sleeps[2] <= 8


def test_a_retry_after_given_as_an_http_date():
    now = 1_778_457_600.0  # Mon, 11 May 2026 00:00:00 GMT
    assert retry_after_seconds("Mon, 11 May 2026 00:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Sun, 10 May 2026 23:00:00 GMT", now) == 0.0  # already past: no wait
    assert retry_after_seconds("120", now) == 120.0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


@pytest.mark.parametrize("fault", ["drop", "truncate", "malformed"])
@pytest.mark.parametrize("source", ALL)
def test_a_dropped_cut_or_malformed_answer_is_asked_again_never_taken_as_the_end(tmp_path, fake, source, fault):
    fake.faults[source] = ["ok", fault]  # the second answer (PubMed: the first efetch page)
    result = run_fetch(write_workspace(tmp_path, fake), (source,))
    report, = result.reports
    assert (report.records, report.retried, report.sent) == (COUNTS[source], 1, len(fake.requests(source)))
    assert report.sent == {"arxiv": 3, "biorxiv": 3, "medrxiv": 3, "pubmed": 4, "openalex": 4}[source]
    for page in _cached_pages(tmp_path):  # only whole answers are kept
        head, _, body = page.read_bytes().partition(b"\n")
        assert json.loads(head)["status"] == 200 and body.rstrip().endswith((b"}", b">"))


@pytest.mark.parametrize("source", ALL)
def test_an_empty_page_before_the_total_is_asked_again(tmp_path, fake, source):
    # The arXiv API is known to answer a page with no entries although totalResults says more remain.
    fake.faults[source] = ["ok", "empty"]
    report, = run_fetch(write_workspace(tmp_path, fake), (source,)).reports
    assert (report.records, report.retried) == (COUNTS[source], 1)


def test_a_timeout_is_asked_again(tmp_path, fake):
    fake.faults["openalex"] = ["hang"]  # answers nothing until released (never, here)
    report, = run_fetch(write_workspace(tmp_path, fake, ("openalex",), timeout=0.2), ("openalex",)).reports
    assert (report.records, report.retried) == (3, 1)


def test_when_retries_run_out_the_error_names_source_url_and_every_failure_never_the_key(tmp_path, fake):
    fake.faults["pubmed"] = ["503:1", "429:1", "drop", "truncate"]
    toml = dict(fetch="retries = 3", extra={"pubmed": 'api_key_env = "NCBI_KEY"\nemail = "d@example.org"'})
    with pytest.raises(InputError) as caught:
        run_fetch(write_workspace(tmp_path, fake, ("pubmed",), **toml), ("pubmed",),
                  environ={"NCBI_KEY": "SECRET-KEY-1234"})
    message = str(caught.value)
    assert message.startswith(f"pubmed: {fake.root}/eutils/esearch.fcgi?db=pubmed&term=all%5Bsb%5D&datetype=edat"
                              f"&mindate=2026%2F05%2F11&maxdate=2026%2F05%2F17&usehistory=y&retmax=0&retmode=json"
                              f"&tool=reporter&email=d%40example.org: no whole answer after 4 attempts (")
    assert "HTTP 503 (Retry-After 1 s); HTTP 429 (Retry-After 1 s); the connection was dropped" in message
    assert "the answer was cut short after" in message and message.endswith("or raise [fetch] retries")
    assert "SECRET" not in message and "api_key" not in message
    assert all(q["api_key"] == "SECRET-KEY-1234" for q in fake.requests("pubmed"))  # sent, never shown


def test_a_key_is_never_stored_in_the_cache(tmp_path, fake):
    toml = dict(extra={"openalex": 'api_key_env = "OA_KEY"\nmailto = "d@example.org"'})
    run_fetch(write_workspace(tmp_path, fake, ("openalex",), **toml), ("openalex",),
              environ={"OA_KEY": "SECRET-KEY-1234"})
    pages = _cached_pages(tmp_path)
    assert len(pages) == 3 and all(b"SECRET" not in p.read_bytes() for p in pages)
    assert {q["api_key"] for q in fake.requests("openalex")} == {"SECRET-KEY-1234"}


@pytest.mark.parametrize("source, said", [
    ("arxiv", "HTTP 400 (incorrect search_query syntax): the API refused the request; check [fetch.arxiv] query "
              "and base_url"),
    ("openalex", "HTTP 400 (Invalid query parameters error.: type:artcle is not a valid type."),
    ("biorxiv", "HTTP 404 (<html><body><h1>404</h1></body></html>): the API refused the request"),
])
def test_a_request_the_api_refuses_stops_at_once_with_its_message(tmp_path, fake, source, said):
    fake.faults[source] = [said[5:8]]
    with pytest.raises(InputError, match=rf"^{source}: http://127\.0\.0\.1:\d+/\S+: ") as caught:
        run_fetch(write_workspace(tmp_path, fake), (source,))
    assert said in str(caught.value) and len(fake.requests(source)) == 1  # not asked again


def test_an_arxiv_error_feed_in_a_200_stops_with_its_message(tmp_path, fake):
    fake.faults["arxiv"] = ["error-feed"]
    with pytest.raises(InputError, match=r"^arxiv: \S+: the arXiv API answered with an error: incorrect search_query "
                                         r"syntax$"):
        run_fetch(write_workspace(tmp_path, fake, ("arxiv",)), ("arxiv",))
    assert _cached_pages(tmp_path) == [] and len(fake.log) == 1  # an error is never kept as an answer


def test_a_retry_after_beyond_max_wait_stops_the_fetch(tmp_path, fake):
    fake.faults["openalex"] = ["429:3600"]
    with pytest.raises(InputError, match=r"openalex: \S+: HTTP 429 \(Retry-After 3600 s\): the server asks to wait "
                                         r"longer than \[fetch\] max_wait_seconds \(600 s\); try again later"):
        run_fetch(write_workspace(tmp_path, fake), ("openalex",))


@pytest.mark.parametrize("source, key, interval", [
    ("arxiv", None, 3.0),          # arXiv: one request every three seconds
    ("pubmed", None, 1 / 3),       # NCBI: three a second without a key
    ("pubmed", "KEY", 0.1),        # ... and ten with one
    ("openalex", None, 0.1),
    ("biorxiv", None, 1.0),
])
def test_each_source_keeps_its_etiquette_by_default(tmp_path, fake, source, key, interval):
    extra = {"pubmed": 'api_key_env = "NCBI_KEY"'} if key else {}
    clock = FakeClock()
    report, = run_fetch(write_workspace(tmp_path, fake, (source,), interval=None, extra=extra), (source,), clock=clock,
                        environ={"NCBI_KEY": key} if key else {}).reports
    assert clock.sleeps == [round(interval, 6)] * (report.sent - 1)  # between requests, none before the first


def test_a_configured_interval_wins_even_with_a_key(tmp_path, fake):
    clock = FakeClock()
    extra = {"pubmed": 'api_key_env = "NCBI_KEY"\nmin_interval_seconds = 0.5'}
    run_fetch(write_workspace(tmp_path, fake, ("pubmed",), interval=None, extra=extra), ("pubmed",), clock=clock,
              environ={"NCBI_KEY": "k"})
    assert clock.sleeps == [0.5, 0.5]


def test_an_api_key_variable_that_is_not_set_stops_before_any_request(tmp_path, fake):
    toml = dict(extra={"pubmed": 'api_key_env = "NCBI_KEY"'})
    with pytest.raises(InputError, match=r"\[fetch.pubmed\] api_key_env names the environment variable 'NCBI_KEY', "
                                         r"which is not set"):
        run_fetch(write_workspace(tmp_path, fake, ("arxiv", "pubmed"), **toml), ("arxiv", "pubmed"))
    assert fake.log == []  # not even arXiv, which comes first and needs no key
