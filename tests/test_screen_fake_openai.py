"""The fake OpenAI-compatible server (tests/support/fake_openai.py), driven by the real openai client.

The screening tests trust this server to behave like a real provider on the
wire and to count every request exactly; these tests check both, through
`openai.AsyncOpenAI` (its retries and its connection errors) and through raw
HTTP where the exact bytes matter.
"""

import asyncio
import http.client
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import openai
import pytest

from support.fake_openai import (CREATED, Answer, Content, Drop, FakeOpenAI, Refuse, Slow, Status, Truncate,
                                 tokens, work_key)

FAKE = Path(__file__).resolve().parent / "support" / "fake_openai.py"


def ask(server, work, model="m", *, retries=0, timeout=10.0, **extra):
    """One chat completion about `work` through a fresh AsyncOpenAI client; the response or the exception."""
    async def go():
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=retries,
                                    timeout=timeout)
        try:
            return await client.chat.completions.create(
                model=model, messages=messages(work), **extra)
        except openai.OpenAIError as error:
            return error
        finally:
            await client.close()
    return asyncio.run(go())


def messages(work):
    return [{"role": "system", "content": "Classify the work."},
            {"role": "user", "content": f"Title: {work}\n\nAbstract: About {work}."}]


def raw(server, method, path, body=None):
    """(status, lower-case headers, parsed JSON body) of one raw HTTP request."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body)
        connection.request(method, path, body=payload, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read())
    finally:
        connection.close()


def test_an_answer_round_trips_in_openais_shape():
    with FakeOpenAI({("w1", "gpt-x"): Answer("exclude", "Not a trial.")}) as server:
        reply = ask(server, "w1", "gpt-x", response_format={"type": "json_object"})
        assert json.loads(reply.choices[0].message.content) == {"label": "exclude", "reason": "Not a trial."}
        assert reply.object == "chat.completion" and reply.model == "gpt-x" and reply.created == CREATED
        assert reply.id.startswith("chatcmpl-") and reply.choices[0].finish_reason == "stop"
        prompt = tokens("Classify the work." + "Title: w1\n\nAbstract: About w1.")
        completion = tokens(reply.choices[0].message.content)
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == \
            (prompt, completion, prompt + completion)
        [record] = server.requests
        assert (record["work"], record["model"], record["attempt"]) == ("w1", "gpt-x", 1)
        assert record["body"]["response_format"] == {"type": "json_object"}
        assert record["headers"]["authorization"] == "Bearer sk-test"
        # The exact wire object, and the same id for the same (work, model, attempt).
        status, headers, body = raw(server, "POST", "/v1/chat/completions",
                                    {"model": "gpt-x", "messages": messages("w2")})
        assert status == 200 and headers["content-type"] == "application/json"
        assert set(body) == {"id", "object", "created", "model", "choices", "usage", "system_fingerprint"}
        assert body["choices"] == [{"index": 0, "message": {"role": "assistant", "refusal": None,
                                                            "content": '{"label": "include", "reason": "Default."}'},
                                    "logprobs": None, "finish_reason": "stop"}]
    with FakeOpenAI({("w1", "gpt-x"): Answer("exclude", "Not a trial.")}) as again:
        assert ask(again, "w1", "gpt-x").id == reply.id


def test_429_with_retry_after_is_retried_and_counted_twice():
    script = {("w1", "m"): [Status(429, retry_after=0.05), Answer("include", "Trial.")]}
    with FakeOpenAI(script) as server:
        status, headers, body = raw(server, "POST", "/v1/chat/completions", {"model": "m", "messages": messages("w1")})
        assert status == 429 and headers["retry-after"] == "0.05"
        assert body["error"]["type"] == "rate_limit_exceeded" and body["error"]["code"] == "rate_limit_exceeded"
        server.reset()
        reply = ask(server, "w1", retries=3)
        assert json.loads(reply.choices[0].message.content)["label"] == "include"
        assert server.count("w1", "m") == 2 and server.total == 2
        assert [r["headers"]["x-stainless-retry-count"] for r in server.requests] == ["0", "1"]
        server.reset()
        assert isinstance(ask(server, "w1"), openai.RateLimitError)


def test_drop_and_truncate_raise_connection_errors_and_retries_ask_again():
    with FakeOpenAI({("gone", "m"): Drop(), ("cut", "m"): Truncate()}) as server:
        assert type(ask(server, "gone")) is openai.APIConnectionError
        assert type(ask(server, "cut")) is openai.APIConnectionError
        assert server.counts() == {("gone", "m"): 1, ("cut", "m"): 1}
        assert type(ask(server, "gone", retries=1)) is openai.APIConnectionError
        assert server.count("gone", "m") == 1 + 2
        # The server stays usable after cutting connections.
        assert json.loads(ask(server, "fine").choices[0].message.content)["label"] == "include"


def test_refusal_content_and_errors_reach_the_client_as_a_provider_sends_them():
    script = {("r", "m"): Refuse(), ("long", "m"): Content('{"label": "incl', finish_reason="length"),
              ("html", "m"): Status(502, body="<html>bad gateway</html>"), ("bad", "m"): Status(400)}
    with FakeOpenAI(script) as server:
        refused = ask(server, "r").choices[0]
        assert (refused.message.content, refused.message.refusal) == (None, "I can't help with that.")
        cut = ask(server, "long").choices[0]
        assert (cut.message.content, cut.finish_reason) == ('{"label": "incl', "length")
        assert isinstance(ask(server, "html"), openai.InternalServerError)
        assert isinstance(ask(server, "bad"), openai.BadRequestError)
    with FakeOpenAI(default=Answer("include", usage=False)) as server:
        assert ask(server, "w").usage is None


def test_the_script_by_attempt_and_as_a_function():
    by_attempt = {("w", "m"): [Status(500), Content("Sure! Here you go: maybe"), Answer("exclude")]}
    with FakeOpenAI(by_attempt) as server:
        replies = [ask(server, "w") for _ in range(4)]
        assert isinstance(replies[0], openai.InternalServerError)
        assert replies[1].choices[0].message.content == "Sure! Here you go: maybe"
        assert [json.loads(r.choices[0].message.content)["label"] for r in replies[2:]] == ["exclude", "exclude"]
        assert server.count("w", "m") == 4 and server.count("w", "other") == 0

    seen = []

    def script(work, model, attempt):
        seen.append((work, model, attempt))
        return Answer("cannot_be_determined") if model == "b" else None

    with FakeOpenAI(script, default=Answer("exclude"), titles={"A long title": "W7"}) as server:
        labels = [json.loads(ask(server, "A long title", model).choices[0].message.content)["label"]
                  for model in ("a", "b", "b")]
        assert labels == ["exclude", "cannot_be_determined", "cannot_be_determined"]
        assert seen == [("W7", "a", 1), ("W7", "b", 1), ("W7", "b", 2)]
        assert server.counts() == {("W7", "a"): 1, ("W7", "b"): 2}
        assert raw(server, "GET", "/v1/models")[2]["data"][1] == {
            "id": "b", "object": "model", "created": CREATED, "owned_by": "fake-openai"}

    def broken(work, model, attempt):
        raise KeyError(work)

    with FakeOpenAI(broken) as server:
        assert isinstance(ask(server, "w"), openai.InternalServerError)
        assert "KeyError" in server.errors[0]


def test_the_work_is_the_title_of_the_last_user_message():
    parts = [{"role": "user", "content": "Title: old\n\nx"},
             {"role": "assistant", "content": "Title: no"},
             {"role": "user", "content": [{"type": "text", "text": "Read this.\nTitle: T: two\nlines"}]}]
    assert work_key(parts) == "T: two\nlines"
    assert work_key(parts, {"T: two\nlines": "w9"}) == "w9"
    assert work_key([{"role": "user", "content": "no title here"}]) == ""


def test_counts_are_exact_across_50_concurrent_requests():
    # Half the replies wait a little so requests interleave on many connections.
    def script(work, model, attempt):
        return Slow(0.02, Answer("exclude")) if int(work[1:]) % 2 else None

    plan = [(f"w{i % 10}", "ab"[i % 2 if i < 30 else 0]) for i in range(50)]

    async def go(server):
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        try:
            return await asyncio.gather(*(client.chat.completions.create(model=model, messages=messages(work))
                                          for work, model in plan))
        finally:
            await client.close()

    with FakeOpenAI(script) as server:
        replies = asyncio.run(go(server))
        assert len(replies) == 50
        expected = {}
        for pair in plan:
            expected[pair] = expected.get(pair, 0) + 1
        assert server.counts() == expected and server.total == 50
        status, _, counts = raw(server, "GET", "/_fake/counts")
        assert status == 200 and counts == {"total": 50,
                                            "counts": [[w, m, n] for (w, m), n in sorted(expected.items())]}


def test_the_http_surface_validation_and_keep_alive():
    with FakeOpenAI(reject_response_format=True, models=["configured"]) as server:
        status, _, body = raw(server, "GET", "/v1/nowhere")
        assert status == 404 and set(body["error"]) == {"message", "type", "param", "code"}
        for bad in ({"messages": messages("w")}, {"model": "m"}, {"model": "m", "messages": []}):
            assert raw(server, "POST", "/v1/chat/completions", bad)[0] == 400
        assert isinstance(ask(server, "w", response_format={"type": "json_object"}), openai.BadRequestError)
        assert json.loads(ask(server, "w").choices[0].message.content)["label"] == "include"
        assert server.count("w", "m") == 2 and server.total == 5
        assert [m["id"] for m in raw(server, "GET", "/v1/models")[2]["data"]] == ["configured", "m"]
        # Three requests on one connection: HTTP/1.1 keep-alive.
        connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
        for _ in range(3):
            connection.request("POST", "/v1/chat/completions", json.dumps({"model": "k", "messages": messages("w")}))
            response = connection.getresponse()
            assert response.status == 200 and response.getheader("connection") == "keep-alive"
            response.read()
        connection.close()
        assert server.count("w", "k") == 3


def test_a_slow_reply_times_the_client_out():
    with FakeOpenAI({("w", "m"): Slow(5.0, Answer("include"))}) as server:
        assert isinstance(ask(server, "w", timeout=0.3), openai.APITimeoutError)
        assert server.count("w", "m") == 1


def test_process_mode_prints_its_url_and_serves_counts(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({
        "answers": {"w1": {"m": {"label": "exclude", "reason": "Scripted."}},
                    "w2": {"m": [{"status": 500}, {"content": "not json"}]}},
        "default": {"label": "cannot_be_determined"}, "titles": {"Title one": "w1"}, "latency": 0}))
    process = subprocess.Popen([sys.executable, str(FAKE), "--port", "0", "--script", str(script)],
                               stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        server = FakeOpenAI()  # only for its host and port, read from the URL
        server.port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert json.loads(ask(server, "Title one").choices[0].message.content) == {
            "label": "exclude", "reason": "Scripted."}
        assert isinstance(ask(server, "w2"), openai.InternalServerError)
        assert ask(server, "w2").choices[0].message.content == "not json"
        assert json.loads(ask(server, "w3").choices[0].message.content)["label"] == "cannot_be_determined"
        with urllib.request.urlopen(url.removesuffix("/v1") + "/_fake/counts", timeout=10) as response:
            assert json.load(response) == {"total": 4, "counts": [["w1", "m", 1], ["w2", "m", 2], ["w3", "m", 1]]}
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


@pytest.mark.parametrize("spec", [[], "x", {"what": 1}])
def test_process_mode_rejects_an_unknown_action(spec, tmp_path):
    from support.fake_openai import action_from_json
    with pytest.raises(ValueError):
        action_from_json(spec)
