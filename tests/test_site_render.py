"""render_site over hand-made release folders: determinism, the archive, escaping, charts, the CLI."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from reporter.cli import main
from reporter.errors import InputError, InternalError
from reporter.build import render_site
from reporter.site.server import make_server
from reporter.site.writer import SITE_VERSION, SiteWriter
from support.site import HOSTILE, parse_html, toy_rules, toy_works, write_release


@pytest.fixture
def two_releases(tmp_path):
    """Two toy releases in one releases folder (the second changes rules and a few work ids)."""
    releases = tmp_path / "releases"
    works = toy_works()
    labels = {w["work_id"]: ("include" if i % 3 == 0 else "exclude") for i, w in enumerate(works[:30])}
    first = write_release(releases, works, toy_rules(1), labels=labels)
    moved = works[:35] + [dict(w, work_id=w["work_id"] + "-v2") for w in works[35:]]
    second = write_release(releases, moved, toy_rules(2))
    return releases, first, second


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_inputs_give_byte_identical_sites(two_releases, tmp_path):
    releases, _a, _b = two_releases
    render_site(releases, tmp_path / "one", progress=False)
    render_site(releases, tmp_path / "two", progress=False)
    one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
    assert one == two
    again = render_site(releases, tmp_path / "one", progress=False)
    assert again.written == 0 and again.unchanged == len(one) - 1  # everything but the manifest


def test_manifest_hashes_every_file(two_releases, tmp_path):
    import hashlib
    releases, a, b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    manifest = json.loads((tmp_path / "site" / "manifest.json").read_text())
    files = _files(tmp_path / "site")
    del files["manifest.json"]
    assert sorted(manifest["files"]) == sorted(files)
    for path, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256(files[path]).hexdigest()
        assert entry["archived"] == (path.endswith(("/index.html", "/index.md")) and path != "index.html"
                                     or "/rules/" in path or path.endswith(("/rules.csv", "/domain-misses.csv")))
        assert entry["site_version"] == SITE_VERSION
    assert manifest["site_version"] == SITE_VERSION


def test_an_archived_page_that_would_change_is_refused(two_releases, tmp_path):
    releases, a, _b = two_releases
    site = tmp_path / "site"
    render_site(releases, site, progress=False)
    page = site / "releases" / a / "index.html"
    page.write_text(page.read_text().replace("The six inputs", "The six inputs (old template)"))
    status = site / "releases" / a / "status.html"
    status.write_text("stale")
    with pytest.raises(InputError, match=rf"releases/{a}/index.html.*--rerender-archive"):
        render_site(releases, site, progress=False)
    assert status.read_text() == "stale", "nothing is written when the archive check fails"
    report = render_site(releases, site, rerender_archive=True, progress=False)
    assert len(report.superseded) == 1
    kept = site / report.superseded[0]
    assert "(old template)" in kept.read_text() and kept.parent == page.parent
    assert "(old template)" not in page.read_text() and status.read_text() != "stale"


def test_status_and_home_pages_may_change(two_releases, tmp_path):
    releases, a, _b = two_releases
    site = tmp_path / "site"
    render_site(releases, site, progress=False)
    (releases / a / "labels.json").unlink()
    report = render_site(releases, site, progress=False)
    assert report.written == 2  # the status page and its twin
    assert "No labels were given" in (site / "releases" / a / "status.html").read_text()


def test_the_writer_stays_inside_its_root_and_writes_each_path_once(tmp_path):
    w = SiteWriter(tmp_path / "site")
    w.add("a/b.html", "x", archived=False)
    with pytest.raises(InternalError, match="twice"):
        w.add("a/b.html", "y", archived=False)
    for bad in ["../x.html", "/etc/x", "a/../../x", "a//b", "C:/x", "a\\b"]:
        with pytest.raises(InternalError):
            w.add(bad, "x", archived=False)
    (tmp_path / "outside").mkdir()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "link").symlink_to(tmp_path / "outside")
    w.add("link/evil.html", "x", archived=False)
    with pytest.raises(InputError, match="outside"):
        w.commit()
    assert not (tmp_path / "outside" / "evil.html").exists()


def test_hostile_titles_render_as_text_in_html(two_releases, tmp_path):
    releases, a, _b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    html = (tmp_path / "site" / "releases" / a / "index.html").read_text()
    tree = parse_html(html)
    assert len(tree.find_all("script")) == 1, "only the vendored sort script"
    assert not tree.find_all("img")
    assert not [n for n in tree.iter() if any(k.startswith("on") for k in n.attrs)]
    cells = " ".join(td.text() for td in tree.find_all("td"))
    for title in HOSTILE:
        assert title[:40] in cells, title
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    # the description of a rule carries markup too
    assert "says it replicates &lt;b&gt;a study&lt;/b&gt;" in html
    for bdi in tree.find_all("bdi"):
        assert bdi.find_all() == [] or all(n.tag in ("bdi", "mark") for n in bdi.find_all())


def _md_tables(text: str):
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    assert not [t for t in tokens if t.type == "html_block"], "no raw HTML block from data"
    for t in tokens:
        if t.type == "inline":
            assert not [c for c in t.children if c.type == "html_inline"], t.content
    return md, tokens


def test_hostile_titles_do_not_break_markdown(two_releases, tmp_path):
    releases, a, b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    for md_file in sorted((tmp_path / "site").rglob("*.md")):
        text = md_file.read_text()
        md, tokens = _md_tables(text)
        # every row of every table has the header's number of cells
        width, cells = None, 0
        for t in tokens:
            if t.type == "tr_open":
                cells = 0
            elif t.type in ("th_open", "td_open"):
                cells += 1
            elif t.type == "thead_open":
                width = None
            elif t.type == "tr_close":
                width = cells if width is None else width
                assert cells == width, f"{md_file}: a row with {cells} cells under {width} columns"
        rendered = md.render(text)
        assert "<script" not in rendered and "<img" not in rendered and "onerror=" not in rendered.replace(
            "onerror=&quot;", "")
    release_md = (tmp_path / "site" / "releases" / a / "index.md").read_text()
    rendered = MarkdownIt("commonmark").enable("table").render(release_md)
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in rendered
    assert "pipes | in | the | title" in rendered
    # a word joiner (U+2060) keeps the bare URL in pieces (docs/site.md, "Markdown escaping")
    assert "**bold** and _under_ and [link](http://evil.example)" in rendered.replace("\u2060", "")
    assert "<strong>bold</strong>" not in rendered


def test_release_page_numbers_come_from_rule_stats(two_releases, tmp_path):
    releases, a, _b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    stats = json.loads((releases / a / "rule_stats.json").read_text())
    tree = parse_html((tmp_path / "site" / "releases" / a / "index.html").read_text())
    shown = {td.attrs["data-pile"]: int(td.text().replace(",", "")) for td in tree.find_all("td")
             if "data-pile" in td.attrs}
    for pile, n in stats["piles"].items():
        assert shown[pile] == n
    for reason, n in stats["pending"].items():
        assert shown[f"pending/{reason}"] == n
    for rule in stats["rules"]:
        row = tree.find("tr", id=f"rule-{rule['id']}")
        assert row.find("a").text() == rule["id"]


def test_every_chart_number_equals_its_table(two_releases, tmp_path):
    releases, a, b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    checked = 0
    for page in sorted((tmp_path / "site").rglob("*.html")):
        tree = parse_html(page.read_text())
        for svg in tree.find_all("svg"):
            assert svg.find("title").text() and svg.find("desc").text()
            table = tree.find("table", id=svg.attrs["data-table"])
            cells = {td.attrs["data-key"]: td.text().strip() for td in table.find_all("td") if "data-key" in td.attrs}
            numbers = [t for t in svg.find_all("text") if "data-key" in t.attrs]
            assert numbers, f"{page}: a chart without numbers"
            for t in numbers:
                assert cells[t.attrs["data-key"]] == t.text().strip(), (page, t.attrs["data-key"])
                checked += 1
    assert checked > 50


def test_each_pile_shows_a_sample_of_up_to_twenty_with_title_and_span(tmp_path):
    works = [{"work_id": f"doi:10.1/{i:03d}", "source": "openalex", "title": f"Replication study {i}",
              "abstract": f"We replicate effect {i}."} for i in range(45)]
    releases = tmp_path / "releases"
    rid = write_release(releases, works, toy_rules(1), seed=7)
    render_site(releases, tmp_path / "site", progress=False)
    tree = parse_html((tmp_path / "site" / "releases" / rid / "index.html").read_text())
    section = tree.find("section", id="pile-screen")
    rows = section.find("tbody").find_all("tr")
    assert len(rows) == 20
    assert "a seeded sample of 20 of 45 works (seed 7)" in section.text()
    for row in rows:
        assert row.find("mark").text() == "replication"
        assert row.find("bdi").text().startswith("Replication study")


def test_the_diff_counts_every_work_once(two_releases, tmp_path):
    releases, a, b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    before = json.loads((releases / a / "rule_stats.json").read_text())
    after = json.loads((releases / b / "rule_stats.json").read_text())
    tree = parse_html((tmp_path / "site" / "releases" / b / "diff.html").read_text())
    table = tree.find("table", id="transition-table")
    total = sum(int(td.text().replace(",", "")) for td in table.find("tbody").find_all("td")
                if td.attrs.get("data-key", "").startswith("t-") )
    assert total == 35 + 6 + 6  # 41 works before, the last 6 renamed: 6 gone and 6 new, each counted once
    assert "(not in release)" in table.text()
    col = {td.attrs["data-key"]: int(td.text().replace(",", "")) for td in table.find("tfoot").find_all("td")
           if "data-key" in td.attrs}
    assert col["t-total--screen"] == after["piles"]["screen"]
    first = parse_html((tmp_path / "site" / "releases" / a / "diff.html").read_text())
    assert "nothing to compare" in first.find("main").text()
    assert before["rows"] == 41


def test_an_empty_releases_folder_renders_a_home_page(tmp_path):
    report = render_site(tmp_path / "none", tmp_path / "site", progress=False)
    assert report.releases == () and report.pages == 2  # the home page and the glossary
    home = (tmp_path / "site" / "index.html").read_text()
    assert "No release has been routed yet" in home and 'id="pending-note"' not in home
    assert "No weekly digest" in (tmp_path / "site" / "index.md").read_text()


def test_bad_release_folders_are_input_errors(two_releases, tmp_path):
    releases, a, _b = two_releases
    stats_file = releases / a / "rule_stats.json"
    original = stats_file.read_text()
    stats = json.loads(original)
    next(r for r in stats["rules"] if not r["shadow"])["won"] += 1
    stats_file.write_text(json.dumps(stats))
    with pytest.raises(InputError, match="rule_stats.json"):
        render_site(releases, tmp_path / "site", progress=False)
    stats_file.write_text(original)
    (releases / "index.json").write_text(json.dumps([a, "f" * 64]))
    with pytest.raises(InputError, match="folder is missing"):
        render_site(releases, tmp_path / "site", progress=False)
    assert not (tmp_path / "site").exists(), "nothing half-written"


def test_render_command_exit_codes_and_json(two_releases, tmp_path, capsys):
    releases, a, b = two_releases
    assert main(["render", "--releases", str(releases), "--out", str(tmp_path / "site"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["releases"] == [a, b] and report["largest_page"]["bytes"] > 0
    assert main(["render", "--releases", str(tmp_path / "site" / "index.html"), "--out", str(tmp_path / "x")]) == 2
    assert "not a folder" in capsys.readouterr().err
    (tmp_path / "digests").mkdir()
    assert main(["render", "--releases", str(releases), "--digests", str(tmp_path / "digests"),
                 "--out", str(tmp_path / "site"), "--quiet"]) == 0
    assert "0 files written" in capsys.readouterr().out


def test_serve_answers_on_localhost_only(two_releases, tmp_path):
    releases, _a, _b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    server = make_server(tmp_path / "site", 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as r:
            assert r.status == 200 and b"Every release, newest first" in r.read()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(InputError, match="render the site first"):
        make_server(tmp_path / "nothing", 0)


PAPER_LINK = re.compile(r"https://(doi\.org|arxiv\.org/abs|pubmed\.ncbi\.nlm\.nih\.gov|openalex\.org|osf\.io)/")


def test_no_page_refers_outside_itself_but_to_the_papers(two_releases, tmp_path):
    """Nothing is loaded from elsewhere; the only links out are to a paper's own page, built from its id."""
    releases, _a, _b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    out = 0
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"""src=["'](https?:)?//""", text), page
        assert "@import" not in text and "url(" not in text
        for a in parse_html(text).find_all("a"):
            if re.match(r"^[a-z]+:|^//", a.attrs["href"]):
                assert PAPER_LINK.match(a.attrs["href"]), (page, a.attrs["href"])
                assert a.attrs.get("rel") == "noopener noreferrer"
                out += 1
    assert out > 20


def test_an_earlier_site_versions_archive_stays_as_published(two_releases, tmp_path, monkeypatch):
    """A new layout renders new releases; pages an earlier site version archived keep their bytes."""
    from reporter.site import render, writer
    from reporter.site.models import ReleasePage, RulePage

    releases, a, b = two_releases
    site = tmp_path / "site"
    original = render.render_html

    def old_layout(page):
        out = original(page)
        return out.replace("</main>", "<p>the old layout</p></main>") if isinstance(page, (ReleasePage, RulePage)) else out

    monkeypatch.setattr(writer, "SITE_VERSION", 1)
    monkeypatch.setattr(render, "render_html", old_layout)
    render_site(releases, site, progress=False)
    published = {p: p.read_bytes() for p in site.rglob("*") if p.is_file() and "/rules/" in p.as_posix()
                 or p.name == "index.html" and p.parent.name in (a, b)}
    assert all(b"the old layout" in data for p, data in published.items() if p.suffix == ".html")
    monkeypatch.undo()

    # this version: the archived pages of a and b stay as they were; the rebuilt pages take the new layout
    report = render_site(releases, site, progress=False)
    assert {p: p.read_bytes() for p in published} == published
    assert f"releases/{a}/index.html" in report.kept and f"releases/{b}/rules/replication.html" in report.kept
    manifest = json.loads((site / "manifest.json").read_text())
    assert manifest["files"][f"releases/{a}/index.html"]["site_version"] == 1
    assert manifest["files"][f"releases/{a}/status.html"]["site_version"] == SITE_VERSION
    again = render_site(releases, site, progress=False)
    assert again.written == 0 and again.kept == report.kept, "a second render changes nothing"

    # a new release is rendered in this version's layout beside them
    c = write_release(releases, toy_works()[:30], toy_rules(1))
    render_site(releases, site, progress=False)
    assert b"the old layout" not in (site / "releases" / c / "index.html").read_bytes()
    assert {p: p.read_bytes() for p in published} == published

    # an archived page edited on disk is no earlier version's page: refused, as in one version
    page = site / "releases" / a / "index.html"
    page.write_bytes(page.read_bytes().replace(b"the old layout", b"an edit"))
    with pytest.raises(InputError, match=rf"releases/{a}/index.html.*--rerender-archive"):
        render_site(releases, site, progress=False)
    page.write_bytes(published[page])

    # only --rerender-archive rewrites them, keeping each old file beside the new one
    report = render_site(releases, site, rerender_archive=True, progress=False)
    assert b"the old layout" not in page.read_bytes() and report.kept == ()
    assert f"releases/{a}/index.html" in {s.split(".superseded-")[0] + ".html" for s in report.superseded}
    manifest = json.loads((site / "manifest.json").read_text())
    assert {e["site_version"] for e in manifest["files"].values()} == {SITE_VERSION}


def test_the_release_csv_files_equal_their_tables(two_releases, tmp_path):
    import csv
    import io

    releases, a, _b = two_releases
    render_site(releases, tmp_path / "site", progress=False)
    folder = tmp_path / "site" / "releases" / a
    tree = parse_html((folder / "index.html").read_text())
    for name, table_id in (("rules.csv", "rule-table"), ("domain-misses.csv", "domain-table")):
        data = (folder / name).read_bytes()
        assert data.endswith(b"\r\n") and not data.startswith(b"\xef\xbb\xbf")
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        table = tree.find("table", id=table_id)
        head = [th.text().strip() for th in table.find("thead").find_all("th")]
        body = [[c.text().strip() for c in tr.children if not isinstance(c, str)]
                for tr in table.find("tbody").find_all("tr")]
        assert rows[0] == head and len(rows) - 1 == len(body) > 0, name
        for got, want in zip(rows[1:], body):
            assert got == [w.replace(",", "") if w.replace(",", "").isdigit() else w for w in want], name


def test_render_against_compares_the_newest_with_any_earlier_release(two_releases, tmp_path, capsys, monkeypatch):
    from reporter.site import diff_page

    releases, a, b = two_releases
    c = write_release(releases, toy_works()[:30], toy_rules(1))
    (releases / a / "published.json").write_text(json.dumps({"label": "week one", "first_written": "2026-05-04"}))
    site = tmp_path / "site"
    render_site(releases, site, progress=False)
    # the newest is compared with its previous and with up to AGAINST_RECENT before that
    page = site / "releases" / c / "against" / f"{a}.html"
    assert page.is_file() and "against week one" in parse_html(page.read_text()).find("h1").text()
    assert (site / "releases" / c / "against" / f"{a}-moved.csv").is_file()
    listed = parse_html((site / "releases" / c / "diff.html").read_text()).find("ul", id="comparisons")
    assert [li.text().split(" first written")[0] for li in listed.find_all("li")] == [
        f"{b[:12]} (this page)", f"week one ({a[:12]})"]

    monkeypatch.setattr(diff_page, "AGAINST_RECENT", 0)
    other = tmp_path / "other"
    assert main(["render", "--releases", str(releases), "--out", str(other), "--quiet"]) == 0
    assert not (other / "releases" / c / "against").exists()
    listed = parse_html((other / "releases" / c / "diff.html").read_text()).find("ul", id="comparisons")
    assert "not rendered" in listed.find_all("li")[1].text()
    assert main(["render", "--releases", str(releases), "--out", str(other), "--against", "week one", "--quiet"]) == 0
    assert (other / "releases" / c / "against" / f"{a}.html").read_bytes() == page.read_bytes()
    assert main(["render", "--releases", str(releases), "--out", str(other), "--against", a[:8], "--quiet"]) == 0
    assert main(["render", "--releases", str(releases), "--out", str(other), "--against", c[:8]]) == 2
    assert "is the newest release" in capsys.readouterr().err
    assert main(["render", "--releases", str(releases), "--out", str(other), "--against", "nope"]) == 2
    assert "names no release" in capsys.readouterr().err


def test_control_characters_in_the_data_never_reach_the_html(tmp_path):
    """A title holding NUL, BEL or a C1 control is shown with U+FFFD in their place (a browser reads NUL so, and
    the others are parse errors): the page is valid HTML whatever bytes the data held. The Markdown twin drops
    them (tests/test_site_markdown_escape.py)."""
    import re as _re
    releases = tmp_path / "releases"
    works = toy_works()
    works[1] = dict(works[1], title="Nul\x00 bell\x07 c1\x85 tab\tkept")
    write_release(releases, works, toy_rules(1))
    render_site(releases, tmp_path / "site", progress=False)
    pages = list((tmp_path / "site").rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not _re.search(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]", text), page
    shown = "".join(p.read_text(encoding="utf-8") for p in pages)
    assert "Nul\ufffd bell\ufffd c1\ufffd tab\tkept" in shown


def test_every_stage_adds_its_pages_through_stage_pages(two_releases, tmp_path):
    """One interface for every stage: screening's part of the status pages, a stage's home-page part and
    the report's counts all come through StagePages; no stage has a keyword of its own."""
    from reporter.routing.artifacts import load_releases
    from reporter.site import novelty_stage, prepare_site, screening_stage
    from reporter.site.status_page import ScreeningStatus
    from conftest import NOVELTY_FIXTURE

    from reporter.novelty import load_novelty_results
    releases, a, b = two_releases
    results = tmp_path / "results.jsonl"
    assert main(["novelty", "--batch", str(NOVELTY_FIXTURE / "candidates.jsonl"), "--out", str(results)]) == 0
    rows = load_novelty_results(results)
    assert len(rows) > 1
    note = "Screening is shown on another site of this workspace."
    site = prepare_site(load_releases(releases), tmp_path / "site", progress=False,
                        stages=[novelty_stage(rows, results), screening_stage(ScreeningStatus(None, None, note))])
    report = site.commit()
    assert (report.novelty, report.digests) == (len(rows), 0)  # the stage's count, through its `report`
    for release in (a, b):
        assert note in (tmp_path / "site" / "releases" / release / "status.html").read_text()
    assert (tmp_path / "site" / "novelty.html").is_file()
    home = (tmp_path / "site" / "index.html").read_text()
    assert f'<a href="novelty.html"><strong data-key="home-candidates">{len(rows)}</strong> candidates' in home
    # Without the stages none of it is there: each part came from its stage, not from the site itself.
    plain = prepare_site(load_releases(releases), tmp_path / "plain", progress=False).commit()
    assert (plain.novelty, plain.digests) == (None, 0)
    assert not (tmp_path / "plain" / "novelty.html").exists()
    assert 'href="novelty.html"' not in (tmp_path / "plain" / "index.html").read_text()
    assert note not in (tmp_path / "plain" / "releases" / a / "status.html").read_text()
    with pytest.raises(ValueError, match="status pages"):
        prepare_site(load_releases(releases), tmp_path / "other", progress=False,
                     stages=[screening_stage(ScreeningStatus(None, None, note))] * 2)


def test_the_glossary_lists_each_word_once_and_its_footer_does_not_link_to_itself(two_releases, tmp_path):
    """Issue 37, item 10: "pending" was listed twice (the word, and the pending pile), and the glossary's footer
    linked to the glossary. Every other page's footer still links to it."""
    out = tmp_path / "site"
    render_site(two_releases[0], out, progress=False)
    page = (out / "glossary.html").read_text()
    words = re.findall(r'<dt id="[^"]*"><bdi>([^<]*)</bdi></dt>', page)
    assert "pending" in words and len(words) == len(set(words)), sorted(w for w in words if words.count(w) > 1)
    assert 'href="glossary.html"' not in page and "](glossary.md)" not in (out / "glossary.md").read_text()
    assert "What the words mean</a>" in (out / "index.html").read_text()
    assert "[What the words mean](glossary.md)" in (out / "index.md").read_text()


def test_compiled_templates_kept_between_runs_change_no_byte_and_a_broken_cache_is_a_miss(tmp_path):
    """Issue 37, item 4: Jinja's bytecode cache saves the compile of every build; a page renders the same from it,
    and a cache that holds garbage, or a folder that cannot be read or written, costs only the compiling."""
    import jinja2

    from reporter.site import env as site_env
    from reporter.site.glossary import build_glossary

    page = build_glossary(())

    def render(cache) -> str:
        e = jinja2.Environment(loader=jinja2.PackageLoader("reporter", "templates/html"), bytecode_cache=cache,
                               autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                               lstrip_blocks=True, keep_trailing_newline=True)
        e.filters.update(site_env.html_env().filters)
        e.globals.update(site_env.html_env().globals)
        return e.get_template("glossary.html").render(**{f: getattr(page, f) for f in page.__dataclass_fields__})

    folder = tmp_path / "cache"
    folder.mkdir()
    fresh = render(None)
    assert render(site_env._QuietBytecodeCache(str(folder))) == fresh and list(folder.iterdir())  # kept
    assert render(site_env._QuietBytecodeCache(str(folder))) == fresh  # read back
    for kept in folder.iterdir():
        kept.write_bytes(b"garbage")
    assert render(site_env._QuietBytecodeCache(str(folder))) == fresh
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    assert render(site_env._QuietBytecodeCache(str(not_a_folder))) == fresh  # neither read nor written: no error
