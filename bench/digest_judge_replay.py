"""The criteria judge on real recorded answers: LatteReview's SYNERGY reviews as digest weeks, per review.

`../shared/data/lattereview_llm_votes/` holds the answers two real models
gave (round A of LatteReview: Agent1 = gemini-1.5-flash, Agent2 =
gpt-4o-mini, each a score 1-5 with a reason) on four SYNERGY reviews, beside
the human labels. For each review this script:

1. writes a digest workspace in a temporary folder: the review's titled works
   as one week's papers (`openalex:W...` ids), the criteria document and the
   watchlist committed in bench/judge_replay/<review>/ (written from the
   review's criteria.json before any run, not tuned on the labels), and a
   `[digest.judge]` with two judges named after the two models;
2. starts the fake OpenAI-compatible server (tests/support/fake_openai.py,
   process mode) scripted with the recorded answers as judge answers:
   score 5 `in_scope`, 4 `borderline`, 3 `silent`, 2 `partial`, 1
   `out_of_scope`, citing the document's first In scope line (its first Out
   of scope line for 1), with the recorded reason;
3. runs `reporter judge --run` as a whole process and checks from the
   server's counts that each judge was asked once per paper (a title two
   papers share is one key of the script: asked once per paper holding it),
   then `reporter digest` twice with no prior (pattern D) and the default
   cap: with the judge, and with the keyword rule alone (no
   `[digest.judge]`: the same criteria's terms).

Printed per review, never pooled: papers, human includes, and for the
keyword rule and for the judge the KEEPs, KEEP precision (included KEEPs /
KEEPs), KEEP+REVIEW and its recall (included KEEPs and REVIEWs / included),
each recall with its Wilson 95% interval; then the papers the two judges
disagree on and the keyword-against-judge rows of decisions.json.

    PYTHONPATH=. .venv/bin/python bench/digest_judge_replay.py [--only Oud_2018] [--max-kept 25] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from screen_replay import BIN, DATA, FAKE, MODELS, ROOT, read_review

from reporter.digest.criteria import IN_SCOPE, OUT_OF_SCOPE, load_criteria

REVIEWS = ("Donners_2021", "Jeyaraman_2020", "Meijboom_2021", "Oud_2018")
DOCUMENTS = ROOT / "bench" / "judge_replay"
WEEK = "2026-W20"
FITS = {5: "in_scope", 4: "borderline", 3: "silent", 2: "partial", 1: "out_of_scope"}
"""A LatteReview score as the judge's fit."""


def fit_of(score: str) -> str:
    return FITS[int(float(score))]


def judge_script(rows: list[dict], lines: dict[str, int]) -> dict:
    """The fake server's script: each paper's recorded answers as judge answers, found by its title."""
    titles, answers = {}, {}
    for r in rows:
        if r["title"] not in titles:
            titles[r["title"]] = r["work_id"]
            answers[r["work_id"]] = {m: {"content": json.dumps({
                "fit": fit, "criteria_lines": [lines[OUT_OF_SCOPE if fit == "out_of_scope" else IN_SCOPE]],
                "reason": why})} for m, (fit, why) in r["answers"].items()}
    return {"titles": titles, "answers": answers, "default": {"content": "no recorded answer"}, "latency": 0}


def write_week(root: Path, rows: list[dict], review: str, base_url: str, max_kept: int) -> None:
    """The review as one digest week, in a workspace whose digest has the two judges."""
    (root / "papers").mkdir()
    with open(root / "papers" / f"{WEEK}.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"id": r["work_id"], "title": r["title"], "abstract": r["abstract"]}) + "\n")
    judges = "".join(f'\n[[digest.judge.voters]]\nname = "{m}"\nbase_url = "{base_url}"\nmodel = "{m}"\n'
                     f"max_concurrency = 16\nprice_in_per_mtok = 0.15\nprice_out_per_mtok = 0.60\n"
                     for m in MODELS.values())
    (root / "reporter.toml").write_text(
        'pool = "pool.parquet"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n\n'
        f'[digest]\npapers = "papers"\nwatchlist = "{DOCUMENTS / review / "watchlist.txt"}"\n'
        f'criteria = "{DOCUMENTS / review / "criteria.md"}"\narchive = "judged"\nmax_kept = {max_kept}\n\n'
        '[digest.judge]\ndatabase = "state/judge.db"\nraw_dir = "state/judge-raw"\nbatch_size = 64\n' + judges,
        encoding="utf-8")


@contextlib.contextmanager
def fake_server(script: dict, folder: Path) -> Iterator[str]:
    """The fake OpenAI-compatible server in its own process, scripted; yields its base URL."""
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    server = subprocess.Popen([sys.executable, str(FAKE), "--port", "0", "--script", str(folder / "script.json")],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait()


def figures(decisions: list[dict], included: set[str]) -> dict:
    """KEEPs, KEEP precision, KEEP+REVIEW and its recall of the included papers."""
    from reporter.routing.labels import wilson
    keeps = {d["id"] for d in decisions if d["decision"] == "KEEP"}
    kept_or_review = {d["id"] for d in decisions if d["decision"] in ("KEEP", "REVIEW")}
    found = len(included & kept_or_review)
    return {"keeps": len(keeps), "keep_included": len(keeps & included),
            "keep_precision": len(keeps & included) / len(keeps) if keeps else None,
            "keep_review": len(kept_or_review), "recall": found / len(included) if included else None,
            "recall_ci": list(wilson(found, len(included))) if included else [0.0, 0.0]}


def measure(review: str, max_kept: int) -> dict:
    """Replay one review: judge it through the fake server, decide it with the judge and with the keyword rule."""
    rows = [r for r in read_review(DATA / f"synergy_{review}_reviewed.csv.gz", "synergy", review, answer=fit_of)
            if r["title"] and r["title"].strip()]
    for r in rows:
        r["title"] = " ".join(r["title"].split())  # as the fake reads it back from the prompt's `Title: ` line
    criteria = load_criteria(DOCUMENTS / review / "criteria.md")
    lines = {s: next(c.line for c in criteria.concepts if c.section == s) for s in (IN_SCOPE, OUT_OF_SCOPE)}
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory(prefix=f"judge-replay-{review}-") as tmp:
        root = Path(tmp)
        with fake_server(judge_script(rows, lines), root) as base_url:
            write_week(root, rows, review, base_url, max_kept)
            subprocess.run([BIN / "reporter", "judge", "--workspace", str(root), "--week", WEEK, "--run", "--json"],
                           check=True, env=env, stdout=subprocess.DEVNULL)
            counts = json.loads(urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/counts").read())
        subprocess.run([BIN / "reporter", "digest", "--workspace", str(root), "--week", WEEK, "--no-prior",
                        "--json"], check=True, env=env, stdout=subprocess.DEVNULL)
        subprocess.run([BIN / "reporter", "digest", "--papers", str(root / "papers"),
                        "--watchlist", str(DOCUMENTS / review / "watchlist.txt"),
                        "--criteria", str(DOCUMENTS / review / "criteria.md"), "--archive", str(root / "keyword"),
                        "--week", WEEK, "--no-prior", "--max-kept", str(max_kept), "--json"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        judged = json.loads((root / "judged" / WEEK / "decisions.json").read_text(encoding="utf-8"))
        keyword = json.loads((root / "keyword" / WEEK / "decisions.json").read_text(encoding="utf-8"))
    holding = Counter(r["title"] for r in rows)
    asked = {(work, model): n for work, model, n in counts["counts"]}
    first = {}
    for r in rows:
        first.setdefault(r["title"], r["work_id"])
    expected = {(first[t], m): n for t, n in holding.items() for m in MODELS.values()}
    included = {r["work_id"] for r in rows if r["included"]}
    sources = Counter(d["criteria_source"] for d in judged["decisions"])
    return {
        "review": review, "papers": len(rows), "human_includes": len(included),
        "requests": counts["total"], "asked_once_per_paper_and_judge": asked == expected,
        "keyword": figures(keyword["decisions"], included), "judge": figures(judged["decisions"], included),
        "judged_by": dict(sources), "judges_disagree": sum("judges-disagree" in d["tags"] for d in judged["decisions"]),
        "keyword_vs_judge": len(judged["judge"]["keyword_disagreements"]["papers"]),
    }


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="one review, e.g. Oud_2018")
    ap.add_argument("--max-kept", type=int, default=25, help="the digest's cap (default 25)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to replay", file=sys.stderr)
        return 2
    results = [measure(r, args.max_kept) for r in REVIEWS if not args.only or args.only == r]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"max_kept {args.max_kept}, no prior; KEEP precision = included KEEPs / KEEPs; recall = included KEEPs "
          f"and REVIEWs / included (Wilson 95%)")
    print("| review | papers | human incl. | requests | rule | KEEPs | KEEP precision | KEEP+REVIEW | KEEP+REVIEW "
          "recall (95% CI) | judges disagree | keyword vs judge |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|")
    for r in results:
        for rule in ("keyword", "judge"):
            f = r[rule]
            tail = (f"{r['judges_disagree']:,} | {r['keyword_vs_judge']:,}" if rule == "judge" else " | ")
            head = (f"| {r['review']} | {r['papers']:,} | {r['human_includes']:,} | "
                    f"{r['requests']:,}{'' if r['asked_once_per_paper_and_judge'] else ' (!)'} "
                    if rule == "keyword" else "| | | | ")
            print(f"{head}| {rule} | {f['keeps']:,} | {pct(f['keep_precision'])} ({f['keep_included']}) "
                  f"| {f['keep_review']:,} | {pct(f['recall'])} ({f['recall_ci'][0]:.2f}-{f['recall_ci'][1]:.2f}) "
                  f"| {tail} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
