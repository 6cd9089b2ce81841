"""A digest workspace with a criteria judge on the fake OpenAI-compatible server, for the judge's tests.

`judge_workspace` writes reporter.toml ([digest] with [digest.judge] and
its judges at the server's URL), a criteria document, a watchlist and one
papers file per week; papers are titled `Paper P001 ...` so the fake server's
work key (the title) names them. `judgement` is a reply's content as a
judge gives it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.fake_openai import Content

KEY_ENV = "JUDGE_TEST_KEY"
KEY = "sk-judge-SECRET-4b1d"
MODELS = ("judge-model-a", "judge-model-b")
CRITERIA = """# Criteria for the judge's tests

## In scope
- Models as judges of other models: `LLM judge*`
- Benchmarks that measure language models

## Out of scope
- Vision-only benchmarks

## Required
- Must involve language models
"""
"""Concept lines: In scope 4 and 5, Out of scope 8, Required 11."""
IN_SCOPE_LINE, OUT_LINE = 4, 8


def title_of(paper: str) -> str:
    return f"Paper {paper} on judges"


def judgement(fit: str = "in_scope", lines: tuple[int, ...] | None = None, reason: str = "It fits.") -> Content:
    """A judge's reply: the answer object as the message's content."""
    if lines is None:
        lines = () if fit == "silent" else (OUT_LINE if fit == "out_of_scope" else IN_SCOPE_LINE,)
    return Content(json.dumps({"fit": fit, "criteria_lines": list(lines), "reason": reason}))


def judge_workspace(root: Path, base_url: str, weeks: dict[str, int], *, judges: int = 2, batch_size: int = 4,
                    concurrency: int = 4, lease_seconds: int = 300, timeout: float = 30,
                    database: str = "state/judge.db", criteria: str = CRITERIA) -> dict[str, Any]:
    """A workspace whose weeks hold `weeks[week]` papers each (P001, P002, ... across the weeks, in order)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "papers").mkdir(exist_ok=True)
    titles, papers, ids, n = {}, {}, {}, 0
    for week, count in weeks.items():
        lines = []
        for _ in range(count):
            n += 1
            paper = f"P{n:03d}"
            titles[title_of(paper)] = paper
            papers[paper] = week
            ids[f"arxiv:2605.{n:05d}"] = paper
            lines.append(json.dumps({"id": f"arxiv:2605.{n:05d}", "title": title_of(paper),
                                     "abstract": f"An LLM judge study, number {n}, of language models."}))
        (root / "papers" / f"{week}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (root / "criteria.md").write_text(criteria, encoding="utf-8")
    (root / "watchlist.txt").write_text("judge*\n", encoding="utf-8")
    voters = "".join(f"""
[[digest.judge.voters]]
name = "judge-{'ab'[i]}"
base_url = "{base_url}"
model = "{MODELS[i]}"
api_key_env = "{KEY_ENV}"
max_concurrency = {concurrency}
price_in_per_mtok = 1.0
price_out_per_mtok = 2.0
timeout_seconds = {timeout}
""" for i in range(judges))
    (root / "reporter.toml").write_text(f"""
pool = "pool.parquet"
specs = "specs"
releases = "releases"
site = "site"

[digest]
papers = "papers"
watchlist = "watchlist.txt"
criteria = "criteria.md"
archive = "digests"

[digest.judge]
database = "{database}"
raw_dir = "state/judge-raw"
lease_seconds = {lease_seconds}
batch_size = {batch_size}
{voters}""", encoding="utf-8")
    return {"root": root, "titles": titles, "papers": papers, "ids": ids, "db": root / "state" / "judge.db"}
