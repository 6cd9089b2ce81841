"""Identifiers: one normal form per scheme, lom_ids derived from keys, and aliases.

Keys are compared scheme by scheme: a DOI lower-cased and without a URL
prefix, an arXiv id without its version suffix, an OpenAlex id without its
URL and with an upper-case letter, an S2 paperId lower-cased.
"""

from __future__ import annotations

import re

# The schemes a paper can be matched on, in the order the lom_id is derived
# from (s2 never names a lom_id: it is only ever a key to match on).
SCHEMES = ("doi", "arxiv", "openalex", "s2")
LOM_ID_SCHEMES = ("doi", "arxiv", "openalex")

_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi.org/", "doi:")
_ARXIV_PREFIXES = ("https://arxiv.org/abs/", "http://arxiv.org/abs/", "https://arxiv.org/pdf/",
                   "http://arxiv.org/pdf/", "arxiv.org/abs/", "arxiv:")
_OPENALEX_PREFIXES = ("https://openalex.org/", "http://openalex.org/", "openalex.org/", "openalex:")
_ARXIV_VERSION = re.compile(r"v\d+$")
# A lom_id written as a URL is read as the scheme the URL names.
_URL_SCHEMES = (("doi", _DOI_PREFIXES[:5]), ("arxiv", _ARXIV_PREFIXES[:5]),
                ("openalex", _OPENALEX_PREFIXES[:3]))


def _strip_prefix(value: str, prefixes: tuple[str, ...]) -> str:
    low = value.lower()
    if low.startswith(prefixes):
        for prefix in prefixes:
            if low.startswith(prefix):
                return value[len(prefix):]
    return value


def normalize_doi(value: str) -> str:
    """A DOI lower-cased, trimmed and without a URL or `doi:` prefix."""
    return _strip_prefix(value.strip(), _DOI_PREFIXES).strip().lower()


def normalize_arxiv(value: str) -> str:
    """An arXiv id without a URL or `arxiv:` prefix, `.pdf` or version suffix."""
    v = _strip_prefix(value.strip(), _ARXIV_PREFIXES).strip()
    if v.lower().endswith(".pdf"):
        v = v[:-4]
    return _ARXIV_VERSION.sub("", v)


def normalize_openalex(value: str) -> str:
    """An OpenAlex id without its URL, with an upper-case leading letter (W123)."""
    v = value.strip()
    if v[1:].isdigit() and v[:1] in ("W", "w"):  # the common case, already bare
        return "W" + v[1:]
    v = _strip_prefix(v, _OPENALEX_PREFIXES).strip()
    return v[:1].upper() + v[1:]


def normalize_s2(value: str) -> str:
    """A Semantic Scholar paperId, trimmed and lower-cased (it is hexadecimal)."""
    return value.strip().lower()


NORMALIZERS = {"doi": normalize_doi, "arxiv": normalize_arxiv,
               "openalex": normalize_openalex, "s2": normalize_s2}


def normalize_key(scheme: str, value: str | None) -> str | None:
    """The normal form of one key, or None when it is absent or blank."""
    if value is None:
        return None
    out = NORMALIZERS[scheme](value)
    return out or None


def normalize_lom_id(value: str) -> str:
    """A lom_id in normal form: `scheme:value` with the scheme's key normalised.

    Unknown schemes are kept as written (trimmed); URL forms of DOIs, arXiv
    and OpenAlex ids are read as those schemes.
    """
    v = value.strip()
    scheme, sep, rest = v.partition(":")
    low = scheme.lower()
    normalizer = NORMALIZERS.get(low) if sep else None
    if normalizer is not None:
        out = normalizer(rest)
        return f"{low}:{out}" if out else v
    if low in ("http", "https") or not sep:
        low_v = v.lower()
        for url_scheme, prefixes in _URL_SCHEMES:
            if low_v.startswith(prefixes):
                return f"{url_scheme}:{NORMALIZERS[url_scheme](v)}"
    return v


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
