"""Shared test setup: tests/ on the path (for the helpers in tests/support/), and shared fixtures."""

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))


# --- artefacts a person may want to look at ---------------------------------
import pytest  # noqa: E402

ARTIFACTS_ENV = "REPORTER_TEST_ARTIFACTS"


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    """Where tests put artefacts (screenshots): $REPORTER_TEST_ARTIFACTS when set, else a pytest temporary folder.

    Never the source tree; CI can set the variable to a folder it keeps.
    """
    named = os.environ.get(ARTIFACTS_ENV)
    if named:
        folder = Path(named).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("artifacts")


# --- the site's tests -------------------------------------------------------

SITE_WORKSPACE = TESTS / "fixtures" / "site_workspace"


def pytest_addoption(parser):
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the fixture workspace instead of comparing")


@pytest.fixture(scope="session")
def site_build(tmp_path_factory):
    """The fixture workspace routed twice by the real engine and rendered with the second pool's titles.

    The first release routes pool.jsonl with specs/; the second pool_v2.jsonl (three works gone, five new)
    with specs_v2/ (a rule edited, one added, one removed). Each release gets a published.json (label and
    first-written date, as docs/release-format.md describes it; the second label is hostile). The render
    reads titles no sample holds from pool_v2.jsonl, through a workspace file naming it. Returns a dict with
    `releases` (the releases folder), `site` (the rendered site), `ids` (release ids, oldest first) and
    `workspace` (the loaded workspace the render used).
    """
    import json as _json

    from reporter.config import load_workspace
    from reporter.routing.labels import label_stats_for, load_labels, write_label_stats
    from reporter.routing.release import route_release
    from datetime import date
    from reporter.routing.specs import load_rulebook
    from reporter.build import render_site

    root = tmp_path_factory.mktemp("site_build")
    releases = root / "releases"
    ids = []
    published = ({"label": "2026-W19", "first_written": "2026-05-04"},
                 {"label": "2026-W20 <b>edited</b>", "first_written": "2026-05-11"})
    for (pool, specs), doc in zip((("pool.jsonl", "specs"), ("pool_v2.jsonl", "specs_v2")), published):
        result = route_release(SITE_WORKSPACE / pool, SITE_WORKSPACE / specs, releases, sample_seed=0, workers=1,
                               progress=False, as_of=date.fromisoformat(doc["first_written"]))
        write_label_stats(result.release_dir, label_stats_for(
            result.release_dir, load_labels(SITE_WORKSPACE / "labels.csv"), load_rulebook(SITE_WORKSPACE / specs)))
        (result.release_dir / "published.json").write_text(_json.dumps(doc), encoding="utf-8")
        ids.append(result.release_id)
    (root / "reporter.toml").write_text(
        f'pool = "{SITE_WORKSPACE / "pool_v2.jsonl"}"\nspecs = "{SITE_WORKSPACE / "specs_v2"}"\n'
        f'labels = "{SITE_WORKSPACE / "labels.csv"}"\nreleases = "releases"\nsite = "site"\n'
        f'[certify]\nmax_missed_fraction = 0.1\n', encoding="utf-8")
    certify_fixture(root)
    workspace = load_workspace(root)
    render_site(releases, root / "site", workspace=workspace, progress=False)
    return {"releases": releases, "site": root / "site", "ids": ids, "workspace": workspace}


CERTIFIED_SHEETS = {"discard": "sheets/discard.csv", "discard/rule:meta-analysis": "sheets/meta <b>|*x*<i>.csv"}
"""The golden workspace's certified sheets (the second name hostile): the newest release's discard pile, all 12
works labelled, one include (at most 1 relevant, 8.3%: meets the 10% target); and rule meta-analysis's 4 wins,
the first 2 labelled, none relevant (partial: at most 2 relevant, 50%)."""


def certify_fixture(root: Path) -> None:
    """Draw and label CERTIFIED_SHEETS in the workspace at `root` and certify them (state/certify/)."""
    import csv
    import io

    from reporter.cli import main

    (root / "sheets").mkdir()
    saved = {k: os.environ.get(k) for k in ("SOURCE_DATE_EPOCH", "USER")}
    os.environ.update(SOURCE_DATE_EPOCH="1783296000", USER="golden")  # the certificates' dates and ids, fixed
    try:
        _certify_sheets(root, main)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _certify_sheets(root: Path, main) -> None:
    import csv
    import io
    for stratum, name in CERTIFIED_SHEETS.items():
        pile, _, rule = stratum.partition("/rule:")
        sheet = root / name
        assert main(["certify", "--workspace", str(root), "--pile", pile, *(["--rule", rule] if rule else []),
                     "--n", "12", "--out", str(sheet)]) == 0
        rows = list(csv.reader(io.StringIO(sheet.read_text(encoding="utf-8"), newline="")))
        for i, row in enumerate(rows[1:]):
            row[-1] = ("include" if i == 3 else "exclude") if not rule else ("exclude" if i < 2 else "")
        out = io.StringIO(newline="")
        csv.writer(out, lineterminator="\r\n").writerows(rows)
        sheet.write_text(out.getvalue(), encoding="utf-8", newline="")
        assert main(["certify", "--workspace", str(root), "--sheet", str(sheet)]) == 0


# --- the novelty page -------------------------------------------------------
NOVELTY_FIXTURE = SITE_WORKSPACE / "novelty"


@pytest.fixture(scope="session")
def novelty_site(site_build, tmp_path_factory):
    """site_build's releases rendered again with the novelty page of tests/fixtures/site_workspace/novelty.

    The candidates (hostile ids among them) go through `reporter novelty --batch`;
    returns site_build's dict with `site` replaced and `novelty` (the results file) added.
    """
    from reporter.cli import main
    from reporter.build import render_site

    root = tmp_path_factory.mktemp("novelty_site")
    results = root / "novelty.jsonl"
    assert main(["novelty", "--batch", str(NOVELTY_FIXTURE / "candidates.jsonl"), "--out", str(results)]) == 0
    render_site(site_build["releases"], root / "site", novelty=results, workspace=site_build["workspace"],
                progress=False)
    return {**site_build, "site": root / "site", "novelty": results}


# --- PostgreSQL, for the screening state authority ----------------------------
@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server for the whole session (tests/support/postgres.py), stopped at the end.

    Skips the test when PostgreSQL is not installed, except when $CI is set: there it
    fails, so CI can never pass by silently skipping the PostgreSQL tests.
    """
    from support.postgres import PostgresServer, postgres_available

    if not postgres_available():
        reason = "PostgreSQL is not installed (no initdb/pg_ctl, or no `postgres` user to run it as root)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests (.ci/run installs postgresql)")
        pytest.skip(reason)
    server = PostgresServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A postgresql:// URL of a fresh, empty database for this test alone (on the session's server)."""
    return postgres_server.new_database()
