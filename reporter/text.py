"""Text Python can hold but UTF-8 cannot: lone surrogates (U+D800..U+DFFF).

They enter only through JSON escapes (`"A \\ud800 b"` is legal JSON and
names no character); decoded bytes, XML and CSV never hold one. Such a
string cannot be encoded, so it cannot be written to a file, an Arrow
column or a page. Where text enters (the record readers, a decisions.json
read back, the phrase matcher's column), each lone surrogate becomes
U+FFFD, the replacement character: one code point for one, so offsets into
the text are unchanged. `json_loads` is the one JSON parser that does so
(reporter.files.parse_json, the file layer's, is built on it).
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_ESCAPE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")
"""A JSON escape of a surrogate (the decoder joins a valid pair into one character; a lone one stays)."""


def replace_surrogates(text: str) -> str:
    """The text with every lone surrogate replaced by U+FFFD (the same string when it has none)."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


def may_hold_surrogates(data: str | bytes) -> bool:
    """Whether JSON text holds an escape that can decode to a lone surrogate (a cheap test before a walk)."""
    return (_ESCAPE if isinstance(data, str) else _ESCAPE_BYTES).search(data) is not None


def json_without_surrogates(value: Any) -> Any:
    """A parsed JSON value with lone surrogates replaced in every string, keys included (no recursion)."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if not isinstance(value, (list, dict)):
        return value
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = replace_surrogates(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            if any(isinstance(k, str) and _SURROGATE.search(k) for k in item):
                cleaned = {replace_surrogates(k): v for k, v in item.items()}
                item.clear()
                item.update(cleaned)
            stack.extend((item, k) for k in item)
    return root[0]


def json_loads(data: str | bytes) -> Any:
    """json.loads with every lone surrogate read as U+FFFD; raises what json.loads raises (ValueError, including
    json.JSONDecodeError and UnicodeDecodeError, and RecursionError)."""
    value = json.loads(data)
    return json_without_surrogates(value) if may_hold_surrogates(data) else value
