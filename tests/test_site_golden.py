"""The fixture workspace through the real engine and the site: golden files, links, manifest.

The golden copy lives in tests/golden/site_workspace/ and is rewritten only
by `pytest tests/test_site_golden.py --regen-golden`. Before comparing, a few
values that depend on the machine rather than on the site are masked: the
release ids and the normalisation digest (both include the installed
pyarrow and Unicode versions), the sha256 of the certified sheets (they
name the release), those two version strings, and the contents of the
vendored stylesheet and script (compared once, on their own).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import SITE_WORKSPACE
from markdown_it import MarkdownIt
from support.site import parse_html

from reporter.build import render_site
from reporter.site.env import TEMPLATES
from reporter.site.links import slug
from reporter.site.writer import SITE_VERSION

GOLDEN = Path(__file__).parent / "golden" / "site_workspace"
ARCHIVED = Path(__file__).parent / "golden" / "archived-pages.json"
"""The site version and the sha256 of each archived page of the golden site (outside GOLDEN: regen keeps it)."""
VERSION_LINE = re.compile(r"^(.*(?:arrow\\?_version|unicode\\?_version).*?)\d+(?:\.\d+)+", re.M)
STATIC = re.compile(r"(<style>|<script>).*?(</style>|</script>)", re.S)
CSP = re.compile(r"sha256-[A-Za-z0-9+/]+=*")
PAPER_LINK = re.compile(r"https://(doi\.org|arxiv\.org/abs|pubmed\.ncbi\.nlm\.nih\.gov|openalex\.org|osf\.io)/")


def _masks(releases: Path, ids: list[str]) -> list[tuple[str, str]]:
    subs = []
    for i, rid in enumerate(ids, 1):
        subs.append((rid, f"RELEASE-{i}-ID"))
        norm = json.loads((releases / rid / "release.json").read_text())["inputs"]["normalisation"]
        subs.append((norm, "NORMALISATION-DIGEST"))
    subs += [(rid[:12], f"RELEASE-{i}") for i, rid in enumerate(ids, 1)]
    # a certified sheet names its release, so its sha256 on the status page depends on the machine too
    sheets = sorted((releases.parent / "sheets").glob("*.csv"))
    subs += [(hashlib.sha256(sheet.read_bytes()).hexdigest(), f"SHEET-{i}-SHA256") for i, sheet in enumerate(sheets, 1)]
    return subs


def _masked_site(site: Path, releases: Path, ids: list[str], *, archived_only: bool = False) -> dict[str, str]:
    """Each file's text with the machine's values masked, by its masked path. With `archived_only`, only the
    pages the manifest archives, and with the vendored stylesheet and script left in: they are part of every
    archived page's bytes, so a change to them changes the archive too."""
    subs = _masks(releases, ids)
    archived = {p for p, e in json.loads((site / "manifest.json").read_text())["files"].items() if e["archived"]}
    out = {}
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site).as_posix()
        if not path.is_file() or rel == "manifest.json" or (archived_only and rel not in archived):
            continue
        text = path.read_text(encoding="utf-8")
        for old, new in subs:
            text = text.replace(old, new)
            rel = rel.replace(old, new)
        text = VERSION_LINE.sub(r"\1X.Y.Z", text)
        if not archived_only:
            text = STATIC.sub(r"\1(vendored)\2", text)
            text = CSP.sub("sha256-(vendored)", text)
        out[rel] = text
    return out


@pytest.fixture(scope="module")
def golden_site(novelty_site, tmp_path_factory):
    """The fixture site with every kind of page: the releases, the novelty page and two digest weeks (hostile
    titles, graph verdicts: tests/support/digest.py)."""
    from support.digest import graph_rows, week_document, write_week
    root = tmp_path_factory.mktemp("golden")
    write_week(root / "digests", week_document("2026-W19", hostile=False, prior=()))
    doc = week_document("2026-W20")
    write_week(root / "digests", doc, graph_rows(doc))
    render_site(novelty_site["releases"], root / "site", novelty=novelty_site["novelty"], digests_dir=root / "digests",
                workspace=novelty_site["workspace"], progress=False)
    return root / "site"


def test_the_site_matches_the_golden_copy(golden_site, site_build, request):
    got = _masked_site(golden_site, site_build["releases"], site_build["ids"])
    assert {"novelty.html", "digest/2026-W20.html", "digest/2026-W20.md", "digest/index.html",
            "digest/feed.xml"} <= set(got), "the golden site has every kind of page"
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


def test_an_archived_golden_page_changes_only_with_a_new_site_version(golden_site, site_build, request):
    """tests/golden/archived-pages.json: the sha256 of each archived page of the golden site, for one SITE_VERSION.

    A site already published keeps building after an upgrade only if every page it archived is either rendered
    the same or was archived by an earlier site version (reporter/site/writer.py). So a change that alters an
    archived page (a template, the inlined style or script) must come with a new SITE_VERSION; --regen-golden
    records the new hashes, and refuses to while the version is the same (issue 30, item 11)."""
    got = {rel: hashlib.sha256(text.encode("utf-8")).hexdigest() for rel, text in
           _masked_site(golden_site, site_build["releases"], site_build["ids"], archived_only=True).items()}
    assert any(p.startswith("digest/") for p in got) and any(p.startswith("releases/") for p in got)
    table = json.loads(ARCHIVED.read_text(encoding="utf-8")) if ARCHIVED.exists() else {"site_version": 0,
                                                                                          "sha256": {}}
    changed = sorted(p for p in got.keys() & table["sha256"].keys() if got[p] != table["sha256"][p])
    if changed and table["site_version"] == SITE_VERSION:
        pytest.fail(f"{len(changed)} archived page(s) of the golden site changed while SITE_VERSION stayed "
                    f"{SITE_VERSION}: {', '.join(changed[:6])}. Every site that published such a page would stop "
                    f"building after the upgrade (exit 2, 'archived pages would change'). Bump SITE_VERSION in "
                    f"reporter/site/writer.py (and say what changed in its docstring and docs/site.md), then run "
                    f"pytest tests/test_site_golden.py --regen-golden")
    if request.config.getoption("--regen-golden"):
        ARCHIVED.write_text(json.dumps({"site_version": SITE_VERSION, "sha256": got}, indent=2, sort_keys=True)
                            + "\n", encoding="utf-8")
        pytest.skip(f"recorded {len(got)} archived pages for site version {SITE_VERSION} in {ARCHIVED}")
    assert table["site_version"] == SITE_VERSION, (
        f"{ARCHIVED} records site version {table['site_version']}, the code is {SITE_VERSION}: run "
        f"pytest tests/test_site_golden.py --regen-golden to record the archived pages of this version")
    assert got == table["sha256"], (f"the golden site's archived pages are not those {ARCHIVED} lists (none changed: "
                                    f"pages added or gone); run pytest tests/test_site_golden.py --regen-golden")


def test_the_site_inlines_exactly_the_vendored_files(site_build):
    style = (TEMPLATES / "static" / "style.css").read_text()
    script = (TEMPLATES / "static" / "sort.js").read_text()
    for page in site_build["site"].rglob("*.html"):
        text = page.read_text()
        assert f"<style>{style}</style>" in text and f"<script>{script}</script>" in text


def test_a_rebuild_is_byte_identical_and_changes_nothing(site_build, tmp_path):
    ws = site_build["workspace"]
    report = render_site(site_build["releases"], tmp_path / "again", workspace=ws, progress=False)
    for path in sorted((tmp_path / "again").rglob("*")):
        if path.is_file():
            rel = path.relative_to(tmp_path / "again")
            assert path.read_bytes() == (site_build["site"] / rel).read_bytes(), rel
    again = render_site(site_build["releases"], site_build["site"], workspace=ws, progress=False)
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
            if re.match(r"^[a-z]+:|^//", href):
                assert PAPER_LINK.match(href) and a.attrs.get("rel") == "noopener noreferrer", \
                    f"{page}: external link {href} is not a paper's page"
                continue
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
            if re.match(r"^[a-z]+:|^//", link):
                assert PAPER_LINK.match(link), f"{md}: external link {link} is not a paper's page"
                continue
            target = (md.parent / unquote(link.partition("#")[0])).resolve()
            assert target.is_file() and target.suffix in (".md", ".html", ".csv"), f"{md.relative_to(site)}: {link}"


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


def _pool_ids(name: str) -> set[str]:
    return {json.loads(line)["work_id"] for line in (SITE_WORKSPACE / name).read_text().splitlines()}


def _pool_titles() -> dict[str, str | None]:
    titles = {}
    for name in ("pool.jsonl", "pool_v2.jsonl"):
        for line in (SITE_WORKSPACE / name).read_text().splitlines():
            work = json.loads(line)
            titles[work["work_id"]] = work["title"]
    return titles


def test_the_diff_says_what_changed_and_why(site_build):
    """pool_v2 drops three works and adds five; specs_v2 edits a rule, adds one and removes one."""
    site, (first, second) = site_build["site"], site_build["ids"]
    tree = parse_html((site / "releases" / second / "diff.html").read_text())
    summary = [li.text() for li in tree.find("ul", id="summary").find_all("li")]
    assert summary[0] == "Inputs changed: the works (pool), the rule book (specs); the others are the same."
    assert summary[1].startswith("Rules: 1 added (meta-analysis); 1 edited (conference-abstract); "
                                 "1 removed (meta-analysis-shadow);")
    assert summary[2].startswith("The pool gained 5 works") and "lost 3" in summary[2]
    changed = {tr.find("th").text(): tr.find_all("td")[1].text() for tr in
               tree.find("table", id="input-change-table").find("tbody").find_all("tr")}
    assert changed == {"pool": "changed", "overlay": "same", "specs": "changed", "piles": "same",
                       "normalisation": "same", "engine": "same"}
    edited = tree.find("section", id="spec-conference-abstract")
    assert "edited" in edited.find("h3").text()
    diff = edited.find("pre").text()
    assert '-  "precedence": 60,' in diff and '+  "precedence": 90,' in diff
    removed = tree.find("section", id="spec-meta-analysis-shadow")
    assert removed.find("a").attrs["href"] == f"../{first}/rules/meta-analysis-shadow.html"
    # new and gone works: counts per pile equal the routing tables' difference; every one shown (fewer than 10)
    old, new = _pool_ids("pool.jsonl"), _pool_ids("pool_v2.jsonl")
    for anchor, ids in (("new", new - old), ("left", old - new)):
        section = tree.find("section", id=anchor)
        total = sum(int(td.text()) for td in section.find("table", id=f"{anchor}-table").find_all("td"))
        shown = {tr.attrs["id"] for t in section.find_all("table")[1:] for tr in t.find("tbody").find_all("tr")}
        assert total == len(ids) and shown == {f"w-{slug(w)}" for w in ids}
    # the moves of works in both, with the rule deciding each before and now
    moves = [[td.text() for td in tr.find_all("td")] for tr in
             tree.find("table", id="move-table").find("tbody").find_all("tr")]
    assert sum(int(m[0]) for m in moves) == int(tree.find("h2", id="moves-h").text().split(": ")[1])
    # the edited hold rule (precedence 60 -> 90) now wins a conference abstract the screen rule had won
    assert ["1", "screen", "replication-text", "hold", "conference-abstract"] in moves, moves


def test_the_flow_numbers_equal_rule_stats(site_build):
    releases, site = site_build["releases"], site_build["site"]
    for rid in site_build["ids"]:
        stats = json.loads((releases / rid / "rule_stats.json").read_text())
        tree = parse_html((site / "releases" / rid / "index.html").read_text())
        svg = tree.find("svg", id="flow-chart")
        shown = {t.attrs["data-key"]: int(t.text().replace(",", "")) for t in svg.find_all("text")
                 if "data-key" in t.attrs}
        pending = stats["pending"]
        kinds = {p["name"]: p["kind"] for p in stats["pile_order"]}
        paying = [p for p, k in kinds.items() if k == "screen"]
        assert shown["fl-pool"] == stats["rows"]
        assert shown["fl-out-unrouted"] == pending["unrouted"]
        assert shown["fl-routed"] == stats["rows"] - pending["unrouted"]
        assert shown["fl-out-discard"] == sum(n for p, n in stats["piles"].items() if kinds[p] == "discard")
        assert shown.get("fl-wait-hold", 0) == sum(n for p, n in stats["piles"].items() if kinds[p] == "hold")
        assert shown["fl-out-no_text"] == pending["no_text"]
        assert shown["fl-text"] == sum(stats["piles"][p] for p in paying)
        for p in paying:
            assert shown[f"fl-to-{slug(p)}"] == stats["piles"][p]
        for rule in stats["rules"]:
            if not rule["shadow"] and kinds[rule["pile"]] in ("discard", "hold") and rule["won"]:
                assert shown[f"fl-rule-{slug(rule['id'])}"] == rule["won"]
        cells = {td.attrs["data-key"]: int(td.text().replace(",", "")) for td in
                 tree.find("table", id="flow-table").find_all("td")}
        assert cells == shown


def test_every_work_shown_has_its_title_and_a_link_to_the_paper(site_build):
    """The pool has titles for all but two works: no page shows a placeholder for any other."""
    titles = _pool_titles()
    site = site_build["site"]
    checked = 0
    for page in sorted(site.rglob("*.html")):
        tree = parse_html(page.read_text())
        for row in tree.find_all("tr"):
            link = row.find_all("a", **{"class": "id"})
            if not link or not row.attrs.get("id", "").startswith("w-"):
                continue
            work = link[0].text()
            cell = row.find_all("td")[1]
            if titles[work] is None:
                assert "no title (the pool has none for this work)" in cell.text(), (page, work)
            else:
                assert cell.find("bdi").text() == titles[work][:300], (page, work)
            links_out = [a.attrs["href"] for a in cell.find_all("a")]
            assert len(links_out) == 1 and PAPER_LINK.match(links_out[0]), (page, work)
            checked += 1
    assert checked > 100


def test_the_diff_csv_files_equal_the_tables_and_list_every_moved_work(site_build):
    import csv
    import io

    import pyarrow.parquet as pq

    releases, site, (first, second) = site_build["releases"], site_build["site"], site_build["ids"]
    folder = site / "releases" / second
    tree = parse_html((folder / "diff.html").read_text())
    rows = list(csv.reader(io.StringIO((folder / "diff-transitions.csv").read_text(encoding="utf-8"), newline="")))
    table = tree.find("table", id="transition-table")
    assert rows[0] == [th.text() for th in table.find("thead").find_all("th")]
    body = [[c.text() for c in tr.children if not isinstance(c, str)] for tr in table.find_all("tr")[1:]]
    assert rows[1:] == body
    moved = list(csv.DictReader(io.StringIO((folder / "diff-moved.csv").read_text(encoding="utf-8"), newline="")))
    state = {}
    for rid in (first, second):
        t = pq.read_table(releases / rid / "routing.parquet", columns=["work_id", "pile", "pending_reason"]).to_pylist()
        state[rid] = {r["work_id"]: f"pending/{r['pending_reason']}" if r["pending_reason"] else r["pile"] for r in t}
    want = {w for w in state[second] if w in state[first] and state[first][w] != state[second][w]}
    assert {r["work"] for r in moved} == want and len(moved) == len(want) > 0
    for r in moved:
        assert (r["before"], r["now"]) == (state[first][r["work"]], state[second][r["work"]])
    assert int(tree.find("h2", id="moves-h").text().split(": ")[1]) == len(want)


def test_labels_and_dates_name_the_releases(site_build):
    site, (first, second) = site_build["site"], site_build["ids"]
    home = parse_html((site / "index.html").read_text())
    changes = [li.text() for li in home.find("ul", id="change-list").find_all("li")]
    assert changes[0].startswith(f"2026-W20 <b>edited</b> {second[:12]} (2026-05-11): Changed: the works (pool), the rule book (specs).")
    assert changes[1] == f"2026-W19 {first[:12]} (2026-05-04): The first release."
    for name in ("index.html", "status.html", "diff.html"):
        text = (site / "releases" / second / name).read_text()
        assert "2026-W20 &lt;b&gt;edited&lt;/b&gt;" in text and "2026-05-11" in text, name


def test_render_without_a_workspace_reads_titles_from_the_pool_it_is_given(tmp_path, capsys):
    """`reporter render --releases` alone shows a moved work no sample holds as "title not shown"; `--pool` gives
    its title from the pool, as a render with a workspace naming that pool does."""
    from support.site import toy_rules, toy_works, write_release

    from reporter.cli import main

    releases, works = tmp_path / "releases", toy_works(400)
    write_release(releases, works, toy_rules(1))
    write_release(releases, works, toy_rules(2))  # the shadow promoted: 50 works move to discard
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(w) + "\n" for w in works), encoding="utf-8")
    common = ["render", "--releases", str(releases), "--quiet"]
    assert main([*common, "--out", str(tmp_path / "bare")]) == 0
    assert main([*common, "--out", str(tmp_path / "pooled"), "--pool", str(pool)]) == 0
    (tmp_path / "reporter.toml").write_text(f'pool = "{pool}"\nspecs = "specs"\nreleases = "releases"\n'
                                            'site = "site"\n', encoding="utf-8")
    assert main([*common, "--out", str(tmp_path / "ws"), "--workspace", str(tmp_path)]) == 0
    second = json.loads((releases / "index.json").read_text())[-1]
    bare, pooled, ws = ((tmp_path / name / "releases" / second / "diff.html").read_text()
                        for name in ("bare", "pooled", "ws"))
    assert "title not shown" in bare and "render --pool PATH" in bare
    assert "title not shown" not in pooled and pooled == ws
    moved = [w for w in works if "meta-analysis" in (w["abstract"] or "") and w["title"]]
    assert any(w["title"] in ws for w in moved if "<" not in w["title"] and "&" not in w["title"])
    capsys.readouterr()
    assert main(["render", "--releases", str(releases), "--out", str(tmp_path / "x"), "--pool", str(pool),
                 "--workspace", str(tmp_path)]) == 2
    assert "--pool goes without --workspace" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
