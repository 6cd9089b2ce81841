"""Render benchmark: two synthetic 5,000,000-row releases, rendered from scratch.

    .venv/bin/python bench/render.py                 # 5,000,000 rows per release
    .venv/bin/python bench/render.py --rows 200000   # quicker
    .venv/bin/python bench/render.py --rows 1000000 --repeat 2

Writes a releases folder with two releases (the second moves about 2% of
the works) whose routing.parquet, rule_stats.json and samples.json agree
with each other as docs/release-format.md requires, then runs
`reporter render --releases R --out SITE` over it as a whole process, against
its floor measured the same way (bench/measure.py): a process on one core
that reads every input of a render (each release's JSON files and the diff's
routing.parquet columns) and does no work on them. CPU and wall seconds, the
ratios and each process tree's peak RSS; floor and render alternate
`--repeat` times (each render into a fresh site). Nothing here runs the
routing engine: it measures the site alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reporter.hashing import dump_json, sha256_json  # noqa: E402
from measure import floor_env, floor_process, line, machine, measured, medians, phase_result, ratio  # noqa: E402

PILES = [{"name": "discard", "kind": "discard", "tier": None}, {"name": "hold", "kind": "hold", "tier": None},
         {"name": "screen_cheap", "kind": "screen", "tier": "cheap"},
         {"name": "screen", "kind": "screen", "tier": "expensive"}, {"name": "pending", "kind": "pending", "tier": None}]
PILE_OF = ["discard"] * 14 + ["hold"] * 3 + ["screen_cheap"] * 5 + ["screen"] * 8   # 30 live rules
N_SHADOW = 2
PHRASES = ["replication", "erratum", "randomised trial", "meta-analysis", "conference abstract", "editorial",
           "reproduction of", "corrigendum", "protocol", "registered report"]


def rule_ids() -> list[str]:
    """30 live rules, precedence descending, then the shadows."""
    return [f"rule-{i:02d}-{PILE_OF[i]}" for i in range(len(PILE_OF))] + [f"shadow-{i}" for i in range(N_SHADOW)]


def make_release(releases: Path, rows: int, seed: int, move: float = 0.0, base_seed: int = 1) -> str:
    """Write one consistent synthetic release; `move` re-draws the winner of that share of rows."""
    rng = np.random.default_rng(base_seed)
    ids = rule_ids()
    n_live = len(PILE_OF)
    # Zipf-ish popularity of rules; 6% of rows unrouted.
    weights = 1.0 / np.arange(1, n_live + 1) ** 0.8
    winner = rng.choice(n_live, size=rows, p=weights / weights.sum()).astype(np.int16)
    winner[rng.random(rows) < 0.06] = -1
    if move:
        moved = np.random.default_rng(seed).random(rows) < move
        winner[moved] = np.random.default_rng(seed + 1).choice(n_live, size=int(moved.sum())).astype(np.int16)
    paying = np.array([PILE_OF[i] in ("screen", "screen_cheap") for i in range(n_live)])
    no_abstract = rng.random(rows) < 0.04
    routed = winner >= 0
    no_text = routed & paying[np.maximum(winner, 0)] & no_abstract
    # A second matched rule of higher precedence (it outranked nobody) or lower (outranked), on 30% of rows.
    second = rng.integers(0, n_live, size=rows).astype(np.int16)
    has_second = routed & (rng.random(rows) < 0.3) & (second > winner)
    pile_names = np.array(list(dict.fromkeys(PILE_OF)) + ["pending"])
    pile_code = np.array([list(pile_names).index(p) for p in PILE_OF])
    pile = np.where(routed, pile_code[np.maximum(winner, 0)], len(pile_names) - 1)
    pile[no_text] = len(pile_names) - 1
    reason = np.where(~routed, 0, np.where(no_text, 1, 2))  # unrouted, no_text, none

    work_id = pc.binary_join_element_wise("openalex:W", pc.cast(pa.array(np.arange(rows) + 7_000_000), pa.string()), "")
    win_ids = pa.array(ids[:n_live])
    winner_arr = pa.DictionaryArray.from_arrays(
        pa.array(np.where(routed, winner, 0).astype(np.int16), mask=~routed), win_ids).cast(pa.string())
    lengths = routed.astype(np.int32) + has_second.astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    first, sec = np.where(routed, winner, 0), second
    values = np.empty(int(offsets[-1]), np.int16)
    starts = offsets[:-1]
    values[starts[routed]] = first[routed]
    values[starts[has_second] + 1] = sec[has_second]
    matched = pa.ListArray.from_arrays(pa.array(offsets), win_ids.take(pa.array(values)))
    empty = pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, np.int32)), pa.array([], pa.string()))
    phrase = pa.array(PHRASES).take(pa.array(rng.integers(0, len(PHRASES), size=rows)))
    start = pa.array(rng.integers(0, 120, size=rows).astype(np.int32))
    field = pa.array(["title", "abstract"]).take(pa.array((rng.random(rows) >= 0.7).astype(np.int8)))
    evidence = pa.StructArray.from_arrays(
        [_flat(field), start, _flat(pc.add(start, pc.cast(pc.utf8_length(phrase), pa.int32()))), _flat(phrase)],
        names=["field", "start", "end", "text"], mask=pa.array(~routed))
    table = pa.table({
        "work_id": work_id, "pile": pa.array(pile_names).take(pa.array(pile)),
        "pending_reason": pa.array(["unrouted", "no_text", None]).take(pa.array(reason)),
        "winner": winner_arr, "matched": matched, "shadow_matched": empty, "evidence": evidence,
        "title_only": pa.array(np.zeros(rows, bool))})

    # Statistics from the same arrays, so the identities hold exactly.
    won = np.bincount(winner[routed & ~no_text], minlength=n_live)
    nt = np.bincount(winner[no_text], minlength=n_live)
    outranked = np.bincount(second[has_second], minlength=n_live)
    pair = np.bincount(winner[has_second].astype(np.int64) * n_live + second[has_second], minlength=n_live * n_live)
    pair = pair.reshape(n_live, n_live)
    matched_n = won + nt + outranked
    overlap = np.zeros((len(ids), len(ids)), np.int64)
    overlap[:n_live, :n_live] = pair + pair.T
    np.fill_diagonal(overlap[:n_live, :n_live], matched_n)
    piles = {str(name): int((pile == i).sum()) for i, name in enumerate(pile_names)}
    rules = []
    for i, rid in enumerate(ids):
        shadow = i >= n_live
        by = pair[:, i] if not shadow else np.zeros(n_live, int)
        domain = i % 5 == 0 and not shadow
        miss = int(won[n_live - 1 - i] // 7) if domain else None
        rules.append({
            "id": rid, "description": f"Synthetic rule {i} sending works to {PILE_OF[i % n_live]}",
            "file": f"rules/{i // 10:02d}.json", "pile": "discard" if shadow else PILE_OF[i],
            "precedence": 1000 - i, "shadow": shadow,
            "matched": int(rows // 50) if shadow else int(matched_n[i]),
            "won": 0 if shadow else int(won[i]), "no_text": 0 if shadow else int(nt[i]),
            "outranked": 0 if shadow else int(outranked[i]),
            "would_win": int(rows // 80) if shadow else None, "would_move": int(rows // 90) if shadow else None,
            "domain": {"column": "source", "in": ["osf"]} if domain else None,
            "domain_rows": int(rows // 10) if domain else None, "domain_matched": int(matched_n[i]) if domain else None,
            "domain_miss": miss,
            "domain_miss_winners": [{"rule": ids[n_live - 1 - i], "rows": miss}] if domain and miss else [],
            "outranked_by": [{"rule": ids[j], "rows": int(by[j])} for j in
                             sorted(np.nonzero(by)[0], key=lambda j: (-by[j], ids[j]))],
            "spec": {"id": rid, "pile": "discard" if shadow else PILE_OF[i], "precedence": 1000 - i,
                     "match": {"field": "text", "phrase": PHRASES[i % len(PHRASES)]}},
        })
    inputs = {"pool": sha256_json(["pool", rows, base_seed]), "overlay": "none",
              "specs": sha256_json(["specs", seed]), "piles": sha256_json(PILES),
              "normalisation": sha256_json("bench"), "engine": sha256_json("bench-engine")}
    rid = sha256_json(inputs)
    folder = releases / rid
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / "routing.parquet", row_group_size=1_000_000)
    pending = {"unrouted": int((reason == 0).sum()), "no_text": int((reason == 1).sum())}
    stats = {"schema_version": 1, "release_id": rid, "rows": rows, "identity_holds": True, "piles": piles,
             "pile_order": PILES, "pending": pending, "title_only": 0,
             "pool": {"rows": rows, "with_title": rows, "with_abstract": int(rows - no_abstract.sum()),
                      "utf8_replaced": 0},
             "overlay": None, "rules": rules, "overlap": {"rules": ids, "matrix": overlap.tolist()}}
    (folder / "rule_stats.json").write_text(dump_json(stats), encoding="utf-8")
    (folder / "release.json").write_text(dump_json({"schema_version": 1, "release_id": rid, "inputs": inputs,
                                                    "engine_version": "bench", "normalisation": {"bench": 1},
                                                    "rows": rows}), encoding="utf-8")
    (folder / "samples.json").write_text(dump_json(_samples(table, pile, winner, ids, seed)), encoding="utf-8")
    index = releases / "index.json"
    listed = json.loads(index.read_text()) if index.exists() else []
    index.write_text(json.dumps(listed + [rid]), encoding="utf-8")
    return rid


def _flat(arr):
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _samples(table: pa.Table, pile: np.ndarray, winner: np.ndarray, ids: list[str], seed: int) -> dict:
    rng = np.random.default_rng(seed)

    def works(rows: np.ndarray, k: int) -> list[dict]:
        pick = np.sort(rng.choice(rows, size=min(k, len(rows)), replace=False)) if len(rows) else rows
        out = []
        for r in table.take(pa.array(pick)).to_pylist():
            ev = r["evidence"]
            title = f"A synthetic study of {ev['text']} number {r['work_id'][10:]}" if ev else "An unrouted work"
            out.append({"work_id": r["work_id"], "source": "openalex", "title": title, "pile": r["pile"],
                        "pending_reason": r["pending_reason"], "winner": r["winner"], "title_only": False,
                        "evidence": ev, "context": {"field": ev["field"], "before": "a synthetic study of ",
                                                    "match": ev["text"], "after": " with a long tail of words"}
                        if ev else None})
        return sorted(out, key=lambda w: w["work_id"])

    names = table.column("pile").unique().to_pylist()
    piles = {name: works(np.nonzero(table.column("pile").to_numpy(zero_copy_only=False) == name)[0], 20)
             for name in sorted(names)}
    rules = {}
    for i, rid in enumerate(ids[:30]):
        rules[rid] = {"wins": works(np.nonzero(winner == i)[0][:100_000], 10), "domain_misses": []}
    return {"seed": seed, "k": 20, "context_chars": 80, "piles": piles, "rules": rules}


def phase_floor(releases: Path) -> dict:
    """The floor, on one core: read every input of a render (the JSON files and the diff's routing columns)."""
    floor_process("render")
    start = time.process_time()
    for folder in sorted(p for p in releases.iterdir() if p.is_dir()):
        for name in ("release.json", "rule_stats.json", "samples.json"):
            json.loads((folder / name).read_text(encoding="utf-8"))
        pq.read_table(folder / "routing.parquet", columns=["work_id", "pile", "pending_reason", "winner"])
    return {"work_cpu_s": time.process_time() - start}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows per release (default 5,000,000)")
    parser.add_argument("--work", type=Path, help="folder for the releases and the site (default: a temp folder)")
    parser.add_argument("--repeat", type=int, default=1, help="floor/render pairs (default 1)")
    parser.add_argument("--phase", choices=["floor"], help=argparse.SUPPRESS)
    parser.add_argument("--releases", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "floor":
        phase_result(**phase_floor(args.releases))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        releases = work / "releases"
        t0 = time.perf_counter()
        make_release(releases, args.rows, seed=1)
        make_release(releases, args.rows, seed=2, move=0.02)
        print(f"synthetic releases: 2 x {args.rows:,} rows written in {time.perf_counter() - t0:.1f} s")
        print(f"machine: {machine()}")
        pairs = []
        for i in range(args.repeat):
            floor = measured([sys.executable, str(Path(__file__).resolve()), "--phase", "floor",
                              "--releases", str(releases)], env=floor_env("render"))
            floor.update(json.loads(floor.pop("stdout").strip().splitlines()[-1]))
            render = measured([sys.executable, "-m", "reporter.cli", "render", "--releases", str(releases),
                               "--out", str(work / f"site-{i}")])
            pairs.append(ratio(floor, render))
            print(line("floor (1 core, read inputs)", floor))
            print(line("reporter render", render) + f"  ratio CPU {pairs[-1]['cpu']:.1f}, wall {pairs[-1]['wall']:.1f}")
        x = medians(pairs)
        print(f"render: median ratio to the floor CPU {x['cpu']:.1f}, wall {x['wall']:.1f} ({len(pairs)} pair(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
