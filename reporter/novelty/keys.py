"""Novelty's own use of identifiers: the lom_id derived from keys, aliases and stored lookups.

The normal form of each key is the shared one (reporter.ids).
"""

from __future__ import annotations

import re

from ..ids import NORMALIZERS, SCHEMES, normalize_lom_id, normalize_openalex, normalize_s2

# The schemes the lom_id is derived from, in this order.
LOM_ID_SCHEMES = ("doi", "arxiv", "openalex")


def derive_lom_id(keys: dict[str, str | None]) -> str | None:
    """The lom_id named by normalised keys: doi, then arxiv, then openalex."""
    for scheme in LOM_ID_SCHEMES:
        if keys.get(scheme):
            return f"{scheme}:{keys[scheme]}"
    return None


def key_aliases(keys: dict[str, str | None]) -> list[str]:
    """`scheme:value` for every present key, in SCHEMES order."""
    return [f"{s}:{keys[s]}" for s in SCHEMES if keys.get(s)]


def parse_lookup(lookup: str) -> str | None:
    """The alias a stored lookup string names (`ARXIV:x`, `DOI:x`, `W123`, a URL), or None."""
    v = lookup.strip()
    scheme, sep, rest = v.partition(":")
    if sep and scheme.upper() in ("DOI", "ARXIV") and rest.strip():
        s = scheme.lower()
        return f"{s}:{NORMALIZERS[s](rest)}"
    if re.fullmatch(r"[Ww]\d+", v):
        return f"openalex:{normalize_openalex(v)}"
    if re.fullmatch(r"[0-9a-fA-F]{40}", v):
        return f"s2:{normalize_s2(v)}"
    normal = normalize_lom_id(v)
    scheme, sep, _ = normal.partition(":")
    return normal if sep and scheme in NORMALIZERS else None
