"""A real-data catch-up: the arXiv daily listings, bucketed by ISO week of crawl_date, on language-model evaluation.

Skipped when ../shared/data is absent. The listings are split into one file
per ISO week (the listing format as it is: read_papers reads it), then the
weeks run in order as one catch-up (pattern B) with the watchlist and
criteria of tests/fixtures/digest/lm-evaluation/. Each week's counts are
printed (`pytest -s` shows them).
"""

from __future__ import annotations

import datetime as dt
import gzip
import itertools
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from reporter.digest.archive import week_of, week_start
from reporter.digest.config import DigestSettings
from reporter.digest.weeks import prepare_weeks, run_weeks

pytestmark = pytest.mark.realdata

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arxiv_daily"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest" / "lm-evaluation"


@pytest.fixture(scope="module")
def catch_up(tmp_path_factory):
    files = sorted(DATA.glob("*.jsonl.gz"))
    if not files:
        pytest.skip(f"arXiv daily listings not found in {DATA}")
    root = tmp_path_factory.mktemp("arxiv-digest")
    weeks: dict[str, list[str]] = {}
    listed: Counter = Counter()
    for file in files:
        with gzip.open(file, "rt", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                weeks.setdefault(week_of(dt.date.fromisoformat(row["crawl_date"])), []).append(line)
                listed[(week_of(dt.date.fromisoformat(row["crawl_date"])), row["id"])] += 1
    (root / "papers").mkdir()
    for week, lines in weeks.items():
        (root / "papers" / f"{week}.jsonl").write_text("".join(lines), encoding="utf-8")
    settings = DigestSettings(papers=root / "papers", watchlist=FIXTURES / "watchlist.txt",
                              criteria=FIXTURES / "criteria.md", archive=root / "archive")
    order = sorted(weeks, key=week_start)
    return run_weeks(settings, order), listed, settings


def test_every_week_is_decided_and_its_counts_printed(catch_up):
    results, *_ = catch_up
    for r in results:
        c = r.outcome.calibration
        print(f"{r.week}: {c.kept} kept, {c.review} review, {c.dropped} dropped "
              f"({c.force_dropped_already_covered} already covered, {c.demoted_for_cap} demoted for the cap, "
              f"stricter pass {'applied' if c.stricter_pass_applied else 'not needed'}; "
              f"{len(r.document['merges'])} merges)")
        assert c.kept + c.review + c.dropped == len(r.outcome.decisions) > 0
        assert c.kept <= 25
        assert all(d.relevance is not None and d.categories and d.authors for d in r.outcome.decisions)
    assert sum(r.outcome.calibration.kept for r in results) > 0


def test_no_id_is_kept_in_two_weeks_within_four_weeks(catch_up):
    results, *_ = catch_up
    kept: dict[str, list[str]] = {}
    for r in results:
        for d in r.outcome.decisions:
            if d.decision == "KEEP":
                kept.setdefault(d.id, []).append(r.week)
    for id_, weeks in kept.items():
        for a, b in itertools.pairwise(weeks):
            gap = (week_start(b) - week_start(a)).days // 7
            assert gap > 4, f"{id_} kept in {a} and {b}"


def test_repeated_listings_of_one_id_are_merged(catch_up):
    results, listed, _ = catch_up
    repeated = 0
    for r in results:
        ids = [d.id for d in r.outcome.decisions]
        assert len(ids) == len(set(ids)), f"{r.week}: an id decided twice"
        distinct = {i for (w, i) in listed if w == r.week}
        folded = sum(len(m["merged_ids"]) for m in r.document["merges"] if m["reason"] != "same id")
        assert len(ids) + folded == len(distinct)  # one decision per id; other merges fold whole ids
        assert set(ids) <= {f"arxiv:{i}" for i in distinct}
        repeated += sum(n > 1 for (w, _), n in listed.items() if w == r.week)
    assert repeated > 0  # the data does list ids more than once in a week


def test_every_drop_has_a_rationale_naming_its_cause(catch_up):
    results, *_ = catch_up
    causes: Counter = Counter()
    for r in results:
        for d in r.outcome.decisions:
            if d.decision == "DROP":
                causes[d.cause] += 1
                assert d.rationale.startswith(f"DROP ({d.cause}): ")
                if d.cause in ("look-alike-trap", "fails-required", "not-in-scope"):
                    assert "criteria.md:" in d.rationale
                if d.cause == "already-covered":
                    assert " kept in 2026-W" in d.rationale
    print("drop causes:", dict(sorted(causes.items())))
    assert causes["weak-match"] > 0 and causes["fails-required"] + causes["look-alike-trap"] > 0


def test_a_tight_cap_on_a_real_week_runs_the_stricter_pass_and_never_drops_a_keep(catch_up):
    results, _, settings = catch_up
    week = max(results, key=lambda r: r.outcome.calibration.kept)
    before = {d.id: d.decision for d in week.outcome.decisions}
    [capped] = prepare_weeks(replace(settings, max_kept=5), [week.week], force=True)
    c = capped.outcome.calibration
    print(f"{week.week} with max_kept 5: {c.kept} kept, {c.review} review, {c.dropped} dropped "
          f"({c.demoted_for_cap} demoted for the cap, stricter pass applied: {c.stricter_pass_applied})")
    assert c.kept == 5 and c.stricter_pass_applied
    for d in capped.outcome.decisions:
        if before[d.id] == "KEEP":
            assert d.decision in ("KEEP", "REVIEW")
