"""An upgrade never stops a site: a site the previous site version wrote builds with the current code.

tests/fixtures/site_v4 is a digest-only workspace whose site and digest archive
were written by the code of commit 035b0a4 (1b3343a^, site version 4, before the
week page's "Listed again" section): its README says how. The current build
leaves every page it archived byte for byte as published, records them in the
manifest under the version that wrote them, and renders them the new way only
with --rerender-archive, each old page kept beside its new one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from support.huge import HUGE, link_to_huge

from reporter.build import build
from reporter.cli import main
from reporter.config import load_workspace
from reporter.site.writer import SITE_VERSION

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "site_v4"
WEEKS = ("2026-W19", "2026-W20")


def _copy(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws, ignore=shutil.ignore_patterns("README.md"))
    return ws


def _archived(site: Path) -> dict[str, bytes]:
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    return {p: (site / p).read_bytes() for p, e in manifest["files"].items() if e["archived"]}


def test_the_fixture_is_the_previous_version_s_site_as_published():
    manifest = json.loads((FIXTURE / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["site_version"] == 4 < SITE_VERSION
    archived = {p: e for p, e in manifest["files"].items() if e["archived"]}
    assert len(archived) == 10, sorted(archived)
    for path, entry in archived.items():
        data = (FIXTURE / "site" / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{path}: not as published (a checkout changed it?)"
    assert "Listed again" not in (FIXTURE / "site" / "digest" / "2026-W20.html").read_text(encoding="utf-8")


def test_the_current_build_keeps_the_previous_version_s_pages_byte_for_byte(tmp_path, capsys):
    ws = _copy(tmp_path)
    before = _archived(ws / "site")
    assert main(["build", "--workspace", str(ws)]) == 0, capsys.readouterr().err
    assert _archived(ws / "site") == before
    manifest = json.loads((ws / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["site_version"] == SITE_VERSION
    # the week pages this version renders otherwise stay under the version that wrote them; the e-mail
    # editions, rendered the same by both, are this version's pages too
    versions = {p: e["site_version"] for p, e in manifest["files"].items() if e["archived"]}
    changed = {f"digest/{w}.{ext}" for w in WEEKS for ext in ("html", "md")}
    assert versions == {p: 4 if p in changed else SITE_VERSION for p in before}
    # the pages that are rebuilt freely are there again, in this version's layout
    assert (ws / "site" / "index.html").is_file() and (ws / "site" / "digest" / "feed.xml").is_file()
    # a second build changes nothing and still keeps them
    report = build(load_workspace(ws), progress=False)
    assert report.site.written == 0 and set(report.site.kept) == changed
    assert _archived(ws / "site") == before


def test_rerender_archive_shows_the_previous_version_s_weeks_the_new_way(tmp_path):
    ws = _copy(tmp_path)
    before = _archived(ws / "site")
    report = build(load_workspace(ws), progress=False, rerender_archive=True)
    page = (ws / "site" / "digest" / "2026-W20.html").read_text(encoding="utf-8")
    assert "Listed again" in page
    for path in report.site.superseded:
        original = path.replace(".superseded-" + path.rsplit(".superseded-", 1)[1].split(".")[0], "")
        assert (ws / "site" / path).read_bytes() == before[original], path
    assert {f"digest/{w}.html" for w in WEEKS} <= {p.split(".superseded-")[0] + ".html" for p in
                                                   report.site.superseded if p.endswith(".html")}
    manifest = json.loads((ws / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["digest/2026-W20.html"]["site_version"] == SITE_VERSION



def test_a_manifest_or_novelty_results_linked_to_a_huge_file_is_refused_by_its_size(tmp_path, capsys):
    """Issue 30, item 10: the site's manifest.json (and a --novelty results file) linked to a 256 MiB file were
    read whole; now refused by their size before they are read, naming the file and the cap, nothing written."""
    from reporter.novelty.results import RESULTS_CAP
    from reporter.site.manifest import MANIFEST_CAP

    ws = _copy(tmp_path)
    manifest = ws / "site" / "manifest.json"
    link_to_huge(manifest)
    before = _archived_bytes(ws / "site")
    assert main(["build", "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert f"{manifest}: {HUGE:,} bytes, more than the {MANIFEST_CAP:,} such a file may hold" in err, err
    assert _archived_bytes(ws / "site") == before and manifest.is_symlink()
    results = tmp_path / "novelty.jsonl"
    link_to_huge(results)
    assert main(["render", "--digests", str(ws / "digests"), "--novelty", str(results),
                 "--out", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert f"{results}: {HUGE:,} bytes, more than the {RESULTS_CAP:,} such a file may hold" in err, err
    assert not (tmp_path / "other").exists()


def _archived_bytes(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and not p.is_symlink() and not p.name.startswith(".huge-")}
