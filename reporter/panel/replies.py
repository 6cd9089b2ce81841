"""The reading of a model's reply into a vote: the chat.completion body, its message, the answer object.

Every reply is checked against the answer schema here, whether or not the
server honoured `response_format`; a reply that is not a valid answer is an
invalid vote with its cause (`invalid_vote`), never guessed into an answer.
`read_masked` reads a raw body as received (the voter's key masked in it
first), for a live reply and for a raw-log line a re-run validates again;
`usage_count` takes the token counts a reply's `usage` gives, when the
database can store them. Nothing here sends a request (that is
`reporter.panel.provider`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..masking import mask_json_text, mask_secret
from ..text import json_without_surrogates, may_hold_surrogates
from .votes import AnswerSchema, Vote

REASON_CHARS = 300
"""An invalid vote's reason (what was wrong) is cut to this many characters."""
_MAX_OBJECT_STARTS = 64
"""How many `{` a reply may open before its text is called unparseable (bounds the work on junk)."""


def invalid_vote(cause: str, why: str) -> Vote:
    """An invalid reply with its cause, what was wrong cut to REASON_CHARS."""
    return Vote(answer=None, invalid_cause=cause, reason=why[:REASON_CHARS])


class _Twice(ValueError):
    """An answer object that names a key more than once: readers disagree on which value holds."""

    def __init__(self, keys: list[str]) -> None:
        super().__init__(", ".join(keys))
        self.keys = keys


def _once(pairs: list[tuple[str, Any]]) -> dict:
    obj: dict = {}
    twice: list[str] = []
    for key, value in pairs:
        if key in obj:
            twice.append(key)
        obj[key] = value
    if twice:
        raise _Twice(sorted(set(twice)))
    return obj


def _first_object(text: str) -> dict | None:
    """The first JSON object in `text`: behind code fences, prose or a trailing remark alike.

    An object that names a key twice (`{"fit": "in_scope", "fit": "out_of_scope"}`) raises `_Twice`: Python
    keeps the last value, other readers the first, so such a reply is no answer at all.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_once)
    start = text.find("{")
    for _ in range(_MAX_OBJECT_STARTS):
        if start < 0:
            return None
        try:
            value, _end = decoder.raw_decode(text, start)
            return json_without_surrogates(value) if isinstance(value, dict) else value
        except _Twice:
            raise
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
    return None


def parse_content(content: str | None, finish_reason: str | None, refusal: str | None,
                  answer: AnswerSchema) -> Vote:
    """A reply's message as a Vote: a valid answer, or an invalid reply with its cause (never a guess).

    refusal: the message's `refusal` field, or no content with `finish_reason`
    `content_filter`; truncated: `finish_reason` `length` (the answer was cut by
    max_tokens); unparseable: no JSON object in the text (code fences and
    surrounding prose are looked past); then the object is `answer`'s to read (the
    screen's: unknown_label and schema, a `label` or shape that is not its schema's).
    """
    if isinstance(refusal, str) and refusal.strip():
        return invalid_vote("refusal", refusal.strip())
    text = content if isinstance(content, str) else ""
    if finish_reason == "content_filter" and not text.strip():
        return invalid_vote("refusal", "the provider's content filter withheld the answer")
    if finish_reason == "length":
        return invalid_vote("truncated", f"the reply was cut at max_tokens: {text!r}")
    if not text.strip():
        return invalid_vote("unparseable", "empty reply")
    try:
        obj = _first_object(text)
    except _Twice as twice:
        return invalid_vote("schema", f"the answer names {', '.join(map(repr, twice.keys))} more than once: {text!r}")
    if obj is None:
        return invalid_vote("unparseable", f"no JSON object in the reply: {text!r}")
    return answer.read(obj)


def _message_text(content: Any) -> str | None:
    """A message's content as text: a string, or the text parts of a list of parts (some servers send those)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def _read_body(body: str, answer: AnswerSchema) -> tuple[Vote, dict | None, str]:
    """(vote, usage or None, the message text) of a raw chat.completion body."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return invalid_vote("unparseable", f"the response body is not JSON: {body[:REASON_CHARS]!r}"), None, ""
    if may_hold_surrogates(body):  # a lone surrogate's escape: every string repaired (U+FFFD), so any later
        data = json_without_surrogates(data)  # reading (a hash, a page, a file) can encode what is recorded
    if not isinstance(data, dict):
        return invalid_vote("unparseable", "the response body is not a chat.completion object"), None, ""
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return invalid_vote("unparseable", "the response body is not a chat.completion (no choices[0].message)"), \
            usage, ""
    text = _message_text(message.get("content"))
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    return parse_content(text, finish, refusal, answer), usage, text or ""


def read_masked(body: str, secret: str | None,
                answer: AnswerSchema) -> tuple[str, Vote, dict | None, str]:
    """(body, vote, usage, message text) of a reply with the voter's key masked in the body and the reason.

    A server may echo the key (a proxy quoting the request, a model repeating
    its prompt): it is masked, in every encoding (`reporter.masking`), before
    the body reaches the raw log or its reason the database. Recovery reads a
    raw line through here too, so a line an older reporter wrote unmasked
    gives a masked reason.
    """
    body = mask_json_text(body, secret)
    vote, usage, text = _read_body(body, answer)
    if secret:
        vote = replace(vote, reason=mask_secret(vote.reason, secret))
    return body, vote, usage, text


MAX_COUNT = 2**63 - 1
"""The largest token count a reply's usage may give: what the state database's BIGINT holds. A larger one (or a
negative, a float, a string) is no count: the tokens are then counted offline, as when a server sends none."""


def usage_count(usage: Any, key: str) -> int | None:
    """`usage[key]` when it is a count the database can store (0..MAX_COUNT), else None."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT else None
