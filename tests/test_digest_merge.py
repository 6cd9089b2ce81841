"""Cross-source merge before scoring (docs/digest.md, "Records and merge"), on hand-built records."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from reporter.digest.merge import Merge, first_author_surname, merge_records, normalize_title, surname
from reporter.digest.read import read_papers
from reporter.pool.record import Record

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sources"
TITLE = "Protein language models learn evolutionary statistics of interacting sequence motifs"


def rec(id: str, title: str = TITLE, published: str | None = "2024-01-01", authors=("Ada Lovelace",),
        doi: str | None = None, related=(), version: str | None = None, abstract: str | None = "text") -> Record:
    return Record(id=id, title=title, abstract=abstract, published=published, authors=tuple(authors), doi=doi,
                  related_ids=tuple(related), version=version, where=f"papers.jsonl: {id}")


def by_id(records: list[Record]) -> dict[str, Record]:
    return {r.id: r for r in records}


# --- each reason ------------------------------------------------------------------------------------

def test_same_id_keeps_the_newest_version_text():
    out, merges = merge_records([rec("arxiv:1", abstract="second", version="v2", published="2024-01-05"),
                                 rec("arxiv:1", abstract="first", version="v1", published="2024-01-02"),
                                 rec("arxiv:2", title="Another paper entirely")])
    assert [r.id for r in out] == ["arxiv:1", "arxiv:2"]
    folded = out[0]
    assert (folded.abstract, folded.version, folded.published) == ("second", "v2", "2024-01-02")
    assert merges == [Merge("arxiv:1", ("arxiv:1",), "same id", None, "arxiv:1", ("papers.jsonl: arxiv:1",))]


def test_shared_doi():
    out, merges = merge_records([rec("pmid:1", doi="10.1/x", published="2024-03-01"),
                                 rec("openalex:W1", doi="10.1/x", published="2024-02-01", title="Other words")])
    assert [r.id for r in out] == ["openalex:W1"]  # earliest published survives
    assert out[0].related_ids == ("pmid:1",)
    assert merges == [Merge("openalex:W1", ("pmid:1",), "doi", None, "openalex:W1", ("papers.jsonl: pmid:1",))]


def test_related_ids():
    preprint = rec("doi:10.1101/1", doi="10.1101/1", related=["doi:10.1038/j"], published="2024-01-01")
    journal = rec("pmid:7", doi="10.1038/j", published="2024-06-01", title="A retitled journal version")
    out, merges = merge_records([journal, preprint])
    assert [r.id for r in out] == ["doi:10.1101/1"]
    assert set(out[0].related_ids) == {"doi:10.1038/j", "pmid:7"}
    assert [(m.survivor, m.merged_ids, m.reason) for m in merges] == [("doi:10.1101/1", ("pmid:7",), "related_ids")]


def test_title_and_first_author_surname():
    a = rec("arxiv:2401.00001", title="Protein language models learn evolutionary statistics!",
            authors=["Ada Lovelace", "Charles Babbage"], published="2024-01-01")
    b = rec("pmid:9", title="Protein Language Models Learn Evolutionary Statistics.", authors=["Lovelace, A"],
            published="2024-05-01")
    out, merges = merge_records([a, b])
    assert [r.id for r in out] == ["arxiv:2401.00001"] and out[0].related_ids == ("pmid:9",)
    (merge,) = merges
    assert (merge.reason, merge.merged_ids, merge.similarity) == ("title+author", ("pmid:9",), 1.0)


def test_no_merge_across_different_surnames_even_at_095():
    base = "abcdefghij klmnopqrst uvwxyzabcd efghijklmn"  # 43 characters: two edits is 0.953
    other = "abcdefghij klmnopqrst uvwxyzabcd efghijklXY"
    assert 0.95 <= Levenshtein.normalized_similarity(base, other) < 1
    out, merges = merge_records([rec("arxiv:1", title=base, authors=["Ada Lovelace"]),
                                 rec("arxiv:2", title=other, authors=["Charles Babbage"])])
    assert len(out) == 2 and merges == []
    out, merges = merge_records([rec("arxiv:1", title=base, authors=["Ada Lovelace"]),
                                 rec("arxiv:2", title=other, authors=["Lovelace, Ada"])])
    assert len(out) == 1 and merges[0].similarity == round(1 - 2 / 43, 4)


def test_title_threshold_is_inclusive_and_exact():
    ten = "abcdefghij"
    out, _ = merge_records([rec("arxiv:1", title=ten), rec("arxiv:2", title="abcdefghiX")])  # 1 edit in 10: 0.9
    assert len(out) == 1
    out, _ = merge_records([rec("arxiv:1", title="abcdefghi"), rec("arxiv:2", title="abcdefghX")])  # 1 in 9: 0.889
    assert len(out) == 2


def test_records_without_authors_or_title_words_never_title_merge():
    out, _ = merge_records([rec("arxiv:1", authors=()), rec("arxiv:2", authors=())])
    assert len(out) == 2
    out, _ = merge_records([rec("arxiv:1", title="!!!"), rec("arxiv:2", title="???")])
    assert len(out) == 2


# --- transitivity, the survivor, determinism -------------------------------------------------------

def chain() -> list[Record]:
    """A -doi- B -related- C -title+author- D, and E alone."""
    return [
        rec("pmid:2", doi="10.1/b", published="2024-03-01", title="Journal title one"),
        rec("openalex:W3", doi="10.1/b", related=["arxiv:2401.00004"], published="2024-04-01", title="Words"),
        rec("arxiv:2401.00004", published="2024-02-01", title="Scaling laws for protein language models"),
        rec("doi:10.1101/5", doi="10.1101/5", published="2024-01-15", authors=["Lovelace, A."],
            title="Scaling laws for protein language model"),
        rec("arxiv:2401.00009", published="2023-01-01", title="Unrelated", authors=["Grace Hopper"]),
    ]


def test_transitive_merge_and_survivor():
    out, merges = merge_records(chain())
    assert sorted(r.id for r in out) == ["arxiv:2401.00009", "doi:10.1101/5"]
    survivor = by_id(out)["doi:10.1101/5"]  # the earliest published of the four
    assert set(survivor.related_ids) == {"pmid:2", "openalex:W3", "arxiv:2401.00004", "doi:10.1/b"}
    assert survivor.title == "Scaling laws for protein language model"  # the survivor keeps its own text
    reasons = {m.merged_ids[0]: (m.reason, m.via) for m in merges}
    assert reasons == {"arxiv:2401.00004": ("title+author", "doi:10.1101/5"),
                       "openalex:W3": ("related_ids", "arxiv:2401.00004"),
                       "pmid:2": ("doi", "openalex:W3")}
    assert all(m.survivor == "doi:10.1101/5" for m in merges)


def test_survivor_ties_and_missing_dates():
    out, _ = merge_records([rec("pmid:2", doi="10.1/x"), rec("pmid:1", doi="10.1/x")])
    assert [r.id for r in out] == ["pmid:1"]  # same date: the smallest id
    out, _ = merge_records([rec("pmid:1", doi="10.1/x", published=None), rec("pmid:2", doi="10.1/x")])
    assert [r.id for r in out] == ["pmid:2"]  # a record without a date never beats one with a date


def test_output_does_not_follow_the_input_order():
    records = chain()
    expected = merge_records(records)
    for seed in range(5):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        out, merges = merge_records(shuffled)
        assert sorted(out, key=lambda r: r.id) == sorted(expected[0], key=lambda r: r.id)
        assert merges == expected[1]


def test_sources_merge_across_formats():
    records = [r for name in ("biorxiv_details.json", "pubmed_efetch.xml", "openalex_works.json", "arxiv_atom.xml",
                              "arxiv_listing.jsonl") for r in read_papers(FIXTURES / name)]
    out, merges = merge_records(records)
    survivors = by_id(out)
    preprint = survivors["doi:10.1101/2024.01.15.575001"]  # bioRxiv preprint, posted before the journal version
    assert {"pmid:38800001", "openalex:W4390000001", "doi:10.1038/s41586-024-07001-x"} <= set(preprint.related_ids)
    assert "pmid:38800001" not in survivors and "openalex:W4390000001" not in survivors
    arxiv = survivors["arxiv:2401.01234"]  # Atom and listing (same id), OpenAlex (arXiv's DOI)
    assert "openalex:W4390000002" in arxiv.related_ids
    assert {m.reason for m in merges} == {"same id", "doi", "related_ids"}


# --- the pieces -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, key", [
    ("Ada Lovelace", "lovelace"), ("Lovelace, Ada", "lovelace"), ("Lovelace A", "lovelace"),
    ("Lovelace, A.", "lovelace"), ("A. Lovelace", "lovelace"), ("Smith JA", "smith"),
    ("Ludwig van Beethoven", "beethoven"), ("van Beethoven, Ludwig", "beethoven"),
    ("Martin Luther King Jr.", "king"), ("King, Martin Luther, Jr.", "king"),
    ("José García-López", "garcialopez"), ("Müller, Jörg", "muller"), ("", None), ("  ", None),
])
def test_surname(name, key):
    assert surname(name) == key


def test_first_author_surname():
    assert first_author_surname(rec("x:1", authors=["Lovelace, Ada", "Babbage, Charles"])) == "lovelace"
    assert first_author_surname(rec("x:1", authors=[])) is None


def test_normalize_title_and_similarity():
    assert normalize_title("  Self-Supervised  PLMs:\tA Survey (2024)! ") == "selfsupervised plms a survey 2024"
    assert normalize_title("A Survey.") == normalize_title("a survey") == "a survey"


# --- real data: a week's worth of listings ---------------------------------------------------------

ARXIV_DAILY = (Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv_daily"
               / "arxiv_daily_2026-05-06_to_2026-07-01.jsonl.gz")


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(not ARXIV_DAILY.exists(), reason="../shared/data/arxiv_daily is absent")
def test_real_listing_merge_accounts_for_every_record():
    records = read_papers(ARXIV_DAILY)  # 23,631 listing rows (test_digest_records checks the fold)
    assert len(records) == 13_429
    out, merges = merge_records(records)
    assert len(out) + len(merges) == 13_429  # every record is a survivor or listed as merged
    assert all(m.reason == "title+author" and m.similarity >= 0.9 for m in merges)  # arXiv ids are all distinct
    assert merge_records(list(reversed(records)))[1] == merges


def _one_surname_block(n: int) -> list[Record]:
    """n papers by one first-author surname; every tenth title is the one before it with a word changed."""
    rng = random.Random(21)
    words = "protein language model enzyme design fold structure sequence benchmark survey graph".split()
    titles: list[str] = []
    for i in range(n):
        titles.append(titles[-1].rsplit(" ", 1)[0] + " variant" if i % 10 == 9 else
                      " ".join(rng.choice(words) for _ in range(8)) + f" {i}")
    return [Record(id=f"doi:10.5555/{i}", title=titles[i], published=f"2026-05-{1 + i % 28:02d}",
                   authors=("Ada Smith",)) for i in range(n)]


def test_a_surname_block_compared_a_row_at_a_time_merges_the_same(monkeypatch):
    from reporter.digest import merge as merge_module
    records = _one_surname_block(600)
    whole = merge_records(records)
    assert len(whole[1]) == 16
    for cells in (1, 599, 601, 7_000):
        monkeypatch.setattr(merge_module, "COMPARE_CELLS", cells)
        assert merge_records(records) == whole


def test_memory_does_not_grow_with_the_square_of_a_surname_block():
    """6,000 papers of one surname held a 6,000 x 6,000 score matrix twice (about 580 MB; 10,000 papers:
    1.7 GB). Measured in a fresh process: the peak grows by a bounded amount, not by the square."""
    import subprocess
    import sys
    code = ("import resource, sys\nsys.path.insert(0, sys.argv[1])\nfrom test_digest_merge import _one_surname_block\n"
            "from reporter.digest.merge import merge_records\nrecords = _one_surname_block(6000)\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\nout, merges = merge_records(records)\n"
            "print(len(merges), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    merges, grown_mb = map(int, done.stdout.split())
    assert merges == 230 and grown_mb < 150, grown_mb


def test_equal_titles_of_one_surname_merge_into_one_without_a_pass_per_pair(monkeypatch):
    """3,000 equal titles are 4.5 million candidate pairs; pairs already in one group are skipped whole."""
    from reporter.digest import merge as merge_module
    records = [Record(id=f"doi:10.5555/{i:05d}", title="Erratum", authors=("Ada Smith",)) for i in range(3000)]
    out, merges = merge_records(records)
    assert [r.id for r in out] == ["doi:10.5555/00000"] and len(merges) == 2999
    assert {m.via for m in merges} == {"doi:10.5555/00000"}  # each matched the first: a star, not a chain
    monkeypatch.setattr(merge_module, "COMPARE_CELLS", 1)
    assert merge_records(records[:300]) == merge_records(records[:300])
