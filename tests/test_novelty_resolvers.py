"""Fail-closed resolvers against local servers answering like OpenAlex and Semantic Scholar.

Each test starts stdlib HTTP servers on 127.0.0.1 (port 0) that answer with
each API's response shape, 429s with Retry-After, misses and slow answers.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reporter.cli import main
from reporter.novelty import (OpenAlexResolver, SemanticScholarResolver, check_candidate, load_graph,
                              parse_candidate, parse_events)

WORKED = Path(__file__).resolve().parent / "fixtures" / "novelty" / "worked_example"

PEERJ_DOI = "10.7717/peerj.4375"
PEERJ_W = "W2741809807"
RPM_ARXIV = "2608.13940"
S2_ID = "649def34f8be52c8b66281af98ae884c09aef38b"

OPENALEX_WORK = {  # the fields of a real /works/{id} answer that the resolver reads, and a few more
    "id": f"https://openalex.org/{PEERJ_W}",
    "doi": f"https://doi.org/{PEERJ_DOI}",
    "title": "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles",
    "display_name": "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles",
    "ids": {"openalex": f"https://openalex.org/{PEERJ_W}", "doi": f"https://doi.org/{PEERJ_DOI}",
            "mag": "2741809807", "pmid": "https://pubmed.ncbi.nlm.nih.gov/29456894"},
    "publication_year": 2018,
    "referenced_works": ["https://openalex.org/W1560783210", "https://openalex.org/W1850106664"],
}
OPENALEX_404 = {"error": "404 Not Found",
                "message": "The requested URL was not found on the server."}
S2_PAPER = {"paperId": S2_ID, "title": "AIRS-Bench",
            "externalIds": {"ArXiv": RPM_ARXIV, "DOI": "10.48550/arXiv.2608.13940", "CorpusId": 281234567}}
S2_404 = {"error": f"Paper with id ARXIV:{RPM_ARXIV} not found"}
S2_429 = {"message": "Too Many Requests. Please wait and try again or apply for a key for higher rate limits. "
                     "https://www.semanticscholar.org/product/api#api-key-form", "code": "429"}


class Api:
    """A local server: routes by unquoted path to (status, body, headers, delay); records each request."""

    def __init__(self):
        self.routes: dict[str, tuple[int, object, dict, float]] = {}
        self.requests: list[dict] = []
        self.release = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                parts = urllib.parse.urlsplit(self.path)
                path = urllib.parse.unquote(parts.path)
                api.requests.append({"path": path, "query": urllib.parse.parse_qs(parts.query),
                                     "headers": {k.lower(): v for k, v in self.headers.items()}})
                status, body, headers, delay = api.routes.get(path, (404, {"error": "no route"}, {}, 0.0))
                if delay:
                    api.release.wait(delay)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()

    def route(self, path, status=200, body=None, headers=None, delay=0.0):
        self.routes[path] = (status, body, headers or {}, delay)

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def openalex():
    api = Api()
    yield api
    api.close()


@pytest.fixture
def s2():
    api = Api()
    yield api
    api.close()


def paper(lom_id, **keys):
    return {"op": "upsert", "table": "paper", "row": {"lom_id": lom_id, "read": True, **keys}}


def checked(lom_id):
    return {"op": "upsert", "table": "references_checked",
            "row": {"lom_id": lom_id, "source": "openalex", "checked_ts": "2026-09-03T00:00:00Z",
                    "n_refs": 0, "status": "ok"}}


def graph_of(*events):
    return parse_events([json.dumps(e) for e in events], "<test>")


def candidate(keys, kind="paper", statement=None):
    obj = {"candidate": {"kind": kind, "keys": keys, "statement": statement, "holdout_lom_ids": []}}
    return parse_candidate(obj, "<test>").candidate


def resolvers(openalex=None, s2=None, timeout=2.0):
    out = []
    if openalex is not None:
        out.append(OpenAlexResolver(base_url=openalex.url, timeout=timeout, mailto="ops@example.org"))
    if s2 is not None:
        out.append(SemanticScholarResolver(base_url=s2.url + "/graph/v1", timeout=timeout))
    return out


HELD = 3600
"""A delay the fake servers hold an answer for: in effect until the test ends (the fixture's close releases it)."""
NEVER = 120
"""Seconds a call is given to end when the server never answers in time: only a call that waits for it fails."""


def ends(call, what: str):
    """`call()`'s result, made in a thread the test waits for at most NEVER seconds: a bounded wait that fails only
    when the call never ends (it waits on a server that never lets it go)."""
    out: list = []

    def run():
        try:
            out.append((True, call()))
        except BaseException as exc:  # raised in the test's thread below
            out.append((False, exc))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(NEVER)
    assert not thread.is_alive(), f"never ended: {what}"
    ok, value = out[0]
    if not ok:
        raise value
    return value


def summary(result):
    out = result.to_json()
    return out["status"], out["verdict"], out["lom_id"], out["exact_key_match"]["matched_lom_id"], \
        out["ingest_errors_blocking"]


# A graph that holds the PeerJ paper under its OpenAlex id only.
PEERJ_GRAPH = (paper(f"openalex:{PEERJ_W}", openalex=PEERJ_W), checked(f"openalex:{PEERJ_W}"))


def test_openalex_supplies_the_missing_openalex_id_and_rule1_matches(openalex):
    openalex.route(f"/works/doi:{PEERJ_DOI}", body=OPENALEX_WORK)
    result = check_candidate(candidate({"doi": PEERJ_DOI.upper()}), graph_of(*PEERJ_GRAPH), resolvers(openalex))
    assert summary(result) == ("ok", "duplicate", f"openalex:{PEERJ_W}", f"openalex:{PEERJ_W}", [])
    assert len(openalex.requests) == 1
    assert openalex.requests[0]["query"] == {"select": ["id,doi,ids,title"], "mailto": ["ops@example.org"]}


def test_openalex_429_fails_closed_at_once_without_retry(openalex):
    # A day's Retry-After: a check that slept on it would never end within the test.
    openalex.route(f"/works/doi:{PEERJ_DOI}", status=429, body={"error": "Too Many Requests"},
                   headers={"Retry-After": "86400"})
    result = ends(lambda: check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH),
                                          resolvers(openalex)), "the check slept on Retry-After")
    assert summary(result) == ("lookup_failed", "unknown", f"doi:{PEERJ_DOI}", None,
                               [{"scheme": "openalex", "http_status": 429, "lookup": f"doi:{PEERJ_DOI}"}])
    assert len(openalex.requests) == 1


def test_openalex_miss_fails_closed(openalex):
    openalex.route(f"/works/doi:{PEERJ_DOI}", status=404, body=OPENALEX_404)
    result = check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH), resolvers(openalex))
    assert summary(result)[:2] == ("lookup_failed", "unknown")
    assert result.to_json()["ingest_errors_blocking"] == [
        {"scheme": "openalex", "http_status": 404, "lookup": f"doi:{PEERJ_DOI}"}]


def test_an_answer_for_another_doi_is_never_used(openalex):
    openalex.route(f"/works/doi:{PEERJ_DOI}", body={**OPENALEX_WORK, "doi": "https://doi.org/10.1/other",
                                                    "ids": {"openalex": OPENALEX_WORK["id"]}})
    result = check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH), resolvers(openalex))
    assert summary(result)[:2] == ("lookup_failed", "unknown")
    assert result.to_json()["ingest_errors_blocking"][0]["http_status"] == 200


def test_a_body_that_is_not_json_fails_closed(openalex):
    openalex.route(f"/works/doi:{PEERJ_DOI}", body=b"<html>busy</html>")
    result = check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH), resolvers(openalex))
    assert summary(result)[:2] == ("lookup_failed", "unknown")


# A graph that holds RPM by DOI only: an arXiv-only candidate needs S2 to say its DOI.
RPM_DOI = "10.48550/arxiv.2608.13940"
RPM_GRAPH = (paper(f"doi:{RPM_DOI}", doi=RPM_DOI), checked(f"doi:{RPM_DOI}"))


def test_s2_supplies_the_doi_and_rule1_matches(openalex, s2):
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", body=S2_PAPER)
    result = check_candidate(candidate({"arxiv": RPM_ARXIV}), graph_of(*RPM_GRAPH), resolvers(openalex, s2))
    assert summary(result) == ("ok", "duplicate", f"doi:{RPM_DOI}", f"doi:{RPM_DOI}", [])
    assert openalex.requests == []  # OpenAlex cannot be asked by arXiv id, and S2's DOI already matched
    assert s2.requests[0]["query"] == {"fields": ["paperId,externalIds,title"]}


def test_s2_429_with_only_an_arxiv_id_is_lookup_failed(s2):
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", status=429, body=S2_429, headers={"Retry-After": "5"})
    result = check_candidate(candidate({"arxiv": RPM_ARXIV}), graph_of(*RPM_GRAPH), resolvers(s2=s2))
    assert summary(result) == ("lookup_failed", "unknown", f"arxiv:{RPM_ARXIV}", None,
                               [{"scheme": "s2", "http_status": 429, "lookup": f"ARXIV:{RPM_ARXIV}"}])
    assert len(s2.requests) == 1


def test_s2_timeout_is_lookup_failed_with_no_status(s2):
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", body=S2_PAPER, delay=HELD)  # answers only once the test ends
    result = ends(lambda: check_candidate(candidate({"arxiv": RPM_ARXIV}), graph_of(*RPM_GRAPH),
                                          resolvers(s2=s2, timeout=0.3)), "the check waited for the answer")
    assert len(s2.requests) == 1
    assert summary(result) == ("lookup_failed", "unknown", f"arxiv:{RPM_ARXIV}", None,
                               [{"scheme": "s2", "http_status": None, "lookup": f"ARXIV:{RPM_ARXIV}"}])


def test_s2_miss_is_lookup_failed(s2):
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", status=404, body=S2_404)
    result = check_candidate(candidate({"arxiv": RPM_ARXIV}), graph_of(*RPM_GRAPH), resolvers(s2=s2))
    assert summary(result)[4] == [{"scheme": "s2", "http_status": 404, "lookup": f"ARXIV:{RPM_ARXIV}"}]


def test_s2_paper_id_is_never_guessed_from_an_answer_about_another_paper(s2):
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", body={**S2_PAPER, "externalIds": {"CorpusId": 1}})
    graph = graph_of(paper("arxiv:2408.06292", s2_paper_id=S2_ID), checked("arxiv:2408.06292"))
    result = check_candidate(candidate({"arxiv": RPM_ARXIV}), graph, resolvers(s2=s2))
    assert summary(result)[:4] == ("lookup_failed", "unknown", f"arxiv:{RPM_ARXIV}", None)


def test_an_answer_contradicting_a_key_we_hold_is_not_trusted(s2):
    s2.route(f"/graph/v1/paper/DOI:{RPM_DOI}", body={**S2_PAPER, "externalIds": {"DOI": RPM_DOI, "ArXiv": "2601.00001"}})
    graph = graph_of(paper("arxiv:2408.06292", s2_paper_id=S2_ID), checked("arxiv:2408.06292"))
    result = check_candidate(candidate({"doi": RPM_DOI, "arxiv": RPM_ARXIV}), graph, resolvers(s2=s2))
    assert summary(result) == ("lookup_failed", "unknown", f"doi:{RPM_DOI}", None,
                               [{"scheme": "s2", "http_status": 200, "lookup": f"DOI:{RPM_DOI}"}])


def test_openalex_then_s2_chain_when_only_the_openalex_id_is_known(openalex, s2):
    openalex.route(f"/works/{PEERJ_W}", body=OPENALEX_WORK)
    s2.route(f"/graph/v1/paper/DOI:{PEERJ_DOI}", body={"paperId": S2_ID, "externalIds": {"DOI": PEERJ_DOI}})
    graph = graph_of(paper("arxiv:1111.00001", s2_paper_id=S2_ID), checked("arxiv:1111.00001"))
    result = check_candidate(candidate({"openalex": PEERJ_W}), graph, resolvers(openalex, s2))
    assert summary(result) == ("ok", "duplicate", "arxiv:1111.00001", "arxiv:1111.00001", [])
    assert [r["path"] for r in openalex.requests + s2.requests] == [f"/works/{PEERJ_W}",
                                                                   f"/graph/v1/paper/DOI:{PEERJ_DOI}"]


def test_an_openalex_failure_that_leaves_s2_unaskable_blocks(openalex, s2):
    openalex.route(f"/works/{PEERJ_W}", status=429, body={"error": "Too Many Requests"})
    graph = graph_of(paper("arxiv:1111.00001", s2_paper_id=S2_ID), checked("arxiv:1111.00001"))
    result = check_candidate(candidate({"openalex": PEERJ_W}), graph, resolvers(openalex, s2))
    assert summary(result)[4] == [{"scheme": "openalex", "http_status": 429, "lookup": PEERJ_W}]
    assert s2.requests == []


def test_a_failed_lookup_whose_keys_another_service_supplied_does_not_block(openalex, s2):
    openalex.route(f"/works/{PEERJ_W}", status=429, body={"error": "Too Many Requests"})
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", body=S2_PAPER)
    # The graph matches on DOIs only; S2 supplies the DOI that OpenAlex could not.
    graph = graph_of(paper("doi:10.5/other", doi="10.5/other"), checked("doi:10.5/other"))
    result = check_candidate(candidate({"arxiv": RPM_ARXIV, "openalex": PEERJ_W}), graph, resolvers(openalex, s2))
    assert summary(result) == ("ok", "novel", f"arxiv:{RPM_ARXIV}", None, [])
    assert len(openalex.requests) == 1 and len(s2.requests) == 1


def test_a_network_failure_is_lookup_failed():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the lookup: nobody listens there
    result = check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH),
                             [OpenAlexResolver(base_url=f"http://127.0.0.1:{port}", timeout=1)])
    assert summary(result)[4] == [{"scheme": "openalex", "http_status": None, "lookup": f"doi:{PEERJ_DOI}"}]


def test_no_call_when_own_keys_already_match(openalex, s2):
    graph = load_graph(WORKED / "events.jsonl")
    result = check_candidate(candidate({"arxiv": RPM_ARXIV}), graph, resolvers(openalex, s2))
    assert summary(result)[:2] == ("ok", "duplicate")
    assert openalex.requests == [] and s2.requests == []


def test_no_call_for_keys_the_graph_cannot_match_on(openalex, s2):
    # The graph matches on doi and openalex only; the candidate has both, so nothing is missing.
    graph = graph_of(paper("doi:10.1/other", doi="10.1/other", openalex="W1"), checked("doi:10.1/other"))
    result = check_candidate(candidate({"doi": PEERJ_DOI, "openalex": PEERJ_W}), graph, resolvers(openalex, s2))
    assert summary(result)[:2] == ("ok", "novel")
    assert openalex.requests == [] and s2.requests == []


def test_no_call_for_a_claim(openalex, s2):
    result = check_candidate(candidate({"doi": PEERJ_DOI}, kind="claim", statement="OA is rising."),
                             graph_of(*PEERJ_GRAPH), resolvers(openalex, s2))
    assert summary(result)[:2] == ("ok", "novel")
    assert openalex.requests == [] and s2.requests == []


def test_the_command_configures_resolvers_and_still_exits_0(tmp_path, capsys, openalex, s2, monkeypatch):
    openalex.route(f"/works/doi:{PEERJ_DOI}", status=429, body={"error": "Too Many Requests"},
                   headers={"Retry-After": "1"})
    s2.route(f"/graph/v1/paper/DOI:{PEERJ_DOI}", body={"paperId": S2_ID, "externalIds": {"DOI": PEERJ_DOI}})
    events = tmp_path / "events.jsonl"
    other = "f" * 40  # another paper known by its S2 id, so S2 ids are worth asking for
    graph = [*PEERJ_GRAPH, paper("arxiv:1111.00001", s2_paper_id=other), checked("arxiv:1111.00001")]
    events.write_text("".join(json.dumps(e) + "\n" for e in graph))
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"doi": PEERJ_DOI}}}))
    # No resolver configured: no call, and the verdict is made from the JSONL alone.
    assert main(["novelty", "--candidate", str(cand), "--graph", str(events), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "novel"
    assert openalex.requests == []
    # Configured in the workspace: OpenAlex 429s; S2 answers, but cannot supply the OpenAlex id still needed.
    monkeypatch.setenv("TEST_S2_KEY", "secret-key")
    (tmp_path / "reporter.toml").write_text(
        'pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "site"\ngraph = "events.jsonl"\n'
        f'[novelty]\nresolvers = ["s2", "openalex"]\nopenalex_url = "{openalex.url}"\n'
        f's2_url = "{s2.url}/graph/v1"\ntimeout_seconds = 2\ns2_api_key_env = "TEST_S2_KEY"\n')
    assert main(["novelty", "--candidate", str(cand), "--workspace", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["verdict"]) == ("lookup_failed", "unknown")
    assert out["ingest_errors_blocking"] == [{"scheme": "openalex", "http_status": 429, "lookup": f"doi:{PEERJ_DOI}"}]
    assert len(openalex.requests) == 1 and len(s2.requests) == 1
    assert s2.requests[0]["headers"].get("x-api-key") == "secret-key"


def _drip_server(stop: threading.Event) -> int:
    """A server on 127.0.0.1 that sends its headers, then one byte of the body every 0.1 s (never all of it)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)

    def serve():
        with listener:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                with conn:
                    conn.recv(65536)
                    try:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
                        while not stop.is_set():
                            conn.sendall(b" ")
                            stop.wait(0.1)
                    except OSError:  # the client gave up
                        pass
    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_a_resolver_dripping_its_answer_is_a_timeout_within_the_deadline():
    """The timeout bounds the whole lookup, not one read: a server sending a byte every 0.1 s used to hold a
    novelty check as long as it liked (urllib's timeout is per read)."""
    from reporter.novelty.resolvers import fetch_json
    stop = threading.Event()
    try:
        port = _drip_server(stop)
        # The server drips until `stop`: before the fix the check ran until the server stopped, so never here.
        result = ends(lambda: check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH),
                                              [OpenAlexResolver(base_url=f"http://127.0.0.1:{port}", timeout=0.5)]),
                      "the check read the drip until the server stopped")
        dripped = ends(lambda: fetch_json(f"http://127.0.0.1:{port}/works/x", 0.5), "fetch_json read the drip")
        assert dripped.error == "timeout"
    finally:
        stop.set()
    assert summary(result)[4] == [{"scheme": "openalex", "http_status": None, "lookup": f"doi:{PEERJ_DOI}"}]


def test_a_resolver_never_follows_a_redirect_to_another_host_nor_reads_a_huge_body(openalex, s2):
    from reporter.novelty.resolvers import MAX_BYTES, HttpResponse, fetch_json
    s2.route(f"/graph/v1/paper/ARXIV:{RPM_ARXIV}", body=S2_PAPER)
    elsewhere = s2.url.replace("127.0.0.1", "localhost")  # another host: the same server, by another name
    openalex.route(f"/works/doi:{PEERJ_DOI}", status=302, body={},
                   headers={"Location": f"{elsewhere}/graph/v1/paper/ARXIV:{RPM_ARXIV}"})
    result = check_candidate(candidate({"doi": PEERJ_DOI}), graph_of(*PEERJ_GRAPH),
                             [OpenAlexResolver(base_url=openalex.url, timeout=2)])
    assert summary(result)[4] == [{"scheme": "openalex", "http_status": 302, "lookup": f"doi:{PEERJ_DOI}"}]
    assert s2.requests == []
    openalex.route("/huge", body=b"[" + b" " * MAX_BYTES + b"]")
    assert fetch_json(f"{openalex.url}/huge", 5) == HttpResponse(None, error="bad_response")
