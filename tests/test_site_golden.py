"""The fixture workspace through the real engine and the site: golden files, links, manifest.

The golden copy lives in tests/golden/site_workspace/ and is rewritten only
by `pytest tests/test_site_golden.py --regen-golden`. Before comparing, a few
values that depend on the machine rather than on the site are masked: the
release ids and the normalisation digest (both include the installed
pyarrow and Unicode versions), those two version strings, and the
contents of the vendored stylesheet and script (compared once, on their own).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from reporter.site import render_site
from reporter.site.env import TEMPLATES
from support.site import parse_html

GOLDEN = Path(__file__).parent / "golden" / "site_workspace"
VERSION_LINE = re.compile(r"^(.*(?:arrow\\?_version|unicode\\?_version).*?)\d+(?:\.\d+)+", re.M)
STATIC = re.compile(r"(<style>|<script>).*?(</style>|</script>)", re.S)
CSP = re.compile(r"sha256-[A-Za-z0-9+/]+=*")


def _masks(releases: Path, ids: list[str]) -> list[tuple[str, str]]:
    subs = []
    for i, rid in enumerate(ids, 1):
        subs.append((rid, f"RELEASE-{i}-ID"))
        norm = json.loads((releases / rid / "release.json").read_text())["inputs"]["normalisation"]
        subs.append((norm, "NORMALISATION-DIGEST"))
    subs += [(rid[:12], f"RELEASE-{i}") for i, rid in enumerate(ids, 1)]
    return subs


def _masked_site(site: Path, releases: Path, ids: list[str]) -> dict[str, str]:
    subs = _masks(releases, ids)
    out = {}
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site).as_posix()
        if not path.is_file() or rel == "manifest.json":
            continue
        text = path.read_text(encoding="utf-8")
        for old, new in subs:
            text = text.replace(old, new)
            rel = rel.replace(old, new)
        text = VERSION_LINE.sub(r"\1X.Y.Z", text)
        text = STATIC.sub(r"\1(vendored)\2", text)
        text = CSP.sub("sha256-(vendored)", text)
        out[rel] = text
    return out


def test_the_site_matches_the_golden_copy(site_build, request):
    got = _masked_site(site_build["site"], site_build["releases"], site_build["ids"])
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, text in got.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(text, encoding="utf-8")
        pytest.skip(f"rewrote {len(got)} golden files in {GOLDEN}")
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing; run pytest tests/test_site_golden.py --regen-golden")
    want = {p.relative_to(GOLDEN).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(GOLDEN.rglob("*")) if p.is_file()}
    assert sorted(got) == sorted(want), "the set of pages differs from the golden copy"
    for rel in sorted(want):
        assert got[rel] == want[rel], f"{rel} differs from tests/golden (regenerate with --regen-golden if intended)"


def test_the_site_inlines_exactly_the_vendored_files(site_build):
    style = (TEMPLATES / "static" / "style.css").read_text()
    script = (TEMPLATES / "static" / "sort.js").read_text()
    for page in site_build["site"].rglob("*.html"):
        text = page.read_text()
        assert f"<style>{style}</style>" in text and f"<script>{script}</script>" in text


def test_a_rebuild_is_byte_identical_and_changes_nothing(site_build, tmp_path):
    report = render_site(site_build["releases"], tmp_path / "again", progress=False)
    for path in sorted((tmp_path / "again").rglob("*")):
        if path.is_file():
            rel = path.relative_to(tmp_path / "again")
            assert path.read_bytes() == (site_build["site"] / rel).read_bytes(), rel
    again = render_site(site_build["releases"], site_build["site"], progress=False)
    assert again.written == 0 and report.pages == again.pages


def test_the_manifest_lists_every_file_with_its_hash(site_build):
    site = site_build["site"]
    manifest = json.loads((site / "manifest.json").read_text())
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == files
    for rel, entry in manifest["files"].items():
        assert hashlib.sha256((site / rel).read_bytes()).hexdigest() == entry["sha256"]


def _ids(tree) -> set[str]:
    return {n.attrs["id"] for n in tree.iter() if "id" in n.attrs}


@pytest.mark.parametrize("which", ["site_build", "novelty_site"])
def test_every_internal_link_and_anchor_resolves(which, request):
    """Walk every page of the fixture site, and of the same site with the novelty page."""
    site = request.getfixturevalue(which)["site"].resolve()
    pages = sorted(site.rglob("*.html"))
    ids = {p: _ids(parse_html(p.read_text())) for p in pages}
    checked = 0
    for page in pages:
        tree = parse_html(page.read_text())
        for a in tree.find_all("a"):
            href = a.attrs.get("href")
            assert href, f"{page}: a link without href"
            assert not re.match(r"^[a-z]+:|^//", href), f"{page}: external link {href}"
            path, _, frag = href.partition("#")
            target = (page.parent / unquote(path)).resolve() if path else page
            assert target.is_file(), f"{page.relative_to(site)}: {href} does not exist"
            assert site in target.parents, f"{page}: {href} leaves the site"
            if frag:
                assert frag in ids[target] if target.suffix == ".html" else True, \
                    f"{page.relative_to(site)}: anchor #{frag} missing in {target.relative_to(site)}"
            checked += 1
        # every rule, every shown work and every checked candidate has an anchor
        for row in tree.find_all("tr"):
            if row.find_all("a", **{"class": "id"}):
                assert row.attrs.get("id", "").startswith("c-" if page.name == "novelty.html" else "w-"), page
    assert checked > 200
    parser = MarkdownIt("commonmark").enable("table")
    for md in sorted(site.rglob("*.md")):
        tokens = [t for block in parser.parse(md.read_text()) for t in (block.children or [])]
        for link in [t.attrs["href"] for t in tokens if t.type == "link_open"]:
            assert not re.match(r"^[a-z]+:|^//", link), f"{md}: external link {link}"
            target = (md.parent / unquote(link.partition("#")[0])).resolve()
            assert target.is_file() and target.suffix in (".md", ".html"), f"{md.relative_to(site)}: {link}"


def test_the_release_page_shows_the_engine_counts(site_build):
    releases, site = site_build["releases"], site_build["site"]
    for rid in site_build["ids"]:
        stats = json.loads((releases / rid / "rule_stats.json").read_text())
        samples = json.loads((releases / rid / "samples.json").read_text())
        tree = parse_html((site / "releases" / rid / "index.html").read_text())
        shown = {td.attrs["data-pile"]: int(td.text().replace(",", "")) for td in tree.find_all("td")
                 if "data-pile" in td.attrs}
        assert {p: shown[p] for p in stats["piles"]} == stats["piles"]
        for pile, works in samples["piles"].items():
            section = tree.find("section", id=f"pile-{pile.replace('_', '_')}")
            rows = section.find("tbody").find_all("tr") if works else []
            assert len(rows) == len(works) == min(stats["piles"][pile], samples["k"])
            for row, work in zip(rows, sorted(works, key=lambda w: w["work_id"])):
                assert row.attrs["id"].startswith("w-")
                if work["title"] is not None:
                    assert row.find("bdi").text().startswith(work["title"][:100])
                if work["context"]:
                    assert row.find("mark").text() == work["context"]["match"]
        for rule in stats["rules"]:
            anchor = tree.find("tr", id=f"rule-{rule['id']}")
            assert anchor.find("a").attrs["href"] == f"rules/{rule['id']}.html"


def test_hostile_titles_stay_text_in_the_engine_built_site(site_build):
    site = site_build["site"]
    for page in site.rglob("*.html"):
        tree = parse_html(page.read_text())
        assert len(tree.find_all("script")) == 1 and not tree.find_all("img"), page
        assert not [n for n in tree.iter() if any(k.startswith("on") for k in n.attrs)], page
    latest = (site / "releases" / site_build["ids"][-1] / "index.html").read_text()
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in latest
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in latest
