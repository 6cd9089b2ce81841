"""Masking a secret (an API key, a password) in any text before it reaches a file, a database or a message.

One function for every stage (a leaf: it imports nothing of ours). A server
may echo a key back in any encoding, so `mask_secret` replaces each form a
server or a driver is known to produce:

- the key as it is;
- percent-encoded (`quote` with and without `/` kept, `quote_plus`), in
  upper- and lower-case hex;
- base64 (standard and URL-safe, with and without padding), and the part of
  it that is the same wherever the key starts inside a longer base64 text
  (`user:key` in a Basic authorisation, say; the 1 to 2 characters at each
  end that mix with the neighbouring bytes are left);
- JSON-escaped (`json.dumps`, with `/` as `\\/` too, and every character
  as `\\uXXXX`, upper and lower case);
- HTML-escaped.

A JSON text whose strings spell the key with their own mix of escapes is
covered by `mask_json_text`, which masks every decoded string of it.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any
from urllib.parse import quote, quote_plus

KEY_MARK = "[key]"
"""What a masked API key reads as."""

_MIN_CORE = 8
"""The shortest base64 core (characters) that is masked on its own: shorter ones would hit ordinary text."""


def secret_forms(secret: str) -> list[str]:
    """Every encoding of `secret` that `mask_secret` replaces, longest first (no empty string)."""
    if not secret:
        return []
    raw = _bytes(secret)
    forms = {secret, html.escape(secret, quote=True)}
    for encoded in (quote(raw, safe=""), quote(raw), quote_plus(raw)):
        forms |= {encoded, _lower_hex(encoded)}
    dumped = json.dumps(secret)[1:-1]
    forms |= {dumped, dumped.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1]}
    forms |= {"".join(f"\\u{ord(c):04x}" for c in secret), "".join(f"\\u{ord(c):04X}" for c in secret)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for shift in range(3):
            text = encode(b"\0" * shift + raw).decode("ascii")
            if shift == 0:
                forms |= {text, text.rstrip("=")}
            # The characters that depend on the key's bytes alone: past the first group (when shifted)
            # and before the last one (which mixes with whatever follows the key).
            core = text[4 if shift else 0:-4]
            if len(core) >= _MIN_CORE:
                forms.add(core)
    return sorted(filter(None, forms), key=lambda f: (-len(f), f))


def _lower_hex(encoded: str) -> str:
    return re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)


def mask_secret(text: str, secret: str | None, mark: str = KEY_MARK) -> str:
    """`text` with every known encoding of `secret` replaced by `mark` (no secret: text as it is)."""
    if not secret or not text:
        return text
    forms = [f for f in secret_forms(secret) if f in text]
    if not forms:
        return text
    # One pass, longest form first: a mark already put in is never matched again (a key of one letter
    # must not turn `[key]` into `[k[key]y]`).
    return re.sub("|".join(map(re.escape, forms)), mark, text)


def mask_json_text(text: str, secret: str | None, mark: str = KEY_MARK) -> str:
    """A response body with the secret masked: in its text, and in every string its JSON decodes to.

    A body that is JSON and whose decoded strings still held the secret (spelt
    with escapes of its own) is written again as JSON (ensure_ascii off, the
    key order kept); any other body is only masked as text.
    """
    if not secret:
        return text
    text = mask_secret(text, secret, mark)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    try:
        masked, changed = _walk(data, secret, mark)
    except RecursionError:
        return text
    return json.dumps(masked, ensure_ascii=False) if changed else text


def _walk(value: Any, secret: str, mark: str) -> tuple[Any, bool]:
    if isinstance(value, str):
        masked = mask_secret(value, secret, mark)
        return masked, masked != value
    if isinstance(value, list):
        pairs = [_walk(v, secret, mark) for v in value]
        return [v for v, _ in pairs], any(c for _, c in pairs)
    if isinstance(value, dict):
        out, changed = {}, False
        for k, v in value.items():
            mk, ck = _walk(k, secret, mark)
            mv, cv = _walk(v, secret, mark)
            out[mk] = mv
            changed = changed or ck or cv
        return out, changed
    return value, False


def _bytes(secret: str) -> bytes:
    """The key's bytes: an environment variable's bytes that are not UTF-8 come back as they were (Python reads
    them as U+DC80-U+DCFF); any other lone surrogate as its UTF-8 form."""
    try:
        return secret.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return secret.encode("utf-8", "surrogatepass")
