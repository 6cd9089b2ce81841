"""A release file or a piles.json of a schema version newer than this code knows is refused (exit 2, naming the
file and `schema_version`), never read as if it were version 1 (issue 31, item 7: accepted and ignored before)."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from conftest import SITE_WORKSPACE

from reporter.cli import main
from reporter.errors import InputError
from reporter.routing.artifacts import load_release
from reporter.routing.release import route_release
from reporter.routing.specs import load_rulebook


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("schema") / "releases"
    result = route_release(SITE_WORKSPACE / "pool.jsonl", SITE_WORKSPACE / "specs", out, sample_seed=0, workers=1,
                           progress=False, as_of=date(2026, 5, 4))
    return result.release_dir


@pytest.mark.parametrize("name", ["release.json", "rule_stats.json"])
@pytest.mark.parametrize("version", [2, "1", None, True])
def test_a_release_file_of_an_unknown_schema_version_is_refused(release, tmp_path, name, version):
    copy = tmp_path / release.name
    shutil.copytree(release, copy)
    doc = json.loads((copy / name).read_text(encoding="utf-8"))
    doc["schema_version"] = version
    (copy / name).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_release(tmp_path, release.name)
    assert f"{copy / name}" in str(err.value) and "schema_version" in str(err.value)
    assert "1" in str(err.value)


def test_the_known_schema_version_reads(release):
    assert load_release(release.parent, release.name).manifest.schema_version == 1


def test_a_piles_file_of_an_unknown_schema_version_is_refused(tmp_path, capsys):
    specs = tmp_path / "specs"
    shutil.copytree(SITE_WORKSPACE / "specs", specs)
    piles = json.loads((specs / "piles.json").read_text(encoding="utf-8"))
    (specs / "piles.json").write_text(json.dumps({**piles, "schema_version": 2}), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_rulebook(specs)
    assert "piles.json" in str(err.value) and "schema_version" in str(err.value)
    assert main(["route", "--pool", str(SITE_WORKSPACE / "pool.jsonl"), "--specs", str(specs),
                 "--out", str(tmp_path / "out")]) == 2
    assert "piles.json" in capsys.readouterr().err and not (tmp_path / "out").exists()
