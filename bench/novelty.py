"""Benchmark the novelty check on the SYNERGY v1 citation graph.

Builds graph events from the SYNERGY works (OpenAlex records) and citation
edges in ../shared/data/synergy_v1/ and prints the seconds to load the graph
and per candidate, twice: [full] the whole graph (~249k edges) with 1,000
candidates already on it; [holdout] the graph without 500 seeded works, which
come back as new candidates with their real reference lists, beside 500
candidates already on it.

    .venv/bin/python bench/novelty.py [--candidates 1000] [--data DIR]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from reporter.novelty import check_candidate, load_graph, openalex_events, parse_candidate, write_events
from reporter.novelty.graph import read_graph

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "synergy_v1"
CHECKED_TS = "2023-01-01T00:00:00Z"  # the SYNERGY v1 snapshot; fixed so the events are reproducible


def synergy_works(data: Path) -> list[dict]:
    """SYNERGY works as OpenAlex-shaped works, referenced_works taken from the edges CSV."""
    refs: dict[str, list[str]] = {}
    with gzip.open(data / "synergy_v1_citation_edges.csv.gz", "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            refs.setdefault(row["source_openalex_id"], []).append(row["target_openalex_id"])
    works = []
    with gzip.open(data / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            w = json.loads(line)
            works.append({"id": w["openalex_id"], "doi": w["doi"], "title": w["title"],
                          "referenced_works": sorted(refs.get(w["openalex_id"], []))})
    return works


def as_candidate(work: dict, new: bool) -> dict:
    """A new paper gives its real reference list; one already on the graph gives its first reference as holdout."""
    refs = [f"openalex:{r.rsplit('/', 1)[1]}" for r in work["referenced_works"]]
    cand = {"kind": "paper", "keys": {"doi": work["doi"], "openalex": work["id"]}}
    if new:
        cand["references"] = refs
    else:
        cand["holdout_lom_ids"] = refs[:1]
    return {"candidate": cand}


def run(label: str, works: list[dict], inputs: list[dict], tmp: Path) -> None:
    """Write the events, time the load (cold, then cached) and the checks; print the figures."""
    t0 = time.perf_counter()
    events = openalex_events(works, CHECKED_TS)
    path = tmp / f"{label}.jsonl"
    write_events(path, events)
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as f:  # baseline: read and parse every line, nothing else
        for line in f:
            json.loads(line)
    t_base = time.perf_counter() - t0

    t0 = time.perf_counter()
    graph = read_graph(path)
    t_load = time.perf_counter() - t0
    load_graph(path)
    t0 = time.perf_counter()
    load_graph(path)  # unchanged bytes: served from the in-memory cache after hashing
    t_cached = time.perf_counter() - t0

    candidates = [parse_candidate(obj, f"candidate {n}").candidate for n, obj in enumerate(inputs, 1)]
    t0 = time.perf_counter()
    results = [check_candidate(c, graph) for c in candidates]
    t_check = time.perf_counter() - t0

    counts = graph.counts()
    verdicts = Counter(r.verdict for r in results)
    shared = sorted(len(r.shared) for r in results)
    print(f"[{label}] graph: {counts['papers']:,} papers ({counts['read']:,} read), "
          f"{counts['citation_edges']:,} citation edges, {counts['references_checked']:,} references_checked, "
          f"{graph.n_events:,} events, {path.stat().st_size / 1e6:.1f} MB, coverage gap {counts['coverage_gap']}; "
          f"events built and written in {t_build:.2f} s")
    print(f"[{label}] load: {t_load:.2f} s (read, hash, parse, fold, index); cached reload {t_cached:.3f} s; "
          f"baseline json.loads of every line {t_base:.2f} s (ratio {t_load / t_base:.2f})")
    print(f"[{label}] check: {len(results):,} candidates in {t_check:.3f} s = "
          f"{t_check / len(results) * 1000:.3f} ms per candidate ({t_check / len(results):.6f} s)")
    print(f"[{label}] verdicts: " + ", ".join(f"{v} {verdicts[v]}" for v in
                                             ("duplicate", "neighborhood", "novel", "unknown"))
          + f"; shared read nodes per candidate: median {shared[len(shared) // 2]}, max {shared[-1]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    if not (args.data / "synergy_v1_works.jsonl.gz").exists():
        print(f"SYNERGY data not found in {args.data}", file=sys.stderr)
        return 2
    by_id = {w["id"]: w for w in synergy_works(args.data)}  # one work sits in two reviews: one node
    ids = sorted(by_id)
    rng = random.Random(0)
    n_new = args.candidates // 2
    held_out = sorted(rng.sample(ids, n_new))
    held = set(held_out)
    on_graph = rng.sample([i for i in ids if i not in held], args.candidates - n_new)
    print(f"novelty benchmark: SYNERGY v1, {len(by_id):,} distinct works, {args.candidates:,} candidates per run")
    with tempfile.TemporaryDirectory() as tmp:
        # 1. The whole graph; every candidate is already on it (rule 1), overlap still computed.
        sample = rng.sample(ids, args.candidates)
        run("full", [by_id[i] for i in ids], [as_candidate(by_id[i], new=False) for i in sample], Path(tmp))
        # 2. The graph without a seeded sample of works, which come back as new papers.
        inputs = [as_candidate(by_id[i], new=True) for i in held_out]
        inputs += [as_candidate(by_id[i], new=False) for i in on_graph]
        run("holdout", [by_id[i] for i in ids if i not in held], inputs, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
