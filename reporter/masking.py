"""Masking a secret (an API key, a password) in any text before it reaches a file, a database or a message.

One function for every stage (a leaf: it imports nothing of ours). A server
may echo a key back in any encoding, so `mask_secret` replaces each form a
server or a driver is known to produce:

- the key as it is;
- percent-encoded (`quote` with and without `/` kept, `quote_plus`, and
  every byte as `%XX`);
- base64 (standard and URL-safe, with and without padding), and the part of
  it that is the same wherever the key starts inside a longer base64 text
  (`user:key` in a Basic authorisation, say; the 1 to 2 characters at each
  end that mix with the neighbouring bytes are left); given the login's
  `user`, the whole base64 of an AUTH PLAIN token (`\\0user\\0key`, and
  `user\\0user\\0key`) and of `user:key`, however short the key;
- JSON-escaped (`json.dumps`, with `/` as `\\/` too, and every character
  as `\\uXXXX`);
- HTML-escaped;

each in any letter case (a server that upper-cases what it echoes) and with
any white space folded in or collapsed (a folded header line, a base64 text
wrapped at 76 columns, `a  b` echoed as `a b`).

A JSON text whose strings spell the key with their own mix of escapes is
covered by `mask_json_text`, which masks every decoded string of it.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from typing import Any
from urllib.parse import quote, quote_plus

KEY_MARK = "[key]"
"""What a masked API key reads as."""

_MIN_CORE = 8
"""The shortest base64 core (characters) that is masked on its own: shorter ones would hit ordinary text."""


def secret_forms(secret: str, user: str | None = None) -> list[str]:
    """Every encoding of `secret` that `mask_secret` replaces, longest first (no empty string).

    Letter case and white space are not spelt out here: `mask_secret` matches
    each form ignoring both.
    """
    return list(_forms(secret, user)) if secret else []


@functools.lru_cache(maxsize=32)
def _forms(secret: str, user: str | None) -> tuple[str, ...]:
    """secret_forms, made once per secret (a JSON body masks each of its strings with the same key)."""
    raw = _bytes(secret)
    forms = {secret, html.escape(secret, quote=True)}
    forms |= {quote(raw, safe=""), quote(raw), quote_plus(raw), "".join(f"%{b:02X}" for b in raw)}
    dumped = json.dumps(secret)[1:-1]
    forms |= {dumped, dumped.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1]}
    forms.add("".join(f"\\u{ord(c):04x}" for c in secret))
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
        if user is not None:
            # A login's whole token, masked however short the password: AUTH PLAIN and a Basic authorisation.
            login = _bytes(user)
            for token in (b"\0" + login + b"\0" + raw, login + b"\0" + login + b"\0" + raw, login + b":" + raw):
                text = encode(token).decode("ascii")
                forms |= {text, text.rstrip("=")}
    forms = {f for f in forms if _squash(f)}
    return tuple(sorted(forms, key=lambda f: (-len(_squash(f)), f)))


def mask_secret(text: str, secret: str | None, mark: str = KEY_MARK, *, user: str | None = None) -> str:
    """`text` with every known encoding of `secret` replaced by `mark` (no secret: text as it is).

    `user` is the login name that goes with a password (SMTP AUTH, a Basic
    authorisation): the tokens that hold both are masked whole.
    """
    if not secret or not text:
        return text
    squashed = _squash(text)
    forms = [f for f in _forms(secret, user) if _squash(f) in squashed]
    if not forms:
        return text
    # One pass, longest form first: a mark already put in is never matched again (a key of one letter
    # must not turn `[key]` into `[k[key]y]`). White space may stand anywhere between two characters.
    pattern = "|".join(r"\s*".join(map(re.escape, _squash_keep_case(f))) for f in forms)
    return re.sub(pattern, lambda _: mark, text, flags=re.IGNORECASE)


_SPACE = re.compile(r"\s+")


def _squash_keep_case(text: str) -> str:
    return _SPACE.sub("", text)


def _squash(text: str) -> str:
    """`text` without white space, in lower case: a cheap test of whether a form can occur at all."""
    return _squash_keep_case(text).lower()


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
