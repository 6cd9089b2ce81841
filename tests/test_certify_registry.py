"""One seed per stratum and every sheet drawn recorded (the seed registry); certificates kept for good: a new one
supersedes the old in the view, both stay readable, a partial one never supersedes a complete one."""

from __future__ import annotations

import json

import pytest
from test_certify_sheets import label, release_ids, run, ws  # noqa: F401  (the fixture)

from reporter.certify.registry import default_seed, read_draws
from reporter.certify.results import archive_path, certificate_history, certificate_path, load_certificates
from reporter.errors import InputError


def draw(capsys, ws, sheet, *extra):  # noqa: F811
    return run(capsys, ws, "--pile", "discard", "--n", 10, "--out", sheet, *extra)


def test_the_default_seed_comes_from_the_release_and_stratum_and_every_draw_is_recorded(ws, tmp_path, capsys,
                                                                                        monkeypatch):  # noqa: F811
    monkeypatch.setenv("USER", "ana")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    rid = release_ids(ws)[0]
    seed = default_seed(rid, "discard")
    assert seed == default_seed(rid, "discard") != default_seed(rid, "hold") != default_seed("0" * 64, "discard")
    code, out, err = draw(capsys, ws, tmp_path / "a.csv")
    assert code == 0 and f"(seed {seed})" in out, err
    assert draw(capsys, ws, tmp_path / "b.csv", "--n", 20)[0] == 0, "the same seed again, any n"
    draws = read_draws(ws / "state", rid)
    assert [(d.stratum, d.seed, d.n, d.drawn_by, d.drawn_at, d.seed_from, d.reseed) for d in draws] == [
        ("discard", seed, 10, "ana", "2026-05-28T20:26:40+00:00", "derived", None),
        ("discard", seed, 20, "ana", "2026-05-28T20:26:40+00:00", "derived", None)]


def test_a_second_seed_needs_a_reason_which_the_certificate_shows(ws, tmp_path, capsys):  # noqa: F811
    assert draw(capsys, ws, tmp_path / "a.csv")[0] == 0
    code, _, err = draw(capsys, ws, tmp_path / "b.csv", "--seed", 7)
    assert code == 2 and "one seed per stratum" in err and "--reseed REASON" in err
    assert not (tmp_path / "b.csv").exists() and len(read_draws(ws / "state", release_ids(ws)[0])) == 1
    code, _, err = draw(capsys, ws, tmp_path / "b.csv", "--seed", 7, "--reseed", "  ")
    assert code == 2 and "give the reason" in err
    code, out, err = draw(capsys, ws, tmp_path / "c.csv")
    assert code == 0 and f"(seed {default_seed(release_ids(ws)[0], 'discard')})" in out, "its seed again, by default"
    assert draw(capsys, ws, tmp_path / "b.csv", "--seed", 7, "--reseed", "sheet a was lost")[0] == 0
    label(tmp_path / "b.csv", lambda i, r: "exclude")
    code, out, err = run(capsys, ws, "--sheet", tmp_path / "b.csv", "--json")
    got = json.loads(out)
    assert (got["seed"], got["reseed"], got["samples_drawn"], got["sample_number"]) == (
        7, "sheet a was lost", 3, 3)
    # a third seed, derived (nobody chooses it), for a reason
    code, out, err = draw(capsys, ws, tmp_path / "d.csv", "--reseed", "a second opinion")
    assert code == 0, err
    seeds = [d.seed for d in read_draws(ws / "state", release_ids(ws)[0])]
    assert len(set(seeds)) == 3 and seeds[-1] not in seeds[:-1]
    assert read_draws(ws / "state", release_ids(ws)[0])[-1].seed_from == "derived"


def test_a_sheet_never_drawn_here_is_refused(ws, tmp_path, capsys):  # noqa: F811
    sheet = tmp_path / "a.csv"
    assert draw(capsys, ws, sheet)[0] == 0
    label(sheet, lambda i, r: "exclude")
    (ws / "state" / "certify" / "samples" / f"{release_ids(ws)[0]}.json").unlink()
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and "was drawn in this workspace" in err


def certified(capsys, ws, sheet, labels):  # noqa: F811
    label(sheet, labels)
    code, out, err = run(capsys, ws, "--sheet", sheet, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_certificate_is_never_overwritten_and_a_new_one_supersedes_it(ws, tmp_path, capsys):  # noqa: F811
    sheet = tmp_path / "a.csv"
    assert draw(capsys, ws, sheet)[0] == 0
    first = certified(capsys, ws, sheet, lambda i, r: "exclude")
    rid = first["release"]
    kept = archive_path(ws / "state", rid, "discard", first["id"])
    before = kept.read_bytes()
    second = certified(capsys, ws, sheet, lambda i, r: "include" if i == 1 else "exclude")
    assert second["supersedes"] == first["id"] and second["id"] != first["id"]
    assert kept.read_bytes() == before, "the first kept, byte for byte"
    (view,) = load_certificates(ws / "state", rid)
    assert view.id == second["id"]
    history = certificate_history(ws / "state", rid, "discard")
    assert {c.id for c in history} == {first["id"], second["id"]} and len(history) == 2


def test_a_partial_certificate_never_supersedes_a_complete_one(ws, tmp_path, capsys):  # noqa: F811
    sheet = tmp_path / "a.csv"
    assert draw(capsys, ws, sheet)[0] == 0
    complete = certified(capsys, ws, sheet, lambda i, r: "exclude")
    label(sheet, lambda i, r: "exclude" if i < 3 else "")
    code, out, err = run(capsys, ws, "--sheet", sheet)
    assert code == 0, err
    assert f"kept beside the complete certificate {complete['id'][:12]}" in out
    (view,) = load_certificates(ws / "state", complete["release"])
    assert view.id == complete["id"] and not view.partial
    history = certificate_history(ws / "state", complete["release"], "discard")
    assert sorted(c.partial for c in history) == [False, True]
    partial = next(c for c in history if c.partial)
    assert partial.supersedes is None


def test_an_edited_certificate_no_longer_hashes_to_its_id(ws, tmp_path, capsys):  # noqa: F811
    sheet = tmp_path / "a.csv"
    assert draw(capsys, ws, sheet)[0] == 0
    got = certified(capsys, ws, sheet, lambda i, r: "exclude")
    path = certificate_path(ws / "state", got["release"], "discard")
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "labeller": "someone else"}))
    with pytest.raises(InputError, match="field 'id' .* is not the sha256 of the certificate's fields"):
        load_certificates(ws / "state", got["release"])


def test_hostile_flags_and_an_edited_registry_are_refused_by_name(ws, tmp_path, capsys):  # noqa: F811
    code, _, err = run(capsys, ws, "--pile", "discarded", "--rule", "x", "--n", 5, "--out", tmp_path / "a.csv")
    assert code == 2 and "--rule 'x' goes with a routing pile or domain-misses, not with discarded" in err
    code, _, err = run(capsys, ws, "--plan", "--pile", "discard", "--n", 5)
    assert code == 2 and "--plan goes with --pile" in err and "--n" in err
    code, _, err = run(capsys, ws, "--plan", "--pile", "discard", "--found", -1)
    assert code == 2 and "--found -1" in err
    sheet = tmp_path / "a.csv"
    assert draw(capsys, ws, sheet)[0] == 0
    label(sheet, lambda i, r: "exclude")
    code, _, err = run(capsys, ws, "--sheet", sheet, "--found", -3)
    assert code == 2 and "--found -3" in err
    code, _, err = run(capsys, ws, "--sheet", sheet, "--labeller", " ")
    assert code == 2 and "--labeller" in err
    registry = ws / "state" / "certify" / "samples" / f"{release_ids(ws)[0]}.json"
    registry.write_text('{"draws": [{"stratum": "discard", "seed": -1}]}')
    code, _, err = run(capsys, ws, "--sheet", sheet)
    assert code == 2 and f"{registry}: draw 1 is not a draw" in err and "Traceback" not in err
    assert not list((ws / "state" / "certify").glob("[0-9a-f]*/*.json")), "no certificate written"
