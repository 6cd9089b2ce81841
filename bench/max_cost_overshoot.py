"""How far `--max-cost` lets a run's spend pass its cap (issue 30, item 6).

The issue's case: `max_concurrency = 1`, answers of about $0.0011 each, a
cap of $0.001; before the fix, the cap was compared with the spend after the
fact and a whole claimed batch was bought ($0.033). Now each request's worst
case (its prompt's tokens plus `max_tokens`, at the voter's prices) is
reserved before it is sent.

`reporter judge --run --max-cost CAP` (one judge, 30 papers, batch 32, as a
subprocess) against the fake OpenAI-compatible server of
tests/support/fake_openai.py, its prices set so one answer costs about
$0.0011, at three caps; per cap: the requests sent, the spend, and the
overshoot (spend minus cap; negative: under it), the exit status (4: a limit
stopped it; issue 34, item 2) and one batch's worst case (batch size times a
request's prompt plus max_tokens at the prices: the issue's bound on the
overshoot).

With `--budget` the limit is the workspace's (`[digest.judge] budget = CAP`,
over all runs of the generation, read from the state database) instead of
`--max-cost`, and the same command is run a second time: a budget kept in
memory would start again at zero; here the re-run sends at most what the
first left unreserved, and the total overshoot is over both runs.

    .venv/bin/python bench/max_cost_overshoot.py [--caps 0.001 0.01 0.05] [--max-tokens 30] [--concurrency 1]
        [--latency 0] [--budget]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_openai import FakeOpenAI  # noqa: E402
from support.judge import KEY, KEY_ENV, judge_workspace, judgement  # noqa: E402

WEEK = "2026-W20"
PAPERS = 30
ANSWER_USD = 0.0011


def judge_run(root: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "reporter.cli", "judge", "--workspace", str(root), "--week", WEEK,
                          "--run", "--json", *args], env={**os.environ, KEY_ENV: KEY}, capture_output=True,
                         text=True, timeout=600)
    if out.returncode not in (0, 4):
        raise SystemExit(out.stderr[-2000:])
    return {**json.loads(out.stdout), "exit": out.returncode}


def batch_worst(root: Path) -> float:
    """One batch's worst case: batch_size requests of the judge, each its prompt plus max_tokens at its prices."""
    from reporter.config import load_workspace
    from reporter.digest.judge.prompt import judge_setup
    from reporter.digest.judge.run import paper_work, week_papers
    from reporter.panel.budget import Budget
    from reporter.panel.prompt import messages_for
    digest = load_workspace(root).digest
    setup = judge_setup(digest.judge, digest.criteria)
    work = paper_work(week_papers(digest, WEEK)[0])
    messages = messages_for(setup.prompt, work.title, work.abstract, False)
    return digest.judge.batch_size * Budget(1.0).worst_case(digest.judge.voters[0], messages)


def workspace(root: Path, base_url: str, price: float, max_tokens: int, concurrency: int = 1) -> dict:
    w = judge_workspace(root, base_url, {WEEK: PAPERS}, judges=1, batch_size=32, concurrency=concurrency)
    toml = root / "reporter.toml"
    text = toml.read_text().replace("price_in_per_mtok = 1.0", f"price_in_per_mtok = {price!r}")
    text = text.replace("price_out_per_mtok = 2.0", f"price_out_per_mtok = {price!r}\nmax_tokens = {max_tokens}")
    toml.write_text(text)
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", type=float, nargs="+", default=[0.001, 0.01, 0.05])
    parser.add_argument("--max-tokens", type=int, default=30, help="each judge's max_tokens (the worst output)")
    parser.add_argument("--concurrency", type=int, default=1, help="the judge's max_concurrency (requests in flight)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the server waits before each answer")
    parser.add_argument("--budget", action="store_true",
                        help="cap with [digest.judge] budget (over runs) instead of --max-cost, and run twice")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(default=judgement(), latency=args.latency) as server:
        # One uncapped answer at $1 per million tokens sizes the price that makes an answer cost ANSWER_USD.
        probe = workspace(Path(tmp) / "probe", server.base_url, 1.0, args.max_tokens)
        server.titles = probe["titles"]
        first = judge_run(probe["root"])
        per_answer = first["spend_usd"] / first["weeks"][0]["votes"]
        price = 1.0 * ANSWER_USD / per_answer
        print(f"{PAPERS} papers, one judge, max_concurrency {args.concurrency}, latency {args.latency} s, batch 32, max_tokens {args.max_tokens}, "
              f"price ${price:.2f} per million tokens: about ${ANSWER_USD} an answer")
        limit = "[digest.judge] budget, run twice" if args.budget else "--max-cost"
        print(f"limit: {limit}")
        print(f"{'cap':>8} {'sent':>5} {'spend':>9} {'overshoot':>10} {'batch worst':>11}  exit  stopped"
              + ("   re-run: sent exit" if args.budget else ""))
        for cap in args.caps:
            w = workspace(Path(tmp) / f"cap-{cap}", server.base_url, price, args.max_tokens, args.concurrency)
            server.titles = w["titles"]
            if args.budget:
                toml = w["root"] / "reporter.toml"
                toml.write_text(toml.read_text().replace("[digest.judge]\n", f"[digest.judge]\nbudget = {cap!r}\n"))
            before = server.total
            report = judge_run(w["root"], *(() if args.budget else ("--max-cost", repr(cap))))
            sent = server.total - before
            spend = report["spend_usd"]
            again = ""
            if args.budget:
                before = server.total
                second = judge_run(w["root"])
                spend += second["spend_usd"]
                again = f"   {server.total - before:>13} {second['exit']:>4}"
                sent += server.total - before
            stopped = report["stopped_by_budget"] if args.budget else report["stopped_by_max_cost"]
            print(f"${cap:<7g} {sent:>5} ${spend:>8.5f} {spend - cap:>+10.5f} ${batch_worst(w['root']):>10.5f}  "
                  f"{report['exit']:>4}  {stopped}{again}")


if __name__ == "__main__":
    main()
