"""One row group of the seeded example pool: its hidden truth, texts, ids, dates, venues and authors.

Speed comes from never formatting a row in Python: each row group draws
template and word indices in bulk with numpy, and Arrow kernels
(`take`, `binary_join_element_wise`) assemble the strings. Each row group
has its own random streams (seeded by seed and group number), so memory
stays bounded at any size and a larger pool starts with the same works as
a smaller one.

The generator knows a hidden truth per row (its `kind`: a replication
study, an OSF preregistration, an erratum, ...), drawn from the group's
first stream alone, so that `group_kinds` recomputes it without the texts
(generate.py's `pool_truth` and labels).

The words and templates are in `words.py` (the lists in `words.json`),
rendered in bulk by `renderer.py`. The file, its marker and the labels are
generate.py's.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .renderer import renderer
from .words import FIELDS, HOSTILE_TITLES, PLANS, TITLE_SET

GROUP_ROWS = 65_536
"""Rows of one row group: the unit of the random streams (group g holds rows g*GROUP_ROWS onwards)."""

SCHEMA = pa.schema([
    ("work_id", pa.string()),
    ("source", pa.string()),
    ("title", pa.string()),
    ("abstract", pa.string()),
    ("type", pa.string()),
    ("doi", pa.string()),
    ("published", pa.date32()),
    ("venue", pa.string()),
    ("authors", pa.list_(pa.string())),
])

# --- sources, kinds and the hidden truth -------------------------------------

SOURCES = ("openalex", "pubmed", "crossref", "osf", "biorxiv", "medrxiv", "arxiv")
SOURCE_P = (0.40, 0.20, 0.14, 0.06, 0.07, 0.07, 0.06)
# Field mix per source (psychology, medicine, economics).
FIELD_P = {"openalex": (0.45, 0.35, 0.20), "pubmed": (0.25, 0.75, 0.0), "crossref": (0.40, 0.30, 0.30),
           "osf": (0.85, 0.10, 0.05), "biorxiv": (0.20, 0.80, 0.0), "medrxiv": (0.05, 0.95, 0.0),
           "arxiv": (0.15, 0.05, 0.80)}

KINDS = ("paper", "mention", "replication", "reproduction", "osf_replication", "osf_prereg",
         "osf_other", "erratum", "retraction", "editorial", "comment", "nonpaper")
INCLUDE_KINDS = frozenset({"replication", "reproduction", "osf_replication"})
"""The hidden truth: a replication, reproduction or reanalysis study (or its registration) is an include."""

_JOURNAL = {"paper": 0.815, "mention": 0.06, "replication": 0.016, "reproduction": 0.008,
            "erratum": 0.03, "retraction": 0.007, "editorial": 0.015, "comment": 0.014, "nonpaper": 0.015}
_PREPRINT = {"paper": 0.855, "mention": 0.07, "replication": 0.035, "reproduction": 0.02,
             "retraction": 0.01, "comment": 0.01}
_OSF = {"osf_replication": 0.28, "osf_prereg": 0.45, "osf_other": 0.27}
KIND_P = {"openalex": _JOURNAL, "pubmed": _JOURNAL, "crossref": _JOURNAL, "osf": _OSF,
          "biorxiv": _PREPRINT, "medrxiv": _PREPRINT, "arxiv": _PREPRINT}

# Share of rows per kind whose abstract is missing, and how much of that is null (vs "").
MISSING_ABSTRACT = {"paper": 0.07, "mention": 0.03, "replication": 0.05, "reproduction": 0.05,
                    "osf_replication": 0.70, "osf_prereg": 0.55, "osf_other": 0.80, "erratum": 0.80,
                    "retraction": 0.75, "editorial": 0.70, "comment": 0.60, "nonpaper": 0.96}
NULL_SHARE_OF_MISSING = 0.7

TYPES = {"paper": "article", "mention": "article", "replication": "article", "reproduction": "article",
         "osf_replication": "registration", "osf_prereg": "registration", "osf_other": "project",
         "erratum": "erratum", "retraction": "retraction", "editorial": "editorial", "comment": "letter",
         "nonpaper": "paratext"}


# --- one row group ----------------------------------------------------------------

def _group_rng(seed: int, group: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, group, stream])


def group_kinds(seed: int, group: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source, kind and field codes of one row group: the hidden truth, drawn from its own stream."""
    rng = _group_rng(seed, group, 0)
    source = rng.choice(len(SOURCES), size=n, p=SOURCE_P)
    kind = np.zeros(n, np.int64)
    field = np.zeros(n, np.int64)
    u_kind, u_field = rng.random(n), rng.random(n)
    for s, name in enumerate(SOURCES):
        sel = source == s
        probs = KIND_P[name]
        codes = np.array([KINDS.index(k) for k in probs])
        cum = np.cumsum(np.array(list(probs.values())) / sum(probs.values()))
        kind[sel] = codes[np.minimum(np.searchsorted(cum, u_kind[sel], side="right"), len(codes) - 1)]
        fcum = np.cumsum(FIELD_P[name])
        field[sel] = np.minimum(np.searchsorted(fcum, u_field[sel], side="right"), len(FIELDS) - 1)
    return source, kind, field


def _hostile_rows(seed: int, group: int, n: int) -> np.ndarray:
    """Rows that get a pinned hostile title: every row group holds each hostile title once."""
    rng = _group_rng(seed, group, 3)
    return rng.permutation(n)[:min(n, len(HOSTILE_TITLES))]


def _scatter(values: pa.Array, mask: np.ndarray) -> pa.Array:
    """Spread `values` (one per True in mask) to len(mask) rows, null elsewhere."""
    pos = np.cumsum(mask) - 1
    return values.take(pa.array(np.where(mask, pos, 0), mask=~mask))


def _replace_where(base: pa.Array, mask: np.ndarray, new: pa.Array) -> pa.Array:
    """base with the rows of mask replaced by `new` (one value per True)."""
    if not mask.any():
        return base
    return pc.if_else(pa.array(mask), _scatter(new, mask), base)


def _texts(rng: np.random.Generator, kind: np.ndarray, field: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """Titles and abstracts of one row group, by each row's kind and field."""
    r = renderer()
    n = len(kind)
    fixed = r.fixed(rng, field)
    titles = pa.nulls(n, pa.string())
    for k, name in enumerate(KINDS):
        mask = kind == k
        if mask.any():
            rows = np.flatnonzero(mask)
            titles = _replace_where(titles, mask, r.render(rng, TITLE_SET[name], field[rows], fixed, rows))
    # Abstracts: position j of every kind's plan, one render per sentence set.
    depth = max(len(p) for p in PLANS.values())
    positions = []
    for j in range(depth):
        by_set: dict[str, np.ndarray] = {}
        for k, name in enumerate(KINDS):
            plan = PLANS[name]
            if j < len(plan):
                set_name, p = plan[j]
                present = (kind == k) & (rng.random(n) < p)
                by_set[set_name] = by_set.get(set_name, np.zeros(n, bool)) | present
        column = pa.nulls(n, pa.string())
        for set_name in sorted(by_set):
            mask = by_set[set_name]
            if mask.any():
                rows = np.flatnonzero(mask)
                column = _replace_where(column, mask, r.render(rng, set_name, field[rows], fixed, rows))
        positions.append(column)
    abstracts = pc.binary_join_element_wise(*positions, " ", null_handling="skip")
    return titles, abstracts


def _edit(arr: pa.Array, mask: np.ndarray, fn) -> pa.Array:
    """arr with fn applied to the rows of mask."""
    return _replace_where(arr, mask, fn(arr.filter(pa.array(mask))))


def _oddities(rng: np.random.Generator, titles: pa.Array, abstracts: pa.Array
              ) -> tuple[pa.Array, pa.Array]:
    """Whitespace oddities a real pool has: double spaces, newlines, stray edges, CRLF."""
    u, v = rng.random(len(titles)), rng.random(len(titles))
    titles = _edit(titles, u < 0.012, lambda a: pc.replace_substring(a, " ", "  ", max_replacements=1))
    titles = _edit(titles, (u >= 0.012) & (u < 0.017),
                   lambda a: pc.replace_substring(a, ": ", ":\n", max_replacements=1))
    titles = _edit(titles, (u >= 0.017) & (u < 0.021), lambda a: pc.binary_join_element_wise(" ", a, " \n", ""))
    abstracts = _edit(abstracts, v < 0.03, lambda a: pc.replace_substring(a, ". ", ".\n\n", max_replacements=2))
    abstracts = _edit(abstracts, (v >= 0.03) & (v < 0.06),
                      lambda a: pc.replace_substring(a, ", ", ",  ", max_replacements=3))
    abstracts = _edit(abstracts, (v >= 0.06) & (v < 0.07),
                      lambda a: pc.replace_substring(a, ". ", ".\r\n", max_replacements=1))
    return titles, abstracts


def _base36(x: np.ndarray, width: int) -> pa.Array:
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", np.uint8)
    digits = np.empty((len(x), width), np.uint8)
    for j in range(width - 1, -1, -1):
        digits[:, j] = alphabet[x % 36]
        x = x // 36
    return pa.array(digits.view(f"S{width}").ravel()).cast(pa.string())


def _num(x: np.ndarray, width: int = 0) -> pa.Array:
    s = pa.array(x.astype(np.int64)).cast(pa.string())
    return pc.utf8_lpad(s, width=width, padding="0") if width else s


def _ids(source: np.ndarray, counters: dict[int, int], published: np.ndarray
         ) -> tuple[pa.Array, pa.Array]:
    """work_id and doi per row: a per-scheme counter, scrambled by a bijection so ids look random."""
    n = len(source)
    work_id = pa.nulls(n, pa.string())
    doi = pa.nulls(n, pa.string())
    rxiv = (SOURCES.index("biorxiv"), SOURCES.index("medrxiv"))
    scheme = np.where(np.isin(source, rxiv), rxiv[0], source)  # bioRxiv and medRxiv share one DOI scheme
    base = dict(counters)
    for s, name in enumerate(SOURCES):
        mask = source == s
        if not mask.any():
            continue
        key = int(scheme[mask][0])
        k = np.cumsum(scheme == key)[mask] - 1 + base.get(key, 0)
        if name == "osf":
            code = _base36((k * 48_271 + 1_000_003) % 36**5, 5)
            wid = pc.binary_join_element_wise("osf:", code, "")
            d = pc.binary_join_element_wise("10.5555/osf.io/", code, "")
        elif name == "pubmed":
            wid = pc.binary_join_element_wise("pmid:", _num(10_000_000 + (k * 7_919 + 4_242) % 90_000_000), "")
            d = pc.binary_join_element_wise("10.5555/pm.", _num((k * 6_481 + 77) % 10**8, 8), "")
        elif name == "openalex":
            wid = pc.binary_join_element_wise("openalex:W", _num(4_000_000_000 + (k * 2_654_435_761) % 2**32), "")
            d = pc.binary_join_element_wise("10.5555/oa.", _num((k * 104_729 + 11) % 10**9, 9), "")
        elif name == "crossref":
            d = pc.binary_join_element_wise("10.5555/ex.", _num((k * 15_485_863 + 5) % 10**9, 9), "")
            wid = pc.binary_join_element_wise("doi:", d, "")
        elif name == "arxiv":
            month = k // 90_000
            yymm = (15 + (month // 12)) * 100 + 1 + month % 12
            wid = pc.binary_join_element_wise("arxiv:", _num(yymm, 4), ".",
                                              _num(10_000 + (k % 90_000 * 27_011 + 3) % 90_000, 5), "")
            d = pc.binary_join_element_wise("10.5555/arxiv.", _num(yymm, 4), ".",
                                            _num(10_000 + (k % 90_000 * 27_011 + 3) % 90_000, 5), "")
        else:
            days = published[mask].astype("datetime64[D]").astype(str)
            date = pc.replace_substring(pa.array(days), "-", ".")
            d = pc.binary_join_element_wise("10.5555/", date, ".", _num((k * 1_299_709 + 1) % 10**7, 7), "")
            wid = pc.binary_join_element_wise("doi:", d, "")
        work_id = _replace_where(work_id, mask, wid)
        doi = _replace_where(doi, mask, d)
    for key in np.unique(scheme):
        counters[int(key)] = base.get(int(key), 0) + int((scheme == key).sum())
    return work_id, doi


def group_table(seed: int, group: int, n: int, counters: dict[int, int]) -> pa.Table:
    """One row group of the pool: rows group*GROUP_ROWS onwards, from the group's own random streams."""
    source, kind, field = group_kinds(seed, group, n)
    rng = _group_rng(seed, group, 1)
    titles, abstracts = _texts(rng, kind, field)
    titles, abstracts = _oddities(rng, titles, abstracts)
    # Hostile titles (exactly as written): pinned once per group, plus a small random share.
    hostile_pos = _hostile_rows(seed, group, n)
    extra = rng.random(n) < 0.0002
    extra[hostile_pos] = False
    hostile = np.full(n, -1, np.int64)
    hostile[hostile_pos] = np.arange(len(hostile_pos))
    hostile[extra] = rng.integers(0, len(HOSTILE_TITLES), int(extra.sum()))
    hmask = hostile >= 0
    titles = _replace_where(titles, hmask, pa.array(HOSTILE_TITLES, pa.string()).take(pa.array(hostile[hmask])))
    # Missing abstracts (null or ""), by kind; a few null or blank titles.
    u = rng.random(n)
    miss_p = np.array([MISSING_ABSTRACT[k] for k in KINDS])[kind]
    missing = u < miss_p
    null_abs = missing & (u < miss_p * NULL_SHARE_OF_MISSING)
    abstracts = pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), abstracts)
    abstracts = pc.if_else(pa.array(missing & ~null_abs), pa.scalar("", pa.string()), abstracts)
    t = rng.random(n)
    osf_other = kind == KINDS.index("osf_other")
    no_title = ((t < 0.003) | (osf_other & (t < 0.06))) & ~hmask
    blank_title = (t >= 0.003) & (t < 0.004) & ~hmask
    titles = pc.if_else(pa.array(no_title), pa.scalar(None, pa.string()), titles)
    titles = pc.if_else(pa.array(blank_title), pa.scalar("  ", pa.string()), titles)
    # Dates: 2000-01-01 to 2026-06-30, weighted to recent years; OSF from 2013.
    start = np.where(source == SOURCES.index("osf"), 15_706, 10_957)  # 2013-01-01, 2000-01-01
    published = (start + (np.sqrt(rng.random(n)) * (20_634 - start)).astype(np.int64)).astype("datetime64[D]")
    work_id, doi = _ids(source, counters, published)
    no_doi = (rng.random(n) < 0.12) & np.isin(source, [SOURCES.index(s) for s in ("openalex", "pubmed", "arxiv")])
    doi = pc.if_else(pa.array(no_doi), pa.scalar(None, pa.string()), doi)
    names = np.array(SOURCES, dtype=object)[source]
    venue, authors = _venues_authors(rng, names, kind, field)
    type_names = np.array([TYPES[k] for k in KINDS], dtype=object)[kind]
    type_names[np.isin(names, ["biorxiv", "medrxiv", "arxiv"]) & (type_names == "article")] = "preprint"
    return pa.Table.from_arrays(
        [work_id, pa.array(names, pa.string()), titles, abstracts, pa.array(type_names, pa.string()), doi,
         pa.array(published, pa.date32()), venue, authors], schema=SCHEMA)


def _venues_authors(rng: np.random.Generator, names: np.ndarray, kind: np.ndarray, field: np.ndarray
                    ) -> tuple[pa.Array, pa.Array]:
    """Invented journal names (the platform's name for OSF and preprint servers) and 1-12 invented authors."""
    r = renderer()
    venue = r.draw(rng, "venue", field)
    for source, platform in (("osf", "OSF Registries"), ("biorxiv", "bioRxiv"), ("medrxiv", "medRxiv"),
                             ("arxiv", "arXiv")):
        venue = pc.if_else(pa.array(names == source), pa.scalar(platform), venue)
    count = np.minimum(1 + rng.geometric(0.3, len(kind)), 12)
    count[kind == KINDS.index("nonpaper")] = 0
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    people = r.draw(rng, "author", np.zeros(int(offsets[-1]), np.int64))
    return venue, pa.ListArray.from_arrays(pa.array(offsets), people)
