"""The one surrogate-safe JSON parser (reporter.text.json_loads) and the file layer's parse_json built on it."""

from __future__ import annotations

import json

import pytest

from reporter.errors import InputError
from reporter.files import parse_json
from reporter.text import json_loads

LONE = '{"k\\ud800": ["a\\udfff", {"\\udc00": "\\ud83d\\ude00"}], "n": 1}'
"""Lone surrogates in a key, a list item and a nested key; a valid pair (one emoji) beside them."""
REPAIRED = {"k\ufffd": ["a\ufffd", {"\ufffd": "\U0001f600"}], "n": 1}


@pytest.mark.parametrize("data", [LONE, LONE.encode("ascii")], ids=["text", "bytes"])
def test_a_lone_surrogate_is_read_as_the_replacement_character(data):
    assert json_loads(data) == REPAIRED
    assert parse_json(data, "state.json") == REPAIRED
    json.dumps(parse_json(data, "state.json"), ensure_ascii=False).encode("utf-8")  # encodable: nothing raises


def test_json_without_a_surrogate_escape_is_read_as_json_reads_it():
    text = '{"a": "\\u00e9\\ud83d\\ude00", "b": [1.5, null, true]}'
    assert json_loads(text) == json.loads(text) == {"a": "\u00e9\U0001f600", "b": [1.5, None, True]}


@pytest.mark.parametrize("data, said", [
    (b'{"a": ', "state.json: not valid JSON (Expecting value: line 1 column 7 (char 6))"),
    (b"[" * 100_000 + b"]" * 100_000, "state.json: JSON nested too deeply to read; no input of ours nests more than "
                                       "a few dozen levels"),
    (b'{"a": "\xff"}', "state.json: not valid JSON ('utf-8' codec can't decode byte 0xff in position 7: invalid "
                       "start byte)"),
])
def test_bad_json_is_an_input_error_naming_the_file(data, said):
    with pytest.raises(InputError) as caught:
        parse_json(data, "state.json")
    assert str(caught.value) == said
