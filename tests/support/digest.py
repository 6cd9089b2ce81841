"""Hand-made digest weeks for the page tests: every section filled, hostile strings where data goes.

`week_document` is a decisions.json document as `reporter digest` writes it
(its calibration computed from the decisions, so the pages accept it);
`graph_rows` the novelty results lines a build writes beside it for the
KEEPs; `write_archive` puts weeks into a digest archive folder.
`digest_workspace` writes a small workspace of made-up weeks (its papers folder, watchlist, criteria and
reporter.toml) for the tests that decide them with `reporter digest`.
`two_thousand_paper_week` is a generated week decided by `reporter digest`,
for the size of what a big week renders (the page, its twin, the e-mail).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reporter.cli import main
from reporter.hashing import canonical_json, dump_json

HOSTILE = [
    "<script>alert('title')</script>",
    "a | b | **not bold** _x_ [link](https://evil.example)",
    "\u202eevil reversed\u202c title",
    "https://evil.example/path and www.evil.example and a@b.example",
    "- starts like a list",
    "1. starts like an ordered list",
    "# like a heading",
    "`code` and <b>bold</b> & entity &amp;",
]
HOSTILE_AUTHORS = ["<script>alert('author')</script>", "Ada | Lovelace **bold** [x](https://evil.example)",
                   "\u202eevil author\u202c", "# Fourth Author"]
HOSTILE_ABSTRACT = " ".join(HOSTILE) + " criteria.md and benchmark* hold. " + "A long abstract goes on. " * 12
GRAPH = {"events_jsonl": "graph/events.jsonl", "sha256": "ab" * 32}


def _decision(pid: str, decision: str, score: int, title: str, cause: str | None = None,
              tags: tuple[str, ...] = (), merged: tuple[str, ...] = (), terms: tuple[str, ...] = ("protein*",),
              rationale: str | None = None, **record: Any) -> dict[str, Any]:
    axes = {"match": 1.0, "criteria": 0.7, "novelty": 0.5 if "journal-version-of:2026-W19" in tags else 1.0}
    why = rationale or (f"DROP ({cause}): the cause named first" if cause else f"{decision}: match 1.00 for {title}")
    return {"id": pid, "decision": decision, "score": score, "axes": axes, "rationale": why, "tags": list(tags),
            "title": title, "cause": cause, "criteria_lines": [8], "matched_terms": list(terms),
            "merged_ids": list(merged), **record}


def week_document(week: str = "2026-W20", *, hostile: bool = True, prior: tuple[str, ...] = ("2026-W19",),
                  papers_sha: str = "cd" * 32) -> dict[str, Any]:
    """A decisions.json document with every section of the week page filled."""
    t = HOSTILE if hostile else [f"Plain title {i}" for i in range(len(HOSTILE))]
    paper = {"authors": HOSTILE_AUTHORS if hostile else ["Ada Lovelace", "Alan Turing"], "published": "2026-05-13",
             "categories": ["cs.CL", "<i>cs.AI</i>" if hostile else "cs.AI"],
             "abstract": HOSTILE_ABSTRACT if hostile else "A plain abstract that goes on. " * 12}
    short = {**paper, "abstract": t[7], "venue": "Journal of <b>Tests</b>" if hostile else "Journal of Tests",
             "categories": []}
    # Over the cap: KEEP by score, ranked after the KEEPs by relevance (the page shows REVIEW_IN_FULL in full).
    over = [_decision(f"arxiv:2605.0200{i}", "REVIEW", 100, f"{t[i]} (over the cap)", tags=("demoted-for-cap",),
                      relevance=round(2.5 - i / 4, 4), **paper) for i in range(6)]
    decisions = [
        _decision("doi:10.5555/keep.1", "KEEP", 100, t[0], merged=("pmid:90000011",), relevance=4.25, **paper),
        _decision("arxiv:2605.01234", "KEEP", 87, t[1], tags=("journal-version-of:2026-W19",), relevance=3.0,
                  **short),
        _decision("pmid:90000012", "KEEP", 78, t[2], rationale=t[3], relevance=2.75),
        *over,
        _decision("doi:10.5555/review.noabs", "REVIEW", 87, f"{t[5]} (no abstract)", tags=("no-abstract",),
                  relevance=1.0, **{**paper, "abstract": None}),
        _decision("openalex:W123", "REVIEW", 64, t[3], tags=("criteria-silent", "<b>tag</b>"), **paper),
        _decision("doi:10.5555/review.near", "REVIEW", 60, f"{t[6]} (near)", **paper),
        _decision("doi:10.5555/review.rescued", "REVIEW", 45, f"{t[7]} (rescued)", tags=("stricter-pass",),
                  **paper),
        _decision("doi:10.5555/drop.1", "DROP", 90, t[4], "already-covered", ("already-covered",)),
        _decision("doi:10.5555/drop.2", "DROP", 33, t[5], "look-alike-trap", ("look-alike-trap",)),
        _decision("doi:10.5555/drop.3", "DROP", 33, t[6], "fails-required", ("fails-required",)),
        _decision("weird:<script>", "DROP", 10, t[7], "not-in-scope"),
        _decision("doi:10.5555/drop.5", "DROP", 42, "Plain weak match", "weak-match"),
        _decision("doi:10.5555/drop.6", "DROP", 42, f"{t[1]} (weak, the same rationale)", "weak-match"),
        _decision("doi:10.5555/drop.7", "DROP", 40, "Weak, another rationale", "weak-match",
                  rationale=f"DROP (weak-match): {t[2]}"),
    ]
    histogram = [0] * 10
    for d in decisions:
        histogram[min(d["score"] // 10, 9)] += 1
    count = {k: sum(d["decision"] == k for d in decisions) for k in ("KEEP", "REVIEW", "DROP")}
    return {
        "schema_version": 1, "rules": "digest.1", "week": week, "decisions": decisions,
        "calibration": {"kept": count["KEEP"], "review": count["REVIEW"], "dropped": count["DROP"],
                        "force_dropped_already_covered": 1, "demoted_for_cap": len(over), "stricter_pass_applied": True,
                        "histogram": histogram},
        "watchlist_drift": {
            "note": "surfaced, never applied: the watchlist is not changed by the tool",
            "entries_rejected_by_criteria": [
                {"phrase": t[1], "matched": 3, "rejected_by_criteria": 2, "dropped": 2,
                 "causes": {"look-alike-trap": 2}, "criteria_lines": {'criteria.md:11 "Enrollment"': 2},
                 "ids": ["doi:10.5555/drop.2", "doi:10.5555/drop.3"]}],
            "concepts_missed_by_watchlist": [
                {"concept": f'criteria.md:8 "{t[0]}"', "line": 8, "missed_by_watchlist": 2,
                 "ids": ["doi:10.5555/drop.5", "weird:<script>"]}]},
        "merges": [{"survivor": "doi:10.5555/keep.1", "merged_ids": ["pmid:90000011"], "reason": "title+author",
                    "similarity": 0.95, "via": "doi:10.5555/keep.1", "where": [f"{week}.jsonl: line 3 {t[0]}"]}],
        "inputs": {"papers": {"file": f"{week}.jsonl", "sha256": papers_sha},
                   "watchlist": {"file": "watchlist.txt", "sha256": "ef" * 32},
                   "criteria": {"file": "criteria.md", "sha256": "01" * 32},
                   "prior": {w: "23" * 32 for w in prior}},
        "prior_weeks": list(prior),
        "settings": {"max_kept": 3, "keep_threshold": 70, "review_threshold": 50, "prior": "archive",
                     "watchlist": "watchlist.txt", "criteria": "criteria.md"},
    }


def graph_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Novelty results lines for the KEEPs that have a DOI, arXiv or OpenAlex id (as a build writes them)."""
    rows = []
    keeps = [d for d in document["decisions"] if d["decision"] == "KEEP"]
    for line, d in enumerate(keeps, 1):
        scheme, _, value = d["id"].partition(":")
        if scheme not in ("doi", "arxiv", "openalex"):
            continue
        shared = ["doi:10.5555/cited.1", "<script>cited</script>"] if line == 1 else []
        rows.append({
            "schema_version": 1, "line": line, "id": d["id"],
            "candidate": {"kind": "paper", "keys": {"doi": value if scheme == "doi" else None,
                                                    "arxiv": value if scheme == "arxiv" else None,
                                                    "openalex": None, "s2_paperId": None},
                          "statement": None, "holdout_lom_ids": None, "references": []},
            "graph": GRAPH,
            "result": {"lom_id": d["id"], "verdict": "neighborhood" if shared else "novel", "status": "ok",
                       "not_a_ranker": True, "holdout_applied": False, "coverage_gap": [],
                       "exact_key_match": {"hit": False, "matched_lom_id": None},
                       "citation_overlap": {"in_sample": {"n_shared": len(shared), "shared_lom_ids": shared},
                                            "holdout": {"n_shared": len(shared), "shared_lom_ids": shared}},
                       "ingest_errors_blocking": [], "embedding": {"used": False}}})
    return rows


def write_week(archive: Path, document: dict[str, Any], rows: list[dict[str, Any]] | None = None) -> Path:
    """Publish a hand-made week into an archive (decisions.json, and novelty.jsonl when rows are given)."""
    folder = Path(archive) / document["week"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "decisions.json").write_text(dump_json(document), encoding="utf-8")
    if rows is not None:
        (folder / "novelty.jsonl").write_text("".join(canonical_json(r) + "\n" for r in rows), encoding="utf-8")
    return folder


# --- a generated week of 2,000 papers ---------------------------------------------------------------------

CRITERIA = """# Criteria: evaluating language models

## In scope
- Benchmarks and evaluations of language models: `benchmark*`, `evaluation`, `language model*`, `LLM*`

## Out of scope
- Clinical trials: `clinical trial`

## Required
- Reports empirical results: `we evaluate`, `results show`, `accuracy`

## Reduced fit
- Surveys: `survey`
"""
WATCHLIST = "language model*\nbenchmark*\nLLM-as-a-judge\t1.5\nevaluation\n"
WORDS = ("adaptive robust sparse graph neural transformer contrastive retrieval multilingual federated causal "
         "diffusion scalable efficient calibrated hierarchical multimodal instruction reasoning agents").split()
TOPICS = ("a language model benchmark", "LLM-as-a-judge evaluation", "language models", "protein folding",
          "graph coloring", "a clinical trial of LLM triage", "a survey of LLMs")
"""What a generated title is about: the first three are what the watchlist and the criteria look for."""
NAMES = "Ada Bo Chen Diaz Eva Fu Gao Hu Ito Jin Kim Li Lund Ma Ng Oh Park Qi Roy Sato Tan Ueda Vu Wu Xu Yang".split()
LIKE_W22 = {"topics": (2, 2, 2, 40, 40, 4, 10), "title_words": (3, 10), "title_pad": 0, "abstract_words": (100, 200),
            "names": NAMES}
"""The shape of the real week the issue measured (2026-W22 of the arXiv listing: about 2,000 papers, 25 kept, a
few hundred for review, most of them over the cap, the rest dropped), with its lengths: titles of about 85
characters, abstracts of about 1,400, authors of about 12."""


def two_thousand_paper_week(folder: Path, papers: int = 2_000, seed: int = 23, *,
                            topics: Sequence[int] | None = None, title_words: tuple[int, int] = (4, 14),
                            title_pad: int = 60, abstract_words: tuple[int, int] = (150, 280),
                            names: Sequence[str] = WORDS) -> Path:
    """A digest archive with one week of `papers` generated records, decided by `reporter digest` (default settings).

    By default every topic is as likely and titles and abstracts are long (the e-mail's stress: most papers match,
    and every title is longer than the e-mail shows); `**LIKE_W22` gives a real week's shape. `topics` weighs
    TOPICS; a title has `title_words` words and up to `title_pad` x's; an abstract `abstract_words` words; an
    author's name three of `names`.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for i in range(papers):
        topic = rng.choice(TOPICS) if topics is None else rng.choices(TOPICS, topics)[0]
        title = (f"{' '.join(rng.choices(WORDS, k=rng.randint(*title_words)))} for {topic}"
                 + (f": {'x' * rng.randint(0, title_pad)}" if title_pad else ""))
        abstract = " ".join(rng.choices(WORDS, k=rng.randint(*abstract_words))) + (
            " We evaluate it on three benchmarks; results show higher accuracy." if rng.random() < 0.7 else "")
        authors = [f"{rng.choice(names).title()} {rng.choice(names).title()}-{rng.choice(names).title()}"
                   for _ in range(rng.randint(1, 30))]
        records.append({"id": f"arxiv:2605.{10000 + i:05d}", "title": title, "abstract": abstract, "source": "arxiv",
                        "published": "2026-05-13", "authors": authors, "categories": ["cs.CL", "cs.AI"]})
    papers_file = folder / "2026-W20.jsonl"
    papers_file.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (folder / "criteria.md").write_text(CRITERIA, encoding="utf-8")
    (folder / "watchlist.txt").write_text(WATCHLIST, encoding="utf-8")
    archive = folder / "digests"
    assert main(["digest", "--papers", str(papers_file), "--watchlist", str(folder / "watchlist.txt"),
                 "--criteria", str(folder / "criteria.md"), "--archive", str(archive), "--week", "2026-W20"]) == 0
    return archive


def digest_workspace(root: Path, weeks: dict[str, Sequence[tuple[str, str, str]]], watchlist: str, criteria: str,
                     digest: str = "", files: dict[str, str] | None = None) -> Path:
    """A workspace at `root`: `papers/WEEK.jsonl` of (id, title, abstract), `watchlist.txt`, `criteria.md`, other
    `files` by name, and a reporter.toml whose [digest] names them (`digest`: more TOML after its table)."""
    (root / "papers").mkdir(parents=True)
    for week, papers in weeks.items():
        (root / "papers" / f"{week}.jsonl").write_text("".join(
            json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in papers))
    for name, text in {"watchlist.txt": watchlist, "criteria.md": criteria, **(files or {})}.items():
        (root / name).write_text(text)
    (root / "reporter.toml").write_text('site = "site"\n[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\n'
                                        'criteria = "criteria.md"\narchive = "digests"\n' + digest)
    return root
