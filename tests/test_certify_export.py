"""What the screen discarded is a stratum too, and `reporter export --require-certified` hands nothing on while a
discarding stratum lacks a certificate that meets [certify]'s target."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from support.fake_openai import Answer, FakeOpenAI
from test_certify_sheets import label, read, write
from test_screen_export import SCRIPT
from test_screen_run import PREFIX, make_workspace, screen

from reporter.cli import main


@pytest.fixture(scope="module")
def screened(tmp_path_factory):
    """W001-W002 cheap (W001 discarded by the cheap tier), W003-W007 screen (W003 discarded), W008 discarded by
    routing; labels say W002 and W004 (both admitted) are includes."""
    root = tmp_path_factory.mktemp("certify") / "ws"
    with FakeOpenAI(SCRIPT, default=Answer("include", "Fits.")) as server:
        w = make_workspace(root, server.base_url, cheap=2, screen=5, other=1)
        server.titles = w["titles"]
        screen(w)
    with open(root / "labels.csv", "w", newline="") as f:
        csv.writer(f).writerows([("work_id", "label"), (PREFIX + "W002", "include"), (PREFIX + "W004", "include"),
                                 (PREFIX + "W006", "exclude")])
    text = (root / "reporter.toml").read_text()
    (root / "reporter.toml").write_text('labels = "labels.csv"\n' + text)
    return w


@pytest.fixture()
def ws(screened, tmp_path):
    copy = tmp_path / "ws"
    shutil.copytree(screened["root"], copy)
    return copy


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def certify(capsys, ws, pile: str, labels=lambda i, r: "exclude") -> dict:
    sheet = ws / f"{pile.replace(':', '-')}.csv"
    code, _, err = run(capsys, "certify", "--workspace", ws, "--pile", pile, "--n", 10, "--out", sheet)
    assert code == 0, err
    label(sheet, labels)
    code, out, err = run(capsys, "certify", "--workspace", ws, "--sheet", sheet, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_screens_discards_are_strata_of_the_current_generation(ws, capsys):
    got = certify(capsys, ws, "screen:discarded")
    assert (got["stratum"], got["kind"], got["tier"], got["N"], got["n_drawn"]) == (
        "screen:discarded", "screen", "expensive", 1, 1)
    assert len(got["generation"]) == 64 and got["max_relevant"] == 0 and not got["partial"]
    assert (got["admitted_relevant"], got["recall_low"]) == (2, 1.0), "W002 and W004 admitted, none lost here"
    cheap = certify(capsys, ws, "screen_cheap:discarded", lambda i, r: "include")
    assert (cheap["N"], cheap["k_relevant"], cheap["max_relevant"], cheap["recall_low"]) == (1, 1, 1, 2 / 3)
    assert [r["work_id"] for r in read(ws / "screen_cheap-discarded.csv")] == [PREFIX + "W001"]


def test_export_refuses_until_every_discarding_stratum_is_certified_and_meets_the_target(ws, capsys):
    out = ws / "handoff.csv"
    # --partial: W005 keeps one vote (SCRIPT), so the screen is not complete (issue 34)
    export = ("export", "--workspace", ws, "--out", out, "--require-certified", "--partial")
    code, _, err = run(capsys, *export)
    assert code == 2 and not out.exists()
    assert ("3 discarding strata without a certificate that meets the target: discard (1 work): no "
            "certificate; screen_cheap:discarded (1 work): no certificate; screen:discarded (1 work): no "
            "certificate. Nothing was written.") in err
    for pile in ("discard", "screen_cheap:discarded"):
        certify(capsys, ws, pile)
    code, _, err = run(capsys, *export)
    assert code == 2 and "1 discarding stratum without" in err and "screen:discarded (1 work): no certificate" in err
    certify(capsys, ws, "screen:discarded")
    code, stdout, _ = run(capsys, *export)
    assert code == 0 and "4 admitted works" in stdout and out.exists()

    (ws / "reporter.toml").write_text((ws / "reporter.toml").read_text() + "\n[certify]\nmax_missed_fraction = 0.5\n")
    certify(capsys, ws, "discard", lambda i, r: "unsure")
    out.unlink()
    code, _, err = run(capsys, *export)
    assert code == 2 and not out.exists()
    assert ("discard (1 work): misses the target: at most 100% relevant (jointly: each of the 3 strata at 98.33%, "
            "Bonferroni, so that all hold at 95%), above 50%") in err
    assert "Plan: 2 labels of its 3 works meet the target if none is relevant" in err
    assert "reporter certify --pile discarded --n 2 --out discarded.csv" in err


def test_a_partial_or_weak_certificate_never_counts(ws, capsys):
    for pile in ("screen_cheap:discarded", "screen:discarded"):
        certify(capsys, ws, pile)
    certify(capsys, ws, "discard", lambda i, r: "")
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and "discard (1 work): partial: 0 of 1 row labelled" in err
    sheet = ws / "discard.csv"
    label(sheet, lambda i, r: "exclude")
    assert run(capsys, "certify", "--workspace", ws, "--sheet", sheet, "--confidence", "0.8")[0] == 0
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and "computed at 80%, below the 95% required" in err


def test_a_screen_that_discarded_more_since_makes_its_sheet_and_certificate_stale(ws, capsys):
    certify(capsys, ws, "screen:discarded")
    sheet = ws / "screen-discarded.csv"
    records = read(sheet)
    write(sheet, [{**records[0], "n": "10"}])
    import sqlite3
    conn = sqlite3.connect(ws / "state" / "screen.db")
    with conn:  # W004's verdict turned into a discard, as another generation's gate might have decided
        conn.execute("UPDATE verdicts SET outcome = 'discard' WHERE work_id = ? AND tier = 'expensive'",
                     (PREFIX + "W004",))
    conn.close()
    code, _, err = run(capsys, "certify", "--workspace", ws, "--sheet", sheet)
    assert code == 2 and f"lacks work '{PREFIX}W004' of the sample of screen:discarded" in err
    for pile in ("discard", "screen_cheap:discarded"):
        certify(capsys, ws, pile)
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and "screen:discarded (2 works): its certificate is stale: the stratum held 1 work then" in err
