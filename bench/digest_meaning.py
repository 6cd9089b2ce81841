"""Meaning against literal relevance (issue 33, items 2-3): the SYNERGY reviews as weeks, and the real arXiv weeks.

1. **SYNERGY** (../shared/data/synergy_v1), each review one week with the
   criteria and watchlist of bench/synergy/<review>/ (as bench/digest_synergy.py),
   no prior, decided three times from the same axes, ordering papers of one
   score by id alone, by relevance (BM25F, rules digest.3) and by the blend
   of relevance and similarity (rules digest.4, docs/digest.md "Meaning").
   For each: KEEP precision (included KEEPs / KEEPs) and KEEP+REVIEW recall
   (included KEEPs and REVIEWs / included), by the reviewers' final labels.
   Then the safety net ("close in meaning, missed by the watchlist"): the
   papers it lists, how many the reviewers included (its hit rate), and how
   many of the included papers the digest did not keep it lists.
2. **arXiv** (../shared/data/arxiv_daily): the listing's weeks run as one
   catch-up with tests/fixtures/digest/lm-evaluation/ (no labels exist for
   them): per week, how many KEEPs the blend changes against BM25F at each cap,
   which, and the safety net's papers.

    PYTHONPATH=. .venv/bin/python bench/digest_meaning.py [--max-kept 25,10] [--weeks 2026-W22,2026-W24]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_synergy import ARXIV, DATA, LM_EVALUATION, REVIEWS, SYNERGY, synergy_weeks  # noqa: E402

from reporter.digest.criteria import load_criteria  # noqa: E402
from reporter.digest.decide import decide, score_axes  # noqa: E402
from reporter.digest.meaning import close_in_meaning  # noqa: E402
from reporter.digest.semantic import load_model  # noqa: E402
from reporter.digest.watchlist import load_watchlist  # noqa: E402

ORDERS = ("id", "bm25f", "blend")


def three_orders(records, watchlist, criteria, prior=(), *, max_kept: int, model):
    """The week decided with ties by id, by relevance (BM25F) and by the blend; the axes with meaning."""
    axes = score_axes(records, watchlist, criteria, prior, model=model)
    plain = [replace(a, meaning=None, order=None) for a in axes]
    return ({"id": decide(records, [replace(a, relevance=0.0) for a in plain], criteria, max_kept=max_kept),
             "bm25f": decide(records, plain, criteria, max_kept=max_kept),
             "blend": decide(records, axes, criteria, max_kept=max_kept)}, axes)


def _kept(outcome) -> set[str]:
    return {d.id for d in outcome.decisions if d.decision == "KEEP"}


def _share(n: int, of: int) -> str:
    return f"{n}/{of} {n / of:.2f}" if of else "-"


def synergy(caps: Sequence[int], model) -> list[str]:
    weeks = synergy_weeks()
    reviews = sorted(p.name for p in REVIEWS.iterdir() if p.is_dir())
    out = []
    for cap in caps:
        head = (f"{'review':<18} {'papers':>6} {'incl':>5}  " + "  ".join(f"{'P(KEEP) ' + o:>15}" for o in ORDERS)
                + f"  {'R(K+R) any':>13}  {'net listed':>10} {'net incl':>8} {'missed listed':>14}")
        out += [f"\nSYNERGY reviews as weeks, max_kept {cap}", head, "-" * len(head)]
        sums = {k: 0 for k in ("listed", "hit", "missed", "missed_listed", "shown", "incl")}
        ksum = {o: [0, 0] for o in ORDERS}
        for review in reviews:
            records, included = weeks[review]
            watchlist = load_watchlist(REVIEWS / review / "watchlist.txt")
            criteria = load_criteria(REVIEWS / review / "criteria.md")
            outcomes, axes = three_orders(records, watchlist, criteria, max_kept=cap, model=model)
            shown = {d.id for d in outcomes["blend"].decisions if d.decision != "DROP"}
            assert all(shown == {d.id for d in o.decisions if d.decision != "DROP"} for o in outcomes.values())
            meaning = {r.id: a.meaning for r, a in zip(records, axes)}
            net = close_in_meaning(outcomes["blend"].decisions, meaning, {r.id: r for r in records}, model,
                                   criteria, watchlist)
            listed = {e["id"] for e in net}
            missed = included - _kept(outcomes["blend"])
            cells = []
            for o in ORDERS:
                k = _kept(outcomes[o])
                ksum[o][0] += len(k & included)
                ksum[o][1] += len(k)
                cells.append(f"{_share(len(k & included), len(k)):>15}")
            out.append(f"{review:<18} {len(records):>6} {len(included):>5}  " + "  ".join(cells)
                       + f"  {_share(len(shown & included), len(included)):>13}  {len(listed):>10} "
                       f"{len(listed & included):>8} {len(listed & missed):>6} of {len(missed):>4}")
            for key, n in (("listed", len(listed)), ("hit", len(listed & included)), ("missed", len(missed)),
                           ("missed_listed", len(listed & missed)), ("shown", len(shown & included)),
                           ("incl", len(included))):
                sums[key] += n
        out.append("-" * len(head))
        out.append(f"{'all':<18} {'':>6} {sums['incl']:>5}  "
                   + "  ".join(f"{_share(*ksum[o]):>15}" for o in ORDERS)
                   + f"  {_share(sums['shown'], sums['incl']):>13}  {sums['listed']:>10} {sums['hit']:>8} "
                   f"{sums['missed_listed']:>6} of {sums['missed']:>4}")
        out.append(f"close-in-meaning hit rate: {_share(sums['hit'], sums['listed'])} of the papers it listed were "
                   f"included; it listed {sums['missed_listed']} of the {sums['missed']} included papers not KEEP")
    return out


def arxiv(weeks: Sequence[str], caps: Sequence[int], model) -> list[str]:
    import datetime as dt
    import gzip
    import json

    from reporter.digest.merge import merge_records
    from reporter.digest.read import read_papers
    from reporter.isoweek import week_of, week_start
    import tempfile

    out = []
    with tempfile.TemporaryDirectory(prefix="digest-meaning-") as tmp:
        papers = Path(tmp)
        by_week: dict[str, list[str]] = {}
        for file in sorted(ARXIV.glob("*.jsonl.gz")):
            with gzip.open(file, "rt", encoding="utf-8") as f:
                for line in f:
                    by_week.setdefault(week_of(dt.date.fromisoformat(json.loads(line)["crawl_date"])), []).append(line)
        watchlist = load_watchlist(LM_EVALUATION / "watchlist.txt")
        criteria = load_criteria(LM_EVALUATION / "criteria.md")
        for week in weeks:
            if week not in by_week:
                out.append(f"{week}: not in the listing")
                continue
            (papers / f"{week}.jsonl").write_text("".join(by_week[week]), encoding="utf-8")
            records, _ = merge_records(read_papers(papers / f"{week}.jsonl"))
            for cap in caps:
                outcomes, axes = three_orders(records, watchlist, criteria, max_kept=cap, model=model)
                b, n = _kept(outcomes["bm25f"]), _kept(outcomes["blend"])
                by = {d.id: d for d in outcomes["blend"].decisions}
                out.append(f"{week} (no prior), {len(records)} papers, max_kept {cap}: {len(n)} kept; "
                           f"{len(n - b)} KEEPs differ between BM25F and the blend, {len(n - _kept(outcomes['id']))} "
                           f"between id and the blend")
                for label, ids in (("blend only", n - b), ("BM25F only", b - n)):
                    for i in sorted(ids):
                        d = by[i]
                        out.append(f"    {label}: {i} score {d.score} relevance {d.relevance:.4f} similarity "
                                   f"{d.similarity:.4f} {d.title[:70]}")
            meaning = {r.id: a.meaning for r, a in zip(records, axes)}
            for e in close_in_meaning(outcomes["blend"].decisions, meaning, {r.id: r for r in records}, model,
                                      criteria, watchlist):
                d = by[e["id"]]
                out.append(f"    close in meaning: {e['id']} {d.decision} {e['similarity']:.4f} {e['nearest_concept']} "
                           f"suggests {e['suggested_phrase']!r}: {d.title[:60]}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-kept", default="25,10")
    parser.add_argument("--weeks", default="2026-W22,2026-W24")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent (the SYNERGY reviews and the arXiv listings live there)")
        return 0
    caps = [int(x) for x in args.max_kept.split(",") if x]
    model = load_model()
    if SYNERGY.is_file():
        print("\n".join(synergy(caps, model)))
    if any(ARXIV.glob("*.jsonl.gz")):
        print(f"\nThe real arXiv listing with {LM_EVALUATION.name}/ (unlabelled)")
        print("\n".join(arxiv([w for w in args.weeks.split(",") if w], caps, model)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
