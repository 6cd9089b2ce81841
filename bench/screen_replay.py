"""Replay real model answers through the real screen, and report per review (never pooled).

`../shared/data/lattereview_llm_votes/` holds the answers two real models gave
(round A of LatteReview: Agent1 = gemini-1.5-flash, Agent2 = gpt-4o-mini, each
a score 1-5 with a reason) on four SYNERGY reviews and three radiology
searches, beside the human labels. For each review this script:

1. writes a workspace in a temporary folder: the review's works as the pool
   (`openalex:W...` ids for SYNERGY, `doi:` or a row id for radiology), the
   human labels, a one-rule book that sends every titled work to the `screen`
   pile (works without an abstract are screened on their title, as the
   models were: their source is listed in `title_only_sources`), the
   review's criteria as the `[screen] criteria` file, and two expensive
   voters named after the two models;
2. starts the fake OpenAI-compatible server (tests/support/fake_openai.py,
   process mode) scripted with the recorded answers, mapped 1-2 exclude,
   3 cannot_be_determined, 4-5 include, with the recorded reasons;
3. runs `reporter route` and `reporter screen --tier expensive --run` as
   whole processes, then reads the votes and verdicts from the state
   database and checks that the server was asked exactly once per work and
   voter.

Printed per review: works, human includes, works screened, requests, the
screen gate's recall of the human includes and work saved (share of
screened works discarded), the voters' agreement (share of equal labels
and Cohen's kappa over the three labels), and the same recall and work
saved for the stricter "both include" gate (computed from the same votes).
Recall is given with its Wilson 95% interval.

    .venv/bin/python bench/screen_replay.py [--only Oud_2018] [--json]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "lattereview_llm_votes"
BIN = Path(sys.executable).parent
FAKE = ROOT / "tests" / "support" / "fake_openai.py"
MODELS = {"round-A_Agent1": "gemini-1.5-flash", "round-A_Agent2": "gpt-4o-mini"}
NO_ABSTRACT_SOURCE = "replay-title-only"


def label_of(score: str) -> str:
    """LatteReview's 1-5 score as a screen label: 1-2 exclude, 3 cannot_be_determined, 4-5 include."""
    s = int(float(score))
    return "exclude" if s <= 2 else "cannot_be_determined" if s == 3 else "include"


def reviews() -> list[tuple[str, Path, str]]:
    """(name, file, kind) of every reviewed file."""
    out = []
    for file in sorted(DATA.glob("*_reviewed.csv.gz")):
        stem = file.name.removesuffix("_reviewed.csv.gz")
        kind, _, name = stem.partition("_")
        out.append((name, file, kind))
    return out


def criteria_text(kind: str, name: str) -> str:
    """The review's inclusion and exclusion criteria as one text (criteria.json, from the LatteReview notebooks)."""
    crit = json.loads((DATA / "criteria.json").read_text(encoding="utf-8"))[kind][name]

    def flat(v) -> str:
        return "\n".join(f"- {x}" for x in v.values()) if isinstance(v, dict) else str(v)
    return (f"Inclusion criteria:\n{flat(crit['inclusion_criteria'])}\n\n"
            f"Exclusion criteria:\n{flat(crit['exclusion_criteria'])}\n")


def read_review(file: Path, kind: str, name: str, answer=label_of) -> list[dict]:
    """One row per work: id, title, abstract, human label, and the two recorded answers (each score read by
    `answer`: the screen's label by default; bench/digest_judge_replay.py keeps the score)."""
    csv.field_size_limit(sys.maxsize)
    rows, seen = [], set()
    with gzip.open(file, "rt", encoding="utf-8", newline="") as f:
        for i, r in enumerate(csv.DictReader(f)):
            if kind == "synergy":
                wid = "openalex:" + r["openalex_id"].rsplit("/", 1)[-1]
                included = r["label_included"] == "1"
            else:
                doi = (r.get("DOI") or "").strip()
                wid = f"doi:{doi.lower()}" if doi else f"row:{name}-{i}"
                included = r[name].strip().lower() in ("1", "true", "yes", "1.0")
            if wid in seen:
                wid = f"{wid}#row{i}"
            seen.add(wid)
            rows.append({"work_id": wid, "title": r["title"] or None, "abstract": r["abstract"] or None,
                         "included": included,
                         "answers": {MODELS[a]: (answer(r[f"{a}_evaluation"]), r[f"{a}_reasoning"] or "")
                                     for a in MODELS}})
    return rows


def write_workspace(root: Path, rows: list[dict], kind: str, name: str, base_url: str) -> None:
    """The review as a workspace: pool, labels, a one-rule book, criteria and two voters."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({
        "work_id": [r["work_id"] for r in rows],
        "source": [kind if r["abstract"] else NO_ABSTRACT_SOURCE for r in rows],
        "title": [r["title"] for r in rows],
        "abstract": [r["abstract"] for r in rows],
    }), root / "pool.parquet")
    with open(root / "labels.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["work_id", "label"])
        for r in rows:
            w.writerow([r["work_id"], "include" if r["included"] else "exclude"])
    (root / "specs" / "rules").mkdir(parents=True)
    (root / "specs" / "rules" / "all.json").write_text(json.dumps([{
        "id": "every-titled-work", "description": "The review's candidates: every work with a title",
        "pile": "screen", "precedence": 10, "match": {"not": {"empty": "title"}}}]), encoding="utf-8")
    (root / "specs" / "piles.json").write_text(json.dumps({"piles": [
        {"name": "discard", "kind": "discard"}, {"name": "hold", "kind": "hold"},
        {"name": "screen", "kind": "screen", "tier": "expensive"}, {"name": "pending", "kind": "pending"}],
        "title_only_sources": [NO_ABSTRACT_SOURCE]}), encoding="utf-8")
    (root / "criteria.md").write_text(criteria_text(kind, name), encoding="utf-8")
    voters = "".join(
        f'\n[[screen.expensive.voters]]\nname = "{model}"\nbase_url = "{base_url}"\nmodel = "{model}"\n'
        f"max_concurrency = 16\nprice_in_per_mtok = 0.15\nprice_out_per_mtok = 0.60\n"
        for model in MODELS.values())
    (root / "reporter.toml").write_text(
        'pool = "pool.parquet"\nlabels = "labels.csv"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n\n'
        '[screen]\ndatabase = "state/screen.db"\nraw_dir = "state/raw"\ncriteria = "criteria.md"\n' + voters,
        encoding="utf-8")


def script(rows: list[dict]) -> dict:
    """The fake server's script: each work's recorded answer per model, found by its title."""
    titles, answers = {}, {}
    for r in rows:
        if r["title"] and r["title"] not in titles:
            titles[r["title"]] = r["work_id"]
            answers[r["work_id"]] = {m: {"label": lab, "reason": why} for m, (lab, why) in r["answers"].items()}
    return {"titles": titles, "answers": answers, "default": {"content": "no recorded answer"}, "latency": 0}


def agreement(pairs: list[tuple[str, str]]) -> tuple[float | None, float | None]:
    """(observed agreement, Cohen's kappa) over the pairs where both replies were valid (the status page's numbers)."""
    from reporter.screening.report import cohen_kappa
    return cohen_kappa([p for p in pairs if "invalid" not in p])


def measure(name: str, file: Path, kind: str) -> dict:
    """Replay one review end to end and compute its figures."""
    from reporter.routing.labels import wilson
    from reporter.panel.store import open_store
    rows = read_review(file, kind, name)
    with tempfile.TemporaryDirectory(prefix=f"replay-{name}-") as tmp:
        root = Path(tmp)
        (root / "script.json").write_text(json.dumps(script(rows)), encoding="utf-8")
        server = subprocess.Popen([sys.executable, str(FAKE), "--port", "0", "--script", str(root / "script.json")],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            base_url = server.stdout.readline().strip()
            write_workspace(root, rows, kind, name, base_url)
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            subprocess.run([BIN / "reporter", "route", "--workspace", str(root), "--json"], check=True,
                           env=env, stdout=subprocess.DEVNULL)
            t0 = time.perf_counter()
            subprocess.run([BIN / "reporter", "screen", "--workspace", str(root), "--tier", "expensive", "--run",
                            "--json"], check=True, env=env, stdout=subprocess.DEVNULL)
            seconds = time.perf_counter() - t0
            import urllib.request
            counts = json.loads(urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/counts").read())
        finally:
            server.terminate()
            server.wait()
        generation = current_generation(root, "expensive")
        store = open_store(str(root / "state" / "screen.db"), readonly=True, where="[screen] database")
        votes = store.votes("expensive", generation)
        verdicts = store.verdicts("expensive", generation)
        store.close()
    by_id = {r["work_id"]: r for r in rows}
    screened = [w for w in verdicts]
    includes = [w for w in screened if by_id[w]["included"]]
    admitted = [w for w in includes if verdicts[w] == "admit"]
    discarded = sum(1 for w in screened if verdicts[w] == "discard")
    a, b = MODELS.values()
    pairs = [(votes[w][a].vote.answer or "invalid", votes[w][b].vote.answer or "invalid") for w in screened]
    strict = {w for w in screened if all(votes[w][m].vote.answer == "include" for m in (a, b))}
    n_inc = len(includes)
    lo, hi = wilson(len(admitted), n_inc) if n_inc else (0.0, 0.0)
    slo, shi = wilson(sum(1 for w in includes if w in strict), n_inc) if n_inc else (0.0, 0.0)
    asked = {tuple(x[:2]): x[2] for x in counts["counts"]}
    return {
        "review": f"{kind}/{name}", "works": len(rows), "human_includes": sum(r["included"] for r in rows),
        "screened": len(screened), "screened_includes": n_inc,
        "requests": counts["total"], "max_requests_per_work_voter": max(asked.values(), default=0),
        "recall": len(admitted) / n_inc if n_inc else None, "recall_ci": [lo, hi],
        "work_saved": discarded / len(screened) if screened else None,
        "agreement": agreement(pairs)[0], "kappa": agreement(pairs)[1],
        "strict_recall": sum(1 for w in includes if w in strict) / n_inc if n_inc else None,
        "strict_recall_ci": [slo, shi],
        "strict_work_saved": (len(screened) - len(strict)) / len(screened) if screened else None,
        "screen_seconds": seconds,
    }


def current_generation(root: Path, tier: str) -> str:
    """The workspace's current generation of `tier`, as the runner computes it."""
    from reporter.config import load_workspace
    from reporter.panel.prompt import generation_for
    from reporter.screening.prompt import load_prompt
    ws = load_workspace(root)
    return generation_for(tier, getattr(ws.screen, tier), load_prompt(ws.screen)).id


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="a review name, e.g. Oud_2018 or search1")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to replay", file=sys.stderr)
        return 2
    results = [measure(n, f, k) for n, f, k in reviews() if not args.only or args.only == n]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| review | works | human incl. | screened | requests | recall (95% CI) | work saved | agreement | kappa "
          "| both-include recall (95% CI) | both-include work saved |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|")
    for r in results:
        print(f"| {r['review']} | {r['works']:,} | {r['human_includes']:,} | {r['screened']:,} | {r['requests']:,} "
              f"| {pct(r['recall'])} ({r['recall_ci'][0]:.2f}-{r['recall_ci'][1]:.2f}) | {pct(r['work_saved'])} "
              f"| {pct(r['agreement'])} | {'—' if r['kappa'] is None else format(r['kappa'], '.2f')} "
              f"| {pct(r['strict_recall'])} ({r['strict_recall_ci'][0]:.2f}-{r['strict_recall_ci'][1]:.2f}) "
              f"| {pct(r['strict_work_saved'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
