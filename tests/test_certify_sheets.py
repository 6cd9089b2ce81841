"""`reporter certify`: sheets drawn byte for byte the same, only the seeded sample certified, partial sheets,
labels carried over to the next release, the certificate in the workspace state, atomically."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from support.routing import TODAY, write_pool, write_specs

from reporter.certify.bound import max_relevant
from reporter.certify.results import certificate_path, load_certificates
from reporter.certify.sample import bottom_k
from reporter.certify.sheet import SHEET_COLUMNS
from reporter.cli import main
from reporter.routing.release import route_release

CONTRACT = ("release", "stratum", "N", "n_drawn", "n_labelled", "k_relevant", "confidence", "max_relevant",
            "max_missed_fraction", "partial")
RULES = [
    {"id": "notices", "description": "notices", "pile": "discard", "precedence": 30,
     "match": {"field": "title", "any_phrase": ["notice"]}},
    {"id": "comments", "description": "comments", "pile": "discard", "precedence": 20,
     "match": {"field": "title", "any_phrase": ["comment"]}},
    {"id": "replications", "description": "replications", "pile": "screen", "precedence": 10,
     "match": {"field": "title", "any_phrase": ["replication"]},
     "domain": {"field": "title", "any_phrase": ["replication", "trial"]}},
    {"id": "trials", "description": "trials", "pile": "screen", "precedence": 5,
     "match": {"field": "title", "any_phrase": ["trial"]}},
]
HOSTILE = '=HYPERLINK("http://evil.example","notice")'


def rows(count: int = 60) -> list[dict]:
    """30 notices (one hostile), 10 comments, 10 replications, 5 trials, 5 others."""
    out = []
    for i in range(count):
        kind = ("notice" if i < 30 else "comment" if i < 40 else "replication" if i < 50 else
                "trial" if i < 55 else "other")
        title = HOSTILE if i == 3 else f"A {kind} {i}"
        out.append({"work_id": f"doi:10.5555/c{i:03d}", "source": "journal", "title": title,
                    "abstract": f"Abstract {i}, with a comma and a\nnewline." if i % 2 else None})
    return out


def make(root: Path, pool_rows: list[dict], rules=RULES, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_pool(root / "pool.parquet", pool_rows)
    write_specs(root, rules)
    (root / "reporter.toml").write_text('pool = "pool.parquet"\nspecs = "specs"\nreleases = "releases"\n'
                                        'site = "site"\n' + extra)
    route_release(root / "pool.parquet", root / "specs", root / "releases", workers=1, progress=False,
                  as_of=TODAY, release_name="week-1" if not (root / "releases").exists() else None)
    return root


@pytest.fixture()
def ws(tmp_path):
    return make(tmp_path / "ws", rows())


def run(capsys, root: Path, *args) -> tuple[int, str, str]:
    code = main(["certify", "--workspace", str(root), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write(path: Path, records: list[dict]) -> None:
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=SHEET_COLUMNS, lineterminator="\r\n")
    w.writeheader()
    w.writerows(records)
    path.write_text(text.getvalue(), encoding="utf-8", newline="")


def label(path: Path, labels) -> list[dict]:
    """Fill the label column: `labels` maps a row's index to its label (a callable or a dict)."""
    records = read(path)
    for i, r in enumerate(records):
        r["label"] = labels(i, r) if callable(labels) else labels.get(i, "")
    write(path, records)
    return records


def release_ids(root: Path) -> list[str]:
    return json.loads((root / "releases" / "index.json").read_text())


def discard_ids(root: Path) -> list[str]:
    return [r["work_id"] for r in rows() if r["title"] == HOSTILE or " notice " in r["title"]
            or " comment " in r["title"]]


def test_a_sheet_is_the_bottom_k_sample_in_rank_order_and_the_same_bytes_every_time(ws, tmp_path, capsys):
    code, out, _ = run(capsys, ws, "--pile", "discard", "--n", 12, "--seed", 5, "--out", tmp_path / "a.csv")
    assert code == 0 and "40 works; sampled 12 (seed 5)" in out
    assert run(capsys, ws, "--pile", "discard", "--n", 12, "--seed", 5, "--out", tmp_path / "b.csv")[0] == 0
    data = (tmp_path / "a.csv").read_bytes()
    assert data == (tmp_path / "b.csv").read_bytes() and b"\r\n" in data and not data.startswith(b"\xef\xbb\xbf")
    sheet = read(tmp_path / "a.csv")
    assert list(sheet[0]) == list(SHEET_COLUMNS)
    assert [r["work_id"] for r in sheet] == list(bottom_k(discard_ids(ws), 5, 12))
    rid = release_ids(ws)[0]
    assert {(r["release"], r["stratum"], r["seed"], r["n"], r["label"]) for r in sheet} == {
        (rid, "discard", "5", "12", "")}
    first = next(r for r in sheet)
    i = int(first["work_id"][-3:])
    assert first["title"] == (f"'{HOSTILE}" if i == 3 else rows()[i]["title"])
    assert first["link"] == f"https://doi.org/10.5555/c{i:03d}"
    assert first["abstract"] == (rows()[i]["abstract"] or "")


def test_a_formula_title_is_neutralised_on_the_sheet(ws, tmp_path, capsys):
    assert run(capsys, ws, "--pile", "discard", "--n", 40, "--out", tmp_path / "all.csv")[0] == 0
    titles = {r["work_id"]: r["title"] for r in read(tmp_path / "all.csv")}
    assert titles["doi:10.5555/c003"] == "'" + HOSTILE
    assert len(titles) == 40, "n above the stratum's size: the whole stratum"


def test_a_fully_labelled_sheet_certifies_exactly_and_is_recorded(ws, tmp_path, capsys):
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 20, "--out", sheet)
    label(sheet, lambda i, r: "Include" if i == 4 else " unsure" if i == 9 else "exclude")
    code, out, _ = run(capsys, ws, "--sheet", sheet, "--json")
    assert code == 0
    got = json.loads(out)
    rid = release_ids(ws)[0]
    assert {k: got[k] for k in CONTRACT} == {
        "release": rid, "stratum": "discard", "N": 40, "n_drawn": 20, "n_labelled": 20, "k_relevant": 2,
        "confidence": 0.95, "max_relevant": 9, "max_missed_fraction": 9 / 40, "partial": False}
    assert max_relevant(40, 20, 2, 0.95) == 9
    assert (got["includes"], got["unsure"], got["labelled_prefix"]) == (1, 1, True)
    state = certificate_path(ws / "state", rid, "discard")
    assert state == ws / "state" / "certify" / rid / "discard.json"
    assert json.loads(state.read_text()) == {k: v for k, v in got.items()
                                             if k not in ("meets_target", "standing", "state_file", "current")}
    (cert,) = load_certificates(ws / "state", rid)
    assert cert.max_relevant == 9 and cert.sheet == str(sheet) and cert.summary == (
        "40 works; 20 sampled, 2 relevant: at most 9 relevant (22%), 95%")
    code, out, _ = run(capsys, ws, "--sheet", sheet, "--confidence", "0.5")
    assert code == 0 and "at most 5 relevant (12%), 50%" in out and max_relevant(40, 20, 2, "0.5") == 5


def test_a_partly_labelled_sheet_gives_a_partial_certificate(ws, tmp_path, capsys):
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 20, "--out", sheet)
    label(sheet, {i: "exclude" for i in range(8)})
    code, out, _ = run(capsys, ws, "--sheet", sheet, "--json")
    got = json.loads(out)
    assert code == 0 and (got["partial"], got["n_drawn"], got["n_labelled"], got["k_relevant"]) == (True, 20, 8, 0)
    assert got["max_relevant"] == max_relevant(40, 8, 0, 0.95) == 11 and got["labelled_prefix"]
    assert got["standing"] == "partial: 8 of 20 rows labelled"
    label(sheet, {0: "exclude", 5: "exclude"})
    got = json.loads(run(capsys, ws, "--sheet", sheet, "--json")[1])
    assert (got["n_labelled"], got["labelled_prefix"]) == (2, False)
    code, out, _ = run(capsys, ws, "--sheet", sheet)
    assert "not the first rows" in out and "(partial)" in out


@pytest.mark.parametrize("edit", ["stray", "another stratum", "missing", "twice", "bad label", "other release",
                                  "unknown release", "seed changed"])
def test_only_the_seeded_sample_makes_a_certificate(ws, tmp_path, capsys, edit):
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 10, "--out", sheet)
    records = label(sheet, lambda i, r: "exclude")
    rid = records[0]["release"]
    outside = next(w for w in discard_ids(ws) if w not in {r["work_id"] for r in records})
    if edit == "stray":
        records[6]["work_id"] = outside
        want = f"row 8: work '{outside}' is not in the sample of discard"
    elif edit == "another stratum":
        records[2]["work_id"] = "doi:10.5555/c045"  # a replication: in screen, not in discard
        want = "row 4: work 'doi:10.5555/c045' is not in the sample"
    elif edit == "missing":
        del records[3]
        want = "lacks work"
    elif edit == "twice":
        records[5]["work_id"] = records[1]["work_id"]
        want = "is listed twice (first on row 3)"
    elif edit == "bad label":
        records[4]["label"] = "maybe"
        want = f"row 6 (work {records[4]['work_id']}): label 'maybe' is not include, exclude or unsure"
    elif edit == "other release":
        make(ws, [{**r, "work_id": r["work_id"] + "x"} for r in rows()])  # another release, other works
        other = release_ids(ws)[-1]
        assert other != rid
        for r in records:
            r["release"] = other
        want = "is not in the sample of discard in release " + other[:12]
    elif edit == "unknown release":
        for r in records:
            r["release"] = "f" * 64
        want = "names no release"
    else:
        for r in records:
            r["seed"] = "1"
        want = "is not in the sample of discard"
    write(sheet, records)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and want in err and "Traceback" not in err, err
    assert not list((ws / "state" / "certify").glob("[0-9a-f]*/*.json")), "no certificate written"


def test_a_refused_sheet_leaves_the_earlier_certificate_and_a_failed_write_no_temporary(ws, tmp_path, capsys,
                                                                                          monkeypatch):
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 10, "--out", sheet)
    label(sheet, lambda i, r: "exclude")
    assert run(capsys, ws, "--sheet", sheet)[0] == 0
    rid = release_ids(ws)[0]
    state = certificate_path(ws / "state", rid, "discard")
    before = state.read_bytes()
    records = label(sheet, lambda i, r: "include" if i == 0 else "exclude")
    records[1]["label"] = "yes"
    write(sheet, records)
    assert run(capsys, ws, "--sheet", sheet)[0] == 2
    assert state.read_bytes() == before
    label(sheet, lambda i, r: "include")

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and "no space left on device" in err
    assert state.read_bytes() == before, "the old certificate, whole"
    assert sorted(p.name for p in state.parent.iterdir()) == ["discard", "discard.json"], "no temporary left"
    assert len(list((state.parent / "discard").iterdir())) == 1, "the one certificate kept, no temporary"


def test_the_next_release_keeps_every_sampled_work_still_in_the_stratum_and_its_label(ws, tmp_path, capsys):
    old = tmp_path / "old.csv"
    run(capsys, ws, "--pile", "discard", "--n", 15, "--seed", 2, "--out", old)
    records = label(old, lambda i, r: "include" if i % 4 == 0 else "exclude")
    gone = {r["work_id"] for r in records[::3]}  # a third of the sample leaves the pool
    make(ws, [r for r in rows() if r["work_id"] not in gone and r["work_id"] != "doi:10.5555/c059"])
    new = tmp_path / "new.csv"
    code, out, _ = run(capsys, ws, "--pile", "discard", "--n", 15, "--seed", 2, "--out", new, "--from", old)
    kept = [r for r in records if r["work_id"] not in gone]
    assert code == 0 and f"carried over {len(kept)} labels from {old}" in out
    fresh = {r["work_id"]: r["label"] for r in read(new)}
    assert len(fresh) == 15 and all(fresh[r["work_id"]] == r["label"] for r in kept)
    assert sum(1 for v in fresh.values() if v) == len(kept) == 10
    assert {r["release"] for r in read(new)} == {release_ids(ws)[-1]}
    label(new, lambda i, r: r["label"] or "exclude")
    got = json.loads(run(capsys, ws, "--sheet", new, "--json")[1])
    assert (got["release"], got["N"], got["n_labelled"], got["partial"]) == (release_ids(ws)[-1], 35, 15, False)
    assert [c.release for c in load_certificates(ws / "state", release_ids(ws)[-1])] == [release_ids(ws)[-1]]


def test_rule_wins_domain_misses_and_release_names(ws, tmp_path, capsys):
    code, out, _ = run(capsys, ws, "--pile", "discard", "--rule", "comments", "--n", 5, "--out", tmp_path / "w.csv")
    assert code == 0 and "stratum discard/rule:comments: 10 works" in out
    assert {r["work_id"][-3:] for r in read(tmp_path / "w.csv")} <= {f"{i:03d}" for i in range(30, 40)}
    code, out, _ = run(capsys, ws, "--pile", "domain-misses", "--rule", "replications", "--n", 9,
                       "--out", tmp_path / "d.csv", "--release", "week-1")
    # the trials with an abstract (the others wait in pending, no_text): in its domain, not matched, screened
    assert code == 0 and "domain-misses/rule:replications: 2 works" in out
    assert sorted(r["work_id"] for r in read(tmp_path / "d.csv")) == ["doi:10.5555/c051", "doi:10.5555/c053"]
    stats = json.loads((ws / "releases" / release_ids(ws)[0] / "rule_stats.json").read_text())
    assert next(r["domain_miss"] for r in stats["rules"] if r["id"] == "replications") == 2
    label(tmp_path / "d.csv", lambda i, r: "exclude")
    got = json.loads(run(capsys, ws, "--sheet", tmp_path / "d.csv", "--json")[1])
    assert (got["stratum"], got["max_relevant"], got["rule"], got["kind"]) == (
        "domain-misses/rule:replications", 0, "replications", "domain-misses")
    assert certificate_path(ws / "state", got["release"], got["stratum"]).name.startswith("domain-misses-rule-")
    rid = release_ids(ws)[0]
    assert run(capsys, ws, "--pile", "hold", "--n", 5, "--out", tmp_path / "h.csv", "--release", rid[:8])[2] == (
        f"reporter certify: error: hold: release {rid[:12]} holds no work in it, so there is nothing to sample or "
        f"certify\n")
    for args, want in ((("--pile", "nowhere"), "has no such pile"),
                       (("--pile", "discard", "--rule", "trials"), "wins into 'screen', not 'discard'"),
                       (("--pile", "domain-misses", "--rule", "notices"), "has no domain"),
                       (("--pile", "domain-misses"), "needs --rule"),
                       (("--pile", "discard", "--release", "abc"), "names no release"),
                       (("--pile", "screen:discarded"), "screening is not configured")):
        code, _, err = run(capsys, ws, *args, "--n", 5, "--out", tmp_path / "x.csv")
        assert code == 2 and want in err, (args, err)
    code, _, err = run(capsys, ws, "--sheet", tmp_path / "d.csv", "--n", 4)
    assert code == 2 and "give --sheet alone" in err
    assert run(capsys, ws, "--pile", "discard", "--n", 0, "--out", tmp_path / "x.csv")[0] == 2
    assert not (tmp_path / "x.csv").exists()


def test_out_is_checked_like_every_out(ws, tmp_path, capsys):
    from test_files import assert_untouched, out_targets
    (tmp_path / "outs").mkdir()
    for kind, (path, message) in out_targets(tmp_path / "outs", "sheet.csv").items():
        code, _, err = run(capsys, ws, "--pile", "discard", "--n", 3, "--out", path)
        assert code == 2 and f"--out {path}" in err and message in err, kind
    assert_untouched(tmp_path / "outs")


def test_the_sheet_links_a_work_as_the_site_does():
    from reporter.ids import paper_url
    from reporter.site.links import paper_href
    for work_id in ("doi:10.5555/x y", "arxiv:2401.01234v2", "arxiv:hep-th/9901001", "pmid:123", "pmid:0123",
                    "openalex:W42", "osf:abc12", "osf:ab", "doi:nope", "isbn:123", "javascript:alert(1)", "x"):
        href = paper_href([work_id])
        assert paper_url(work_id) == (href.html if href else None), work_id


def test_a_spreadsheets_byte_order_mark_and_neutralised_cells_are_read_back(ws, tmp_path, capsys):
    from reporter.certify.sheet import read_sheet
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 40, "--out", sheet)
    label(sheet, lambda i, r: "exclude")
    sheet.write_bytes(b"\xef\xbb\xbf" + sheet.read_bytes())
    read_back = read_sheet(sheet)
    assert len(read_back.rows) == 40 and read_back.labels()["doi:10.5555/c003"] == "exclude"
    assert run(capsys, ws, "--sheet", sheet)[0] == 0


def test_fill_labels_changes_the_label_cells_alone(ws, tmp_path, capsys):
    from reporter.certify.sheet import fill_labels
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 40, "--out", sheet)
    ids = [r["work_id"] for r in read(sheet)]
    assert fill_labels(sheet, {ids[0]: "include", "doi:10.5555/elsewhere": "exclude"}) == 1
    assert fill_labels(sheet, {ids[0]: "exclude", ids[1]: "unsure"}) == 1, "a label given is never overwritten"
    assert [r["label"] for r in read(sheet)][:3] == ["include", "unsure", ""]
    run(capsys, ws, "--pile", "discard", "--n", 40, "--out", tmp_path / "again.csv", "--from", sheet)
    assert (tmp_path / "again.csv").read_bytes() == sheet.read_bytes(), "the writer's own bytes, the hostile title too"


def test_a_bad_confidence_and_a_bad_state_file_are_refused_by_name(ws, tmp_path, capsys):
    from reporter.certify.results import read_certificate
    from reporter.errors import InputError
    sheet = tmp_path / "s.csv"
    run(capsys, ws, "--pile", "discard", "--n", 5, "--out", sheet)
    label(sheet, lambda i, r: "exclude")
    for bad in ("95%", "1", "0", "nan", "1/0"):
        code, _, err = run(capsys, ws, "--sheet", sheet, "--confidence", bad)
        assert code == 2 and f"--confidence {bad}: must be above 0 and below 1" in err, bad
    assert not list((ws / "state" / "certify").glob("[0-9a-f]*/*.json"))
    assert run(capsys, ws, "--sheet", sheet)[0] == 0
    rid = release_ids(ws)[0]
    path = certificate_path(ws / "state", rid, "discard")
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "max_relevant": "3"}))
    with pytest.raises(InputError, match="field 'max_relevant' must be int, not '3'"):
        load_certificates(ws / "state", rid)
    from test_certify_hostile import forged
    path.write_text(forged(doc, stratum="hold", pile="hold", strata=["hold"]))
    with pytest.raises(InputError, match="holds the certificate of 'hold'"):
        load_certificates(ws / "state", rid)
    path.write_text(json.dumps(doc))
    assert load_certificates(ws / "state", rid) == (read_certificate(path),)
    assert load_certificates(ws / "state", "0" * 64) == ()
