"""A release's bytes follow from its id, and a render refuses a release whose files were edited."""

import json

import pytest
from support.routing import TODAY, write_pool, write_specs
from support.routing_fixture import ROWS, RULES

from reporter.cli import main
from reporter.errors import InputError
from reporter.routing.release import route_release
from reporter.build import render_site


@pytest.fixture()
def ws(tmp_path):
    specs = write_specs(tmp_path, RULES)
    pool = write_pool(tmp_path / "pool.parquet", ROWS)
    return tmp_path, pool, specs


def _route(args):
    """`reporter route ... --json` in process: (exit code, printed JSON)."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["route", *map(str, args), "--json"])
    return code, json.loads(out.getvalue()) if code == 0 else None


def test_reordering_a_rules_keys_mints_a_new_release_and_keeps_the_old(ws):
    root, pool, specs = ws
    code, first = _route(["--pool", pool, "--specs", specs, "--out", root / "releases"])
    assert code == 0 and first["created"]
    before = {p.name: p.read_bytes() for p in (root / "releases" / first["release_id"]).iterdir()}
    for file in (specs / "rules").glob("*.json"):
        rules = json.loads(file.read_text())
        rules = [dict(reversed(list(r.items()))) for r in rules] if isinstance(rules, list) else rules
        file.write_text(json.dumps(rules, indent=4))  # same meaning, other key order and layout
    code, second = _route(["--pool", pool, "--specs", specs, "--out", root / "releases"])
    assert code == 0 and second["created"] and second["release_id"] != first["release_id"]
    assert second["piles"] == first["piles"]
    assert {p.name: p.read_bytes() for p in (root / "releases" / first["release_id"]).iterdir()} == before


def test_layout_alone_changes_nothing(ws):
    root, pool, specs = ws
    code, first = _route(["--pool", pool, "--specs", specs, "--out", root / "releases"])
    for file in (specs / "rules").glob("*.json"):
        file.write_text(json.dumps(json.loads(file.read_text()), indent=8) + "\n\n")
    code, again = _route(["--pool", pool, "--specs", specs, "--out", root / "releases"])
    assert code == 0 and again["release_id"] == first["release_id"] and not again["created"]


def test_another_seed_is_another_release(ws):
    root, pool, specs = ws
    _, first = _route(["--pool", pool, "--specs", specs, "--out", root / "releases"])
    code, seeded = _route(["--pool", pool, "--specs", specs, "--out", root / "releases", "--seed", "1"])
    assert code == 0 and seeded["created"] and seeded["release_id"] != first["release_id"]
    samples = json.loads((root / "releases" / seeded["release_id"] / "samples.json").read_text())
    assert samples["seed"] == 1
    code, again = _route(["--pool", pool, "--specs", specs, "--out", root / "releases", "--seed", "1"])
    assert code == 0 and not again["created"]


def test_release_json_records_every_file_digest(ws):
    import hashlib
    root, pool, specs = ws
    result = route_release(pool, specs, root / "releases", progress=False, as_of=TODAY)
    manifest = json.loads((result.release_dir / "release.json").read_text())
    assert set(manifest["files"]) == {"routing.parquet", "rule_stats.json", "samples.json"}
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((result.release_dir / name).read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("name", ["rule_stats.json", "samples.json", "routing.parquet"])
def test_a_render_refuses_an_edited_release(ws, name):
    root, pool, specs = ws
    route_release(pool, specs, root / "releases", progress=False, as_of=TODAY)
    file = next(specs.glob("rules/*.json"))
    rules = json.loads(file.read_text())
    rules[0]["description"] = "a second rule book, so the site shows a diff that reads routing.parquet"
    file.write_text(json.dumps(rules))
    second = route_release(pool, specs, root / "releases", progress=False, as_of=TODAY)
    target = second.release_dir / name
    if name.endswith(".json"):
        doc = json.loads(target.read_text())
        doc["seed" if name == "samples.json" else "title_only"] = 12345  # a quiet edit the checks would miss
        target.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    else:
        target.write_bytes(target.read_bytes() + b"\0")
    with pytest.raises(InputError, match=f"{name}: its bytes differ from the sha256 release.json records"):
        render_site(root / "releases", root / "fresh-site", progress=False)
    assert not (root / "fresh-site").exists()


def test_a_huge_match_keeps_samples_small(tmp_path):
    """A `trial*` word of 200,000 characters: routing.parquet's span covers it, samples.json keeps 160 characters."""
    import pyarrow.parquet as pq
    word = "trial" + "s" * 200_000
    specs = write_specs(tmp_path, [{"id": "t", "pile": "screen", "precedence": 1,
                                    "match": {"field": "abstract", "phrase": "trial*"}}])
    pool = write_pool(tmp_path / "pool.parquet", [
        {"work_id": "doi:10.1/long", "source": "crossref", "title": "Long", "abstract": f"A {word} here."}])
    result = route_release(pool, specs, tmp_path / "releases", progress=False, as_of=TODAY)
    evidence = pq.read_table(result.release_dir / "routing.parquet").column("evidence").to_pylist()[0]
    assert evidence["end"] - evidence["start"] == len(word) and word.startswith(evidence["text"])
    work = json.loads((result.release_dir / "samples.json").read_text())["piles"]["screen"][0]
    assert work["context"]["match"] == word[:160] and work["context"]["match_cut"] is True
    assert work["context"]["after"] == "" and work["evidence"]["text"] == word[:160]
    assert (result.release_dir / "samples.json").stat().st_size < 5_000


def test_the_first_written_date_is_the_callers_never_the_clocks(ws):
    """The date a release is first written is passed in from the command's edge: route_release has no default
    that reads the clock, and published.json records the date it was given."""
    import datetime as dt
    import inspect
    root, pool, specs = ws
    assert inspect.signature(route_release).parameters["as_of"].default is inspect.Parameter.empty
    result = route_release(pool, specs, root / "releases", progress=False, as_of=dt.date(2001, 2, 3))
    assert json.loads((result.release_dir / "published.json").read_text())["first_written"] == "2001-02-03"


def test_a_published_release_is_not_routed_again(ws, monkeypatch, capsys):
    """Issue 37, item 4: the id follows from the inputs' digests, so routing the same inputs again finds the
    published release before routing (before: all of the pool was routed again, then compared byte for byte)."""
    from reporter.routing import release as release_module
    root, pool, specs = ws
    args = ["--pool", pool, "--specs", specs, "--out", root / "releases", "--workers", "1"]
    code, first = _route(args)
    assert code == 0 and first["created"]
    folder = root / "releases" / first["release_id"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def no_routing(*a, **k):
        raise AssertionError("routed again")
    monkeypatch.setattr(release_module, "_route_all", no_routing)
    code, again = _route(args)
    assert code == 0 and not again["created"] and again["release_id"] == first["release_id"]
    assert {k: again[k] for k in ("piles", "pending", "rows")} == {k: first[k] for k in ("piles", "pending", "rows")}
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert json.loads((root / "releases" / "index.json").read_text()) == [first["release_id"]]
    assert main(["route", *map(str, args)]) == 0
    assert f"release {first['release_id']}  (unchanged: an identical release exists)" in capsys.readouterr().out

    # A file of the published folder edited: refused as a re-route refused it, still without routing.
    (folder / "samples.json").write_text((folder / "samples.json").read_text() + " ")
    assert main(["route", *map(str, args)]) == 1
    assert "its samples.json differs from the digest its release.json records" in capsys.readouterr().err
