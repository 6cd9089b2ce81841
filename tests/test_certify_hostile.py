"""Hand-edited certificates and sheets (issue 30, items 7, 9 and 10): every certificate field checked on read by
one reader, `reporter export --require-certified` recomputing each certificate it relies on from its recorded
sheet, sheets the tool wrote always read back, seeds in 0..2^64-1, messages that say what changed."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
from pathlib import Path

import shutil
import sqlite3

import pytest
from test_certify_export import certify as export_certify
from test_certify_export import screened  # noqa: F401 (a fixture)
from test_certify_sheets import label, make, read, release_ids, rows, run, write
from test_screen_run import PREFIX

from reporter.certify.gate import require_certified
from reporter.hashing import sha256_json
from reporter.certify.results import certificate_path, load_certificates, read_certificate
from reporter.certify import sheet as sheets
from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.routing.published import find_release


@pytest.fixture()
def ws(tmp_path):
    return make(tmp_path / "ws", rows())


@pytest.fixture()
def screened_ws(screened, tmp_path):
    """test_certify_export's screened workspace (W001 discarded by the cheap tier, W003 by the screen, W008 by
    routing), copied."""
    copy = tmp_path / "screened"
    shutil.copytree(screened["root"], copy)
    return copy


def certified(capsys, ws: Path, labels=lambda i, r: "exclude", n: int = 10, seed: int = 0) -> tuple[Path, dict]:
    """A sheet of the discard pile (40 works) labelled and certified: its certificate's path and document."""
    sheet = ws / "discard.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", n, "--seed", seed, "--out", sheet)[0] == 0
    label(sheet, labels)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 0, err
    path = certificate_path(ws / "state", release_ids(ws)[0], "discard")
    return path, json.loads(path.read_text())


def forged(doc: dict, **changes) -> str:
    """A certificate document edited, its id rehashed to agree (the id is a hash of the fields, not a signature:
    anyone can recompute it, so only the sheet can tell)."""
    edited = {**doc, **changes}
    edited["id"] = sha256_json({k: v for k, v in edited.items() if k not in ("id", "schema_version")})
    return json.dumps(edited)


def gate(ws: Path) -> None:
    w = load_workspace(ws)
    require_certified(w, find_release(w.releases, None))


# --- one validating reader: types, ranges, finite numbers, the fields' own arithmetic -----------------------

BAD_FIELDS = [
    ("max_missed_fraction", -1, "max_missed_fraction"),
    ("max_missed_fraction", math.nan, "max_missed_fraction"),
    ("max_missed_fraction", math.inf, "max_missed_fraction"),
    ("max_missed_fraction", 0.5, "max_missed_fraction"),  # not max_relevant / N
    ("confidence", 2.0, "confidence"),
    ("confidence", math.nan, "confidence"),
    ("confidence", 0, "confidence"),
    ("max_relevant", 0, "max_relevant"),  # below the 2 relevant works the sample holds
    ("max_relevant", 41, "max_relevant"),  # more than the stratum holds
    ("N", 0, "N"),
    ("N", -40, "N"),
    ("n", 11, "n_drawn"),  # n_drawn is min(n, N)
    ("n_labelled", 11, "n_labelled"),
    ("k_relevant", 3, "k_relevant"),  # includes + unsure is 2
    ("includes", -1, "includes"),
    ("partial", True, "partial"),
    ("seed", -1, "seed"),
    ("seed", 2 ** 64, "seed"),
    ("release", "week-1", "release"),
    ("stratum_sha256", "x" * 64, "stratum_sha256"),
    ("sheet_sha256", "", "sheet_sha256"),
    ("kind", "wins", "kind"),
    ("generation", "g1", "generation"),
    ("recall_low", 0.5, "recall_low"),
    ("admitted_relevant", -2, "admitted_relevant"),
    ("sheet", "", "sheet"),
    ("surprise", 1, "surprise"),
]


@pytest.mark.parametrize("field, value, named", BAD_FIELDS, ids=[f"{f}={v!r}" for f, v, _ in BAD_FIELDS])
def test_every_field_is_checked_on_read_naming_the_file_and_field(ws, capsys, field, value, named):
    path, doc = certified(capsys, ws, lambda i, r: "include" if i == 1 else "unsure" if i == 7 else "exclude")
    assert (doc["k_relevant"], doc["N"], doc["n_drawn"]) == (2, 40, 10)
    read_certificate(path)
    path.write_text(json.dumps({**doc, field: value}))
    with pytest.raises(InputError) as caught:
        read_certificate(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and f"'{named}'" in message, message


@pytest.mark.parametrize("command", ["export", "render", "build"])
@pytest.mark.parametrize("value", ["-1", "NaN"])
def test_a_bad_fraction_stops_export_render_and_build_with_exit_2_naming_the_file(ws, capsys, command, value):
    """The issue's case: max_missed_fraction -1 or NaN was a traceback with no file named."""
    path, doc = certified(capsys, ws)
    text = path.read_text().replace(json.dumps(doc["max_missed_fraction"]), value, 1)
    assert value in text
    path.write_text(text)
    if command == "export":
        with pytest.raises(InputError) as caught:
            gate(ws)
        err = str(caught.value)
    else:
        args = (["render", "--releases", str(ws / "releases"), "--out", str(ws / "site"), "--workspace", str(ws)]
                if command == "render" else ["build", "--workspace", str(ws)])
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2, err
    assert f"{path}: field 'max_missed_fraction'" in err and "Traceback" not in err, err


def test_a_certificate_that_is_a_folder_a_device_or_too_big_is_refused_by_name(ws, capsys, monkeypatch):
    path, doc = certified(capsys, ws)
    folder = path.parent / "screen-discarded-00000000.json"
    folder.mkdir()
    with pytest.raises(InputError, match="is a folder"):
        load_certificates(ws / "state", doc["release"])
    folder.rmdir()
    path.unlink()
    path.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=f"{path}: is a character device|{path}: is not a regular file"):
        load_certificates(ws / "state", doc["release"])
    path.unlink()
    big = ws / "big.json"
    big.write_text(json.dumps({**doc, "sheet": "x" * 17_000_000}))
    path.symlink_to(big)
    with pytest.raises(InputError, match=f"{path}: 1.*bytes, more than the 16,777,216"):
        load_certificates(ws / "state", doc["release"])


# --- export recomputes every certificate it relies on ------------------------------------------------------


def test_export_recomputes_a_certificate_forged_to_agree_with_itself(ws, capsys):
    path, doc = certified(capsys, ws, lambda i, r: "include" if i == 0 else "exclude")
    gate(ws)  # the true certificate counts (no target set)
    # every number edited to agree with every other: only the sheet can tell
    path.write_text(forged(doc, k_relevant=0, includes=0, max_relevant=9, max_missed_fraction=9 / 40, rescued=[],
                           rescued_rules=[]))
    read_certificate(path)
    with pytest.raises(InputError) as caught:
        gate(ws)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "discard.csv" in message
    assert "'k_relevant' records 0, recomputed 1" in message and "'includes' records 0, recomputed 1" in message
    assert "'max_relevant' records 9, recomputed 14" in message and "'max_missed_fraction' records 0.225, " in message


def test_export_refuses_a_certificate_whose_seed_or_sheet_hash_was_edited_or_whose_sheet_changed(ws, capsys):
    path, doc = certified(capsys, ws, seed=3)
    path.write_text(forged(doc, seed=4))
    with pytest.raises(InputError, match=f"{path}: .*'seed' records 4, recomputed 3"):
        gate(ws)
    path.write_text(forged(doc, sheet_sha256="0" * 64))
    with pytest.raises(InputError, match=f"{path}: field 'sheet_sha256' records 0000000000.*, but the sheet "):
        gate(ws)
    path.write_text(json.dumps(doc))
    gate(ws)
    label(ws / "discard.csv", lambda i, r: "include" if i == 2 else "exclude")
    with pytest.raises(InputError, match=f"{path}: field 'sheet_sha256' records {doc['sheet_sha256'][:12]}"):
        gate(ws)
    (ws / "discard.csv").unlink()
    with pytest.raises(InputError, match=f"{path}: the sheet it certified, .*discard.csv, cannot be read"):
        gate(ws)


def test_export_cli_refuses_a_forged_certificate_with_exit_2_and_writes_nothing(screened_ws, capsys):
    root = screened_ws
    export_certify(capsys, root, "discard", lambda i, r: "include")
    for pile in ("screen_cheap:discarded", "screen:discarded"):
        export_certify(capsys, root, pile)
    rid = json.loads((root / "releases" / "index.json").read_text())[-1]
    path = certificate_path(root / "state", rid, "discard")
    doc = json.loads(path.read_text())
    assert (doc["k_relevant"], doc["max_relevant"], doc["N"]) == (1, 1, 1)
    out = root / "handoff.csv"
    # --partial: the screened workspace keeps a work with one vote, so the screen is not complete (issue 34)
    export = ["export", "--workspace", str(root), "--out", str(out), "--require-certified", "--partial"]
    path.write_text(json.dumps({**doc, "max_relevant": 0, "max_missed_fraction": 0.0}))  # the edit
    assert main(export) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert f"{path}: field 'max_relevant' 0 is below k_relevant 1" in err, err
    assert doc["admitted_relevant"] == 2  # the workspace's labels: recall_low follows max_relevant
    path.write_text(forged(doc, k_relevant=0, includes=0, max_relevant=0, max_missed_fraction=0.0, recall_low=1.0,
                           rescued=[], rescued_rules=[], found=doc["found"] - 1, recall_lower_bound=None))
    assert main(export) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert f"{path}: " in err and "'k_relevant' records 0, recomputed 1" in err, err
    path.write_text(json.dumps(doc))
    assert main(export) == 0 and out.exists()


def test_a_stale_certificate_of_the_same_size_says_its_works_changed(screened_ws, capsys):
    root = screened_ws
    for pile in ("discard", "screen_cheap:discarded", "screen:discarded"):
        export_certify(capsys, root, pile)
    conn = sqlite3.connect(root / "state" / "screen.db")
    with conn:  # W003 admitted, W004 discarded: one discard then, one now, not the same one
        conn.execute("UPDATE verdicts SET outcome = 'admit' WHERE work_id = ? AND tier = 'expensive'",
                     (PREFIX + "W003",))
        conn.execute("UPDATE verdicts SET outcome = 'discard' WHERE work_id = ? AND tier = 'expensive'",
                     (PREFIX + "W004",))
    conn.close()
    assert main(["export", "--workspace", str(root), "--out", str(root / "h.csv"), "--require-certified"]) == 2
    err = capsys.readouterr().err
    assert "screen:discarded (1 work): its certificate is stale" in err
    assert "held 1 work then and 1 now" not in err
    assert "as many works as then (1) but not the same ones" in err, err


# --- sheets: read back whatever the tool wrote, seeds in range, the stratum cell blamed on the sheet ---------


def test_a_sheet_with_an_abstract_past_the_csv_field_limit_reads_back(tmp_path, capsys):
    long = "word " * 60_000  # 300,000 characters: past csv's 131,072
    pool = [{**r, "abstract": long} if i in range(30) else r for i, r in enumerate(rows())]
    root = make(tmp_path / "ws", pool)
    sheet = root / "discard.csv"
    assert run(capsys, root, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    with long_cells():
        label(sheet, lambda i, r: "exclude")
        abstracts = [r["abstract"] for r in read(sheet) if r["abstract"].startswith("word")]
    cut = sheets.SHEET_TEXT
    assert abstracts and all(a.startswith(long[:cut]) and len(a) < cut + 100 for a in abstracts)
    assert all(a.endswith(f"[cut here: the sheet keeps {sheets.SHEET_TEXT:,} of its {len(long):,} characters]")
               for a in abstracts)
    code, out, err = run(capsys, root, "--sheet", sheet)
    assert code == 0, err


@contextlib.contextmanager
def long_cells():
    """The tests' own csv reader reads sheets with long cells too (the tool sets and restores its own limit)."""
    before = csv.field_size_limit()
    csv.field_size_limit(1 << 24)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def test_a_cell_past_the_sheets_cap_is_refused_naming_the_file_and_row(ws, capsys):
    sheet = ws / "discard.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    records = label(sheet, lambda i, r: "exclude")
    records[3]["abstract"] = "x" * 200_000  # past csv's default, within the sheet's cap (an older sheet): read
    write(sheet, records)
    before = csv.field_size_limit()
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 0, err
    records[3]["abstract"] = "x" * (sheets.MAX_SHEET_CELL + 1)
    write(sheet, records)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{sheet}: row 5: a cell of more than {sheets.MAX_SHEET_CELL:,} characters" in err, err
    assert "Traceback" not in err and csv.field_size_limit() == before, "the limit is put back"


@pytest.mark.parametrize("seed", ["-1", str(2 ** 64), "99999999999999999999999"])
def test_a_seed_outside_0_to_2_64_is_refused(ws, tmp_path, capsys, seed):
    code, _, err = run(capsys, ws, "--pile", "discard", "--n", 5, "--seed", seed, "--out", tmp_path / "s.csv")
    assert code == 2 and f"--seed {seed}: must be a whole number from 0 to 18446744073709551615" in err, err
    assert not (tmp_path / "s.csv").exists()


def test_the_largest_seed_is_recorded_as_given_and_a_sheets_seed_cell_is_checked(ws, tmp_path, capsys):
    top = 2 ** 64 - 1
    path, doc = certified(capsys, ws, seed=top)
    assert doc["seed"] == top and read_certificate(path).seed == top
    sheet = ws / "discard.csv"
    records = read(sheet)
    for bad in ("-1", str(2 ** 64), "٣"):
        write(sheet, [{**r, "seed": bad} for r in records])
        code, _, err = run(capsys, ws, "--sheet", sheet)
        assert code == 2 and f"{sheet}: row 2: seed {bad!r} must be a whole number from 0 to" in err, (bad, err)


@pytest.mark.parametrize("stratum, flag", [("nowhere", "pile"), ("discard/rule:nope", "rule"),
                                           ("discard/rule:trials", "rule")])
def test_an_edited_stratum_cell_is_blamed_on_the_sheet_not_on_a_flag(ws, capsys, stratum, flag):
    sheet = ws / "discard.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    write(sheet, [{**r, "stratum": stratum} for r in read(sheet)])
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{sheet}: row 2: stratum {stratum!r}" in err, err
    assert "the sheet's stratum cell was edited" in err and f"--{flag}" not in err, err


@pytest.mark.parametrize("confidence", ["0.99999999999999999", "1e-400"])
def test_a_confidence_that_a_float_rounds_to_1_or_0_is_refused_before_anything_is_written(ws, capsys, confidence):
    """Recorded, it would be a certificate at 100% or 0% that no reader accepts."""
    sheet = ws / "discard.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    label(sheet, lambda i, r: "exclude")
    code, _, err = run(capsys, ws, "--sheet", sheet, "--confidence", confidence)
    assert code == 2 and f"--confidence {confidence}: must be above 0 and below 1" in err, err
    assert not list((ws / "state" / "certify").glob("[0-9a-f]*/*.json")), "no certificate written"


def test_an_empty_sheet_a_folder_and_a_huge_sheet_are_refused_by_name(ws, capsys, monkeypatch):
    sheet = ws / "s.csv"
    sheet.write_bytes(b"")
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{sheet}: the header must be" in err
    folder = ws / "f.csv"
    folder.mkdir()
    code, _, err = run(capsys, ws, "--sheet", folder)
    assert code == 2 and f"--sheet {folder}: is a folder" in err, err
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    monkeypatch.setattr(sheets, "MAX_SHEET_BYTES", os.path.getsize(sheet) - 1)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"--sheet {sheet}: {os.path.getsize(sheet):,} bytes, more than the" in err, err


def test_a_sheet_too_big_to_read_back_is_never_written(ws, capsys, monkeypatch):
    sheet = ws / "discard.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 40, "--out", sheet)[0] == 0
    size = os.path.getsize(sheet)
    sheet.unlink()
    monkeypatch.setattr(sheets, "MAX_SHEET_BYTES", size - 1)
    code, _, err = run(capsys, ws, "--pile", "discard", "--n", 40, "--out", sheet)
    assert code == 2 and f"--n 40: the sheet of 40 works would hold {size:,} bytes, more than the" in err, err
    assert not sheet.exists()
