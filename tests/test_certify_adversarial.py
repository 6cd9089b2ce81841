"""My own hostile cases over certify (issue 30's adversarial pass): each is refused with exit 2 naming the file,
or handled as it should be."""

from __future__ import annotations

import json
import os

import pytest
from test_certify_hostile import certified, forged, gate
from test_certify_sheets import label, make, read, release_ids, rows, run, write

from reporter.certify.results import certificate_path, load_certificates
from reporter.errors import InputError


@pytest.fixture()
def ws(tmp_path):
    return make(tmp_path / "ws", rows())


def test_an_edited_n_that_agrees_with_itself_is_recomputed(ws, capsys):
    path, doc = certified(capsys, ws, n=40)  # the whole stratum: n_drawn 40, max_relevant 0
    path.write_text(forged(doc, n=41))  # n_drawn = min(41, 40) = 40 still
    with pytest.raises(InputError, match=f"{path}: disagrees with its sheet .*'n' records 41, recomputed 40"):
        gate(ws)


@pytest.mark.parametrize("bad", ["include\u200b", "=include", "'include", "yes", "inclu de", "１"])
def test_labels_other_than_the_three_are_refused_naming_the_row(ws, capsys, bad):
    sheet = ws / "s.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    records = label(sheet, lambda i, r: "exclude")
    records[2]["label"] = bad
    write(sheet, records)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{sheet}: row 4 (work " in err and "is not include, exclude or unsure" in err, err


@pytest.mark.parametrize("cell", ["１０", "1e1", "0x0a", " ", "10.0", "+10"])
def test_an_n_cell_that_is_not_ascii_digits_is_refused(ws, capsys, cell):
    sheet = ws / "s.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 10, "--out", sheet)[0] == 0
    write(sheet, [{**r, "n": cell, "label": "exclude"} for r in read(sheet)])
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{sheet}: row 2: n {cell.strip()!r} must be a whole number from 1 to" in err, err


def test_a_certificate_linked_from_another_release_or_named_for_another_stratum_is_refused(ws, capsys):
    path, doc = certified(capsys, ws)
    make(ws, [{**r, "work_id": r["work_id"] + "x"} for r in rows()])
    other = release_ids(ws)[-1]
    link = certificate_path(ws / "state", other, "discard")
    link.parent.mkdir(parents=True)
    link.symlink_to(path)
    held = f"{link}: holds the certificate of 'discard' in release {doc['release'][:12]}"
    with pytest.raises(InputError, match=held):
        load_certificates(ws / "state", other)
    link.unlink()
    path.write_text(forged(doc, stratum="../../x", pile="../../x", strata=["../../x"]))
    with pytest.raises(InputError, match="which belongs elsewhere"):
        load_certificates(ws / "state", doc["release"])


@pytest.mark.parametrize("text", ['{"schema_version": 1, "N": 1' + "0" * 5000 + "}", "[1, 2]", "\ufeff{}", "{",
                                  '{"schema_version": 1, "N": 1e400}'])
def test_a_certificate_that_is_not_json_of_one_is_refused_naming_it(ws, capsys, text):
    path, doc = certified(capsys, ws)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_certificates(ws / "state", doc["release"])
    assert str(caught.value).startswith(f"{path}: ") or str(caught.value).startswith(f"certificate {path}: ")


def test_a_certificate_that_is_a_fifo_or_whose_sheet_is_a_fifo_is_refused_without_blocking(ws, capsys):
    path, doc = certified(capsys, ws)
    fifo = ws / "fifo.csv"
    os.mkfifo(fifo)
    path.write_text(forged(doc, sheet="fifo.csv"))
    with pytest.raises(InputError, match=f"{path}: the sheet it certified, {fifo}: is a FIFO"):
        gate(ws)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(InputError, match=f"certificate {path}: is a FIFO"):
        load_certificates(ws / "state", doc["release"])


def test_a_sheet_changed_between_read_and_hash_cannot_be_certified_with_another_hash(ws, capsys, monkeypatch):
    """The sha256 a certificate records is of the very bytes that were parsed (it was the file hashed again)."""
    from reporter.certify import sheet as sheets
    sheet = ws / "s.csv"
    assert run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    label(sheet, lambda i, r: "exclude")
    parse = sheets.parse_sheet

    def edited_meanwhile(data, path):
        got = parse(data, path)
        label(sheet, lambda i, r: "include")  # another program saves the sheet just after it was read
        return got

    monkeypatch.setattr(sheets, "parse_sheet", edited_meanwhile)
    code, out, err = run(capsys, ws, "--sheet", sheet, "--json")
    assert code == 0, err
    import hashlib
    got = json.loads(out)
    assert got["k_relevant"] == 0 and got["sheet_sha256"] != hashlib.sha256(sheet.read_bytes()).hexdigest()
