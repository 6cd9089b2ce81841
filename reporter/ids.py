"""Identifiers: one normal form per scheme, shared by the pool, the digest, fetch and novelty.

Keys are compared scheme by scheme: a DOI lower-cased and without a URL
prefix, an arXiv id without its version suffix, an OpenAlex id without its
URL and with an upper-case letter, an S2 paperId lower-cased. A leaf module:
it imports nothing of reporter, so every layer may use it.
"""

from __future__ import annotations

import re
import urllib.parse

# The schemes a paper can be matched on (s2 never names a lom_id: it is only ever a key to match on).
SCHEMES = ("doi", "arxiv", "openalex", "s2")

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
    if value.startswith("openalex:W") and value[10:].isdigit():
        return value  # most ids of a citation graph, already in normal form (what normalize_openalex keeps)
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


# --- identifiers as the sources write them ------------------------------------------------------

_ARXIV_NEW = re.compile(r"([0-9]{4}\.[0-9]{4,5})(v[0-9]+)?")
_ARXIV_OLD = re.compile(r"([a-z][a-z-]*(?:\.[A-Za-z]{2})?/[0-9]{7})(v[0-9]+)?")
_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.IGNORECASE)


def split_arxiv(value: str) -> tuple[str, str | None] | None:
    """(`arxiv:ID`, version or None) of an arXiv id or abs/pdf URL, new (2401.01234v2) or old style
    (hep-th/9901001v1); None when the value is not an arXiv id."""
    v = value.strip()
    v = _ARXIV_URL.sub("", v)
    if v.lower().startswith("arxiv:"):
        v = v[6:]
    if v.lower().endswith(".pdf"):
        v = v[:-4]
    m = _ARXIV_NEW.fullmatch(v) or _ARXIV_OLD.fullmatch(v)
    if m is None:
        return None
    return f"arxiv:{m.group(1)}", m.group(2)


def doi_id(value: str | None) -> str | None:
    """A DOI in normal form (no resolver or `doi:` prefix, lower-cased), or None when blank."""
    if value is None:
        return None
    out = normalize_doi(value)
    return out or None


def arxiv_doi_id(doi: str | None) -> str | None:
    """`arxiv:ID` when a DOI is arXiv's own DataCite DOI (10.48550/arxiv.ID), else None."""
    if doi and doi.startswith("10.48550/arxiv."):
        found = split_arxiv(doi[len("10.48550/arxiv."):])
        return found[0] if found else None
    return None


# A paper's own page, from its id only: the value must be well-formed for its scheme, and is percent-encoded.
PAPER_PAGES = {
    "doi": (re.compile(r"10\.\d{4,9}/\S+"), "https://doi.org/{}"),
    "arxiv": (re.compile(r"(?:\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d{1,3})?"),
              "https://arxiv.org/abs/{}"),
    "pmid": (re.compile(r"[1-9]\d{0,9}"), "https://pubmed.ncbi.nlm.nih.gov/{}/"),
    "openalex": (re.compile(r"W[1-9]\d{0,12}"), "https://openalex.org/{}"),
    "osf": (re.compile(r"[a-z0-9]{4,12}(?:_v\d{1,3})?"), "https://osf.io/{}/"),
}


def paper_url(work_id: str) -> str | None:
    """The paper's own page built from its id alone (doi.org, arxiv.org/abs, PubMed, OpenAlex, OSF), or None.

    Never from a URL in the data: an id that is not well-formed for its scheme gets no link.
    """
    scheme, _, value = work_id.partition(":")
    found = PAPER_PAGES.get(scheme)
    if found is None or not found[0].fullmatch(value):
        return None
    return found[1].format(urllib.parse.quote(value, safe="/"))
