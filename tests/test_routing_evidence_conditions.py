"""Evidence for every condition: each text condition of the winner that matched keeps its span.

A tiny pool routed by the real engine (offsets and texts worked out by hand
below), its samples.json windows, and the release and rule pages rendered
from it: a work won by a rule with two conditions shows both highlighted.
"""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest
from markdown_it import MarkdownIt
from support.routing import TODAY, write_pool, write_specs
from support.site import parse_html

from reporter.routing.release import ENGINE_VERSION, RELEASE_FILES, route_release
from reporter.build import render_site
from reporter.site.links import release_path, rule_path, work_anchor

RULES = [
    {"id": "animal-replication", "pile": "hold", "precedence": 90,
     "match": {"all": [{"field": "text", "any_phrase": ["animal", "mice", "rats"]},
                       {"field": "text", "phrase": "replicat*"}]}},
    {"id": "erratum-either", "pile": "discard", "precedence": 80,
     "match": {"any": [{"field": "title", "phrase": "erratum"}, {"field": "abstract", "phrase": "corrigendum"}]}},
    {"id": "trial-not-pilot", "pile": "screen", "precedence": 70,
     "match": {"all": [{"field": "title", "phrase": "trial"},
                       {"any": [{"not": {"field": "title", "phrase": "pilot"}},
                                {"field": "abstract", "phrase": "protocol"}]}]}},
    {"id": "cohort-twice", "pile": "screen", "precedence": 60,
     "match": {"all": [{"field": "title", "phrase": "cohort"}, {"field": "text", "phrase": "cohort"}]}},
    {"id": "source-only", "pile": "screen", "precedence": 50, "match": {"column": "source", "in": ["osf"]}},
]

ROWS = [
    # animal term in the title, replication term in the abstract: two spans, the title's the best
    {"work_id": "doi:10.1/w1", "source": "pubmed", "title": "Mice models of anxiety",
     "abstract": "We replicated the effect in 40 animals."},
    # both in the title, the replication term first: leaf order is animal then replication,
    # the best (lowest start) is the replication term
    {"work_id": "doi:10.1/w2", "source": "pubmed", "title": "Replication in rats: a failed attempt",
     "abstract": "Rats and mice were used."},
    # non-ASCII before both matches: character offsets, not bytes
    {"work_id": "doi:10.1/w3", "source": "pubmed", "title": "Études on mice",
     "abstract": "Éffets: the result replicates."},
    # an `any` whose second branch did not match: one span
    {"work_id": "doi:10.1/w4", "source": "pubmed", "title": "Erratum: growth curves", "abstract": "A short note."},
    # "pilot" is under a `not`: never evidence, though it occurs; trial and protocol are
    {"work_id": "doi:10.1/w5", "source": "pubmed", "title": "A pilot trial of sleep",
     "abstract": "The protocol is registered."},
    # two conditions finding the same span: kept once
    {"work_id": "doi:10.1/w6", "source": "pubmed", "title": "Cohort study of diet", "abstract": "A cohort."},
    # won by a rule without a text condition, and not won at all: no spans
    {"work_id": "osf:w7", "source": "osf", "title": "Lab notes", "abstract": "Nothing here."},
    {"work_id": "doi:10.1/w8", "source": "arxiv", "title": "Unrelated", "abstract": "Nothing."},
]


def span(field, start, end, text):
    return {"field": field, "start": start, "end": end, "text": text}


EXPECTED = {
    "doi:10.1/w1": [span("title", 0, 4, "Mice"), span("abstract", 3, 13, "replicated")],
    "doi:10.1/w2": [span("title", 15, 19, "rats"), span("title", 0, 11, "Replication")],
    "doi:10.1/w3": [span("title", 10, 14, "mice"), span("abstract", 19, 29, "replicates")],
    "doi:10.1/w4": [span("title", 0, 7, "Erratum")],
    "doi:10.1/w5": [span("title", 8, 13, "trial"), span("abstract", 4, 12, "protocol")],
    "doi:10.1/w6": [span("title", 0, 6, "Cohort")],
    "osf:w7": [],
    "doi:10.1/w8": [],
}
BEST = {"doi:10.1/w1": EXPECTED["doi:10.1/w1"][0], "doi:10.1/w2": EXPECTED["doi:10.1/w2"][1],
        "doi:10.1/w3": EXPECTED["doi:10.1/w3"][0], "doi:10.1/w4": EXPECTED["doi:10.1/w4"][0],
        "doi:10.1/w5": EXPECTED["doi:10.1/w5"][0], "doi:10.1/w6": EXPECTED["doi:10.1/w6"][0],
        "osf:w7": None, "doi:10.1/w8": None}


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    root = tmp_path_factory.mktemp("conditions")
    result = route_release(write_pool(root / "pool.parquet", ROWS), write_specs(root, RULES),
                           root / "releases", progress=False, batch_rows=3, as_of=TODAY)
    table = pq.read_table(result.release_dir / "routing.parquet")
    samples = json.loads((result.release_dir / "samples.json").read_text(encoding="utf-8"))
    return result, table, samples, root


def test_every_condition_that_matched_keeps_its_span_in_rule_order(routed):
    _, table, _, _ = routed
    rows = {r["work_id"]: r for r in table.to_pylist()}
    assert {w: r["evidence_all"] for w, r in rows.items()} == EXPECTED
    assert {w: r["winner"] for w, r in rows.items()} == {
        "doi:10.1/w1": "animal-replication", "doi:10.1/w2": "animal-replication",
        "doi:10.1/w3": "animal-replication", "doi:10.1/w4": "erratum-either", "doi:10.1/w5": "trial-not-pilot",
        "doi:10.1/w6": "cohort-twice", "osf:w7": "source-only", "doi:10.1/w8": None}


def test_the_one_evidence_column_stays_the_best_span(routed):
    _, table, _, _ = routed
    assert dict(zip(table.column("work_id").to_pylist(), table.column("evidence").to_pylist())) == BEST
    assert table.column_names[-1] == "evidence_all", "the new column comes last: no earlier column moves"


def test_a_not_leaf_is_never_evidence(routed):
    _, table, _, _ = routed
    rows = dict(zip(table.column("work_id").to_pylist(), table.column("evidence_all").to_pylist()))
    # w5's title holds "pilot" under its rule's `not`: its spans are the conditions it met, never the not's word
    w5 = next(r for r in ROWS if r["work_id"] == "doi:10.1/w5")
    assert "pilot" in w5["title"].lower() and [s["text"] for s in rows["doi:10.1/w5"]] == ["trial", "protocol"]
    assert sum(len(spans) for spans in rows.values()) > 0
    for spans in rows.values():
        assert all(s["text"].lower() != "pilot" for s in spans)


def test_the_engine_version_says_routing_5(routed):
    result, _, _, _ = routed
    release = json.loads((result.release_dir / "release.json").read_text())
    assert release["engine_version"] == ENGINE_VERSION and ENGINE_VERSION.endswith("+routing.5")


@pytest.mark.parametrize("workers,batch_rows", [(1, 32_768), (2, 2), (3, 1)])
def test_the_bytes_do_not_depend_on_workers_or_batches(routed, tmp_path, workers, batch_rows):
    result, _, _, root = routed
    again = route_release(root / "pool.parquet", root / "specs", tmp_path / "releases", progress=False,
                          workers=workers, batch_rows=batch_rows, as_of=TODAY)
    assert again.release_id == result.release_id
    for name in RELEASE_FILES:
        assert (again.release_dir / name).read_bytes() == (result.release_dir / name).read_bytes(), name


def _sampled(samples):
    works = [w for ws in samples["piles"].values() for w in ws]
    works += [w for lists in samples["rules"].values() for ws in lists.values() for w in ws]
    return {w["work_id"]: w for w in works}


def test_samples_hold_a_window_per_span_the_best_first(routed):
    _, _, samples, _ = routed
    works = _sampled(samples)
    assert sorted(works) == sorted(EXPECTED)
    for wid, w in works.items():
        spans = EXPECTED[wid]
        if BEST[wid] is not None:
            spans = [BEST[wid]] + [s for s in spans if s != BEST[wid]]
        assert [(c["field"], c["match"]) for c in w["contexts"]] == [(s["field"], s["text"]) for s in spans], wid
        assert w["context"] == (w["contexts"][0] if w["contexts"] else None)
    w2 = works["doi:10.1/w2"]["contexts"]
    assert w2 == [
        {"field": "title", "before": "", "match": "Replication", "after": " in rats: a failed attempt",
         "match_cut": False},
        {"field": "title", "before": "Replication in ", "match": "rats", "after": ": a failed attempt",
         "match_cut": False}]
    w3 = works["doi:10.1/w3"]["contexts"][1]
    assert (w3["before"], w3["match"], w3["after"]) == ("Éffets: the result ", "replicates", ".")


@pytest.fixture(scope="module")
def site(routed):
    result, _, _, root = routed
    render_site(root / "releases", root / "site", progress=False)
    return root / "site", result.release_id


def _marks(page, wid):
    row = parse_html(page.read_text(encoding="utf-8")).find("tr", id=work_anchor(wid))
    return [m.text() for m in row.find_all("mark")]


@pytest.mark.parametrize("path", ["release", "rule"])
def test_the_pages_highlight_every_condition(site, path):
    root, rid = site
    page = root / ((release_path(rid) if path == "release" else rule_path(rid, "animal-replication")) + ".html")
    assert _marks(page, "doi:10.1/w1") == ["Mice", "replicated"]
    assert _marks(page, "doi:10.1/w2") == ["Replication", "rats"]
    assert _marks(page, "doi:10.1/w3") == ["mice", "replicates"]
    if path == "release":
        assert _marks(page, "doi:10.1/w5") == ["trial", "protocol"]
        assert _marks(page, "doi:10.1/w4") == ["Erratum"]
        assert _marks(page, "doi:10.1/w6") == ["Cohort"]


def test_the_markdown_twin_highlights_every_condition(site):
    root, rid = site
    md = (root / (release_path(rid) + ".md")).read_text(encoding="utf-8")
    line = next(ln for ln in md.splitlines() if ln.startswith("| doi:10.1/w2 "))
    cell = MarkdownIt().renderInline(line.split(" | ")[-1])
    assert re.findall(r"<strong>(.*?)</strong>", cell) == ["Replication", "rats"]
