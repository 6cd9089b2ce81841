"""Does relevance choose better KEEPs than the id? Labelled SYNERGY reviews as weeks, and the real arXiv weeks.

1. **SYNERGY** (../shared/data/synergy_v1): each review's candidate works
   (title, abstract, the human's final `label_included`) are one week,
   decided with the criteria document and the watchlist committed in
   bench/synergy/<review>/ (written from the review's eligibility criteria
   in datasets.toml, before any run, and not tuned on the labels), no
   prior (pattern D), `--max-kept` (default 25). Each week is decided twice
   from the same axes: within one score by relevance, then id (the digest),
   and by id alone (relevance set to 0, as before). The table gives, for
   both: KEEP precision (included KEEPs / KEEPs), KEEP+REVIEW recall
   (included KEEPs and REVIEWs / included; the cap never DROPs, so the two
   orderings give the same), average precision over the whole week in the
   digest's order, and how many KEEPs differ between the orderings.
2. **arXiv** (../shared/data/arxiv_daily): the listings split into ISO
   weeks by crawl date and run as one catch-up (pattern B, each week's
   KEEPs the next one's prior) with tests/fixtures/digest/lm-evaluation/,
   as tests/test_digest_realdata.py does, once per cap (`--arxiv-max-kept`,
   default 25, 10 and 5: that watchlist keeps fewer than 25 in most weeks, so
   the default cap rarely binds). For the weeks asked (`--weeks`, default
   2026-W22 and 2026-W24), the same records and prior are decided again
   with ties by id: how many KEEPs at the cap differ, which, and where the
   SEAL paper of issue 23 stands in each.

Skipped, with a message, when ../shared/data is absent.

    PYTHONPATH=. .venv/bin/python bench/digest_synergy.py [--max-kept 25] [--reviews A,B]
        [--weeks 2026-W22,2026-W24] [--arxiv-max-kept 25,10,5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from reporter.digest.archive import load_week, prior_weeks, published_weeks
from reporter.isoweek import week_of, week_start
from reporter.digest.config import DigestSettings
from reporter.digest.criteria import Criteria, load_criteria
from reporter.digest.decide import WeekOutcome, decide, score_axes
from reporter.digest.merge import merge_records
from reporter.digest.read import read_papers
from reporter.pool.record import Record
from reporter.digest.watchlist import Watchlist, load_watchlist
from reporter.digest.weeks import prior_keeps, run_weeks

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SYNERGY = DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz"
ARXIV = DATA / "arxiv_daily"
REVIEWS = ROOT / "bench" / "synergy"
LM_EVALUATION = ROOT / "tests" / "fixtures" / "digest" / "lm-evaluation"
SEAL = "SEAL: Can Saturated Benchmarks Be Revived"


def both_orderings(records: Sequence[Record], watchlist: Watchlist, criteria: Criteria, prior=(), *,
                   max_kept: int) -> tuple[WeekOutcome, WeekOutcome]:
    """The week decided within one score by relevance then id (the digest), and by id alone (relevance 0)."""
    axes = score_axes(records, watchlist, criteria, prior)
    by_relevance = decide(records, axes, criteria, max_kept=max_kept)
    by_id = decide(records, [replace(a, relevance=0.0) for a in axes], criteria, max_kept=max_kept)
    return by_relevance, by_id


def kept(outcome: WeekOutcome) -> set[str]:
    return {d.id for d in outcome.decisions if d.decision == "KEEP"}


def average_precision(outcome: WeekOutcome, included: set[str]) -> float:
    """Mean of precision@k over the ranks k of the included papers, in the digest's order (KEEP, REVIEW, DROP)."""
    hits, total = 0, 0.0
    for k, d in enumerate(outcome.decisions, 1):
        if d.id in included:
            hits += 1
            total += hits / k
    return total / len(included) if included else 0.0


# --- SYNERGY ---------------------------------------------------------------------------------------------


def synergy_weeks() -> dict[str, tuple[list[Record], set[str]]]:
    """Per review: its works as records (a work without a title is left out) and the ids the humans included."""
    weeks: dict[str, tuple[list[Record], set[str]]] = {}
    with gzip.open(SYNERGY, "rt", encoding="utf-8") as f:
        for line in f:
            w = json.loads(line)
            if not (w.get("title") or "").strip():
                continue
            records, included = weeks.setdefault(w["dataset"], ([], set()))
            rid = "openalex:" + w["openalex_id"].rsplit("/", 1)[-1]
            records.append(Record(id=rid, title=w["title"], abstract=w.get("abstract") or None, source="openalex",
                                  published=w.get("publication_date"), authors=tuple(w.get("authors") or ()),
                                  venue=w.get("venue")))
            if w.get("label_included"):
                included.add(rid)
    return weeks


def synergy_table(reviews: Sequence[str], max_kept: int) -> list[str]:
    """One row per review with a criteria document in bench/synergy/, then the totals."""
    weeks = synergy_weeks()
    head = (f"{'review':<18} {'papers':>6} {'incl':>5} {'at100':>5} {'KEEP':>4}  {'P(KEEP) id':>10} "
            f"{'P(KEEP) rel':>11}  {'R(K+R) id':>9} {'R(K+R) rel':>10}  {'AP id':>6} {'AP rel':>6}  "
            f"{'KEEPs differ':>12}")
    rows = [head, "-" * len(head)]
    sums = [0] * 5
    for review in reviews:
        records, included = weeks[review]
        watchlist = load_watchlist(REVIEWS / review / "watchlist.txt")
        criteria = load_criteria(REVIEWS / review / "criteria.md")
        rel, by_id = both_orderings(records, watchlist, criteria, max_kept=max_kept)
        k_rel, k_id = kept(rel), kept(by_id)
        shown = {d.id for d in rel.decisions if d.decision != "DROP"}
        assert shown == {d.id for d in by_id.decisions if d.decision != "DROP"}  # the cap never DROPs
        at100 = sum(d.score == 100 for d in rel.decisions)
        rows.append(f"{review:<18} {len(records):>6} {len(included):>5} {at100:>5} {len(k_rel):>4}  "
                    f"{_share(len(k_id & included), len(k_id)):>10} {_share(len(k_rel & included), len(k_rel)):>11}  "
                    f"{_share(len(shown & included), len(included)):>9} "
                    f"{_share(len(shown & included), len(included)):>10}  "
                    f"{average_precision(by_id, included):>6.3f} {average_precision(rel, included):>6.3f}  "
                    f"{len(k_rel - k_id):>12}")
        for i, n in enumerate((len(k_id & included), len(k_rel & included), len(k_id), len(k_rel),
                               len(k_rel - k_id))):
            sums[i] += n
    rows.append("-" * len(head))
    rows.append(f"{'all':<18} {'':>6} {'':>5} {'':>5} {sums[3]:>4}  {_share(sums[0], sums[2]):>10} "
                f"{_share(sums[1], sums[3]):>11}  {'':>9} {'':>10}  {'':>6} {'':>6}  {sums[4]:>12}")
    return rows


def _share(n: int, of: int) -> str:
    return f"{n}/{of} {n / of:.2f}" if of else "-"


# --- the real arXiv weeks --------------------------------------------------------------------------------


def arxiv_report(weeks: Sequence[str], max_kept: int) -> list[str]:
    """The catch-up up to the last week asked; per week asked, the KEEPs by relevance against those by id."""
    out = []
    with tempfile.TemporaryDirectory(prefix="digest-synergy-") as tmp:
        root = Path(tmp)
        papers = root / "papers"
        papers.mkdir()
        by_week: dict[str, list[str]] = {}
        for file in sorted(ARXIV.glob("*.jsonl.gz")):
            with gzip.open(file, "rt", encoding="utf-8") as f:
                for line in f:
                    by_week.setdefault(week_of(dt.date.fromisoformat(json.loads(line)["crawl_date"])), []).append(line)
        last = max(weeks, key=week_start)
        order = [w for w in sorted(by_week, key=week_start) if week_start(w) <= week_start(last)]
        for w in order:
            (papers / f"{w}.jsonl").write_text("".join(by_week[w]), encoding="utf-8")
        settings = DigestSettings(papers=papers, watchlist=LM_EVALUATION / "watchlist.txt",
                                  criteria=LM_EVALUATION / "criteria.md", archive=root / "archive", max_kept=max_kept)
        run_weeks(settings, order)
        watchlist, criteria = load_watchlist(settings.watchlist), load_criteria(settings.criteria)
        done = set(published_weeks(settings.archive))
        for week in weeks:
            records, _ = merge_records(read_papers(papers / f"{week}.jsonl"))
            prior = prior_keeps({w: load_week(settings.archive, w) for w in prior_weeks(week) if w in done})
            rel, by_id = both_orderings(records, watchlist, criteria, prior, max_kept=max_kept)
            published = load_week(settings.archive, week)
            assert kept(rel) == {d.id for d in published.kept()}, "the bench decides as the digest does"
            c = rel.calibration
            out.append(f"{week}: {len(records)} papers; {c.kept} kept, {c.review} review, {c.dropped} dropped; "
                       f"{sum(d.score == 100 for d in rel.decisions)} at score 100, "
                       f"{sum(d.score >= 70 for d in rel.decisions)} at 70 or more; {c.demoted_for_cap} demoted "
                       f"for the cap" + (f", {_tied(rel)}" if c.demoted_for_cap else " (the cap does not bind)"))
            out.append(f"  KEEPs that differ between relevance and id: {len(kept(rel) - kept(by_id))} of {c.kept}")
            ids_rel, ids_id = _keep_ids(rel), _keep_ids(by_id)
            out.append(f"  KEEP ids by id: {ids_id[0]} .. {ids_id[-1]}; by relevance: {ids_rel[0]} .. {ids_rel[-1]}")
            by = {d.id: d for d in rel.decisions}
            for label, ids in (("kept by relevance only", kept(rel) - kept(by_id)),
                               ("kept by id only", kept(by_id) - kept(rel))):
                out.append(f"  {label}:")
                out += [f"    {by[i].id}  score {by[i].score}  relevance {by[i].relevance:.4f}  {by[i].title[:70]}"
                        for i in sorted(ids, key=lambda i: (-by[i].relevance, i))]
            seal = [r for r in records if r.title.startswith(SEAL)]
            for r in seal:
                for label, outcome in (("by id", by_id), ("by relevance", rel)):
                    d = next(x for x in outcome.decisions if x.id == r.id)
                    out.append(f"  SEAL {r.id} {label}: {d.decision} (score {d.score}); {d.rationale[:200]}...")
            if not seal:
                out.append("  SEAL: not in this week")
    return out


def _tied(outcome: WeekOutcome) -> str:
    """How many KEEP candidates share the score of the last one kept, and how many of them the cap kept."""
    score = min(d.score for d in outcome.decisions if d.decision == "KEEP")
    at = [d for d in outcome.decisions if d.score == score and (d.decision == "KEEP" or "demoted-for-cap" in d.tags)]
    return f"{len(at)} KEEP candidates at the last kept score {score}, {sum(d.decision == 'KEEP' for d in at)} kept"


def _keep_ids(outcome: WeekOutcome) -> list[str]:
    return sorted(d.id for d in outcome.decisions if d.decision == "KEEP")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-kept", type=int, default=25)
    parser.add_argument("--reviews", default="", help="comma-separated SYNERGY reviews (default: every one in "
                                                       "bench/synergy/)")
    parser.add_argument("--weeks", default="2026-W22,2026-W24", help="comma-separated arXiv weeks")
    parser.add_argument("--arxiv-max-kept", default="25,10,5",
                        help="comma-separated caps for the arXiv catch-up (25: the default; 10 and 5 bind)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent (the SYNERGY reviews and the arXiv listings live there)")
        return 0
    reviews = [r for r in args.reviews.split(",") if r] or sorted(p.name for p in REVIEWS.iterdir() if p.is_dir())
    if SYNERGY.is_file():
        print(f"SYNERGY reviews as weeks, max_kept {args.max_kept}, no prior (P: precision, R: recall, AP: average "
              f"precision of the whole week in the digest's order)")
        print("\n".join(synergy_table(reviews, args.max_kept)))
    else:
        print(f"skipped the SYNERGY table: {SYNERGY} is absent")
    if any(ARXIV.glob("*.jsonl.gz")):
        for cap in (int(x) for x in args.arxiv_max_kept.split(",") if x):
            print(f"\nThe real arXiv listing, catch-up with {LM_EVALUATION.relative_to(ROOT)}/, max_kept {cap}")
            print("\n".join(arxiv_report([w for w in args.weeks.split(",") if w], cap)))
    else:
        print(f"skipped the arXiv weeks: no listings in {ARXIV}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
