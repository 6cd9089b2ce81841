"""Cut the example digest's two real weeks out of the shared arXiv listing (examples/digest/README.md).

    python examples/digest/select.py ../shared/data/arxiv_daily/arxiv_daily_2026-05-06_to_2026-07-01.jsonl.gz

Keeps every listing row of ISO weeks 2026-W25 and 2026-W26 that carries the category cs.GT (computer
science and game theory), as it is, in listing order; writes examples/digest/papers/2026-W25.jsonl and
2026-W26.jsonl. Same input, same bytes.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import sys
from pathlib import Path

WEEKS = ("2026-W25", "2026-W26")
CATEGORY = "cs.GT"
HERE = Path(__file__).resolve().parent


def week_of(day: str) -> str:
    year, week, _ = dt.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def main(listing: Path) -> None:
    lines: dict[str, list[str]] = {week: [] for week in WEEKS}
    with gzip.open(listing, "rt", encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            week = week_of(row["crawl_date"])
            if week in lines and CATEGORY in row["categories"]:
                lines[week].append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    for week, rows_of_week in lines.items():
        (HERE / "papers" / f"{week}.jsonl").write_text("".join(r + "\n" for r in rows_of_week), encoding="utf-8")
        print(f"{week}: {len(rows_of_week)} listing rows")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
