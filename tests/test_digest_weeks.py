"""One paper, one week (issue 23, item 6): papers of any dates, each decided in the week it is first listed in.

A paper one of the four prior weeks decided, listed again in the same version, is listed again, not
decided again; a prior KEEP stays the seed's DROP already-covered; a newer version is decided again.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from reporter.cli import main
from reporter.digest.archive import load_week, read_week, week_bytes
from reporter.digest.config import DigestSettings
from reporter.digest.listings import load_papers
from reporter.digest.records import ListedAgain
from reporter.digest.weeks import pending_weeks, prepare_weeks, run_weeks
from reporter.errors import InputError
from reporter.hashing import dump_json

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digest"
ON_TOPIC = "We evaluate a protein language model on a benchmark; ESM-2 too."


def row(n: int | str, day: str, title: str = "A protein language model for enzymes", abstract: str | None = ON_TOPIC,
        **extra) -> dict:
    return {"id": f"doi:10.5555/{n}", "title": title, "abstract": abstract, "published": day,
            "authors": [f"Ada Surname{n}"], **extra}  # one surname each: no title+author merge


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def settings(papers: Path, archive: Path, **kw) -> DigestSettings:
    return DigestSettings(papers=papers, watchlist=FIXTURES / "watchlist.txt", criteria=FIXTURES / "criteria.md",
                          archive=archive, **kw)


def by_id(result) -> dict:
    return {d.id: d for d in result.outcome.decisions}


@pytest.fixture
def listing(tmp_path) -> Path:
    """One file of three weeks: a KEEP, a REVIEW and a DROP first listed in W19, each listed again later."""
    return write(tmp_path / "listing.jsonl", [
        row("keep", "2026-05-05"),                                             # W19, KEEP
        row("review", "2026-05-06", abstract=None),                            # W19, REVIEW (no abstract)
        row("drop", "2026-05-07", title="Soil survey", abstract="Soil."),      # W19, DROP
        row("keep", "2026-05-12"), row("review", "2026-05-13", abstract=None),  # W20: listed again
        row("drop", "2026-05-14", title="Soil survey", abstract="Soil."),
        row("new", "2026-05-15"),                                              # W20's own paper
        row("review", "2026-05-19", abstract=None),                            # W21: listed again
    ])


def test_one_file_of_several_weeks_decides_each_week_and_lists_relisted_papers_again(listing, tmp_path):
    s = settings(listing, tmp_path / "archive")
    assert load_papers(listing).weeks() == pending_weeks(s) == ["2026-W19", "2026-W20", "2026-W21"]
    w19, w20, w21 = run_weeks(s, ["2026-W19", "2026-W20", "2026-W21"])
    assert {i: d.decision for i, d in by_id(w19).items()} == {
        "doi:10.5555/keep": "KEEP", "doi:10.5555/review": "REVIEW", "doi:10.5555/drop": "DROP"}
    # W20: the prior KEEP is decided again (DROP already-covered, the seed's rule); the others are listed again.
    assert {i: (d.decision, d.cause) for i, d in by_id(w20).items()} == {
        "doi:10.5555/keep": ("DROP", "already-covered"), "doi:10.5555/new": ("KEEP", None)}
    assert w20.document["listed_again"] == [{"id": "doi:10.5555/drop", "week": "2026-W19", "decision": "DROP"},
                                            {"id": "doi:10.5555/review", "week": "2026-W19", "decision": "REVIEW"}]
    assert w20.outcome.calibration.force_dropped_already_covered == 1
    # W21 lists the REVIEW again: the newest prior week that decided it is still W19 (W20 only listed it again).
    assert w21.outcome.decisions == () and w21.listed_again == (ListedAgain("doi:10.5555/review", "2026-W19", "REVIEW"),)
    assert load_week(s.archive, "2026-W20").listed_again == w20.listed_again
    assert pending_weeks(s) == []
    assert w19.document["inputs"]["papers"]["file"] == "listing.jsonl"


def test_a_newer_version_is_decided_again_and_tagged(tmp_path):
    papers = write(tmp_path / "fetch.jsonl", [
        row("a", "2026-05-05", version="v1"), row("b", "2026-05-05", abstract=None, version="v1"),
        row("a", "2026-05-12", version="v2"), row("b", "2026-05-12", abstract=None, version="v2"),
        row("c", "2026-05-06", abstract=None, version="v2"), row("c", "2026-05-13", abstract=None, version="v1"),
    ])
    w19, w20 = run_weeks(settings(papers, tmp_path / "archive"), ["2026-W19", "2026-W20"])
    assert by_id(w19)["doi:10.5555/a"].version == "v1"
    got = by_id(w20)
    assert got["doi:10.5555/b"].decision == "REVIEW" and "new-version-of:2026-W19" in got["doi:10.5555/b"].tags
    assert got["doi:10.5555/b"].version == "v2"
    # A new version of a KEEP is decided again, and the seed's rule drops it as already covered.
    assert got["doi:10.5555/a"].cause == "already-covered" and "new-version-of:2026-W19" in got["doi:10.5555/a"].tags
    # An older version listed later is the same paper listed again.
    assert w20.listed_again == (ListedAgain("doi:10.5555/c", "2026-W19", "REVIEW"),)


def test_a_folder_of_fetches_of_any_dates_and_named_weeks(tmp_path):
    folder = tmp_path / "papers"
    write(folder / "fetch-1.jsonl", [row(1, "2026-05-05"), row(2, "2026-05-12", title="Soil", abstract="Soil.")])
    write(folder / "fetch-2.jsonl.gz.txt", [row(9, "2026-05-05")])  # not a papers file's name: not read
    write(folder / "2026-W21.jsonl", [row(3, "2024-01-02")])  # named after its week: listed in it, whatever the date
    (folder / "2026-W22.jsonl").write_text("")  # an empty week
    (folder / "README.md").write_text("# what these are\n")
    s = settings(folder, tmp_path / "archive")
    assert pending_weeks(s) == ["2026-W19", "2026-W20", "2026-W21", "2026-W22"]
    results = run_weeks(s, pending_weeks(s))
    assert [[d.id for d in r.outcome.decisions] for r in results] == [
        ["doi:10.5555/1"], ["doi:10.5555/2"], ["doi:10.5555/3"], []]
    assert [r.document["inputs"]["papers"]["file"] for r in results] == [
        "fetch-1.jsonl", "fetch-1.jsonl", "2026-W21.jsonl", "2026-W22.jsonl"]


def test_the_same_folder_again_is_unchanged_and_a_later_week_leaves_the_earlier_ones_alone(tmp_path, capsys):
    folder = tmp_path / "papers"
    write(folder / "a.jsonl", [row(1, "2026-05-05"), row(2, "2026-05-12")])
    args = ["digest", "--papers", str(folder), "--watchlist", str(FIXTURES / "watchlist.txt"), "--criteria",
            str(FIXTURES / "criteria.md"), "--archive", str(tmp_path / "archive"), "--json"]
    assert main([*args, "--from", "2026-W19", "--to", "2026-W20"]) == 0
    capsys.readouterr()
    before = {w: week_bytes(tmp_path / "archive", w) for w in ("2026-W19", "2026-W20")}
    write(folder / "b.jsonl", [row(1, "2026-05-19"), row(3, "2026-05-20")])  # a later fetch: W21
    assert main([*args, "--from", "2026-W19", "--to", "2026-W21"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["week"], x["unchanged"], x["listed_again"]) for x in lines] == [
        ("2026-W19", True, 0), ("2026-W20", True, 0), ("2026-W21", False, 0)]
    assert {w: week_bytes(tmp_path / "archive", w) for w in before} == before
    # A fetch that lists a paper in W19 after W19 was published: W19's papers are other papers now.
    write(folder / "c.jsonl", [row(2, "2026-05-06")])
    assert main([*args, "--week", "2026-W20"]) == 0 and json.loads(capsys.readouterr().out)["unchanged"]
    assert main([*args, "--week", "2026-W19"]) == 2
    assert 'the papers file was "a.jsonl", now "a.jsonl, c.jsonl"' in capsys.readouterr().err


def test_the_week_digest_follows_the_weeks_listings_only(tmp_path):
    folder = tmp_path / "papers"
    write(folder / "a.jsonl", [row(1, "2026-05-05"), row(2, "2026-05-12")])
    s = settings(folder, tmp_path / "archive")
    [w19] = prepare_weeks(s, ["2026-W19"])
    write(folder / "b.jsonl", [row(5, "2026-05-13")])
    [same] = prepare_weeks(s, ["2026-W19"])
    assert same.document["inputs"]["papers"] == w19.document["inputs"]["papers"]
    write(folder / "c.jsonl", [row(6, "2026-05-06")])  # another W19 listing
    [other] = prepare_weeks(s, ["2026-W19"])
    assert other.document["inputs"]["papers"]["sha256"] != w19.document["inputs"]["papers"]["sha256"]
    assert other.document["inputs"]["papers"]["file"] == "a.jsonl, c.jsonl"


def test_a_record_without_a_date_outside_a_week_file_is_refused_naming_it(tmp_path, capsys):
    papers = write(tmp_path / "mine.jsonl", [row(1, "2026-05-05"), {"id": "doi:10.5555/2", "title": "Undated"}])
    with pytest.raises(InputError, match=r"mine.jsonl: line 2 \(id doi:10.5555/2\): no date, so no week"):
        load_papers(papers)
    with pytest.raises(InputError, match="no paper is listed in 2026-W30 .they cover 2026-W19 to 2026-W19."):
        prepare_weeks(settings(write(tmp_path / "ok.jsonl", [row(1, "2026-05-05")]), tmp_path / "a"), ["2026-W30"])


def test_the_archive_reader_types_and_checks_listed_again(listing, tmp_path):
    s = settings(listing, tmp_path / "archive")
    run_weeks(s, ["2026-W19", "2026-W20"])
    data = week_bytes(s.archive, "2026-W20")
    week = read_week(data, "w20")
    assert week.listed_again == (ListedAgain("doi:10.5555/drop", "2026-W19", "DROP"),
                                 ListedAgain("doi:10.5555/review", "2026-W19", "REVIEW"))
    doc = json.loads(data)
    for bad in ({"id": "doi:10.5555/new", "week": "2026-W19", "decision": "REVIEW"},  # decided this week too
                {"id": "doi:10.5555/x", "week": "2026-W20", "decision": "REVIEW"},    # not a prior week
                {"id": "doi:10.5555/x", "week": "2026-W19", "decision": "MAYBE"}):
        with pytest.raises(InputError, match="w20: .*restore"):
            read_week(dump_json({**doc, "listed_again": [bad]}).encode(), "w20")


def test_the_example_weeks_list_the_two_relisted_papers_again_in_w26(tmp_path):
    s = DigestSettings(papers=EXAMPLE / "papers", watchlist=EXAMPLE / "watchlist.txt",
                       criteria=EXAMPLE / "criteria.md", archive=tmp_path)
    w25, w26 = run_weeks(s, ["2026-W25", "2026-W26"])
    relisted = {"arxiv:2606.19618"}
    assert {a.id for a in w26.listed_again} == relisted and not relisted & set(by_id(w26))
    # 2606.19968 is KEEP in 2026-W25 since rules digest.4 (its Required term is unconfirmed, not failed), so
    # 2026-W26 decides it again and drops it as already covered (issue 33, item 4).
    assert by_id(w25)["arxiv:2606.19968"].decision == "KEEP"
    assert (by_id(w26)["arxiv:2606.19968"].decision, by_id(w26)["arxiv:2606.19968"].cause) == ("DROP",
                                                                                              "already-covered")
    assert all(a.week == "2026-W25" and a.decision == by_id(w25)[a.id].decision for a in w26.listed_again)
    assert w26.document["inputs"]["papers"]["file"] == "2026-W26.jsonl"


def test_as_of_and_a_week_that_has_not_ended(listing, tmp_path):
    with pytest.raises(InputError, match="starts after 2026-05-10"):
        prepare_weeks(settings(listing, tmp_path / "a"), ["2026-W20"], as_of=dt.date(2026, 5, 10))


def test_a_catch_up_encodes_each_week_once_and_reads_each_prior_week_once(tmp_path, monkeypatch):
    """Each week's decisions.json is made once, and each prior week (decided in the run, or published) is
    decoded and read once per run, however many later weeks it is the prior of (issue 35, item 3: 9 weeks once
    re-encoded their documents 35 times)."""
    from collections import Counter

    from reporter.digest import archive as archive_module
    from reporter.digest import weeks as weeks_module
    from reporter.digest.records import WeekDecisions
    days = ["2026-05-05", "2026-05-12", "2026-05-19", "2026-05-26", "2026-06-02", "2026-06-09", "2026-06-16"]
    papers = write(tmp_path / "listing.jsonl", [row(n, day, title=f"A protein language model number {n}")
                                                for n, day in enumerate(days)])
    s = settings(papers, tmp_path / "archive")
    encoded, decoded, read = Counter(), Counter(), Counter()
    real_dump, real_from_json, real_read = weeks_module.dump_json, WeekDecisions.from_json, archive_module.read_capped

    def dump(value):
        encoded[value["week"]] += 1
        return real_dump(value)

    def from_json(data):
        decoded[data["week"]] += 1
        return real_from_json(data)

    def read_capped(path, *args, **kwargs):
        read[Path(path).parent.name] += 1
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(weeks_module, "dump_json", dump)
    monkeypatch.setattr(WeekDecisions, "from_json", staticmethod(from_json))
    monkeypatch.setattr(archive_module, "read_capped", read_capped)
    first = run_weeks(s, ["2026-W19", "2026-W20", "2026-W21", "2026-W22"])
    assert [r.data for r in first] == [(s.archive / r.week / "decisions.json").read_bytes() for r in first]
    assert encoded == {w: 1 for w in ("2026-W19", "2026-W20", "2026-W21", "2026-W22")}
    assert decoded == {w: 1 for w in ("2026-W19", "2026-W20", "2026-W21")}  # W22 is no prior in this run
    assert read == {}  # nothing published before: the archive is never read back
    encoded.clear(), decoded.clear()
    run_weeks(s, ["2026-W23", "2026-W24", "2026-W25"])
    assert encoded == {w: 1 for w in ("2026-W23", "2026-W24", "2026-W25")}
    assert decoded == {w: 1 for w in ("2026-W19", "2026-W20", "2026-W21", "2026-W22", "2026-W23", "2026-W24")}
    # Each published prior read once to decide, and once more under the archive's lock to see it did not change.
    assert read == {w: 2 for w in ("2026-W19", "2026-W20", "2026-W21", "2026-W22")}
