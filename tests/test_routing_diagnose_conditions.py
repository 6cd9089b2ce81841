"""`reporter diagnose` shows every condition's span: a work won by a rule with two text conditions
shows both windows (offsets worked out by hand below), and a release of an engine before routing.5,
whose routing.parquet has no `evidence_all`, still shows its one span."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from support.routing import TODAY, write_pool, write_specs

from reporter.routing.release import route_release

RULES = [
    {"id": "animal-replication", "pile": "hold", "precedence": 90,
     "match": {"all": [{"field": "text", "any_phrase": ["animal", "mice", "rats"]},
                       {"field": "text", "phrase": "replicat*"}]}},
    {"id": "erratum", "pile": "discard", "precedence": 80, "match": {"field": "title", "phrase": "erratum"}},
]

ROWS = [
    # the animal term in the title (the best span), the replication term in the abstract
    {"work_id": "doi:10.1/w1", "source": "pubmed", "title": "Mice models of anxiety",
     "abstract": "We replicated the effect in 40 animals."},
    # both in the title, the replication term first: the best span is the rule's second condition's
    {"work_id": "doi:10.1/w2", "source": "pubmed", "title": "Replication in rats: a failed attempt",
     "abstract": "Rats and mice were used."},
    {"work_id": "doi:10.1/w3", "source": "pubmed", "title": "Erratum: growth curves", "abstract": "A note."},
    {"work_id": "doi:10.1/w4", "source": "pubmed", "title": "Unrelated", "abstract": "Nothing."},
]


def span(field, start, end, text):
    return {"field": field, "start": start, "end": end, "text": text}


def window(field, before, match, after):
    return {"field": field, "before": before, "match": match, "after": after, "match_cut": False}


MICE, REPLICATED = span("title", 0, 4, "Mice"), span("abstract", 3, 13, "replicated")
RATS, REPLICATION = span("title", 15, 19, "rats"), span("title", 0, 11, "Replication")
W1_WINDOWS = [window("title", "", "Mice", " models of anxiety"),
              window("abstract", "We ", "replicated", " the effect in 40 animals.")]
W2_WINDOWS = [window("title", "", "Replication", " in rats: a failed attempt"),
              window("title", "Replication in ", "rats", ": a failed attempt")]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("diagnose-conditions")
    result = route_release(write_pool(root / "pool.parquet", ROWS), write_specs(root, RULES), root / "releases",
                           progress=False, as_of=TODAY)
    return root, result


@pytest.fixture(scope="module")
def old_ws(ws, tmp_path_factory):
    """The same release as an engine before routing.5 wrote it: routing.parquet without `evidence_all`."""
    root, result = ws
    old = tmp_path_factory.mktemp("diagnose-routing4")
    shutil.copytree(root / "releases", old / "releases")
    shutil.copy(root / "pool.parquet", old / "pool.parquet")
    shutil.copytree(root / "specs", old / "specs")
    routing = old / "releases" / result.release_id / "routing.parquet"
    table = pq.read_table(routing)
    pq.write_table(table.drop_columns(["evidence_all"]), routing)
    assert "evidence_all" not in pq.read_schema(routing).names
    return old, result


def _diagnose(root, *args):
    done = subprocess.run([sys.executable, "-m", "reporter.cli", "diagnose", "--pool", str(root / "pool.parquet"),
                           "--specs", str(root / "specs"), "--releases", str(root / "releases"), *args],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _samples(root, *args):
    return {s["work_id"]: s for s in json.loads(_diagnose(root, *args, "--json"))["samples"]}


def test_json_holds_every_condition_span_and_its_window(ws):
    got = _samples(ws[0], "--rule", "animal-replication")
    assert sorted(got) == ["doi:10.1/w1", "doi:10.1/w2"]
    w1, w2 = got["doi:10.1/w1"], got["doi:10.1/w2"]
    assert (w1["evidence"], w1["evidence_all"]) == (MICE, [MICE, REPLICATED])
    assert (w2["evidence"], w2["evidence_all"]) == (REPLICATION, [RATS, REPLICATION])  # the rule's order
    assert w1["contexts"] == W1_WINDOWS and w1["context"] == W1_WINDOWS[0]
    assert w2["contexts"] == W2_WINDOWS and w2["context"] == W2_WINDOWS[0]  # the evidence's window first


def test_one_condition_and_no_condition_works(ws):
    got = _samples(ws[0], "--pile", "discard")
    assert got["doi:10.1/w3"]["evidence_all"] == [span("title", 0, 7, "Erratum")]
    assert got["doi:10.1/w3"]["contexts"] == [window("title", "", "Erratum", ": growth curves")]
    unrouted = _samples(ws[0], "--pile", "pending")["doi:10.1/w4"]
    assert (unrouted["evidence"], unrouted["evidence_all"], unrouted["context"], unrouted["contexts"]) == \
        (None, [], None, [])


def test_text_output_shows_every_window(ws):
    lines = _diagnose(ws[0], "--rule", "animal-replication").splitlines()
    at = lines.index("- doi:10.1/w1  [hold]  winner: animal-replication")
    assert lines[at:at + 4] == ["- doi:10.1/w1  [hold]  winner: animal-replication",
                                "  title: Mice models of anxiety",
                                "  title: ...[[Mice]] models of anxiety...",
                                "  abstract: ...We [[replicated]] the effect in 40 animals...."]
    at = lines.index("- doi:10.1/w2  [hold]  winner: animal-replication")
    assert lines[at + 2:] == ["  title: ...[[Replication]] in rats: a failed attempt...",
                              "  title: ...Replication in [[rats]]: a failed attempt..."]


def test_windows_are_the_ones_samples_json_holds(ws):
    root, result = ws
    stored = json.loads((result.release_dir / "samples.json").read_text(encoding="utf-8"))
    wins = {w["work_id"]: w for w in stored["rules"]["animal-replication"]["wins"]}
    got = _samples(root, "--rule", "animal-replication")
    assert {w: s["contexts"] for w, s in got.items()} == {w: s["contexts"] for w, s in wins.items()}


def test_a_release_without_evidence_all_shows_its_one_span(old_ws):
    root, _ = old_ws
    got = _samples(root, "--rule", "animal-replication")
    w1, w2 = got["doi:10.1/w1"], got["doi:10.1/w2"]
    assert (w1["evidence"], w1["evidence_all"], w1["contexts"]) == (MICE, [MICE], W1_WINDOWS[:1])
    assert (w2["evidence"], w2["evidence_all"], w2["contexts"]) == (REPLICATION, [REPLICATION], W2_WINDOWS[:1])
    assert _samples(root, "--pile", "pending")["doi:10.1/w4"]["evidence_all"] == []
    lines = _diagnose(root, "--rule", "animal-replication").splitlines()
    at = lines.index("- doi:10.1/w2  [hold]  winner: animal-replication")
    assert lines[at + 2:] == ["  title: ...[[Replication]] in rats: a failed attempt..."]
