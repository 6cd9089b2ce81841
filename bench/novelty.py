"""Benchmark the novelty check on the SYNERGY v1 citation graph.

Builds graph events from the SYNERGY works (OpenAlex records) and citation
edges in ../shared/data/synergy_v1/ and prints the seconds to load the graph
and per candidate, twice: [full] the whole graph (~249k edges) with 1,000
candidates already on it; [holdout] the graph without 500 seeded works, which
come back as new candidates with their real reference lists, beside 500
candidates already on it.

The load is measured against its floor the same way (bench/measure.py): each
in a fresh process on one core, the CPU seconds of the work itself (the
process's start and imports aside): the floor `json.loads` of every line of
the events file, the load `reporter.novelty.graph.read_graph` (read, hash,
parse, fold, index); floor and load alternate `--repeat` times, with the
ratio of each pair, their median and each process's peak RSS. `--tree DIR`
loads with another checkout's reporter (a before/after comparison).

    .venv/bin/python bench/novelty.py [--candidates 1000] [--data DIR] [--repeat 3] [--tree DIR]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, line, machine, measured, medians  # noqa: E402,I001

PHASE = """import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
path = sys.argv[2]
if sys.argv[1] == "load":
    from reporter.novelty.graph import read_graph
start = time.process_time()
if sys.argv[1] == "load":
    read_graph(path)
else:
    with open(path, encoding="utf-8") as f:
        for line in f:
            json.loads(line)
took = time.process_time() - start
print(json.dumps({"work_cpu_s": took}))
"""
"""A phase process: one core, then the floor or the load, timed around the work alone (cwd: the checkout)."""


def phase(kind: str, path: Path, tree: Path) -> dict:
    m = measured([sys.executable, "-c", PHASE, kind, str(path)], cwd=tree)
    m.update(json.loads(m.pop("stdout").strip().splitlines()[-1]))
    return m

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


def run(label: str, works: list[dict], inputs: list[dict], tmp: Path, repeat: int = 3, tree: Path = ROOT) -> None:
    """Write the events, time the load (cold, then cached) and the checks; print the figures."""
    t0 = time.perf_counter()
    events = openalex_events(works, CHECKED_TS)
    path = tmp / f"{label}.jsonl"
    write_events(path, events)
    t_build = time.perf_counter() - t0

    pairs = []
    for _ in range(repeat):
        floor, load = phase("floor", path, tree), phase("load", path, tree)
        pairs.append({"cpu": load["work_cpu_s"] / floor["work_cpu_s"]})
        print(f"[{label}] floor json.loads of every line {floor['work_cpu_s']:.3f} CPU-s, peak RSS "
              f"{floor['peak_rss_mb']:,.0f} MB; load {load['work_cpu_s']:.3f} CPU-s, peak RSS "
              f"{load['peak_rss_mb']:,.0f} MB; ratio {pairs[-1]['cpu']:.2f}")
    graph = read_graph(path)
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
    print(f"[{label}] load (read, hash, parse, fold, index) against json.loads of every line, one core: median "
          f"ratio {medians(pairs)['cpu']:.2f} of {len(pairs)} pair(s) (commands of {tree}); cached reload "
          f"{t_cached:.3f} s")
    print(f"[{label}] check: {len(results):,} candidates in {t_check:.3f} s = "
          f"{t_check / len(results) * 1000:.3f} ms per candidate ({t_check / len(results):.6f} s)")
    print(f"[{label}] verdicts: " + ", ".join(f"{v} {verdicts[v]}" for v in
                                             ("duplicate", "neighborhood", "novel", "unknown"))
          + f"; shared read nodes per candidate: median {shared[len(shared) // 2]}, max {shared[-1]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=3, help="floor/load pairs per graph (default 3)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose reporter loads (default: this)")
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
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        # 1. The whole graph; every candidate is already on it (rule 1), overlap still computed.
        sample = rng.sample(ids, args.candidates)
        run("full", [by_id[i] for i in ids], [as_candidate(by_id[i], new=False) for i in sample], Path(tmp),
            args.repeat, args.tree.resolve())
        # 2. The graph without a seeded sample of works, which come back as new papers.
        inputs = [as_candidate(by_id[i], new=True) for i in held_out]
        inputs += [as_candidate(by_id[i], new=False) for i in on_graph]
        run("holdout", [by_id[i] for i in ids if i not in held], inputs, Path(tmp), args.repeat, args.tree.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
