"""The digest archive and the patterns: weeks, publishing, --force, catch-up prior feeding, the command."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import pytest

from support.huge import HUGE, link_to_huge

from reporter.cli import main
from reporter.digest.archive import load_week, published_weeks
from reporter.digest.axes import PriorKeep
from reporter.digest.config import DigestSettings
from reporter.digest.read import read_papers
from reporter.digest.records import ListedAgain
from reporter.digest.weeks import pending_weeks, prepare_weeks, run_week, run_weeks, write_week as write_archive_week
from reporter.errors import InputError
from reporter.hashing import canonical_json
from reporter.isoweek import parse_week, shift_week, week_of, week_range

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "digest"
EXAMPLES = Path(__file__).resolve().parent / "fixtures" / "digest" / "made-up"
KEEPER = {"id": "doi:10.5555/keep", "title": "A protein language model for enzymes",
          "abstract": "We evaluate a protein language model on a benchmark; ESM-2 too.", "authors": ["Ada Lovelace"]}


def paper(n: int, title: str, abstract: str | None, **extra) -> dict:
    return {"id": f"doi:10.5555/{n}", "title": title, "abstract": abstract, "authors": [f"Author{n} Person"],
            **extra}


def write_week(folder: Path, week: str, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{week}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def settings(tmp: Path, **kw) -> DigestSettings:
    return DigestSettings(papers=tmp / "papers", watchlist=FIXTURES / "watchlist.txt",
                          criteria=FIXTURES / "criteria.md", archive=tmp / "archive", **kw)


@pytest.fixture
def weeks(tmp_path):
    """W19 keeps KEEPER; W20 has its journal version; W21 lists KEEPER again, and so does W25."""
    papers = tmp_path / "papers"
    write_week(papers, "2026-W19", [KEEPER, paper(1, "Soil survey", "Soil.")])
    write_week(papers, "2026-W20", [
        {"id": "pmid:9", "title": "A protein language model for enzymes (journal version)",
         "abstract": "We evaluate a protein language model.", "related_ids": ["doi:10.5555/keep"],
         "authors": ["Bo Other"]},
        paper(2, "Enrollment report", "Enrollment with a protein language model."),
    ])
    write_week(papers, "2026-W21", [KEEPER])
    write_week(papers, "2026-W25", [KEEPER])
    return tmp_path


# --- weeks ---------------------------------------------------------------------------------------------


def test_iso_weeks():
    assert parse_week("2026-W20") == "2026-W20" and parse_week("2026-W53") == "2026-W53"
    for bad in ("2025-W53", "2026-W00", "2026-W5", "2026W20", "2026-20", ""):
        with pytest.raises(InputError, match="not an ISO week; write YYYY-Www"):
            parse_week(bad)
    assert shift_week("2026-W01", -1) == "2025-W52" and shift_week("2026-W53", 1) == "2027-W01"
    assert week_of(dt.date(2026, 5, 6)) == "2026-W19" and week_of(dt.date(2027, 1, 1)) == "2026-W53"
    assert week_range("2026-W52", "2027-W02") == ["2026-W52", "2026-W53", "2027-W01", "2027-W02"]
    with pytest.raises(InputError, match="is after"):
        week_range("2026-W20", "2026-W19")


# --- publishing ----------------------------------------------------------------------------------------


def test_publish_refuses_an_existing_week_and_force_keeps_the_old_version(tmp_path):
    archive = tmp_path / "archive"
    path, kept = write_archive_week(archive, "2026-W20", b'{"v": 1}\n')
    assert path == archive / "2026-W20" / "decisions.json" and kept is None
    with pytest.raises(InputError, match="already published; re-publishing is refused. Give --force"):
        write_archive_week(archive, "2026-W20", b'{"v": 2}\n')
    assert path.read_bytes() == b'{"v": 1}\n'
    path, kept = write_archive_week(archive, "2026-W20", b'{"v": 2}\n', force=True)
    sha12 = hashlib.sha256(b'{"v": 1}\n').hexdigest()[:12]
    assert kept == archive / "2026-W20" / f"decisions.superseded-{sha12}.json"
    assert kept.read_bytes() == b'{"v": 1}\n' and path.read_bytes() == b'{"v": 2}\n'
    assert write_archive_week(archive, "2026-W20", b'{"v": 2}\n', force=True) == (path, None)  # same bytes: unchanged
    assert sorted(p.name for p in (archive / "2026-W20").iterdir()) == ["decisions.json", kept.name]


def test_decisions_json_has_the_seed_shape_and_the_inputs_digests(weeks):
    s = settings(weeks)
    result = run_week(s, "2026-W19")
    data = json.loads(result.path.read_text())
    assert {"decisions", "calibration", "watchlist_drift", "merges", "week", "inputs", "prior_weeks"} <= set(data)
    assert data["week"] == "2026-W19" and data["prior_weeks"] == []
    keep = data["decisions"][0]
    assert {"id", "decision", "score", "axes", "rationale", "tags"} <= set(keep)
    assert (keep["id"], keep["decision"], keep["score"]) == ("doi:10.5555/keep", "KEEP", 100)
    assert isinstance(keep["score"], int) and set(keep["axes"]) == {"match", "criteria", "novelty"}
    assert set(data["calibration"]) >= {"kept", "review", "dropped", "force_dropped_already_covered",
                                        "demoted_for_cap", "stricter_pass_applied"}
    sha = lambda p: hashlib.sha256(Path(p).read_bytes()).hexdigest()
    # The week's listings, one canonical line each (docs/digest.md, "One paper, one week"), not the file's bytes.
    lines = "".join(canonical_json({"record": r.to_json(), "where": f"2026-W19.jsonl: line {n}"}) + "\n"
                    for n, r in enumerate(read_papers(s.papers / "2026-W19.jsonl"), 1))
    assert data["inputs"]["papers"] == {"file": "2026-W19.jsonl", "sha256": hashlib.sha256(lines.encode()).hexdigest()}
    assert data["inputs"]["watchlist"]["sha256"] == sha(s.watchlist)
    assert data["inputs"]["criteria"]["sha256"] == sha(s.criteria)
    assert published_weeks(s.archive) == ["2026-W19"]
    assert load_week(s.archive, "2026-W19").kept()[0].id == "doi:10.5555/keep"


def test_same_inputs_same_bytes_wherever_they_live(weeks, tmp_path_factory):
    a = run_week(settings(weeks), "2026-W19").path.read_bytes()
    other = tmp_path_factory.mktemp("elsewhere")
    (other / "papers").mkdir()
    (other / "papers" / "2026-W19.jsonl").write_bytes((weeks / "papers" / "2026-W19.jsonl").read_bytes())
    assert run_week(settings(other), "2026-W19").path.read_bytes() == a


# --- the patterns --------------------------------------------------------------------------------------


def test_catch_up_feeds_each_weeks_keeps_into_the_next_prior(weeks):
    s = settings(weeks)
    w19, w20, w21 = run_weeks(s, ["2026-W19", "2026-W20", "2026-W21"])
    [journal] = [d for d in w20.outcome.decisions if d.id == "pmid:9"]
    assert journal.decision == "KEEP" and "journal-version-of:2026-W19" in journal.tags
    # Listed again after a KEEP: decided again, and dropped as the seed says (already covered).
    [again] = w21.outcome.decisions
    assert again.decision == "DROP" and again.cause == "already-covered" and "kept in 2026-W19" in again.rationale
    assert w21.document["prior_weeks"] == ["2026-W19", "2026-W20"] and w21.document["listed_again"] == []
    assert w21.document["inputs"]["prior"] == {w: hashlib.sha256(r.path.read_bytes()).hexdigest()
                                               for w, r in (("2026-W19", w19), ("2026-W20", w20))}
    # W25 lists it again; W21, one of its four prior weeks, decided it (DROP): it is not decided a third time.
    [w25] = run_weeks(s, ["2026-W25"])
    assert w25.document["prior_weeks"] == ["2026-W21"] and w25.outcome.decisions == ()
    assert w25.document["listed_again"] == [{"id": "doi:10.5555/keep", "week": "2026-W21", "decision": "DROP"}]
    assert load_week(s.archive, "2026-W25").listed_again == (ListedAgain("doi:10.5555/keep", "2026-W21", "DROP"),)


def test_catch_up_equals_the_weeks_run_one_by_one(weeks, tmp_path_factory):
    together = [r.data for r in run_weeks(settings(weeks), ["2026-W19", "2026-W20", "2026-W21"])]
    other = tmp_path_factory.mktemp("one-by-one")
    (other / "papers").symlink_to(weeks / "papers")
    apart = [run_week(settings(other), w).data for w in ("2026-W19", "2026-W20", "2026-W21")]
    assert together == apart


def test_no_prior_and_a_given_prior(weeks):
    s = settings(weeks)
    run_week(s, "2026-W19")
    [free] = prepare_weeks(s, ["2026-W21"], prior_override=[])  # no prior week decided the paper: decided here
    assert free.outcome.decisions[0].decision == "KEEP" and free.listed_again == ()
    assert free.document["prior_weeks"] == [] and free.document["settings"]["prior"] == "none"
    [given] = prepare_weeks(s, ["2026-W20"], prior_override=[PriorKeep("pmid:9", "x", "2026-W18")])
    assert {d.id: d.cause for d in given.outcome.decisions}["pmid:9"] == "already-covered"
    assert given.document["prior_weeks"] == ["2026-W18"] and given.document["settings"]["prior"] == "given"
    [archived] = prepare_weeks(s, ["2026-W21"])
    assert archived.outcome.decisions[0].cause == "already-covered"


def test_a_refused_catch_up_writes_nothing(weeks):
    s = settings(weeks)
    run_week(s, "2026-W20")
    before = sorted(p.relative_to(s.archive) for p in s.archive.rglob("*"))
    with pytest.raises(InputError, match="2026-W20.*already published"):
        run_weeks(s, ["2026-W19", "2026-W20"])
    (s.papers / "2026-W21.jsonl").write_text('{"id": "no-scheme", "title": "x"}\n')
    with pytest.raises(InputError, match="2026-W21.jsonl"):
        run_weeks(s, ["2026-W19", "2026-W21"])
    with pytest.raises(InputError, match="2026-W21.jsonl"):  # every file is read: it could list a W19 paper
        run_weeks(s, ["2026-W19"])
    (s.papers / "2026-W21.jsonl").unlink()
    with pytest.raises(InputError, match="no paper is listed in 2026-W22"):
        run_weeks(s, ["2026-W19", "2026-W22"])
    assert sorted(p.relative_to(s.archive) for p in s.archive.rglob("*")) == before


def test_pending_weeks_and_as_of(weeks):
    s = settings(weeks)
    assert pending_weeks(s) == ["2026-W19", "2026-W20", "2026-W21", "2026-W25"]
    run_week(s, "2026-W20")
    assert pending_weeks(s) == ["2026-W19", "2026-W21", "2026-W25"]
    with pytest.raises(InputError, match="starts after 2026-06-01"):
        run_week(s, "2026-W25", as_of=dt.date(2026, 6, 1))
    assert pending_weeks(settings(weeks / "nowhere")) == []


def test_a_damaged_archived_week_is_named(weeks):
    s = settings(weeks)
    run_week(s, "2026-W19")
    (s.archive / "2026-W19" / "decisions.json").write_text('{"week": "2026-W19"}')
    with pytest.raises(InputError, match=r"2026-W19/decisions.json: not a decisions.json this tool wrote"):
        run_week(s, "2026-W20")


# --- the command ---------------------------------------------------------------------------------------


def cli(tmp: Path, *extra: str) -> list[str]:
    return ["digest", "--papers", str(tmp / "papers"), "--watchlist", str(FIXTURES / "watchlist.txt"),
            "--criteria", str(FIXTURES / "criteria.md"), "--archive", str(tmp / "archive"), *extra]


def test_command_publishes_prints_and_refuses_a_second_publish_with_other_inputs(weeks, capsys):
    assert main(cli(weeks, "--week", "2026-W19")) == 0
    out = capsys.readouterr().out
    assert out.startswith("2026-W19: 1 kept, 0 review, 1 dropped") and "decisions.json" in out
    before = (weeks / "archive" / "2026-W19" / "decisions.json").read_bytes()
    assert main(cli(weeks, "--week", "2026-W19")) == 0  # the same inputs: nothing to do
    assert "already published with the same inputs: left as it was" in capsys.readouterr().out
    assert main(cli(weeks, "--week", "2026-W19", "--max-kept", "3")) == 2
    err = capsys.readouterr().err
    assert "week 2026-W19 is already published with other inputs (setting max_kept 25 then, 3 now)" in err
    assert "Give --force" in err
    assert (weeks / "archive" / "2026-W19" / "decisions.json").read_bytes() == before
    assert main(cli(weeks, "--week", "2026-W19", "--force", "--max-kept", "3", "--json")) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["path"].endswith("2026-W19/decisions.json") and line["calibration"]["kept"] == 1
    assert line["superseded"] and Path(line["superseded"]).exists()  # max_kept changed the settings block


def test_command_catch_up_full_ranking_and_no_prior(weeks, capsys):
    assert main(cli(weeks, "--from", "2026-W19", "--to", "2026-W21", "--json")) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["week"] for x in lines] == ["2026-W19", "2026-W20", "2026-W21"]
    assert lines[2]["calibration"]["force_dropped_already_covered"] == 1
    assert main(cli(weeks, "--week", "2026-W21", "--no-prior", "--full-ranking", "--force")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2026-W21: 1 kept, 0 review, 0 dropped") and "old version kept as" in out[0]
    rank, score, relevance, decision, pid = out[1].split()[:5]
    assert (rank, score, decision, pid) == ("1", "100", "KEEP", "doi:10.5555/keep") and float(relevance) > 0


@pytest.mark.parametrize("extra, message", [
    (["--week", "2026-W60"], "--week: '2026-W60' is not an ISO week"),
    (["--from", "2026-W19"], "--from needs --to"),
    (["--week", "2026-W19", "--to", "2026-W20"], "--to goes with --from"),
    (["--week", "2026-W19", "--max-kept", "0"], "--max-kept must be 1 or more"),
    (["--week", "2026-W30"], "no paper is listed in 2026-W30 (they cover 2026-W19 to 2026-W25)"),
])
def test_command_bad_input_exits_2_with_a_message(weeks, capsys, extra, message):
    assert main(cli(weeks, *extra)) == 2
    assert message in capsys.readouterr().err


def test_command_names_the_watchlist_line(weeks, capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("ok\nESM*\theavy\n")
    args = cli(weeks, "--week", "2026-W19")
    args[args.index("--watchlist") + 1] = str(bad)
    assert main(args) == 2
    assert f"{bad}:2: weight 'heavy' is not a number" in capsys.readouterr().err
    assert not (weeks / "archive").exists()


def test_command_reads_the_workspace_digest_table(weeks, capsys):
    (weeks / "reporter.toml").write_text(
        'pool = "pool.parquet"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n'
        f'[digest]\npapers = "papers"\nwatchlist = "{FIXTURES / "watchlist.txt"}"\n'
        f'criteria = "{FIXTURES / "criteria.md"}"\narchive = "digests"\nmax_kept = 1\n')
    assert main(["digest", "--workspace", str(weeks), "--week", "2026-W19"]) == 0
    assert (weeks / "digests" / "2026-W19" / "decisions.json").exists()
    data = json.loads((weeks / "digests" / "2026-W19" / "decisions.json").read_text())
    assert data["settings"]["max_kept"] == 1
    capsys.readouterr()
    (weeks / "reporter.toml").write_text('pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "t"\n')
    assert main(["digest", "--workspace", str(weeks), "--week", "2026-W19"]) == 2
    assert "no [digest] table" in capsys.readouterr().err


def test_the_example_weeks_decide_as_their_readme_says(tmp_path):
    s = DigestSettings(papers=EXAMPLES / "papers", watchlist=EXAMPLES / "watchlist.txt",
                       criteria=EXAMPLES / "criteria.md", archive=tmp_path)
    w19, w20 = run_weeks(s, ["2026-W19", "2026-W20"])
    counts = [(c.kept, c.review, c.dropped) for c in (w19.outcome.calibration, w20.outcome.calibration)]
    assert counts == [(3, 4, 3), (4, 0, 2)]
    causes = {d.cause for d in w19.outcome.decisions} | {d.cause for d in w20.outcome.decisions}
    assert causes == {None, "already-covered", "look-alike-trap", "not-in-scope", "weak-match"}
    # Rules digest.4 (issue 33, item 4): .003's absent Required term is borderline, not the fail it was.
    assert {d.id: (d.decision, d.score, d.tags) for d in w19.outcome.decisions}[
        "doi:10.5555/example.digest.003"] == ("REVIEW", 64, ("required-unconfirmed",))
    assert {d.id: d.score for d in w19.outcome.decisions}["doi:10.5555/example.digest.004"] == 87


@pytest.mark.parametrize("key", ["criteria", "watchlist"])
@pytest.mark.parametrize("command", ["digest", "build"])
def test_a_folder_given_as_criteria_or_watchlist_is_exit_2_naming_the_key_and_path(weeks, capsys, key, command):
    """Issue 30, item 9: a folder there was an IsADirectoryError traceback; a FIFO would block the read."""
    folder = weeks / f"{key}-folder"
    folder.mkdir()
    files = {"watchlist": FIXTURES / "watchlist.txt", "criteria": FIXTURES / "criteria.md", key: folder}
    (weeks / "reporter.toml").write_text(
        f'site = "site"\n[digest]\npapers = "papers"\nwatchlist = "{files["watchlist"]}"\n'
        f'criteria = "{files["criteria"]}"\narchive = "digests"\n')
    args = ["--workspace", str(weeks)] + (["--week", "2026-W19"] if command == "digest" else [])
    assert main([command, *args]) == 2
    err = capsys.readouterr().err
    assert f"[digest] {key} (or --{key}) {folder}: is a folder; name a regular file" in err, err
    assert not (weeks / "digests").exists() and not (weeks / "site").exists()
    fifo = weeks / f"{key}.fifo"
    os.mkfifo(fifo)
    files[key] = fifo
    (weeks / "reporter.toml").write_text(
        f'site = "site"\n[digest]\npapers = "papers"\nwatchlist = "{files["watchlist"]}"\n'
        f'criteria = "{files["criteria"]}"\narchive = "digests"\n')
    assert main([command, *args]) == 2
    assert f"[digest] {key} (or --{key}) {fifo}: is a FIFO (named pipe); name a regular file" in capsys.readouterr().err



@pytest.mark.parametrize("name, command", [("decisions.json", "build"), ("decisions.json", "digest"),
                                           ("novelty.jsonl", "build")])  # reporter digest reads no graph verdicts
def test_an_archive_file_linked_to_a_huge_file_is_refused_by_its_size_before_it_is_read(tmp_path, capsys, name,
                                                                                         command):
    """A week's decisions.json (or its graph verdicts) linked to a 256 MiB file was read whole, then refused as bad
    JSON (486 MiB peak); now its size is refused first, naming the file and the cap."""
    import shutil

    from reporter.digest.archive import DECISIONS_CAP
    from reporter.novelty.results import RESULTS_CAP

    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES.parent / "site_v4", ws)
    path = ws / "digests" / "2026-W19" / name
    link_to_huge(path)
    args = ["build", "--workspace", str(ws)] if command == "build" else \
        ["digest", "--workspace", str(ws), "--week", "2026-W20", "--force"]
    assert main(args) == 2
    err = capsys.readouterr().err
    cap = DECISIONS_CAP if name == "decisions.json" else RESULTS_CAP
    assert f"{path}: {HUGE:,} bytes, more than the {cap:,} such a file may hold" in err, err
