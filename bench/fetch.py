"""A week from every source against the local fake servers: requests per source, and a cached re-run.

The server is tests/support/fake_sources.py (each API's wire format, the
fixtures of tests/fixtures/fetch/). With `--scale N` each source's week is
N times its fixture papers, each copy under new ids, so the requests follow
a week of a realistic size. Requests are sent without the etiquette waits
(min_interval_seconds = 0); the time the etiquette would add is printed
beside them (requests less one, times the source's interval).

Measured: the first fetch (in this process), a re-run answered entirely
from the cache (in this process, and as a `reporter fetch` process, start
to exit), and the requests each source sent.

    .venv/bin/python bench/fetch.py [--scale 1] [--page-size 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from reporter.fetch.config import SOURCES  # noqa: E402
from support.fake_sources import ALL, FakeSources, run_fetch, workspace_toml  # noqa: E402

LAUNCH = ("import sys; from reporter import cli; cli.COMMAND_MODULES = ('reporter.fetch.commands',); "
          "sys.exit(cli.main(sys.argv[1:]))")
"""`reporter fetch` as a process with only its own command registered (the other commands' imports aside)."""


def scale(fake: FakeSources, n: int) -> None:
    """Make each source's week n copies of its fixture papers, each copy under new ids."""
    if n <= 1:
        return
    entries = fake.arxiv_entries
    fake.arxiv_entries = [re.sub(r"abs/2605\.\d{5}", f"abs/2605.{k * len(entries) + j:05d}", e)
                          for k in range(n) for j, e in enumerate(entries)]
    for server in ("biorxiv", "medrxiv"):
        fake.rows[server] = [{**r, "doi": f"{r['doi']}.{k}"} for k in range(n) for r in fake.rows[server]]
    articles = fake.articles
    fake.articles = [re.sub(r">4(0999999|100000\d)<", f">{50_000_000 + k * len(articles) + j}<", a)
                     for k in range(n) for j, a in enumerate(articles)]
    fake.works = [{**w, "id": f"{w['id']}{k:05d}", "ids": {**w["ids"], "openalex": f"{w['id']}{k:05d}"}}
                  for k in range(n) for w in fake.works]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="copies of each fixture paper (default 1)")
    parser.add_argument("--page-size", type=int, default=None,
                        help="records a page for arXiv, PubMed, OpenAlex (default: the real defaults)")
    args = parser.parse_args()
    fake = FakeSources(biorxiv_page_size=args.page_size or 100)
    scale(fake, args.scale)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        text = workspace_toml(fake, ALL, page_size=args.page_size or 0)
        if args.page_size is None:
            text = text.replace("page_size = 0\n", "")
        (root / "reporter.toml").write_text(text)
        started = time.perf_counter()
        first = run_fetch(root, ALL)
        first_s = time.perf_counter() - started
        sent = len(fake.log)
        started = time.perf_counter()
        again = run_fetch(root, ALL)
        cached_s = time.perf_counter() - started
        assert len(fake.log) == sent and again.records == first.records
        argv = ["fetch", "--workspace", str(root), "--since", "2026-05-11", "--until", "2026-05-17",
                "--out", str(root / "week.jsonl"), "--as-of", "2026-06-01", "--json"]
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", LAUNCH, *argv], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        process_s = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        process_cpu = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        assert len(fake.log) == sent, "the cached re-run sent a request"
        summary = json.loads(done.stdout)
    fake.close()
    print(f"scale {args.scale}, page size {args.page_size or 'default'}: {len(first.records):,} records")
    print(f"{'source':<9} {'records':>8} {'requests':>8} {'etiquette':>10}")
    for report in first.reports:
        interval = SOURCES[report.source][1]
        print(f"{report.source:<9} {report.records:>8,} {report.sent:>8} {max(report.sent - 1, 0) * interval:>9.1f}s")
    pages = sum(s["answered_from_cache"] for s in summary["sources"])
    print(f"first fetch {first_s:.2f} s; cached re-run (0 requests, {pages} pages from the cache): {cached_s:.3f} s "
          f"in process; as a `reporter fetch` process {process_s:.2f} s wall, {process_cpu:.2f} s CPU "
          f"(interpreter start and imports included)")


if __name__ == "__main__":
    main()
