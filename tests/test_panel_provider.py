"""A voter against a real OpenAI-compatible HTTP server on 127.0.0.1, the reading of replies, prices and tokens."""

import asyncio
import dataclasses
import json

import pytest
from support.fake_openai import Answer, Content, Drop, FakeOpenAI, Refuse, Slow, Status, tokens

from reporter.errors import InputError
from reporter.panel.config import VoterSettings
from reporter.panel.prices import Price, cost_usd, default_price, parse_prices, price_table
from reporter.panel.prompt import messages_for
from reporter.panel.provider import ChatVoter, Reply, VoterFailure, endpoint
from reporter.panel.replies import parse_content, read_masked
from reporter.panel.tokens import TOKENIZER_NOTE, count_message_tokens, count_tokens, is_openai_model
from reporter.panel.votes import Vote
from reporter.screening.answer import ANSWER_SCHEMA, SCREEN_ANSWER
from reporter.screening.prompt import build_prompt

KEY = "sk-test-5ecret-never-written"
ENV = {"SCREEN_KEY": KEY, "UNRELATED": "x"}
PROMPT = build_prompt()


def _voter_settings(base_url: str, **change) -> VoterSettings:
    settings = VoterSettings(name="a", base_url=base_url, model="m", api_key_env="SCREEN_KEY", max_concurrency=4,
                             price_in_per_mtok=0.15, price_out_per_mtok=0.6, timeout_seconds=30.0)
    return dataclasses.replace(settings, **change)


def _messages(title: str = "w1") -> list[dict]:
    return messages_for(PROMPT, title, "An abstract.", False)


async def _ask(server: FakeOpenAI, messages: list[dict] | None = None, *, max_retries: int = 2,
               environ=ENV, **change) -> Reply:
    voter = ChatVoter(_voter_settings(server.base_url, **change), environ, max_retries=max_retries,
                      answer=SCREEN_ANSWER)
    try:
        return await voter.ask(messages or _messages())
    finally:
        await voter.aclose()


def _failure(server: FakeOpenAI, **kw) -> VoterFailure:
    with pytest.raises(VoterFailure) as caught:
        asyncio.run(_ask(server, **kw))
    return caught.value


# --- reading a reply -----------------------------------------------------------------------------------------

VALID = '{"label": "exclude", "reason": "Not about humans."}'


@pytest.mark.parametrize("content, finish, refusal, expected", [
    (VALID, "stop", None, Vote("exclude", reason="Not about humans.")),
    ('```json\n{"label": "include", "reason": "A trial."}\n```', "stop", None, Vote("include", reason="A trial.")),
    ('```\n{"label": "include", "reason": "r"}\n```\n', "stop", None, Vote("include", reason="r")),
    ('Sure! Here it is: {"label": "cannot_be_determined", "reason": "Too short."} Hope it helps {', "stop", None,
     Vote("cannot_be_determined", reason="Too short.")),
    ('{"label": "include", "reason": "first"}{"label": "exclude", "reason": "second"}', "stop", None,
     Vote("include", reason="first")),
    ('{"label": "exclude", "reason": ""}', None, None, Vote("exclude", reason="")),
    ('{"label": "Include", "reason": "r"}', "stop", None, "unknown_label"),
    ('{"label": "maybe", "reason": "r"}', "stop", None, "unknown_label"),
    ('{"label": " exclude", "reason": "r"}', "stop", None, "unknown_label"),
    ('{"label": "include"}', "stop", None, "schema"),
    ('{"reason": "r"}', "stop", None, "schema"),
    ('{"label": 1, "reason": "r"}', "stop", None, "schema"),
    ('{"label": ["include"], "reason": "r"}', "stop", None, "schema"),
    ('{"label": "include", "reason": 3}', "stop", None, "schema"),
    ('{"label": "include", "reason": "r", "confidence": 0.9}', "stop", None, "schema"),
    ('{"note": "thinking"} {"label": "include", "reason": "r"}', "stop", None, "schema"),
    # issue 30, adversarial: Python keeps the last of two values, other readers the first: no answer at all
    ('{"label": "include", "label": "exclude", "reason": "r"}', "stop", None, "schema"),
    ('{"label": "exclude", "reason": "r", "reason": "s"}', "stop", None, "schema"),
    ("include", "stop", None, "unparseable"),
    ("", "stop", None, "unparseable"),
    ("  \n ", "stop", None, "unparseable"),
    (None, "stop", None, "unparseable"),
    ('{"label": "include", "reason": "cut', "stop", None, "unparseable"),
    ("{'label': 'include', 'reason': 'r'}", "stop", None, "unparseable"),
    ("{" * 100_000, "stop", None, "unparseable"),
    ('{"a": ' * 100_000, "stop", None, "unparseable"),
    (VALID, "length", None, "truncated"),
    ('{"label": "excl', "length", None, "truncated"),
    (VALID, "stop", "I can't help with that.", "refusal"),
    (None, "stop", "I can't help with that.", "refusal"),
    (None, "content_filter", None, "refusal"),
    ("", "content_filter", None, "refusal"),
    (VALID, "content_filter", None, Vote("exclude", reason="Not about humans.")),
])
def test_parse_content_never_guesses_a_label(content, finish, refusal, expected):
    vote = parse_content(content, finish, refusal, SCREEN_ANSWER)
    if isinstance(expected, Vote):
        assert vote == expected
    else:
        assert vote.answer is None and vote.invalid_cause == expected and vote.reason
        assert len(vote.reason) <= 300


def _body(content, *, finish="stop", refusal=None, usage=True) -> str:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal},
                         "finish_reason": finish}]}
    if usage:
        body["usage"] = {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134}
    return json.dumps(body)


def test_read_masked_reads_a_chat_completion_and_its_usage():
    assert read_masked(_body(VALID), None, SCREEN_ANSWER)[1:3] == (Vote("exclude", reason="Not about humans."),
                                            {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134})
    assert read_masked(_body(VALID, usage=False), None, SCREEN_ANSWER)[1:3] == (Vote("exclude", reason="Not about humans."), None)
    assert read_masked(_body(VALID, finish="length"), None, SCREEN_ANSWER)[1:3][0].invalid_cause == "truncated"
    assert read_masked(_body(None, refusal="No."), None, SCREEN_ANSWER)[1:3][0] == Vote(None, "refusal", "No.")
    parts = [{"type": "text", "text": '{"label": "include", '}, {"type": "text", "text": '"reason": "r"}'}]
    assert read_masked(_body(parts), None, SCREEN_ANSWER)[1:3][0] == Vote("include", reason="r")


@pytest.mark.parametrize("body", [
    "<html>502 Bad Gateway</html>", "", "[]", "null", '"text"', '{"error": {"message": "overloaded"}}',
    '{"choices": []}', '{"choices": [{"text": "include"}]}', '{"choices": [{"message": "include"}]}',
    '{"choices": "x"}', "[" * 100_000,
])
def test_a_body_that_is_not_a_chat_completion_is_an_unparseable_vote(body):
    vote, usage = read_masked(body, None, SCREEN_ANSWER)[1:3]
    assert vote.answer is None and vote.invalid_cause == "unparseable"


# --- a voter against a real HTTP server ----------------------------------------------------------------------

def test_a_valid_reply_its_usage_its_cost_and_the_request_sent():
    with FakeOpenAI({("w1", "m"): Answer("exclude", "Not a trial.")}) as server:
        reply = asyncio.run(_ask(server))
        (request,) = server.requests
    assert reply.vote == Vote("exclude", reason="Not a trial.") and reply.status == 200
    prompt_tokens = tokens("".join(m["content"] for m in _messages()))
    completion_tokens = tokens(json.dumps({"label": "exclude", "reason": "Not a trial."}))
    assert (reply.input_tokens, reply.output_tokens, reply.usage_estimated) == (prompt_tokens, completion_tokens,
                                                                                False)
    assert reply.cost_usd == pytest.approx(prompt_tokens * 0.15 / 1e6 + completion_tokens * 0.6 / 1e6, rel=1e-12)
    body = json.loads(reply.body)
    assert body["object"] == "chat.completion" and body["usage"]["prompt_tokens"] == prompt_tokens
    sent = request["body"]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("m", 0.0, 300)
    assert sent["messages"] == _messages()
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "screening_vote", "strict": True, "schema": ANSWER_SCHEMA}}
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    assert KEY not in reply.body and KEY not in repr(reply)


def test_without_usage_the_tokens_are_counted_offline():
    with FakeOpenAI({("w1", "m"): Answer("include", "A trial.", usage=False)}) as server:
        reply = asyncio.run(_ask(server))
    text = json.dumps({"label": "include", "reason": "A trial."})
    assert reply.usage_estimated and reply.vote == Vote("include", reason="A trial.")
    assert reply.input_tokens == count_message_tokens([_messages()])[0]
    assert reply.output_tokens == count_tokens([text])[0]
    assert reply.cost_usd == cost_usd(0.15, 0.6, reply.input_tokens, reply.output_tokens) > 0


def test_a_429_with_retry_after_is_retried_and_then_answered():
    with FakeOpenAI({("w1", "m"): [Status(429, retry_after=0.05), Answer("include", "Ok.")]}) as server:
        reply = asyncio.run(_ask(server))
        assert server.count("w1", "m") == 2
    assert reply.vote == Vote("include", reason="Ok.")


def test_500s_until_the_retries_run_out_are_a_failure_naming_the_voter_and_the_url_never_the_key():
    with FakeOpenAI({("w1", "m"): [Status(500, retry_after=0.01)]}) as server:
        failure = _failure(server, max_retries=2)
        assert server.count("w1", "m") == 3
        url = f"{server.base_url}/chat/completions"
    assert failure.status == 500
    assert failure.cause == str(failure)
    assert failure.cause.startswith(f"voter 'a' (m): POST {url}: HTTP 500 after 3 attempts (2 retries, the limit): ")
    assert "The server had an error" in failure.cause and KEY not in failure.cause


@pytest.mark.parametrize("retry_after", [121, 300, 10**9])
def test_a_429_asking_to_wait_past_the_cap_is_asked_once_and_the_cause_says_so(retry_after):
    with FakeOpenAI({("w1", "m"): [Status(429, retry_after=retry_after)]}) as server:
        failure = _failure(server, max_retries=8)
        assert server.count("w1", "m") == 1, "the client does not wait that long, so it does not ask again"
    assert failure.status == 429
    assert "HTTP 429 after 1 attempt: the server asked to wait" in failure.cause
    assert f"{retry_after!r}" in failure.cause and "more than the 120 s the client waits" in failure.cause
    assert "retries" not in failure.cause


def test_an_error_body_s_controls_reach_the_cause_escaped():
    body = "bad \x00 \x1b[31mred\x1b[0m \u202eevil \x07 end"
    with FakeOpenAI({("w1", "m"): Status(400, body=body)}) as server:
        failure = _failure(server)
    assert "\\x00" in failure.cause and "\\x1b[31mred" in failure.cause and "\\u202eevil" in failure.cause
    assert all(c.isprintable() for c in failure.cause), "nothing a terminal or a page acts on"


def test_a_key_echoed_by_the_server_is_not_repeated_in_the_cause():
    with FakeOpenAI({("w1", "m"): Status(401, body=f"Incorrect API key provided: {KEY}.")}) as server:
        failure = _failure(server)
        assert server.count("w1", "m") == 1  # a 401 is not retried
    assert KEY not in failure.cause and "[key]" in failure.cause
    assert "HTTP 401" in failure.cause and "check the key in SCREEN_KEY" in failure.cause


def test_a_server_that_refuses_response_format_is_reported_and_structured_output_false_works():
    with FakeOpenAI({("w1", "m"): Answer("include", "Ok.")}, reject_response_format=True) as server:
        failure = _failure(server)
        assert failure.status == 400 and server.count("w1", "m") == 1
        assert "set structured_output = false for this voter" in failure.cause
        reply = asyncio.run(_ask(server, structured_output=False))
        assert "response_format" not in server.requests[-1]["body"]
    assert reply.vote == Vote("include", reason="Ok.")


@pytest.mark.parametrize("action, cause", [
    (Content('{"label": "incl'), "unparseable"),
    (Content('```json\n{"label": "maybe", "reason": "r"}\n```'), "unknown_label"),
    (Content('{"label": "include", "reason": "r", "extra": 1}'), "schema"),
    (Content('{"label": "include", "reas', finish_reason="length"), "truncated"),
    (Refuse("I can't help with that."), "refusal"),
    (Content("", finish_reason="content_filter"), "refusal"),
    (Status(200, body="<html>not json</html>"), "unparseable"),
])
def test_an_invalid_reply_is_an_invalid_vote_with_its_cause(action, cause):
    with FakeOpenAI({("w1", "m"): action}) as server:
        reply = asyncio.run(_ask(server))
        assert server.count("w1", "m") == 1
    assert reply.vote.answer is None and reply.vote.invalid_cause == cause and reply.status == 200


def test_a_dropped_connection_is_retried_then_a_failure():
    with FakeOpenAI({("w1", "m"): [Drop()]}) as server:
        failure = _failure(server, max_retries=1)
        assert server.count("w1", "m") == 2
    assert failure.status is None and "could not connect or the connection dropped" in failure.cause
    assert failure.cause.endswith("after 1 retries") and KEY not in failure.cause


def test_a_reply_slower_than_the_timeout_is_a_failure():
    with FakeOpenAI({("w1", "m"): Slow(30, Answer("include"))}) as server:
        failure = _failure(server, max_retries=0, timeout_seconds=0.2)
        assert server.count("w1", "m") == 1
    assert "no answer within 0.2 s" in failure.cause


def test_at_most_max_concurrency_requests_are_in_flight():
    state = {"active": 0, "peak": 0, "barrier": None}

    class Held:
        """Answers only once two requests are in flight together, and records the peak."""

        async def _reply(self, exchange):
            state["barrier"] = state["barrier"] or asyncio.Barrier(2)
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
            await asyncio.wait_for(state["barrier"].wait(), 20)
            state["active"] -= 1
            await Answer("include", "Ok.")._reply(exchange)

    async def ask_six(base_url):
        voter = ChatVoter(_voter_settings(base_url, max_concurrency=2), ENV, max_retries=0, answer=SCREEN_ANSWER)
        try:
            return await asyncio.gather(*(voter.ask(_messages(f"w{i}")) for i in range(6)))
        finally:
            await voter.aclose()

    with FakeOpenAI(lambda work, model, attempt: Held()) as server:
        replies = asyncio.run(ask_six(server.base_url))
        assert server.total == 6
    assert [r.vote.answer for r in replies] == ["include"] * 6
    assert state["peak"] == 2


def test_the_key_comes_from_the_named_variable_or_a_placeholder_for_local_servers():
    with pytest.raises(InputError) as caught:
        ChatVoter(_voter_settings("http://127.0.0.1:9/v1"), {"OTHER": KEY}, answer=SCREEN_ANSWER)
    assert "voter 'a'" in str(caught.value) and "SCREEN_KEY is not set" in str(caught.value)
    assert KEY not in str(caught.value)
    with pytest.raises(InputError):
        ChatVoter(_voter_settings("http://127.0.0.1:9/v1"), {"SCREEN_KEY": " "}, answer=SCREEN_ANSWER)
    odd = b"sk-\xffkey".decode("utf-8", "surrogateescape")  # an environment's bytes that are not UTF-8
    with pytest.raises(InputError, match="SCREEN_KEY holds bytes that are not UTF-8; export the key as text"):
        ChatVoter(_voter_settings("http://127.0.0.1:9/v1"), {"SCREEN_KEY": odd}, answer=SCREEN_ANSWER)
    with FakeOpenAI() as server:
        reply = asyncio.run(_ask(server, environ={}, api_key_env=None))
        assert server.requests[0]["headers"]["authorization"] == "Bearer no-key"
    assert reply.vote == Vote("include", reason="Default.")
    voter = ChatVoter(_voter_settings("http://127.0.0.1:9/v1"), ENV, answer=SCREEN_ANSWER)
    assert KEY not in repr(voter) and voter.name == "a" and voter.settings.model == "m"
    asyncio.run(voter.aclose())


def test_the_url_in_messages_has_no_user_info_and_no_query():
    assert endpoint("https://user:pw@api.example.org:8443/v1/?key=abc#x") == \
        "https://api.example.org:8443/v1/chat/completions"
    assert endpoint("http://[::1]:8000/v1") == "http://[::1]:8000/v1/chat/completions"


# --- the price table and the token counts --------------------------------------------------------------------

def test_the_shipped_price_table():
    table = price_table()
    for model in ("gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gemini-1.5-flash", "gemini-2.0-flash",
                  "claude-3-5-haiku-latest"):
        assert isinstance(table[model], Price) and table[model].in_per_mtok > 0 and table[model].out_per_mtok > 0
    for price in table.values():
        assert price.checked == "unchecked" or len(price.checked) == 10
    assert default_price("gpt-4o-mini") == table["gpt-4o-mini"] and default_price("my-local-model") is None


@pytest.mark.parametrize("data", [
    [], {"prices": []}, {"prices": {"m": {"in_per_mtok": -1, "out_per_mtok": 1, "checked": "unchecked"}}},
    {"prices": {"m": {"in_per_mtok": True, "out_per_mtok": 1, "checked": "unchecked"}}},
    {"prices": {"m": {"in_per_mtok": 1, "out_per_mtok": 1, "checked": "last week"}}},
    {"prices": {"m": {"in_per_mtok": 1, "out_per_mtok": 1}}},
])
def test_a_malformed_price_table_is_refused(data):
    with pytest.raises(ValueError):
        parse_prices(data)


def test_token_counts_are_offline_and_exact_across_long_texts():
    assert count_tokens(["hello world", "", "<|endoftext|>"]) == [2, 0, 7]
    long_text = "word " * 30_000  # longer than one counting piece, short enough to count whole
    import bpe_openai
    assert count_tokens([long_text]) == [len(bpe_openai.get_encoding("o200k_base").encode_ordinary(long_text))]
    assert count_tokens(["a" * 2_000_000])[0] > 0  # past the tokenizer's own one-million-character limit
    messages = [{"role": "system", "content": "hello world"}, {"role": "user", "content": ""}]
    assert count_message_tokens([messages, messages[:1]]) == [2 + 3 + 0 + 3 + 3, 2 + 3 + 3]


@pytest.mark.parametrize("model, exact", [
    ("gpt-4o-mini", True), ("gpt-4o-mini-2024-07-18", True), ("gpt-4.1-mini", True), ("o3-mini", True),
    ("openai/gpt-4o", True), ("gpt-5", True), ("gpt-4", False), ("gpt-3.5-turbo", False),
    ("gemini-1.5-flash", False), ("claude-3-5-haiku-latest", False), ("llama3.1:8b", False), ("o10", False),
])
def test_counts_are_exact_only_for_o200k_models(model, exact):
    assert is_openai_model(model) is exact
    assert "o200k_base" in TOKENIZER_NOTE and "estimate" in TOKENIZER_NOTE


def test_a_key_echoed_upper_cased_is_not_repeated_in_the_cause():
    with FakeOpenAI({("w1", "m"): Status(401, body=f"Incorrect API key provided: {KEY.upper()}.")}) as server:
        failure = _failure(server)
    assert KEY.upper() not in failure.cause.upper() and "[key]" in failure.cause


def test_a_key_a_json_error_body_spells_with_escapes_of_its_own_is_not_repeated_in_the_cause():
    """Issue 30, adversarial: a 400 whose JSON message held the key as `\\u0073\\u006b...` (escaped twice on
    the wire) reached the failures table; the body is now masked as JSON, string by string, before it is cut."""
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    body = json.dumps({"error": {"message": f"bad key {escaped}"}})
    with FakeOpenAI({("w1", "m"): Status(400, body=body)}) as server:
        failure = _failure(server)
    assert escaped not in failure.cause and "[key]" in failure.cause, failure.cause


# --- reporter.masking: one function for every secret (issue 30, item 4) ------------------------------------


@pytest.mark.parametrize("secret, echoed", [
    ("sk-live-Abc123xyz", "SK-LIVE-ABC123XYZ"),  # upper-cased
    ("sk-live-Abc123xyz", "sk-live-abc123xyz"),  # lower-cased
    ("correct  horse   battery", "correct horse battery"),  # white space collapsed
    ("correct horse battery", "correct\r\n horse\tbattery"),  # folded onto a new line
    ("sk-live-Abc123xyz", "sk-live-\r\n Abc123xyz"),  # a fold inside the key
    ("pw d", "pw+d"), ("pw d", "PW%20D"), ("p/w", "p%2fw"), ("pw1", "%70%77%31"),  # percent, any case
    ("p\"w<1>", "p\\\"w<1>"), ("p\"w<1>", "p&quot;w&lt;1&gt;"),  # JSON, HTML
    ("p\"w<1>", "\\u0070\\u0022\\u0077\\u003C\\u0031\\u003E"),
])
def test_mask_secret_finds_the_secret_under_case_white_space_and_escapes(secret, echoed):
    from reporter.masking import mask_secret
    masked = mask_secret(f"535 not accepted: <{echoed}> end", secret, "[password]")
    assert masked == "535 not accepted: <[password]> end", masked


@pytest.mark.parametrize("password", ["7", "pw", "pw1", "pw12", "s3cret!", "a much longer passw0rd"])
def test_mask_secret_masks_auth_plain_and_basic_tokens_however_short_the_password(password):
    import base64

    from reporter.masking import mask_secret
    tokens = [base64.b64encode(t.encode()).decode() for t in
              (f"\0bot\0{password}", f"bot\0bot\0{password}", f"bot:{password}")]
    text = " | ".join([f"AUTH PLAIN {tokens[0]}", tokens[1], f"Basic {tokens[2]}", tokens[2].rstrip("=").lower()])
    masked = mask_secret(text, password, "[password]", user="bot")
    assert masked == "AUTH PLAIN [password] | [password] | Basic [password] | [password]", masked
    assert mask_secret("no secret here, bot", "sk-long-key-1234", user="bot") == "no secret here, bot"


def test_mask_secret_on_a_large_body_masks_only_the_secret():
    from reporter.masking import mask_secret
    body = ("x" * 99 + "\n") * 20_000  # 2 MB with no secret in it
    assert mask_secret(body, "sk-live-Abc123xyz") == body
    assert mask_secret(body + "SK-LIVE-\n ABC123XYZ.", "sk-live-Abc123xyz") == body + "[key]."
    assert mask_secret("a   b", " ") == "a   b"  # a secret of white space alone matches nothing
