"""The screen's own overhead: works/s through claim, ask, record, with a server that answers at once.

Real providers answer in 0.5 to 5 s, so with 64 requests in flight a voter
sees 13 to 130 requests/s: the tool must never be the bottleneck. This
benchmark measures the whole `reporter screen --tier expensive --run`
process (claims, prompts, two voters through the openai client, raw log
appends with fsync, vote and verdict rows) against the fake
OpenAI-compatible server of tests/support/fake_openai.py running in its own
process with zero latency, at concurrency 1, 8 and 64 (requests in flight
per voter), on SQLite and on PostgreSQL (a throwaway server started the way
the tests start one; skipped when PostgreSQL is not installed).

Floor, measured the same way in the same run (bench/measure.py): the two
voters alone (`ChatVoter.ask` on the same works, prompts assembled, the same
concurrency) against the same fake server, with no claims, raw log or
database, as their own process: what the openai client and the server cost
by themselves, so the ratio says how much is the tool's. Neither the floor
nor the screen is pinned to one core: both are one asyncio thread beside the
same fake server, and a floor on one core against a screen on every core
would flatter the screen's wall time (0.92 times the floor's at concurrency
64 on SQLite, in a run). Each process's CPU seconds, wall seconds and peak
RSS (the fake server aside) are printed beside its works/s, with the ratio
of the steady times and of the CPU seconds.

Each run is timed twice: as a whole, and again with every work decided (it
claims and asks nothing), whose time is the fixed cost of a run (interpreter
start, imports, scope, recovery scan); works/s without it is the rate the
loop sustains.

The works are real titles and abstracts from ../shared/data (SYNERGY),
routed by a one-rule book into the `screen` pile.

    .venv/bin/python bench/screen.py [--works 3000] [--concurrency 1 8 64] [--backends sqlite postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BIN = Path(sys.executable).parent
FAKE = ROOT / "tests" / "support" / "fake_openai.py"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from measure import line, machine, measured, phase_result  # noqa: E402


def real_works(n: int) -> list[dict]:
    """The first n SYNERGY works with a title and an abstract."""
    out = []
    with gzip.open(DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz", "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            if r.get("title") and r.get("abstract"):
                out.append({"work_id": f"row:{i}", "title": r["title"], "abstract": r["abstract"]})
                if len(out) == n:
                    break
    return out


def write_workspace(root: Path, works: list[dict], base_url: str, database: str, concurrency: int) -> None:
    """A workspace whose one rule sends every work to the expensive screen."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"work_id": [w["work_id"] for w in works], "source": ["bench"] * len(works),
                             "title": [w["title"] for w in works], "abstract": [w["abstract"] for w in works]}),
                   root / "pool.parquet")
    (root / "specs" / "rules").mkdir(parents=True, exist_ok=True)
    (root / "specs" / "rules" / "all.json").write_text(json.dumps([{
        "id": "all", "pile": "screen", "precedence": 1, "match": {"not": {"empty": "title"}}}]), encoding="utf-8")
    (root / "specs" / "piles.json").write_text(json.dumps({"piles": [
        {"name": "discard", "kind": "discard"}, {"name": "screen", "kind": "screen", "tier": "expensive"},
        {"name": "pending", "kind": "pending"}]}), encoding="utf-8")
    voters = "".join(
        f'\n[[screen.expensive.voters]]\nname = "{m}"\nbase_url = "{base_url}"\nmodel = "{m}"\n'
        f"max_concurrency = {concurrency}\nprice_in_per_mtok = 0.15\nprice_out_per_mtok = 0.60\n"
        for m in ("voter-a", "voter-b"))
    (root / "reporter.toml").write_text(
        'pool = "pool.parquet"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n\n'
        f'[screen]\ndatabase = "{database}"\nraw_dir = "state/raw"\nbatch_size = {max(32, 2 * concurrency)}\n'
        + voters, encoding="utf-8")


def start_fake(root: Path) -> tuple[subprocess.Popen, str]:
    """The fake server in its own process, answering every request at once with a valid include."""
    (root / "script.json").write_text(json.dumps({"default": {"label": "include", "reason": "Fits."},
                                                  "latency": 0}), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(FAKE), "--port", "0", "--script", str(root / "script.json")],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return proc, proc.stdout.readline().strip()


async def _voters_only(base_url: str, works: list[dict], concurrency: int) -> float:
    """Works/s of the two voters alone (ChatVoter.ask, prompts assembled), with no claims, raw log or records."""
    from reporter.panel.config import VoterSettings
    from reporter.panel.prompt import messages_for
    from reporter.screening.prompt import build_prompt
    from reporter.panel.provider import ChatVoter
    from reporter.screening.answer import SCREEN_ANSWER
    prompt = build_prompt(None)
    voters = [ChatVoter(VoterSettings(name=m, base_url=base_url, model=m, api_key_env=None,
                                      max_concurrency=concurrency, price_in_per_mtok=0.15, price_out_per_mtok=0.6),
                        {}, max_retries=0, answer=SCREEN_ANSWER) for m in ("voter-a", "voter-b")]

    async def one(w: dict) -> None:
        msgs = messages_for(prompt, w["title"], w["abstract"], False)
        await asyncio.gather(*(v.ask(msgs) for v in voters))
    t0 = time.perf_counter()
    await asyncio.gather(*(one(w) for w in works))
    seconds = time.perf_counter() - t0
    for v in voters:
        await v.aclose()
    return len(works) / seconds


def baseline(works: list[dict], concurrency: int) -> dict:
    """The voters alone against the fake server, as their own process: the openai client's own
    cost, in this run (`works_per_s` timed around the asks; CPU, wall and peak RSS of the whole process)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_fake(Path(tmp))
        try:
            (Path(tmp) / "works.json").write_text(json.dumps(works), encoding="utf-8")
            m = measured([sys.executable, str(Path(__file__).resolve()), "--phase", "voters", "--url", url,
                          "--works-file", str(Path(tmp) / "works.json"), "--concurrency", str(concurrency)])
            m.update(json.loads(m.pop("stdout").strip().splitlines()[-1]))
            return m
        finally:
            proc.terminate()
            proc.wait()


def run_once(works: list[dict], database: str | None, concurrency: int) -> dict:
    """One whole `reporter screen --run` process over the works; works/s and requests/s."""
    with tempfile.TemporaryDirectory(prefix="bench-screen-") as tmp:
        root = Path(tmp)
        proc, url = start_fake(root)
        try:
            write_workspace(root, works, url, database or "state/screen.db", concurrency)
            env = dict(os.environ)
            subprocess.run([BIN / "reporter", "route", "--workspace", str(root), "--json"], check=True,
                           stdout=subprocess.DEVNULL, env=env)
            m = measured([str(BIN / "reporter"), "screen", "--workspace", str(root), "--tier", "expensive", "--run",
                          "--json"], env=env)
            seconds = m["wall_s"]
            # The fixed cost of a run (interpreter start, imports, scope, the recovery scan): the same
            # command again, with every work already decided, so it claims nothing and asks nothing.
            t1 = time.perf_counter()
            subprocess.run([BIN / "reporter", "screen", "--workspace", str(root), "--tier", "expensive", "--run",
                            "--json"], check=True, stdout=subprocess.DEVNULL, env=env)
            fixed = time.perf_counter() - t1
            import urllib.request
            total = json.loads(urllib.request.urlopen(url.removesuffix("/v1") + "/_fake/counts").read())["total"]
        finally:
            proc.terminate()
            proc.wait()
    steady = max(seconds - fixed, 1e-9)
    m.pop("stdout")
    return {**m, "works": len(works), "seconds": seconds, "works_per_s": len(works) / seconds,
            "requests": total, "requests_per_s": total / seconds, "fixed_seconds": fixed,
            "steady_works_per_s": len(works) / steady}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--works", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--phase", choices=["voters"], help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--works-file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase == "voters":
        works = json.loads(args.works_file.read_text(encoding="utf-8"))
        phase_result(works_per_s=asyncio.run(_voters_only(args.url, works, args.concurrency[0])))
        return 0
    if not args.json:
        print(f"machine: {machine()}")
    works = real_works(args.works)
    pg = None
    if "postgres" in args.backends:
        from tests.support.postgres import PostgresServer, postgres_available
        if postgres_available():
            pg = PostgresServer()
            pg.start()
        else:
            print("PostgreSQL is not installed: the postgres rows are skipped", file=sys.stderr)
    results = []
    try:
        for c in args.concurrency:
            sample = works if c > 1 else works[: max(200, len(works) // 10)]
            base = baseline(sample, c)
            for backend in args.backends:
                if backend == "postgres" and pg is None:
                    continue
                database = pg.new_database() if backend == "postgres" else None
                r = run_once(sample, database, c)
                r.update(backend=backend, concurrency=c, baseline_works_per_s=base["works_per_s"],
                         floor=base, steady_ratio=base["works_per_s"] / r["steady_works_per_s"],
                         cpu_ratio=r["cpu_s"] / base["cpu_s"])
                results.append(r)
                if not args.json:
                    print(f"{backend:8} concurrency {c:3}: {r['works']:,} works in {r['seconds']:.2f} s = "
                          f"{r['works_per_s']:,.0f} works/s, {r['requests_per_s']:,.0f} requests/s; "
                          f"without the fixed {r['fixed_seconds']:.1f} s of a run that asks nothing: "
                          f"{r['steady_works_per_s']:,.0f} works/s; the floor, the two voters alone: "
                          f"{base['works_per_s']:,.0f} works/s: steady time {r['steady_ratio']:.2f} times the "
                          f"floor's, CPU {r['cpu_ratio']:.2f} times", flush=True)
                    print(line("floor (voters alone)", base))
                    print(line(f"reporter screen ({backend})", r), flush=True)
    finally:
        if pg is not None:
            pg.stop()
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
