"""Each stage owns its files (issue 31, item 2): one module of the stage reads and writes them, typed.

The names of routing's release files appear only in routing's package, the
site's manifest only in the site's; every other stage asks their readers.
Routing's reader of the routing table reads the columns asked for and no
other, typed as ROUTING_SCHEMA says, and refuses a missing or broken table
naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reporter.errors import InputError
from reporter.routing.routing_table import ROUTING_SCHEMA, read_routing

ROOT = Path(__file__).resolve().parents[1] / "reporter"
OWNERS = {"routing.parquet": "routing", "rule_stats.json": "routing", "release.json": "routing",
          "manifest.json": "site"}


@pytest.mark.parametrize("name, owner", sorted(OWNERS.items()))
def test_a_stage_s_file_is_named_only_in_its_package(name, owner):
    found = sorted(f"{path.relative_to(ROOT.parent)}:{n}" for path in ROOT.rglob("*.py")
                   for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                   if name in line and path.relative_to(ROOT).parts[0] != owner)
    assert found == [], f"{name} is {owner}'s file: ask its reader instead"


def _table(rows: int = 3, without: tuple[str, ...] = ()) -> pa.Table:
    evidence = ROUTING_SCHEMA.field("evidence").type
    columns = {
        "work_id": pa.array([f"w{i}" for i in range(rows)]), "pile": pa.array(["screen", "discard", "pending"][:rows]),
        "pending_reason": pa.array([None, None, "unrouted"][:rows], pa.string()),
        "winner": pa.array(["r1", "r2", None][:rows], pa.string()),
        "matched": pa.array([["r1"], ["r2"], []][:rows], pa.list_(pa.string())),
        "shadow_matched": pa.array([[], [], []][:rows], pa.list_(pa.string())),
        "evidence": pa.nulls(rows, evidence), "title_only": pa.array([False, True, False][:rows]),
        "evidence_all": pa.array([[], [], []][:rows], pa.list_(evidence)),
    }
    schema = pa.schema([f for f in ROUTING_SCHEMA if f.name not in without])
    return pa.table({f.name: columns[f.name] for f in schema}, schema=schema)


def test_the_routing_table_is_read_column_by_column_typed(tmp_path):
    pq.write_table(_table(), tmp_path / "routing.parquet")
    got = read_routing(tmp_path, ["work_id", "title_only"])
    assert got.schema == pa.schema([ROUTING_SCHEMA.field("work_id"), ROUTING_SCHEMA.field("title_only")])
    assert got.to_pydict() == {"work_id": ["w0", "w1", "w2"], "title_only": [False, True, False]}
    coded = read_routing(tmp_path, ["pile"], dictionary=["pile"])
    assert pa.types.is_dictionary(coded.schema.field("pile").type)
    assert coded.column("pile").to_pylist() == ["screen", "discard", "pending"]


def test_a_column_the_schema_lacks_is_the_caller_s_mistake(tmp_path):
    pq.write_table(_table(), tmp_path / "routing.parquet")
    with pytest.raises(ValueError, match="no column 'piles'"):
        read_routing(tmp_path, ["work_id", "piles"])


@pytest.mark.parametrize("how", ["missing", "not parquet", "a folder", "an older engine's table"])
def test_a_missing_or_broken_routing_table_is_refused_naming_it(tmp_path, how):
    path = tmp_path / "routing.parquet"
    if how == "not parquet":
        path.write_bytes(b"PAR1 this is not a parquet file")
    elif how == "a folder":
        path.mkdir()
    elif how == "an older engine's table":  # routing.4 and older wrote no evidence_all
        pq.write_table(_table(without=("evidence_all",)), path)
    with pytest.raises(InputError) as caught:
        read_routing(tmp_path, ["work_id", "evidence_all"])
    assert str(caught.value).startswith(f"{path}: "), caught.value


def test_mail_may_ask_the_site_s_manifest_reader_and_nothing_else_of_the_site(tmp_path):
    """The layering table lets `reporter mail` import reporter.site.manifest, and no other module of the site;
    every other stage still imports none of it."""
    import tomllib

    from test_import_rules import RULES, broken, imports

    package = tmp_path / "reporter"
    for name in ("site", "mail", "digest"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "site" / "manifest.py").write_text("")
    (package / "site" / "writer.py").write_text("")
    (package / "mail" / "send.py").write_text("from ..site.manifest import read_manifest\n"
                                              "def f():\n    from ..site import writer\n")
    (package / "digest" / "weeks.py").write_text("from ..site.manifest import read_manifest\n")
    assert broken(imports(package), tomllib.loads(RULES.read_text(encoding="utf-8"))) == {
        "reporter.mail.send -> reporter.site.writer: mail reads the site only through its manifest reader, and "
        "imports no command line, build or configuration loader",
        "reporter.digest.weeks -> reporter.site.manifest: no stage imports the site, the build, the command-line "
        "modules or the configuration loader",
    }


@pytest.mark.parametrize("field, value", [("site_version", "4"), ("site_version", True), ("archived", "yes"),
                                          ("sha256", 7), ("bytes", "12")])
def test_a_manifest_entry_of_the_wrong_type_keeps_nothing_and_stops_nothing_but_the_change(tmp_path, field, value):
    """A hostile manifest entry (a field of another type than the writer writes) is not listed: the archived
    page it names is then one that would change, refused as such (it crashed the writer with a TypeError when
    site_version was a string), never kept as an earlier version's page."""
    import hashlib
    import json

    from reporter.site.manifest import read_manifest
    from reporter.site.writer import SiteWriter

    root = tmp_path / "site"
    root.mkdir()
    (root / "w.html").write_text("old")
    entry = {"sha256": hashlib.sha256(b"old").hexdigest(), "bytes": 3, "archived": True, "site_version": 1}
    (root / "manifest.json").write_text(json.dumps({"site_version": 1, "files": {"w.html": {**entry, field: value}}}))
    assert read_manifest(root).files == {} and read_manifest(root).problem is None
    writer = SiteWriter(root)
    writer.add("w.html", "new", archived=True)
    with pytest.raises(InputError, match="1 archived page would change: w.html"):
        writer.check()
    (root / "manifest.json").write_text(json.dumps({"site_version": 1, "files": {"w.html": entry}}))
    assert read_manifest(root).sha256("w.html") == entry["sha256"]
    writer.check()  # as the writer wrote it: an earlier version's page, kept as published
