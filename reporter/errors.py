"""The two kinds of failure a command reports: bad input (exit 2) and internal (exit 1)."""

from collections.abc import Iterable


class InputError(Exception):
    """Bad input from the user: the message says which file and what to fix (exit 2)."""


class InternalError(Exception):
    """An invariant of the engine did not hold: a bug, never the user's fault (exit 1)."""


def mask(text: str, secrets: Iterable[str | None], placeholder: str = "***") -> str:
    """`text` with every secret replaced by `placeholder`, in every form a message may carry it.

    The forms: as it is; percent-encoded as a query string encodes it (`+` for a space, `/` kept or not,
    either case of hex digits); percent-decoded (a secret given encoded); and JSON-escaped (`\\/`, `\\u…`).
    Every place that shows a server's words or a URL that was sent passes them through here first.
    """
    import functools
    import html
    import json
    import re
    import urllib.parse

    forms: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        for raw in {secret, urllib.parse.unquote(secret), urllib.parse.unquote_plus(secret)}:
            quote = functools.partial(urllib.parse.quote, errors="surrogateescape")  # an environment's bytes
            quote_plus = functools.partial(urllib.parse.quote_plus, errors="surrogateescape")
            forms |= {raw, quote(raw, safe=""), quote(raw, safe="/"), quote_plus(raw, safe=""),
                      quote_plus(raw, safe="/"), json.dumps(raw)[1:-1], json.dumps(raw, ensure_ascii=False)[1:-1],
                      json.dumps(raw)[1:-1].replace("/", "\\/"), html.escape(raw)}
    forms.discard("")
    if not forms:
        return text
    pattern = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    return re.sub(pattern, placeholder, text, flags=re.IGNORECASE)
