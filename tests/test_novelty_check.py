"""Novelty against the ingested graph: the worked example, rules 1-4, the seed's exceptions, the command."""

from __future__ import annotations

import gc
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.cli import main
from reporter.errors import InputError
from reporter.novelty import (check_candidate, load_graph, load_novelty_results, openalex_events,
                              parse_candidate, parse_events, write_events)
from reporter.ids import normalize_lom_id

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "novelty"
WORKED = FIXTURES / "worked_example"

RPM, LU, ZHENG, DISCOGEN = "arxiv:2608.13940", "arxiv:2408.06292", "arxiv:2601.05930", "arxiv:2603.17863"
OSC_2015 = "doi:10.1126/science.aac4716"
THURSTONE = "doi:10.1037/h0070288"
MILLER_GOLDBERG = "doi:10.1037/0022-3514.59.6.1216"
IOANNIDIS = {"doi": "10.1371/journal.pmed.0020124"}
CLIMATE_FEVER = {"arxiv": "2012.00614"}
UVA_DARE_STUB = "openalex:W3017344694"
SCIFACT = "arxiv:2004.14974"
UMAP, ALBERT = "arxiv:1802.03426", "arxiv:1909.11942"


# ---- tiny builders -------------------------------------------------------

def paper(lom_id, read=True, **keys):
    row = {"lom_id": lom_id, "doi": keys.get("doi"), "arxiv": keys.get("arxiv"),
           "openalex": keys.get("openalex"), "s2_paper_id": keys.get("s2_paper_id"), "title": None, "read": read}
    return {"op": "upsert", "table": "paper", "row": row}


def edge(src, dst):
    return {"op": "upsert", "table": "citation_edge", "row": {"src": src, "dst": dst}}


def claim(claim_id, about, statement):
    return {"op": "upsert", "table": "claim",
            "row": {"claim_id": claim_id, "about_lom_id": about, "statement": statement}}


def checked(lom_id, n_refs=0, status="ok"):
    return {"op": "upsert", "table": "references_checked",
            "row": {"lom_id": lom_id, "source": "openalex", "checked_ts": "2026-09-03T00:00:00Z",
                    "n_refs": n_refs, "status": status}}


def error(lom_id, lookup, scheme="s2", http_status=429):
    return {"op": "upsert", "table": "ingest_error",
            "row": {"lom_id": lom_id, "scheme": scheme, "http_status": http_status, "lookup": lookup}}


def graph_of(*events):
    return parse_events([json.dumps(e) for e in events], "<test>")


def candidate(kind="paper", keys=None, statement=None, holdout=None, references=None):
    obj = {"kind": kind, "keys": keys or {}, "statement": statement}
    if holdout is not None:
        obj["holdout_lom_ids"] = holdout
    if references is not None:
        obj["references"] = references
    return parse_candidate({"candidate": obj}, "<test>").candidate


def check(graph, **kwargs):
    return check_candidate(candidate(**kwargs), graph).to_json()


def overlap(in_sample, holdout):
    return {"in_sample": {"n_shared": len(in_sample), "shared_lom_ids": in_sample},
            "holdout": {"n_shared": len(holdout), "shared_lom_ids": holdout}}


def output(status, lom_id, verdict, matched=None, in_sample=(), holdout=(), gap=(), blocking=(),
           holdout_applied=True):
    return {"status": status, "lom_id": lom_id, "verdict": verdict,
            "exact_key_match": {"hit": matched is not None, "matched_lom_id": matched},
            "citation_overlap": overlap(list(in_sample), list(holdout)),
            "coverage_gap": list(gap), "ingest_errors_blocking": list(blocking),
            "embedding": {"used": False}, "holdout_applied": holdout_applied, "not_a_ranker": True}


def write_jsonl(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


# ---- the seed's worked example ----------------------------------------------

SEED_EXPECTED = {
    "status": "ok",
    "lom_id": "arxiv:2608.13940",
    "verdict": "duplicate",
    "exact_key_match": {"hit": True, "matched_lom_id": "arxiv:2608.13940"},
    "citation_overlap": {"in_sample": {"n_shared": 1, "shared_lom_ids": ["arxiv:2408.06292"]},
                         "holdout": {"n_shared": 0, "shared_lom_ids": []}},
    "ingest_errors_blocking": [],
    "embedding": {"used": False},
    "holdout_applied": True,
    # The seed's output predates these two fields; novelty.md fixes their values here.
    "coverage_gap": [],
    "not_a_ranker": True,
}


def test_worked_example_every_field_equals_the_seed(capsys):
    code = main(["novelty", "--candidate", str(WORKED / "candidate.json"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.count("\n") == 1
    result = json.loads(out)
    assert result == SEED_EXPECTED
    assert result == json.loads((WORKED / "expected.json").read_text())


def test_worked_example_stored_429s_do_not_block_and_stubs_do_not_count():
    graph = load_graph(WORKED / "events.jsonl")
    # Both stored S2 429s are on the graph, one of them on the candidate itself.
    assert [e.lom_id for e in graph.ingest_errors] == [LU, RPM]
    # RPM's PDF also cites Zheng and DiscoGen: stubs, so n_shared stays 1.
    assert graph.out_edges[RPM] == frozenset({LU, ZHENG, DISCOGEN})
    result = check(graph, keys={"arxiv": "2608.13940", "openalex": "W7203633772"}, holdout=[LU])
    assert result == SEED_EXPECTED


def test_worked_example_not_yet_ingested_is_novel_because_lu_is_holdout():
    """The seed: citing the paper you hill-climbed on is not by itself a novelty fail."""
    graph = graph_of(paper(LU, arxiv="2408.06292"), checked(LU, n_refs=0))
    refs = [LU, ZHENG, DISCOGEN]
    assert check(graph, keys={"arxiv": "2608.13940"}, references=refs, holdout=[LU]) == output(
        "ok", RPM, "novel", in_sample=[LU], holdout=[])
    # ... and neighborhood as soon as another shared read node exists.
    graph = graph_of(paper(LU, arxiv="2408.06292"), checked(LU, n_refs=0),
                     paper(ZHENG, arxiv="2601.05930"), checked(ZHENG, n_refs=0))
    assert check(graph, keys={"arxiv": "2608.13940"}, references=refs, holdout=[LU]) == output(
        "ok", RPM, "neighborhood", in_sample=[LU, ZHENG], holdout=[ZHENG])


# ---- rule 1: exact key match -------------------------------------------------

@pytest.mark.parametrize("keys", [
    {"doi": "https://doi.org/10.1037/H0070288"},
    {"doi": "doi:10.1037/h0070288 "},
    {"arxiv": "9901.00001v3"},
    {"openalex": "https://openalex.org/w2008620264"},
    {"doi": "10.9999/other", "s2_paperId": "649DEF34F8BE52C8B66281AF98AE884C09AEF38B"},
])
def test_rule1_keys_are_compared_scheme_by_scheme(keys):
    graph = graph_of(paper(THURSTONE, doi="10.1037/H0070288", arxiv="9901.00001",
                           openalex="W2008620264", s2_paper_id="649def34f8be52c8b66281af98ae884c09aef38b"),
                     checked(THURSTONE))
    result = check(graph, keys=keys)
    # The matched paper's lom_id replaces the candidate's derived one.
    assert result == output("ok", THURSTONE, "duplicate", matched=THURSTONE, holdout_applied=False)


def test_rule1_a_matched_paper_lends_its_edges():
    graph = graph_of(paper(RPM, arxiv="2608.13940", doi="10.5555/rpm"), paper(LU), checked(LU), checked(RPM),
                     edge(RPM, LU))
    result = check(graph, keys={"doi": "10.5555/RPM"})
    assert result == output("ok", RPM, "duplicate", matched=RPM, in_sample=[LU], holdout=[LU],
                            holdout_applied=False)


def test_rule1_for_claims_compares_collapsed_lowercased_statements_only():
    graph = graph_of(paper(LU), checked(LU), claim("c1", LU, "LLM agents can  write\tpapers."))
    result = check(graph, kind="claim", keys={"arxiv": "2608.13940"},
                   statement="  llm AGENTS can write\npapers. ", holdout=[])
    assert result == output("ok", RPM, "duplicate", matched=LU)
    # Same paper as the claim's subject, different statement: not a duplicate.
    other = check(graph, kind="claim", keys={"arxiv": "2408.06292"}, statement="LLM agents cannot write papers.",
                  holdout=[])
    assert other == output("ok", LU, "novel")


# ---- rule 2: citation-neighbourhood overlap ----------------------------------

def test_rule2_holdout_count_decides_when_a_holdout_is_given():
    graph = graph_of(paper(LU), paper(SCIFACT), checked(LU), checked(SCIFACT))
    result = check(graph, keys={"arxiv": "2608.13940"}, references=[LU, SCIFACT], holdout=[LU])
    assert result == output("ok", RPM, "neighborhood", in_sample=[SCIFACT, LU], holdout=[SCIFACT])


def test_rule2_without_holdout_in_sample_decides_and_says_so():
    graph = graph_of(paper(LU), checked(LU))
    result = check(graph, keys={"arxiv": "2608.13940"}, references=[LU])
    assert result == output("ok", RPM, "neighborhood", in_sample=[LU], holdout=[LU], holdout_applied=False)


def test_rule2_overlap_only_through_holdout_is_shown_but_not_a_novelty_fail():
    graph = graph_of(paper(LU), checked(LU))
    result = check(graph, keys={"arxiv": "2608.13940"}, references=[LU], holdout=["arxiv:2408.06292v2"])
    assert result == output("ok", RPM, "novel", in_sample=[LU], holdout=[])


def test_rule2_edges_already_in_the_graph_from_the_candidate_count_as_references():
    # The candidate's PDF bibliography was ingested as edges, without a paper row for it.
    graph = graph_of(paper(LU), checked(LU), edge(RPM, LU))
    result = check(graph, keys={"arxiv": "2608.13940v1"}, holdout=[])
    assert result == output("ok", RPM, "neighborhood", in_sample=[LU], holdout=[LU])


def test_rule2_claim_bearing_nodes_count_even_when_not_read():
    graph = graph_of(paper(THURSTONE, read=False), claim("t1", THURSTONE, "Comparative judgement."),
                     paper(MILLER_GOLDBERG), checked(MILLER_GOLDBERG, n_refs=1), edge(MILLER_GOLDBERG, THURSTONE))
    result = check(graph, keys={"doi": "10.1/new"}, references=[THURSTONE], holdout=[])
    assert result == output("ok", "doi:10.1/new", "neighborhood", in_sample=[THURSTONE], holdout=[THURSTONE])


def test_v03_a_stub_hop_is_not_neighbourhood_even_when_a_read_paper_cites_it():
    """Climate-FEVER -> UvA-DARE stub <- SciFact: the shared node is a stub, so no hop."""
    graph = graph_of(paper(SCIFACT), checked(SCIFACT, n_refs=1), claim("s1", SCIFACT, "SciFact claim"),
                     edge(SCIFACT, UVA_DARE_STUB),
                     paper(UMAP, read=False), paper(ALBERT, read=False))
    refs = [UVA_DARE_STUB, UMAP, ALBERT]
    assert check(graph, keys=CLIMATE_FEVER, references=refs, holdout=[]) == output(
        "ok", "arxiv:2012.00614", "novel")
    # The contested claim likewise scores novel against the claim graph.
    assert check(graph, kind="claim", keys=CLIMATE_FEVER, statement="Climate change is not real.",
                 references=refs, holdout=[]) == output("ok", "arxiv:2012.00614", "novel")
    # ...until a real read FEVER edge lands.
    fever = "doi:10.18653/v1/n18-1074"
    graph = graph_of(paper(SCIFACT), checked(SCIFACT, n_refs=1), paper(fever), checked(fever))
    assert check(graph, keys=CLIMATE_FEVER, references=[*refs, fever], holdout=[]) == output(
        "ok", "arxiv:2012.00614", "neighborhood", in_sample=[fever], holdout=[fever])


# ---- rule 3: the coverage gate -----------------------------------------------

def test_v01_an_unchecked_read_node_blocks_novel():
    """Ioannidis looked novel while the OSC replication paper had no recorded references."""
    graph = graph_of(paper(OSC_2015), paper(THURSTONE), checked(THURSTONE))
    result = check(graph, keys=IOANNIDIS, holdout=[])
    assert result == output("insufficient_edges", "doi:10.1371/journal.pmed.0020124", "unknown", gap=[OSC_2015])


def test_v02_a_checked_zero_is_coverage():
    graph = graph_of(paper(THURSTONE), checked(THURSTONE, n_refs=0))
    assert check(graph, keys=IOANNIDIS, holdout=[]) == output("ok", "doi:10.1371/journal.pmed.0020124", "novel")


def test_v02_out_degree_zero_is_not_a_gap_when_a_checked_paper_cites_it():
    """Thurstone can never supply references; an in-edge from a checked paper covers it."""
    graph = graph_of(paper(THURSTONE), claim("t1", THURSTONE, "a"), claim("t2", THURSTONE, "b"),
                     paper(MILLER_GOLDBERG), checked(MILLER_GOLDBERG, n_refs=1), edge(MILLER_GOLDBERG, THURSTONE))
    assert graph.coverage_gap == ()
    assert check(graph, keys=IOANNIDIS, holdout=[]) == output("ok", "doi:10.1371/journal.pmed.0020124", "novel")


@pytest.mark.parametrize("citing_check", [None, "failed"])
def test_v02_an_in_edge_from_an_unchecked_or_failed_paper_is_not_coverage(citing_check):
    events = [paper(THURSTONE), paper(MILLER_GOLDBERG, read=False), edge(MILLER_GOLDBERG, THURSTONE)]
    if citing_check:
        events.append(checked(MILLER_GOLDBERG, n_refs=None, status=citing_check))
    result = check(graph_of(*events), keys=IOANNIDIS, holdout=[])
    assert result == output("insufficient_edges", "doi:10.1371/journal.pmed.0020124", "unknown", gap=[THURSTONE])


def test_degree_is_never_coverage():
    # Many out-edges and many in-edges, but no references_checked row anywhere.
    events = [paper(MILLER_GOLDBERG), paper(THURSTONE, read=False)]
    events += [edge(MILLER_GOLDBERG, f"openalex:W{i}") for i in range(5)]
    events += [edge(f"openalex:W{i}", MILLER_GOLDBERG) for i in range(10, 30)]
    result = check(graph_of(*events), keys=IOANNIDIS, holdout=[])
    assert result == output("insufficient_edges", "doi:10.1371/journal.pmed.0020124", "unknown",
                            gap=[MILLER_GOLDBERG])


def test_a_failed_check_stays_a_gap_and_the_gap_is_sorted():
    graph = graph_of(paper(THURSTONE), checked(THURSTONE, n_refs=None, status="failed"), paper(OSC_2015),
                     paper(LU, read=False), claim("c", LU, "x"))
    assert graph.coverage_gap == (LU, THURSTONE, OSC_2015)
    assert check(graph, keys=IOANNIDIS, holdout=[])["coverage_gap"] == [LU, THURSTONE, OSC_2015]


def test_coverage_gap_is_empty_unless_rule3_decides():
    graph = graph_of(paper(OSC_2015), paper(LU), checked(LU))
    assert check(graph, keys={"arxiv": "2408.06292"})["coverage_gap"] == []  # duplicate
    assert check(graph, keys=IOANNIDIS, references=[LU], holdout=[])["coverage_gap"] == []  # neighborhood


# ---- fail closed: stored ingest errors -----------------------------------------

def test_a_stored_429_on_a_neighbour_does_not_block():
    graph = graph_of(paper(LU), checked(LU), error(LU, "ARXIV:2408.06292"))
    assert check(graph, keys={"arxiv": "2608.13940"}, references=[LU]) == output(
        "ok", RPM, "neighborhood", in_sample=[LU], holdout=[LU], holdout_applied=False)
    assert check(graph, keys={"arxiv": "2608.13940"}, references=[LU], holdout=[LU]) == output(
        "ok", RPM, "novel", in_sample=[LU], holdout=[])


@pytest.mark.parametrize("stored", [error(RPM, "ARXIV:2608.13940"), error("doi:10.5555/elsewhere", "ARXIV:2608.13940v2"),
                                    error(RPM, None, scheme="openalex", http_status=None)])
def test_a_stored_error_on_the_candidate_itself_blocks_when_no_key_matched(stored):
    graph = graph_of(paper(LU), checked(LU), stored)
    row = stored["row"]
    assert check(graph, keys={"arxiv": "2608.13940"}, references=[LU], holdout=[]) == output(
        "lookup_failed", RPM, "unknown", in_sample=[LU], holdout=[LU],
        blocking=[{"scheme": row["scheme"], "http_status": row["http_status"], "lookup": row["lookup"]}])


# ---- the graph file ------------------------------------------------------------

def test_later_upserts_win_per_key():
    graph = graph_of(paper(LU, read=False), paper(LU, read=True), checked(LU, n_refs=3),
                     checked(LU, n_refs=None, status="failed"), claim("c1", LU, "old"), claim("c1", SCIFACT, "new"),
                     error(LU, "ARXIV:2408.06292", http_status=429), error(LU, "ARXIV:2408.06292", http_status=404))
    assert graph.papers[LU].read is True
    assert graph.references_checked[LU].status == "failed"
    assert (graph.claims["c1"].about_lom_id, graph.claims["c1"].statement) == (SCIFACT, "new")
    assert [(e.lom_id, e.http_status) for e in graph.ingest_errors] == [(LU, 404)]
    assert graph.coverage_gap == (SCIFACT, LU)


def test_edges_written_with_a_papers_key_end_at_its_lom_id():
    graph = graph_of(paper(THURSTONE, openalex="W2008620264"), edge("https://doi.org/10.1/X", "openalex:w2008620264"))
    assert dict(graph.out_edges) == {"doi:10.1/x": frozenset({THURSTONE})}


@pytest.mark.parametrize("line, message", [
    ('{"op": "upsert", "table": "paper", "row": {"lom_id": "x"}', "not valid JSON"),
    ('["upsert"]', "an event must be a JSON object"),
    ('{"op": "delete", "table": "paper", "row": {"lom_id": "x"}}', "field 'op' must be 'upsert'"),
    ('{"op": "upsert", "table": "papers", "row": {"lom_id": "x"}}', "unknown table 'papers'"),
    ('{"op": "upsert", "table": "paper", "row": {"doi": "10.1/x"}}', "field 'lom_id' must be a non-empty string"),
    ('{"op": "upsert", "table": "paper", "row": {"lom_id": "x", "read": "yes"}}', "field 'read' must be true or false"),
    ('{"op": "upsert", "table": "citation_edge", "row": {"src": "a"}}', "fields 'src' and 'dst'"),
    # Compact edge lines, as write_events writes them, that are not edges the fast path may fold (issue 35, item 5)
    ('{"op":"upsert","row":{"dst":"a","src":" "},"table":"citation_edge"}', "fields 'src' and 'dst'"),
    ('{"op":"upsert","row":{"dst":"a","src":"\\u00a0"},"table":"citation_edge"}', "fields 'src' and 'dst'"),
    ('{"op":"upsert","row":{"dst":"a","src":7},"table":"citation_edge"}', "fields 'src' and 'dst'"),
    ('{"op":"upsert","row":["a","b"],"table":"citation_edge"}', "field 'row' must be an object"),
    ('{"op":"delete","row":{"dst":"a","src":"b"},"table":"citation_edge"}', "field 'op' must be 'upsert'"),
    ('{"op":"upsert","row":{"dst":"a","src":"b"},"table":"citation_edge"} x', "not valid JSON"),
    ('{"op":"upsert","row":{"dst":"a","src":"b"},"table":"citation_edge"', "not valid JSON"),
    ('{"op": "upsert", "table": "references_checked", "row": {"lom_id": "a", "source": "s", '
     '"checked_ts": "t", "n_refs": -1, "status": "ok"}}', "field 'n_refs' must be a non-negative integer"),
    ('{"op": "upsert", "table": "references_checked", "row": {"lom_id": "a", "source": "s", '
     '"checked_ts": "t", "n_refs": 0, "status": "maybe"}}', "field 'status' must be one of ok, failed"),
])
def test_a_malformed_line_is_rejected_with_its_line_number(tmp_path, line, message):
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(paper(LU)) + "\n\n" + line + "\n" + json.dumps(paper(RPM)) + "\n")
    with pytest.raises(InputError) as info:
        load_graph(path)
    assert str(info.value).startswith(f"{path}: line 3: ")
    assert message in str(info.value)
    assert gc.isenabled()  # the collector, paused while the fold builds, runs again after a refusal


def test_edge_lines_fold_alike_in_every_form_they_are_written(tmp_path):
    """Edges written compactly (write_events, folded on the fast path) and in any other JSON form (spaces, other
    key order, escapes, CRLF, leading blanks: the general path) fold into the same canonical edges: each end
    normalised and moved to the lom_id of the paper whose key it is, self-citations after that dropped, repeats
    one edge (issue 35, item 5)."""
    events = [paper(THURSTONE, openalex="W2008620264"), paper(LU, doi="10.9/lu"),
              edge("https://doi.org/10.1/X", "openalex:w2008620264"), edge("doi:10.1/x", "openalex:W2008620264"),
              edge(THURSTONE, "openalex:W2008620264"), edge("doi:10.9/LU", "openalex:W1"),
              edge(LU, "openalex:W1"), edge(LU, "openalex:W2"), edge(" openalex:W3", "doi:10.9/lu")]
    compact = tmp_path / "compact.jsonl"
    write_events(compact, events)
    spelled = []
    for n, e in enumerate(events):
        text = json.dumps(e, ensure_ascii=n % 2 == 0, separators=(", ", ": ") if n % 3 else (",", ":"))
        spelled.append((" " if n % 4 == 1 else "") + text.replace("W", "\\u0057", 1 if n % 2 else 0))
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes(("\r\n".join(spelled) + "\r\n\n").encode())
    expected = {"doi:10.1/x": frozenset({THURSTONE}), LU: frozenset({"openalex:W1", "openalex:W2"}),
                "openalex:W3": frozenset({LU})}
    for path in (compact, loose):
        graph = load_graph(path)
        assert dict(graph.out_edges) == expected, path
        assert graph.n_edges == 4 and graph.n_events == len(events)


def test_a_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(json.dumps(paper(LU)).encode() + b"\n" + b'{"op": "upsert", "\xff"}\n')
    with pytest.raises(InputError, match=r"line 2: not UTF-8"):
        load_graph(path)


def test_the_cache_is_rebuilt_exactly_when_the_jsonl_changes(tmp_path):
    path = write_jsonl(tmp_path / "events.jsonl", [paper(LU), checked(LU)])
    first = load_graph(path)
    assert load_graph(path) is first
    write_jsonl(path, [paper(LU), checked(LU)])  # same bytes rewritten: still the cached graph
    assert load_graph(path) is first
    with open(path, "a") as f:
        f.write(json.dumps(paper(OSC_2015)) + "\n")
    second = load_graph(path)
    assert second is not first and second.sha256 != first.sha256
    assert sorted(second.papers) == [LU, OSC_2015]
    assert list(tmp_path.iterdir()) == [path]  # nothing written beside the JSONL


# ---- candidates ---------------------------------------------------------------

@pytest.mark.parametrize("obj, message", [
    ({}, "'candidate' must be an object"),
    ({"candidate": {"kind": "idea", "keys": {"doi": "10.1/x"}}}, "candidate.kind must be one of paper, claim"),
    ({"candidate": {"kind": "paper", "keys": {"s2_paperId": "abc"}}}, "at least one of doi, arxiv, openalex"),
    ({"candidate": {"kind": "paper", "keys": {"doi": 10}}}, "candidate.keys.doi must be a string or null"),
    ({"candidate": {"kind": "claim", "keys": {"doi": "10.1/x"}, "statement": " "}}, "non-empty candidate.statement"),
    ({"candidate": {"kind": "paper", "keys": {"doi": "10.1/x"}, "holdout_lom_ids": "arxiv:1"}}, "holdout_lom_ids"),
    ({"candidate": {"kind": "paper", "keys": {"doi": "10.1/x"}}, "graph": {"events": "x"}}, "events_jsonl"),
])
def test_a_bad_candidate_names_the_field(obj, message):
    with pytest.raises(InputError, match=message):
        parse_candidate(obj, "cand.json")


def test_lom_id_is_derived_doi_then_arxiv_then_openalex():
    assert candidate(keys={"openalex": "W1", "arxiv": "2101.00001v2"}).lom_id == "arxiv:2101.00001"
    assert candidate(keys={"openalex": "W1", "doi": "HTTPS://DOI.ORG/10.1/AB"}).lom_id == "doi:10.1/ab"
    assert candidate(keys={"openalex": "https://openalex.org/w12"}).lom_id == "openalex:W12"
    assert normalize_lom_id("https://arxiv.org/abs/2101.00001v3") == "arxiv:2101.00001"
    assert normalize_lom_id("pmid:123") == "pmid:123"


# ---- properties ----------------------------------------------------------------

NODES = [f"openalex:W{i}" for i in range(8)]


@st.composite
def small_graphs(draw):
    events = []
    for node in draw(st.lists(st.sampled_from(NODES), unique=True)):
        events.append(paper(node, read=draw(st.booleans())))
    for src, dst in draw(st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)), max_size=20)):
        events.append(edge(src, dst))
    for i, about in enumerate(draw(st.lists(st.sampled_from(NODES), max_size=3))):
        events.append(claim(f"c{i}", about, f"statement {i}"))
    for node in draw(st.lists(st.sampled_from(NODES), unique=True, max_size=8)):
        events.append(checked(node, n_refs=0, status=draw(st.sampled_from(["ok", "failed"]))))
    return events


@settings(max_examples=60, deadline=None)
@given(events=small_graphs(), refs=st.lists(st.sampled_from(NODES), max_size=6),
       holdout=st.none() | st.lists(st.sampled_from(NODES), max_size=4), seed=st.integers(0, 1000))
def test_properties_of_every_verdict(events, refs, holdout, seed):
    graph = graph_of(*events)
    result = check(graph, keys={"doi": "10.1/candidate"}, references=refs, holdout=holdout)
    in_sample = result["citation_overlap"]["in_sample"]["shared_lom_ids"]
    held = result["citation_overlap"]["holdout"]["shared_lom_ids"]
    assert set(held) <= set(in_sample) and in_sample == sorted(in_sample) and held == sorted(held)
    assert result["holdout_applied"] is (holdout is not None)
    assert (result["verdict"] == "neighborhood") == bool(held if holdout is not None else in_sample)
    assert (result["status"] == "insufficient_edges") == bool(result["coverage_gap"])
    if result["verdict"] == "novel":
        assert graph.coverage_gap == () and result["status"] == "ok"
    # Events with distinct keys commute: any order gives the same verdict.
    last = {}
    for e in events:
        row = e["row"]
        key = (e["table"], row.get("lom_id"), row.get("src"), row.get("dst"), row.get("claim_id"))
        last.pop(key, None)
        last[key] = e
    shuffled = list(last.values())
    random.Random(seed).shuffle(shuffled)
    assert check(graph_of(*shuffled), keys={"doi": "10.1/candidate"}, references=refs, holdout=holdout) == result


# ---- the ingest helper ---------------------------------------------------------

def test_openalex_works_become_events_with_checked_rows_for_read_references():
    works = [
        {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1/A", "title": "A",
         "referenced_works": ["https://openalex.org/W2", "https://openalex.org/W9", "https://openalex.org/W9"]},
        {"id": "https://openalex.org/W2", "doi": None, "title": "B", "referenced_works": []},
        {"id": "https://openalex.org/W3", "doi": None, "display_name": "C"},
    ]
    events = openalex_events(works, "2026-09-03T00:00:00Z")
    p = lambda lom, doi, w, title, read: {"op": "upsert", "table": "paper", "row": {  # noqa: E731
        "lom_id": lom, "doi": doi, "arxiv": None, "openalex": w, "s2_paper_id": None, "title": title, "read": read}}
    c = lambda lom, n: {"op": "upsert", "table": "references_checked", "row": {  # noqa: E731
        "lom_id": lom, "source": "openalex", "checked_ts": "2026-09-03T00:00:00Z", "n_refs": n, "status": "ok"}}
    assert events == [
        p("doi:10.1/a", "10.1/a", "W1", "A", True), p("openalex:W2", None, "W2", "B", True),
        p("openalex:W3", None, "W3", "C", False),
        edge("doi:10.1/a", "openalex:W2"), edge("doi:10.1/a", "openalex:W9"),
        c("doi:10.1/a", 2), c("openalex:W2", 0),
    ]
    graph = graph_of(*events)
    # W2 is a checked zero; W3 is unread, so it needs no coverage; W9 is a stub.
    assert graph.coverage_gap == ()
    assert check(graph, keys={"doi": "10.2/new"}, references=["openalex:W9", "openalex:W3"], holdout=[]) == output(
        "ok", "doi:10.2/new", "novel")
    assert check(graph, keys={"openalex": "W2"}, references=[])["verdict"] == "duplicate"


def test_novelty_ingest_command_writes_events_the_check_reads(tmp_path, capsys):
    works = tmp_path / "works.json"
    works.write_text(json.dumps({"results": [
        {"id": "https://openalex.org/W1", "doi": None, "title": "A", "referenced_works": ["https://openalex.org/W2"]},
        {"id": "https://openalex.org/W2", "doi": None, "title": "B", "referenced_works": []}]}))
    out = tmp_path / "graph" / "events.jsonl"
    assert main(["novelty-ingest", "--works", str(works), "--out", str(out),
                 "--checked-ts", "2026-09-03T00:00:00Z"]) == 0
    assert capsys.readouterr().out == (f"wrote 5 events to {out}: citation_edge 1, paper 2, "
                                       f"references_checked 2\n")
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"doi": "10.3/c"},
                                              "references": ["openalex:W2"], "holdout_lom_ids": []}}))
    assert main(["novelty", "--candidate", str(cand), "--graph", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == output(
        "ok", "doi:10.3/c", "neighborhood", in_sample=["openalex:W2"], holdout=["openalex:W2"])
    assert main(["novelty-ingest", "--works", str(works), "--out", str(out), "--checked-ts", "yesterday"]) == 2
    assert "--checked-ts 'yesterday' is not an ISO 8601 timestamp" in capsys.readouterr().err


# ---- the command ----------------------------------------------------------------

def test_novelty_help_has_an_example(capsys):
    with pytest.raises(SystemExit) as info:
        main(["novelty", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "reporter novelty --candidate examples/novelty/candidate.json --json" in text
    assert "--batch" in text and "--resolver" in text


def test_graph_flag_wins_and_a_relative_entry_is_read_from_the_candidate_folder(tmp_path, capsys):
    write_jsonl(tmp_path / "a.jsonl", [paper(LU), checked(LU)])
    write_jsonl(tmp_path / "b.jsonl", [paper(RPM, arxiv="2608.13940"), checked(RPM)])
    (tmp_path / "sub").mkdir()
    cand = tmp_path / "sub" / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"arxiv": "2608.13940"}},
                                "graph": {"events_jsonl": "../a.jsonl"}}))
    assert main(["novelty", "--candidate", str(cand), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "novel"
    assert main(["novelty", "--candidate", str(cand), "--graph", str(tmp_path / "b.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "duplicate"


def test_the_command_exits_0_whatever_the_verdict(tmp_path, capsys):
    graph = write_jsonl(tmp_path / "g.jsonl", [paper(OSC_2015), error(RPM, "ARXIV:2608.13940")])
    for keys, status in [({"arxiv": "2608.13940"}, "lookup_failed"), ({"doi": "10.9/x"}, "insufficient_edges"),
                         ({"doi": "10.1126/SCIENCE.AAC4716"}, "ok")]:
        cand = tmp_path / "c.json"
        cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": keys}}))
        assert main(["novelty", "--candidate", str(cand), "--graph", str(graph), "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["status"] == status and err == ""


@pytest.mark.parametrize("setup, message", [
    ("missing_candidate", "candidate file not found"),
    ("bad_json", "not valid JSON"),
    ("no_keys", "candidate.keys needs at least one of doi, arxiv, openalex"),
    ("missing_graph", "graph events file not found"),
    ("bad_graph", "line 2: field 'op' must be 'upsert'"),
    ("no_graph", "no graph to check against"),
])
def test_unreadable_input_exits_2_with_a_clear_message(tmp_path, capsys, setup, message):
    cand = tmp_path / "cand.json"
    graph = write_jsonl(tmp_path / "g.jsonl", [paper(LU), {"op": "put", "table": "paper", "row": {}}])
    body = {"candidate": {"kind": "paper", "keys": {"doi": "10.1/x"}}}
    argv = ["novelty", "--candidate", str(cand), "--json"]
    if setup == "bad_json":
        cand.write_text("{not json")
    elif setup == "no_keys":
        cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {}}}))
    elif setup != "missing_candidate":
        cand.write_text(json.dumps(body))
    if setup == "missing_graph":
        argv += ["--graph", str(tmp_path / "nope.jsonl")]
    elif setup == "bad_graph":
        argv += ["--graph", str(graph)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("reporter novelty: error: ") and message in err


def test_batch_writes_jsonl_results_the_site_can_load(tmp_path, capsys):
    graph = write_jsonl(tmp_path / "g.jsonl", [paper(LU), checked(LU), paper(RPM, arxiv="2608.13940"),
                                               checked(RPM, n_refs=1), edge(RPM, LU)])
    batch = tmp_path / "cands.jsonl"
    lines = [{"id": "rpm", "candidate": {"kind": "paper", "keys": {"arxiv": "2608.13940"}, "holdout_lom_ids": [LU]}},
             {"candidate": {"kind": "paper", "keys": {"doi": "10.1/new"}, "references": [LU]}},
             {"id": "claim", "candidate": {"kind": "claim", "keys": {"arxiv": "2408.06292"}, "statement": "S",
                                           "holdout_lom_ids": []}}]
    batch.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    out = tmp_path / "site-data" / "novelty.jsonl"
    assert main(["novelty", "--batch", str(batch), "--graph", str(graph), "--out", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert stdout == ("checked 3 candidates: duplicate 1, neighborhood 1, novel 1, unknown 0 "
                      f"(lookup_failed 0, insufficient_edges 0)\nresults: {out}\n")
    assert stderr.splitlines()[-1].startswith("novelty: 3/3 candidates (100%")
    rows = load_novelty_results(out)
    sha = load_graph(graph).sha256
    assert [(r["line"], r["id"], r["result"]["verdict"]) for r in rows] == [
        (1, "rpm", "duplicate"), (2, None, "neighborhood"), (3, "claim", "novel")]
    assert rows[1] == {
        "schema_version": 1, "line": 2, "id": None,
        "candidate": {"kind": "paper", "keys": {"doi": "10.1/new", "arxiv": None, "openalex": None, "s2_paperId": None},
                      "statement": None, "holdout_lom_ids": None, "references": [LU]},
        "graph": {"events_jsonl": str(graph), "sha256": sha},
        "result": output("ok", "doi:10.1/new", "neighborhood", in_sample=[LU], holdout=[LU], holdout_applied=False)}
    first = out.read_bytes()
    assert main(["novelty", "--batch", str(batch), "--graph", str(graph), "--json"]) == 0
    assert capsys.readouterr().out.encode() == first  # --json prints the same lines, byte for byte


def test_batch_with_a_bad_line_exits_2_and_writes_nothing(tmp_path, capsys):
    graph = write_jsonl(tmp_path / "g.jsonl", [paper(LU)])
    batch = tmp_path / "cands.jsonl"
    batch.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"doi": "10.1/a"}}}) + "\n"
                     + json.dumps({"candidate": {"kind": "paper", "keys": {}}}) + "\n")
    out = tmp_path / "novelty.jsonl"
    assert main(["novelty", "--batch", str(batch), "--graph", str(graph), "--out", str(out)]) == 2
    assert f"{batch}: line 2: candidate.keys needs at least one of" in capsys.readouterr().err
    assert not out.exists()


def test_load_novelty_results_names_a_bad_line(tmp_path):
    path = tmp_path / "novelty.jsonl"
    path.write_text('{"schema_version": 1}\n')
    with pytest.raises(InputError, match=r"line 1: missing field\(s\) line, id, candidate, graph, result"):
        load_novelty_results(path)


def test_workspace_supplies_the_graph_and_checks_its_novelty_table(tmp_path, capsys):
    write_jsonl(tmp_path / "events.jsonl", [paper(LU), checked(LU)])
    toml = 'pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "site"\ngraph = "events.jsonl"\n'
    (tmp_path / "reporter.toml").write_text(toml + "[novelty]\nresolvers = []\ntimeout_seconds = 2\n")
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"arxiv": "2408.06292"}}}))
    assert main(["novelty", "--candidate", str(cand), "--workspace", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "duplicate"
    (tmp_path / "reporter.toml").write_text(toml + "[novelty]\nresolver = ['s2']\n")
    assert main(["novelty", "--candidate", str(cand), "--workspace", str(tmp_path), "--json"]) == 2
    assert "[novelty]: unknown key 'resolver'" in capsys.readouterr().err


def test_the_installed_entry_point_prints_one_json_object():
    proc = subprocess.run([sys.executable, "-m", "reporter.cli", "novelty", "--candidate",
                           str(WORKED / "candidate.json"), "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout) == SEED_EXPECTED


def test_write_events_appends_after_an_unterminated_line(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(paper(LU)))
    write_events(path, [checked(LU)], append=True)
    assert load_graph(path).references_checked[LU].n_refs == 0


def test_a_blank_optional_key_is_read_as_null():
    graph = graph_of({"op": "upsert", "table": "paper", "row": {"lom_id": LU, "doi": "", "arxiv": " ", "read": True}})
    assert dict(graph.papers[LU].keys) == {}
    assert dict(graph.aliases) == {LU: LU}


def test_every_results_field_is_documented():
    from reporter.novelty.results import RESULT_FIELDS, ROW_FIELDS
    doc = (Path(__file__).resolve().parents[1] / "docs" / "novelty.md").read_text(encoding="utf-8")
    for name in ROW_FIELDS + RESULT_FIELDS:
        assert f"| `{name}` |" in doc, name


def test_a_relative_graph_entry_falls_back_to_the_working_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "graph").mkdir()
    write_jsonl(tmp_path / "graph" / "events.jsonl", [paper(LU), checked(LU)])
    (tmp_path / "cands").mkdir()
    cand = tmp_path / "cands" / "cand.json"
    cand.write_text(json.dumps({"candidate": {"kind": "paper", "keys": {"arxiv": "2408.06292"}},
                                "graph": {"events_jsonl": "graph/events.jsonl"}}))
    monkeypatch.chdir(tmp_path)
    assert main(["novelty", "--candidate", "cands/cand.json", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "duplicate"
