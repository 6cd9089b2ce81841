"""A real-data catch-up: the whole arXiv daily listing (nine weeks in one file) on language-model evaluation.

Skipped when ../shared/data is absent. The listing file itself is `--papers`: each paper is decided in
the ISO week of its first crawl_date, and a paper relisted in a later week (arXiv relists papers) is
listed again there, not decided again (issue 23, item 6). The weeks run in order as one catch-up
(pattern B) with the watchlist and criteria of tests/fixtures/digest/lm-evaluation/; each week's counts
are printed (`pytest -s` shows them). The same listing split into one file per week decides the same.
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

from reporter.cli import main
from reporter.digest.config import DigestSettings
from reporter.digest.listings import load_papers
from reporter.digest.weeks import prepare_weeks, run_weeks
from reporter.isoweek import week_of, week_start

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arxiv_daily"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest" / "lm-evaluation"
WEEKS = [f"2026-W{n}" for n in range(19, 28)]


def listing_file() -> Path:
    files = sorted(DATA.glob("*.jsonl.gz"))
    if not files:
        pytest.skip(f"arXiv daily listings not found in {DATA}")
    return files[0]


def settings(papers: Path, archive: Path) -> DigestSettings:
    return DigestSettings(papers=papers, watchlist=FIXTURES / "watchlist.txt", criteria=FIXTURES / "criteria.md",
                          archive=archive)


@pytest.fixture(scope="module")
def catch_up(tmp_path_factory):
    """The whole listing as the papers, every week it covers in one catch-up; with each row's (week, id)."""
    listing = listing_file()
    listed: Counter = Counter()
    with gzip.open(listing, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            listed[(week_of(dt.date.fromisoformat(row["crawl_date"])), row["id"])] += 1
    s = settings(listing, tmp_path_factory.mktemp("arxiv-digest") / "archive")
    assert load_papers(listing).weeks() == WEEKS
    return run_weeks(s, WEEKS), listed, s


def test_every_week_is_decided_and_its_counts_printed(catch_up):
    results, *_ = catch_up
    for r in results:
        c = r.outcome.calibration
        again = Counter(f"{a.decision} in {a.week}" for a in r.listed_again)
        print(f"{r.week}: {c.kept} kept, {c.review} review, {c.dropped} dropped "
              f"({c.force_dropped_already_covered} already covered, {c.demoted_for_cap} demoted for the cap, "
              f"stricter pass {'applied' if c.stricter_pass_applied else 'not needed'}; "
              f"{len(r.document['merges'])} merges; listed again: {dict(sorted(again.items()))})")
        assert c.kept + c.review + c.dropped == len(r.outcome.decisions) > 0
        assert c.kept <= 25
        assert all(d.relevance is not None and d.categories and d.authors for d in r.outcome.decisions)
    assert sum(r.outcome.calibration.kept for r in results) > 0


def test_each_listed_paper_is_decided_in_its_first_week_or_listed_again(catch_up):
    results, listed, _ = catch_up
    decided_in: dict[str, list[str]] = {}
    for r in results:
        ids = {d.id for d in r.outcome.decisions}
        again = {a.id for a in r.listed_again}
        merged = {i for m in r.document["merges"] if m["reason"] != "same id" for i in m["merged_ids"]}
        assert len(ids) == len(r.outcome.decisions) and not again & ids, f"{r.week}: an id decided twice"
        assert {f"arxiv:{i}" for (w, i) in listed if w == r.week} == ids | merged | again  # every listing, once
        for i in ids:
            decided_in.setdefault(i, []).append(r.week)
    by_week = {r.week: {d.id: d for d in r.outcome.decisions} for r in results}
    for paper, weeks in decided_in.items():
        for a, b in itertools.pairwise(weeks):  # decided again within four weeks only as a prior KEEP's drop
            if (week_start(b) - week_start(a)).days // 7 <= 4:
                assert by_week[a][paper].decision == "KEEP" and by_week[b][paper].cause == "already-covered"


def test_relisted_papers_are_listed_again_with_their_week_and_decision(catch_up):
    results, *_ = catch_up
    by_week = {r.week: r for r in results}
    w25 = {d.id: d.decision for d in by_week["2026-W25"].outcome.decisions}
    again = by_week["2026-W26"].listed_again
    reviews = [a for a in again if a.week == "2026-W25" and a.decision == "REVIEW"]
    print(f"2026-W26 lists {len(again)} papers again; {len(reviews)} of them 2026-W25's REVIEWs "
          f"(of {sum(v == 'REVIEW' for v in w25.values())})")
    assert len(again) > 200 and reviews
    assert all(w25[a.id] == a.decision for a in again if a.week == "2026-W25")
    doc = json.loads(by_week["2026-W26"].path.read_text(encoding="utf-8"))
    assert doc["listed_again"] == [a.to_json() for a in again]


def test_the_listing_split_into_weeks_decides_the_same(catch_up, tmp_path):
    results, _, _ = catch_up
    weeks: dict[str, list[str]] = {}
    with gzip.open(listing_file(), "rt", encoding="utf-8") as f:
        for line in f:
            weeks.setdefault(week_of(dt.date.fromisoformat(json.loads(line)["crawl_date"])), []).append(line)
    (tmp_path / "papers").mkdir()
    for week, lines in weeks.items():
        (tmp_path / "papers" / f"{week}.jsonl").write_text("".join(lines), encoding="utf-8")
    split = prepare_weeks(settings(tmp_path / "papers", tmp_path / "archive"), WEEKS)
    for whole, apart in zip(results, split):
        assert whole.outcome.decisions == apart.outcome.decisions and whole.listed_again == apart.listed_again


def test_a_rerun_of_the_same_listing_changes_nothing(catch_up, capsys):
    _, _, s = catch_up
    args = ["digest", "--papers", str(s.papers), "--watchlist", str(s.watchlist), "--criteria", str(s.criteria),
            "--archive", str(s.archive), "--from", WEEKS[0], "--to", WEEKS[-1], "--json"]
    assert main(args) == 0
    assert all(json.loads(line)["unchanged"] for line in capsys.readouterr().out.splitlines())


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
    results, _, s = catch_up
    week = max(results, key=lambda r: r.outcome.calibration.kept)
    before = {d.id: d.decision for d in week.outcome.decisions}
    [capped] = prepare_weeks(replace(s, max_kept=5), [week.week], force=True)
    c = capped.outcome.calibration
    print(f"{week.week} with max_kept 5: {c.kept} kept, {c.review} review, {c.dropped} dropped "
          f"({c.demoted_for_cap} demoted for the cap, stricter pass applied: {c.stricter_pass_applied})")
    assert c.kept == 5 and c.stricter_pass_applied
    for d in capped.outcome.decisions:
        if before[d.id] == "KEEP":
            assert d.decision in ("KEEP", "REVIEW")
