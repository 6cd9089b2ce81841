"""Novelty on the real SYNERGY v1 citation graph (skipped when ../shared/data is absent).

The graph is built with the ingest helper from the SYNERGY works (OpenAlex
records) and the citation edges CSV, holding out three works that are cited by
no other SYNERGY work, so they come back as new candidates without changing
the rest of the graph. The expected values were derived by hand from the CSV
(references of each candidate, which of them are SYNERGY works, their DOIs).
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from reporter.novelty import check_candidate, load_graph, openalex_events, parse_candidate, write_events

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "synergy_v1"
WORKS = DATA / "synergy_v1_works.jsonl.gz"
EDGES = DATA / "synergy_v1_citation_edges.csv.gz"

W = "https://openalex.org/"
JOINT_PAIN = "W3016428066"  # Donners_2021, doi:10.1111/hae.13965: 5 references, 4 of them SYNERGY works
CONTEXT_ILLNESS = "W2040453351"  # Sep_2021, doi:10.2466/pms.1995.80.2.595: 7 references, none in SYNERGY
PSYCHOMETRIC = "W2071273368"  # Nelson_2002, doi:10.1055/s-0031-1300030: no references
HELD_OUT = {JOINT_PAIN, CONTEXT_ILLNESS, PSYCHOMETRIC}
NEJM_2016, NEJM_2017 = "doi:10.1056/nejmoa1511769", "doi:10.1056/nejmoa1703068"
PHARMACOMETRIC, HAVEN_3 = "doi:10.1007/s40262-017-0616-3", "doi:10.1182/blood.2019001869"


@pytest.fixture(scope="module")
def synergy(tmp_path_factory):
    if not (WORKS.exists() and EDGES.exists()):
        pytest.skip(f"SYNERGY data not found in {DATA}")
    refs: dict[str, list[str]] = {}
    with gzip.open(EDGES, "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            refs.setdefault(row["source_openalex_id"], []).append(row["target_openalex_id"])
    works, held = [], {}
    with gzip.open(WORKS, "rt", encoding="utf-8") as f:
        for line in f:
            w = json.loads(line)
            work = {"id": w["openalex_id"], "doi": w["doi"], "title": w["title"],
                    "referenced_works": refs.get(w["openalex_id"], [])}
            if w["openalex_id"].removeprefix(W) in HELD_OUT:
                held[w["openalex_id"].removeprefix(W)] = work
            else:
                works.append(work)
    events = openalex_events(works, "2023-01-01T00:00:00Z")
    folder = tmp_path_factory.mktemp("synergy")
    write_events(folder / "events.jsonl", events)
    # The v0.1 mistake on real data: treat an empty reference list as unchecked.
    unchecked_zero = [e for e in events if not (e["table"] == "references_checked" and e["row"]["n_refs"] == 0)]
    write_events(folder / "zero_unchecked.jsonl", unchecked_zero)
    return {"graph": load_graph(folder / "events.jsonl"), "zero_unchecked": load_graph(folder / "zero_unchecked.jsonl"),
            "held": held}


def check(graph, keys, references=None, holdout=None):
    cand = {"kind": "paper", "keys": keys}
    if references is not None:
        cand["references"] = references
    if holdout is not None:
        cand["holdout_lom_ids"] = holdout
    return check_candidate(parse_candidate({"candidate": cand}, "<test>").candidate, graph).to_json()


def refs_of(synergy, work):
    return [f"openalex:{r.removeprefix(W)}" for r in synergy["held"][work]["referenced_works"]]


def brief(result):
    overlap = result["citation_overlap"]
    return (result["status"], result["verdict"], result["lom_id"], result["exact_key_match"]["matched_lom_id"],
            overlap["in_sample"]["shared_lom_ids"], overlap["holdout"]["shared_lom_ids"],
            result["holdout_applied"], len(result["coverage_gap"]), result["ingest_errors_blocking"])


def test_the_synergy_graph_as_built(synergy):
    counts = synergy["graph"].counts()
    # 7,234 work records are 7,233 distinct works (one sits in two reviews); three are held out.
    # 248,910 edges, less the 12 of the held-out works and 20 self-citations.
    assert counts == {"papers": 7230, "read": 7230, "citation_edges": 248878, "claims": 0,
                      "references_checked": 7230, "ingest_errors": 0, "coverage_gap": 0}


def test_a_new_paper_citing_synergy_works_is_neighborhood(synergy):
    result = check(synergy["graph"], {"doi": "10.1111/hae.13965"}, refs_of(synergy, JOINT_PAIN))
    shared = [PHARMACOMETRIC, NEJM_2016, NEJM_2017, HAVEN_3]  # its 5th reference, W2020123164, is a stub
    assert brief(result) == ("ok", "neighborhood", "doi:10.1111/hae.13965", None, shared, shared, False, 0, [])


def test_the_holdout_slice_decides(synergy):
    refs = refs_of(synergy, JOINT_PAIN)
    shared = [PHARMACOMETRIC, NEJM_2016, NEJM_2017, HAVEN_3]
    result = check(synergy["graph"], {"doi": "10.1111/hae.13965"}, refs, holdout=[NEJM_2016, NEJM_2017])
    assert brief(result) == ("ok", "neighborhood", "doi:10.1111/hae.13965", None, shared,
                             [PHARMACOMETRIC, HAVEN_3], True, 0, [])
    # Every shared node was used to form it (given by OpenAlex URL): shown, but not a novelty fail.
    holdout = [f"{W}W2400928773", f"{W}W2734287351", f"{W}W2772289727", f"{W}W2980900975"]
    result = check(synergy["graph"], {"doi": "10.1111/hae.13965"}, refs, holdout=holdout)
    assert brief(result) == ("ok", "novel", "doi:10.1111/hae.13965", None, shared, [], True, 0, [])


def test_a_paper_citing_only_stubs_is_novel(synergy):
    result = check(synergy["graph"], {"doi": "10.2466/pms.1995.80.2.595"}, refs_of(synergy, CONTEXT_ILLNESS), [])
    assert brief(result) == ("ok", "novel", "doi:10.2466/pms.1995.80.2.595", None, [], [], True, 0, [])


def test_synergy_works_are_duplicates_by_doi_or_openalex_id(synergy):
    result = check(synergy["graph"], {"doi": "HTTPS://DOI.ORG/10.1056/NEJMOA1511769"})
    shared = ["doi:10.1111/hae.12428", "doi:10.1111/jth.12474", "doi:10.1182/blood-2014-07-585737",
              "doi:10.1182/blood-2015-06-650226", "doi:10.1371/journal.pone.0057479"]
    assert brief(result) == ("ok", "duplicate", NEJM_2016, NEJM_2016, shared, shared, False, 0, [])
    # Chou_2004's "New generation anti-epileptics for facial pain and headache" has no DOI.
    result = check(synergy["graph"], {"openalex": "w2257885467"}, holdout=["openalex:W1918087998"])
    assert brief(result) == ("ok", "duplicate", "openalex:W2257885467", "openalex:W2257885467",
                             ["openalex:W1918087998"], [], True, 0, [])


def test_empty_reference_lists_must_be_recorded_as_checked_zeros(synergy):
    keys = {"doi": "10.1055/s-0031-1300030"}
    assert synergy["held"][PSYCHOMETRIC]["referenced_works"] == []
    assert brief(check(synergy["graph"], keys, [], [])) == (
        "ok", "novel", "doi:10.1055/s-0031-1300030", None, [], [], True, 0, [])
    # Without the checked zeros, 1,020 works have no coverage of their own; 241 of them are
    # cited by a checked SYNERGY work (in-edge coverage), the other 779 are the gap.
    result = check(synergy["zero_unchecked"], keys, [], [])
    assert brief(result) == ("insufficient_edges", "unknown", "doi:10.1055/s-0031-1300030", None, [], [], True,
                             779, [])
    assert result["coverage_gap"][:3] == ["doi:10.1001/archneur.59.2.195", "doi:10.1001/jama.288.8.948-jmn0828-3-1",
                                          "doi:10.1002/(sici)1522-7154(1996)2:1<53::aid-anxi9>3.0.co;2-e"]
