"""The digest's pages and feed: week pages (archived), the week index, the home summary, digest/feed.xml.

Over hand-made weeks with hostile titles, ids, authors and abstracts
(tests/support/digest.py): the week page's structure from the parsed HTML
(every KEEP in full with its abstract one click away, REVIEW grouped by why
with its counts and ranks, every DROP under its cause and rationale), data
inert in HTML and in the Markdown twin, every chart number equal to the table
beside it, the KEEP list first in the twin, a valid Atom feed with each KEEP's
authors and snippet, byte-identical re-renders, the archive's refusal and an
earlier site version's week kept. A generated week of 2,000 papers renders
under 500 KB of HTML and 400 KB of Markdown. Then `reporter build` over the example weeks
(tests/fixtures/digest/made-up, the example workspace's weeks until they became real): pending weeks decided, published after the writer's checks,
the home page showing the latest week, and the graph's verdicts beside the
KEEPs without changing a decision.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from reporter.build import build, render_site
from reporter.cli import main
from reporter.config import load_workspace
from reporter.digest.records import DROP_CAUSES, REVIEW_REASONS, Decision, review_reason_of
from reporter.digest.weeks import run_weeks
from reporter.errors import InputError
from reporter.site import render
from reporter.plurals import count
from reporter.site.digest_groups import cap_ranks
from reporter.site.digest_pages import REVIEW_IN_FULL, paper_anchor, paper_href, week_dates
from reporter.site.models import DigestWeekPage
from reporter.site.paper_text import authors_line, snippet
from support.digest import (HOSTILE, HOSTILE_ABSTRACT, HOSTILE_AUTHORS, LIKE_W22, graph_rows, two_thousand_paper_week,
                            week_document, write_week)
from support.site import parse_html, toy_rules, toy_works, write_release

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "fixtures" / "digest" / "made-up"
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Two weeks: 2026-W19 (plain titles, published without a graph check) and 2026-W20 (hostile, checked)."""
    folder = tmp_path_factory.mktemp("digest") / "digests"
    write_week(folder, week_document("2026-W19", hostile=False, prior=()))
    doc = week_document("2026-W20")
    write_week(folder, doc, graph_rows(doc))
    return folder


@pytest.fixture(scope="module")
def site(archive, tmp_path_factory):
    root = tmp_path_factory.mktemp("digest_site")
    releases = root / "releases"
    write_release(releases, toy_works(), toy_rules(1))
    report = render_site(releases, root / "site", digests_dir=archive, progress=False)
    return {"site": root / "site", "releases": releases, "report": report, "doc": week_document("2026-W20")}


def _page(site, name: str):
    return parse_html((site["site"] / name).read_text(encoding="utf-8"))


def _papers(section) -> list:
    return [li for li in section.find_all("li") if li.attrs.get("id", "").startswith("p-")]


# --- the week page --------------------------------------------------------------------------------------


def _by_anchor(doc) -> dict:
    return {paper_anchor(d["id"]): d for d in doc["decisions"]}


def _assert_in_full(li, d) -> None:
    """A paper shown in full: its score and axes, authors and date, its abstract one click away, its rationale."""
    head = li.find("p", class_="paper")
    assert f"score {d['score']}" in head.text() and f"match {d['axes']['match']:.2f}" in head.text()
    if d.get("authors"):
        byline = head.find("span", class_="byline").text()
        assert byline.startswith(authors_line(d["authors"])) and d["published"] in byline, byline
    abstract = d.get("abstract")
    if abstract and snippet(abstract) != abstract:
        details = li.find("details", class_="abstract")
        assert details.find("summary").find("bdi").text() == snippet(abstract)
        assert details.find("p").find("bdi").text() == abstract
    elif abstract:
        assert li.find("p", class_="abstract").find("bdi").text() == abstract and not li.find_all("details")
    else:
        assert [p.text() for p in li.find_all("p") if "abstract" in p.attrs.get("class", "")] == ["No abstract."]
    rationale = [dd for dt, dd in zip(li.find_all("dt"), li.find_all("dd")) if dt.text() == "rationale"]
    assert rationale[0].find("bdi").text() == d["rationale"]


def test_the_week_page_lists_keep_then_review_by_why_then_every_drop_by_cause_and_rationale(site):
    doc = site["doc"]
    tree = _page(site, "digest/2026-W20.html")
    main_ = tree.find("main")
    assert main_.find("h1").text() == "Weekly digest 2026-W20"
    sections = [s.attrs["id"] for s in main_.children if not isinstance(s, str) and s.tag == "section"]
    assert sections == ["kept", "review", "dropped", "calibration", "drift", "merges", "listed-again", "inputs"]
    by_anchor = _by_anchor(doc)
    of = {k: [d for d in doc["decisions"] if d["decision"] == k] for k in ("KEEP", "REVIEW", "DROP")}

    keep = _papers(main_.find("section", id="kept"))
    assert [by_anchor[li.attrs["id"]]["id"] for li in keep] == [d["id"] for d in of["KEEP"]]
    for li in keep:
        _assert_in_full(li, by_anchor[li.attrs["id"]])
    # The cap applied: each KEEP's rank and relevance explain its place.
    assert [li.find("span", class_="ranking").text() for li in keep] == [
        "rank 1 of 9 · relevance 4.2500", "rank 2 of 9 · relevance 3.0000", "rank 3 of 9 · relevance 2.7500"]

    # For review, by why: each group with its count and its anchor, every REVIEW once.
    review = main_.find("section", id="review")
    assert review.find("h2").text() == f"For review: {len(of['REVIEW'])}"
    groups = review.find_all("section")[1:]  # the section itself, then its groups
    assert [(g.attrs["id"], g.find("h3").text()) for g in groups] == [
        ("review-over-cap", "Over the cap: 6"), ("review-rescued", "Kept before the stricter pass: 1"),
        ("review-no-abstract", "No abstract: 1"), ("review-criteria-silent", "Criteria silent: 1"),
        ("review-near-threshold", "Near the threshold: 1")]
    assert [a.attrs["href"] for a in review.find("ul", class_="groups").find_all("a")] == [
        "#" + g.attrs["id"] for g in groups]
    listed = [by_anchor[li.attrs["id"]]["id"] for li in _papers(review)]
    assert sorted(listed) == sorted(d["id"] for d in of["REVIEW"]) and len(set(listed)) == len(listed)
    over = _papers(groups[0])
    assert [by_anchor[li.attrs["id"]]["id"] for li in over] == [d["id"] for d in of["REVIEW"][:6]]
    for li in over[:REVIEW_IN_FULL] + _papers(review)[6:]:
        _assert_in_full(li, by_anchor[li.attrs["id"]])
    # Over the cap: ranked after the KEEPs, the rank and relevance beside the score; the rest of a group a line each.
    assert [li.find("span", class_="ranking").text() for li in over[:REVIEW_IN_FULL]] == [
        f"rank {4 + i} of 9 · relevance {2.5 - i / 4:.4f}" for i in range(REVIEW_IN_FULL)]
    row = over[REVIEW_IN_FULL]
    assert not row.find_all("details") and not row.find_all("dl")
    assert row.text().endswith("· score 100 · rank 9 of 9 · relevance 1.2500")
    assert authors_line(HOSTILE_AUTHORS) in row.text()
    assert row.find("a").attrs["href"] == "https://arxiv.org/abs/2605.02005"
    assert "The last one kept: pmid:90000012, score 78, relevance 2.7500." in groups[0].find("p", class_="note").text()

    # Every DROP under its cause, then under its rationale (written once), with its title linked.
    dropped = main_.find("section", id="dropped")
    causes = dropped.find_all("section")[1:]
    assert [g.attrs["id"] for g in causes] == [
        f"drop-{c}" for c in DROP_CAUSES if any(d["cause"] == c for d in of["DROP"])]
    by_title = {d["title"]: d for d in of["DROP"]}
    shown = []
    for group in causes:
        cause = group.attrs["id"].removeprefix("drop-")
        mine = [d for d in of["DROP"] if d["cause"] == cause]
        assert group.find("h3").text().endswith(f": {len(mine)}")
        whys, lists = group.find_all("p", class_="why"), group.find_all("ul", class_="rows")
        assert len(whys) == len(lists) == len({d["rationale"] for d in mine})
        for why, ul in zip(whys, lists):
            rows = ul.find_all("li")
            assert why.text().endswith(f"({count(len(rows), 'paper')})")
            for li in rows:
                d = by_title[li.find("bdi").text()]
                assert (d["cause"], d["rationale"]) == (cause, why.find("bdi").text())
                shown.append(d["id"])
    assert sorted(shown) == sorted(d["id"] for d in of["DROP"])
    weak = dropped.find("section", id="drop-weak-match")
    assert [len(ul.find_all("li")) for ul in weak.find_all("ul", class_="rows")] == [2, 1]

    # The axes and tags of a KEEP; its graph verdict and evidence beside it, or why there is none.
    first = keep[0].text()
    assert "match 1.00 · criteria 0.70 · novelty 1.00" in first and "pmid:90000011" in first
    verdicts = [li.find_all("dd", **{"data-verdict": "neighborhood"}) + li.find_all("dd", **{"data-verdict": "novel"})
                for li in keep]
    assert [v[0].attrs["data-verdict"] if v else None for v in verdicts] == ["neighborhood", "novel", None]
    assert "<script>cited</script>" in keep[0].text()
    assert "not checked: no DOI, arXiv or OpenAlex id" in keep[2].text()
    assert "examples" not in main_.find("section", id="kept").find("p").text()
    assert "graph/events.jsonl (sha256 abababababab)" in main_.find("section", id="kept").find("p").text()
    # The week's counts, the prior week linked, the inputs.
    counts = {td.attrs["data-key"]: td.text() for td in tree.find("table", id="calibration-table").find_all("td")}
    assert counts == {"c-kept": "3", "c-review": str(len(of["REVIEW"])), "c-dropped": str(len(of["DROP"])),
                      "c-covered": "1", "c-demoted": "6", "c-stricter": "yes"}
    prior = main_.find("section", id="inputs").find("p").find("a")
    assert prior.attrs["href"] == "2026-W19.html" and prior.text() == "2026-W19"
    assert "title+author (title similarity 0.9500)" in main_.find("section", id="merges").text()
    footer = tree.find("footer").text()
    assert "Archived page" in footer


@pytest.mark.parametrize("tags, score, reason", [
    (("demoted-for-cap",), 100, "over-cap"), (("stricter-pass",), 45, "rescued"), (("no-abstract",), 87, "no-abstract"),
    (("no-abstract", "criteria-silent"), 87, "no-abstract"), (("criteria-silent",), 87, "criteria-silent"),
    (("criteria-silent",), 64, "criteria-silent"), (("fails-required",), 55, "fails-required"),
    (("look-alike-trap",), 55, "look-alike-trap"), (("journal-version-of:2026-W19",), 65, "earlier-version"),
    (("stricter-pass",), 62, "near-threshold"), ((), 50, "near-threshold"), ((), 80, "other"),
    (("judges-disagree",), 87, "judges-disagree"), (("judge-failed", "criteria-silent"), 87, "judge-failed"),
    (("judge-missing",), 64, "near-threshold"), (("no-abstract", "judges-disagree"), 87, "no-abstract")])
def test_a_review_is_grouped_by_the_reason_that_decided_it(tags, score, reason):
    """The first that fits in REVIEW_REASONS order, as the rationale's head names it: the cap, the stricter pass's
    rescue (a score under REVIEW), the never-KEEP overrides, a criteria rule, an earlier version, else the score."""
    assert review_reason_of(tags, score, keep_threshold=70, review_threshold=50) == reason
    assert reason in REVIEW_REASONS


def test_paper_links_are_built_from_ids_only(site):
    tree = _page(site, "digest/2026-W20.html")
    by_anchor = _by_anchor(site["doc"])
    titles = {d["title"]: d["id"] for d in site["doc"]["decisions"]}
    assert len(titles) == len(site["doc"]["decisions"])
    links = {}
    for li in tree.find_all("li"):
        if li.attrs.get("id", "").startswith("p-"):
            pid = by_anchor[li.attrs["id"]]["id"]
        elif li.parent.attrs.get("class") == "rows":  # a DROP, under its rationale
            pid = titles[li.find("bdi").text()]
        else:
            continue
        a = [x for x in li.find_all("a") if x.find_all("bdi") and x.find("bdi").text() in titles]
        links[pid] = a[0].attrs["href"] if a else None
    assert set(links) == set(titles.values()), "every paper is listed"
    assert links["doi:10.5555/keep.1"] == "https://doi.org/10.5555/keep.1"
    assert links["arxiv:2605.01234"] == "https://arxiv.org/abs/2605.01234"
    assert links["pmid:90000012"] == "https://pubmed.ncbi.nlm.nih.gov/90000012/"
    assert links["openalex:W123"] == "https://openalex.org/W123"
    assert links["doi:10.5555/drop.5"] == "https://doi.org/10.5555/drop.5", "a DROP's title links to its paper"
    assert links["weird:<script>"] is None, "an id of no known scheme gets no link out"
    weird = next(li for li in tree.find_all("li") if li.find_all("bdi") and li.find("bdi").text() == HOSTILE[7]
                 and li.parent.attrs.get("data-cause") == "not-in-scope")
    assert weird.find("span", class_="id").text() == "weird:<script>", "its id stands in for the link"
    external = [a.attrs["href"] for a in tree.find_all("a") if re.match(r"^[a-z]+:", a.attrs["href"])]
    assert external and all(re.match(r"^https://(doi\.org|arxiv\.org/abs|pubmed\.ncbi\.nlm\.nih\.gov|openalex\.org)/",
                                     h) for h in external), external
    assert not any("evil" in h for h in external)
    assert tree.find("meta", name="referrer").attrs["content"] == "no-referrer", "what stands for rel on each link"


@pytest.mark.parametrize("pid, url", [
    ("doi:10.1000/a b", None), ("doi:10.1000/x\"><script>", "https://doi.org/10.1000/x%22%3E%3Cscript%3E"),
    ("doi:10.1000/(SICI)1#2?3", "https://doi.org/10.1000/%28SICI%291%232%3F3"), ("doi:11.1/x", None),
    ("arxiv:2401.01234", "https://arxiv.org/abs/2401.01234"), ("arxiv:hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001"),
    ("arxiv:../../evil", None), ("pmid:0123", None), ("pmid:12", "https://pubmed.ncbi.nlm.nih.gov/12/"),
    ("openalex:W42", "https://openalex.org/W42"), ("openalex:https://evil.example", None),
    ("javascript:alert(1)", None), ("https://evil.example/x", None), ("nothing", None)])
def test_paper_href(pid, url):
    got = paper_href([pid])
    assert (got.html if got else None) == url and (got is None or got.md == got.html)


def test_week_dates_across_months_and_years():
    assert week_dates("2026-W20") == "11–17 May 2026"
    assert week_dates("2026-W18") == "27 Apr – 3 May 2026"
    assert week_dates("2026-W53") == "28 Dec 2026 – 3 Jan 2027"


def test_hostile_data_is_inert_in_html(site):
    for name in ("digest/2026-W20.html", "digest/index.html", "index.html"):
        text = (site["site"] / name).read_text(encoding="utf-8")
        tree = parse_html(text)
        assert len(tree.find_all("script")) == 1, f"{name}: only the site's own sort script"
        assert not tree.find_all("b") and not tree.find_all("i"), f"{name}: markup from the data became an element"
        for node in tree.iter():
            for c in node.children:
                if isinstance(c, str) and "\u202e" in c:
                    assert any(p.tag == "bdi" for p in _ancestors(node)), f"{name}: a bidi control outside <bdi>"
    page = (site["site"] / "digest/2026-W20.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in page
    tree = parse_html(page)
    titles = [li.find("p").find("bdi").text() for li in _papers(tree.find("section", id="kept"))]
    assert titles == HOSTILE[:3]
    assert tree.find("section", id="kept").find("li").find("p").find("a").attrs["href"].startswith("https://doi.org/")


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def test_every_chart_number_equals_the_table_beside_it(site):
    tree = _page(site, "digest/2026-W20.html")
    svgs = tree.find_all("svg")
    assert len(svgs) == 1
    svg = svgs[0]
    assert svg.find("title").text() == "Papers per score band, 2026-W20" and svg.find("desc").text()
    table = tree.find("table", id=svg.attrs["data-table"])
    cells = {td.attrs["data-key"]: td.text() for td in table.find_all("td")}
    numbers = {t.attrs["data-key"]: _own_text(t) for t in svg.find_all("text") if "data-key" in t.attrs}
    assert set(numbers) == {f"h-{i}" for i in range(10)} | {"t-keep", "t-review"}
    assert numbers == {k: cells[k] for k in numbers}
    hist = site["doc"]["calibration"]["histogram"]
    assert [int(cells[f"h-{i}"]) for i in range(10)] == hist and (cells["t-keep"], cells["t-review"]) == ("70", "50")
    assert sum(hist) == len(site["doc"]["decisions"])


def _own_text(node) -> str:
    return "".join(c for c in node.children if isinstance(c, str))


def _md_tokens(text: str):
    parser = MarkdownIt("commonmark").enable("table")
    return parser.parse(text)


def test_the_markdown_twin_reads_the_keep_list_first_and_keeps_data_as_text(site):
    text = (site["site"] / "digest/2026-W20.md").read_text(encoding="utf-8")
    tokens = _md_tokens(text)
    assert not any(t.type in ("html_block", "html_inline", "table_open") for t in tokens)
    assert not any(c.type == "html_inline" for t in tokens for c in (t.children or []))
    # The first list of the page is the KEEP list: each item's link is the paper's page, in the KEEP order.
    first_list = next(i for i, t in enumerate(tokens) if t.type == "bullet_list_open")
    headings = [tokens[i + 1].content for i, t in enumerate(tokens[:first_list]) if t.type == "heading_open"]
    assert headings == ["Weekly digest 2026-W20", "Kept: 3"]
    items, depth, hrefs = 0, 0, []
    for t in tokens[first_list:]:
        depth += t.nesting if t.type.endswith("list_open") or t.type.endswith("list_close") else 0
        if depth == 0:
            break
        if t.type == "list_item_open" and depth == 1:
            items += 1
        if t.type == "inline" and depth == 1:
            hrefs += [c.attrs["href"] for c in t.children if c.type == "link_open"]
    assert items == 3
    assert hrefs == ["https://doi.org/10.5555/keep.1", "https://arxiv.org/abs/2605.01234",
                     "https://pubmed.ncbi.nlm.nih.gov/90000012/"]
    links = [c.attrs["href"] for t in tokens for c in (t.children or []) if c.type == "link_open"]
    assert not any("evil" in unquote(h) for h in links), links
    # The hostile title is one line of literal text, read back as written (bidi controls dropped).
    inline = [t.content for t in tokens if t.type == "inline"]
    assert any("\\<script\\>alert('title')\\</script\\>" in c for c in inline)
    assert "evil reversed title" in text and "\u202e" not in text
    # Authors and abstracts are data like titles: each reads back as written, markup and all.
    texts = {"".join(c.content for c in t.children if c.type == "text").replace("\u2060", "") for t in tokens
             if t.type == "inline"}
    bidi = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e"))
    assert "Abstract: " + HOSTILE_ABSTRACT.translate(bidi).strip() in texts
    assert any(authors_line(HOSTILE_AUTHORS).translate(bidi) in t for t in texts)
    assert max(len(line) for line in text.splitlines() if "](" not in line and "Why:" not in line
               and "Graph:" not in line and "DROP (" not in line and "sha256" not in line
               and "Abstract:" not in line) < 300


def test_the_week_index_lists_every_week_newest_first(site):
    tree = _page(site, "digest/index.html")
    rows = tree.find("table", id="week-table").find("tbody").find_all("tr")
    assert [r.find("a").text() for r in rows] == ["2026-W20", "2026-W19"]
    cells = {td.attrs["data-key"]: td.text() for td in tree.find_all("td") if "data-key" in td.attrs}
    doc = site["doc"]
    assert (cells["2026-W20-kept"], cells["2026-W20-review"], cells["2026-W20-dropped"]) == tuple(
        str(sum(d["decision"] == k for d in doc["decisions"])) for k in ("KEEP", "REVIEW", "DROP"))
    assert tree.find("a", href="feed.xml")
    md = (site["site"] / "digest/index.md").read_text(encoding="utf-8")
    assert md.index("[2026-W20](2026-W20.md)") < md.index("[2026-W19](2026-W19.md)")


def test_the_home_page_shows_the_latest_week(site):
    tree = _page(site, "index.html")
    digest = tree.find("section", id="digest")
    assert digest.find("a").attrs["href"] == "digest/2026-W20.html"
    cells = {n.attrs["data-key"]: n.text() for n in digest.find_all("strong")}
    assert cells == {f"digest-{name}": str(sum(d["decision"] == k for d in site["doc"]["decisions"]))
                     for name, k in (("kept", "KEEP"), ("review", "REVIEW"), ("dropped", "DROP"))}
    keeps = digest.find("ol", id="digest-keeps").find_all("a")
    assert [a.find("bdi").text() for a in keeps] == HOSTILE[:3]
    assert all(a.attrs["href"].startswith("digest/2026-W20.html#p-") for a in keeps)
    assert "No weekly digest" not in digest.text()
    # The rest of the home page is as it was: the latest release and the archive.
    assert tree.find("section", id="latest").find("table") and tree.find("section", id="archive")
    md = (site["site"] / "index.md").read_text(encoding="utf-8")
    assert "[Week 2026-W20](digest/2026-W20.md)" in md and "[Atom feed](digest/feed.xml)" in md


def test_every_digest_link_resolves(site):
    root = site["site"].resolve()
    for page in sorted((root / "digest").glob("*.html")) + [root / "index.html"]:
        tree = parse_html(page.read_text(encoding="utf-8"))
        ids = {n.attrs["id"] for n in tree.iter() if "id" in n.attrs}
        for a in tree.find_all("a"):
            href = a.attrs["href"]
            if href.startswith("https://"):
                continue
            path, _, frag = href.partition("#")
            target = (page.parent / unquote(path)).resolve() if path else page
            assert target.is_file() and root in target.parents, f"{page.name}: {href}"
            if frag and target == page:
                assert frag in ids, f"{page.name}: #{frag}"
            elif frag:
                other = {n.attrs["id"] for n in parse_html(target.read_text()).iter() if "id" in n.attrs}
                assert frag in other, f"{page.name}: {href}"


# --- a week of 2,000 papers ------------------------------------------------------------------------------

KB = 1024


@pytest.fixture(scope="module")
def big_week(tmp_path_factory):
    """A generated week shaped like the real 2026-W22 the issue measured (2,000 papers: 25 kept, about 300 for
    review, most over the cap or rescued, the rest dropped), decided by `reporter digest`, and its rendered site."""
    root = tmp_path_factory.mktemp("big_week")
    archive = two_thousand_paper_week(root / "week", **LIKE_W22)
    render_site(root / "none", root / "site", digests_dir=archive, progress=False)
    doc = json.loads((archive / "2026-W20" / "decisions.json").read_text(encoding="utf-8"))
    return {"site": root / "site", "doc": doc}


def test_a_week_of_2000_papers_renders_under_500_kb_of_html_and_400_kb_of_markdown(big_week, capsys):
    doc, site = big_week["doc"], big_week["site"]
    cal = doc["calibration"]
    assert len(doc["decisions"]) == 2_000 and cal["kept"] == 25 and cal["review"] > 250 and cal["demoted_for_cap"]
    html = (site / "digest" / "2026-W20.html").read_bytes()
    md = (site / "digest" / "2026-W20.md").read_bytes()
    with capsys.disabled():
        print(f"\n2,000-paper week ({cal['kept']} kept, {cal['review']} for review, {cal['dropped']} dropped): "
              f"HTML {len(html):,} bytes, Markdown {len(md):,} bytes")
    assert len(html) < 500 * KB and len(md) < 400 * KB
    # With the close-in-meaning list (issue 33, item 2) at its longest.
    assert len(doc["close_in_meaning"]) == 5 and html.count(b'<li data-id="') == 5
    # Still every paper: each KEEP and REVIEW with its anchor, each DROP's title under its rationale.
    tree = parse_html(html.decode("utf-8"))
    anchors = {n.attrs["id"] for n in tree.iter() if "id" in n.attrs}
    assert all(paper_anchor(d["id"]) in anchors for d in doc["decisions"] if d["decision"] != "DROP")
    rows = [li.find("bdi").text() for ul in tree.find_all("ul", class_="rows") for li in ul.find_all("li")]
    assert sorted(rows) == sorted(d["title"] for d in doc["decisions"] if d["decision"] == "DROP")
    whys = [p.find("bdi").text() for p in tree.find_all("p", class_="why")]
    assert len(whys) == len(set(whys)) == len({(d["cause"], d["rationale"]) for d in doc["decisions"] if d["cause"]})


def test_the_ranks_shown_are_the_ranks_the_rationales_state(big_week):
    """cap_ranks reads each rank from the order of decisions.json; `reporter digest` wrote it in the rationale."""
    decisions = tuple(Decision.from_json(d) for d in big_week["doc"]["decisions"])
    ranks = cap_ranks(decisions)
    stated = {}
    for d in decisions:
        m = re.search(r"\brank (\d+) of (\d+) by score", d.rationale)
        if m:
            stated[d.id] = f"rank {m[1]} of {m[2]}"
    assert len(stated) == big_week["doc"]["calibration"]["kept"] + big_week["doc"]["calibration"]["demoted_for_cap"]
    assert ranks == stated


# --- the feed ------------------------------------------------------------------------------------------


def test_the_feed_is_valid_atom_with_one_entry_per_week(site, archive):
    raw = (site["site"] / "digest/feed.xml").read_bytes()
    assert raw.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    feed = ET.fromstring(raw)
    assert feed.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated"):
        assert feed.find(f"{ATOM}{name}").text, name
    assert feed.find(f"{ATOM}author/{ATOM}name").text == "reporter"
    assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", feed.find(f"{ATOM}id").text)
    entries = feed.findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}link").get("href") for e in entries] == [
        "2026-W20.html", "2026-W19.html"]
    assert feed.find(f"{ATOM}updated").text == "2026-05-17T00:00:00Z"
    ids = []
    for entry, (week, sunday) in zip(entries, [("2026-W20", "2026-05-17"), ("2026-W19", "2026-05-10")]):
        for name in ("id", "title", "updated", "summary"):
            assert entry.find(f"{ATOM}{name}").text, name
        assert entry.find(f"{ATOM}updated").text == f"{sunday}T00:00:00Z"
        assert week in entry.find(f"{ATOM}title").text
        ids.append(entry.find(f"{ATOM}id").text)
        content = entry.find(f"{ATOM}content")
        assert content.get("type") == "html"
        html = parse_html(content.text)
        assert not html.find_all("script") and not html.find_all("b")
        doc = json.loads((archive / week / "decisions.json").read_text())
        keeps = [d for d in doc["decisions"] if d["decision"] == "KEEP"]
        assert [li.find("bdi").text() for li in html.find_all("li")] == [d["title"] for d in keeps]
    assert len(set(ids)) == 2 and all(re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", i) for i in ids)
    assert "&amp;lt;script&amp;gt;" in raw.decode() and "<script>" not in raw.decode()  # escaped HTML, escaped again


def test_each_feed_entry_gives_the_keeps_with_their_authors_and_the_start_of_their_abstracts(site):
    feed = ET.fromstring((site["site"] / "digest/feed.xml").read_bytes())
    entry = next(e for e in feed.findall(f"{ATOM}entry") if "2026-W20" in e.find(f"{ATOM}title").text)
    keeps = parse_html(entry.find(f"{ATOM}content").text).find_all("li")
    texts = [[b.text() for b in li.find_all("bdi")] for li in keeps]
    assert texts[0][:3] == [HOSTILE[0], authors_line(HOSTILE_AUTHORS), snippet(HOSTILE_ABSTRACT)]
    assert texts[1][2] == HOSTILE[7], "a short abstract whole"
    assert texts[2] == [HOSTILE[2], "pmid:90000012", HOSTILE[3]], "no authors, no abstract: neither line"
    assert not any(li.find_all("script") or li.find_all("b") for li in keeps)


def test_a_feed_reader_reads_the_feed(site):
    """feedparser (the test extra) as a reader would: Atom 1.0, each week's title, page, date and KEEPs."""
    feedparser = pytest.importorskip("feedparser", reason="pip install -e '.[test]' installs feedparser")
    parsed = feedparser.parse((site["site"] / "digest/feed.xml").read_bytes(),
                              response_headers={"content-location": "https://example.org/site/digest/feed.xml",
                                                "content-type": "application/atom+xml"})
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10" and parsed.feed.author == "reporter" and len(parsed.entries) == 2
    assert [e.title for e in parsed.entries] == ["Weekly digest 2026-W20: 3 kept", "Weekly digest 2026-W19: 3 kept"]
    assert [e.link for e in parsed.entries] == ["https://example.org/site/digest/2026-W20.html",
                                                "https://example.org/site/digest/2026-W19.html"]
    assert [tuple(e.updated_parsed[:3]) for e in parsed.entries] == [(2026, 5, 17), (2026, 5, 10)]
    content = parsed.entries[0].content[0]
    assert content.type == "text/html"
    assert "https://doi.org/10.5555/keep.1" in content.value and "<script>" not in content.value


def test_feed_ids_follow_the_decisions(archive, tmp_path):
    copy = tmp_path / "digests"
    shutil.copytree(archive, copy)
    render_site(tmp_path / "none", tmp_path / "a", digests_dir=copy, progress=False)
    doc = json.loads((copy / "2026-W20" / "decisions.json").read_text())
    doc["decisions"][0]["rationale"] = "re-published with another rationale"
    (copy / "2026-W20" / "decisions.json").write_text(json.dumps(doc))
    render_site(tmp_path / "none", tmp_path / "b", digests_dir=copy, progress=False)

    def entry_ids(site):
        feed = ET.parse(site / "digest" / "feed.xml").getroot()
        return [e.find(f"{ATOM}id").text for e in feed.findall(f"{ATOM}entry")]

    a, b = entry_ids(tmp_path / "a"), entry_ids(tmp_path / "b")
    assert a[1] == b[1] and a[0] != b[0], "a re-published week is a new entry; the others keep their ids"
    assert ET.parse(tmp_path / "a" / "digest" / "feed.xml").getroot().find(f"{ATOM}id").text == \
        ET.parse(tmp_path / "b" / "digest" / "feed.xml").getroot().find(f"{ATOM}id").text


# --- archive and re-render -----------------------------------------------------------------------------


def test_rerendering_an_unchanged_archive_changes_no_byte(site, archive, tmp_path):
    again = render_site(site["releases"], site["site"], digests_dir=archive, progress=False)
    assert again.written == 0 and again.digests == 2
    fresh = render_site(site["releases"], tmp_path / "fresh", digests_dir=archive, progress=False)
    assert fresh.pages == again.pages
    for path in sorted((tmp_path / "fresh").rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (site["site"] / path.relative_to(tmp_path / "fresh")).read_bytes(), path
    manifest = json.loads((site["site"] / "manifest.json").read_text())
    assert manifest["files"]["digest/2026-W20.html"]["archived"] is True
    assert manifest["files"]["digest/index.html"]["archived"] is False
    assert manifest["files"]["digest/feed.xml"]["archived"] is False


def test_a_changed_template_refuses_to_rewrite_an_archived_week(archive, tmp_path, monkeypatch):
    releases = tmp_path / "none"
    render_site(releases, tmp_path / "site", digests_dir=archive, progress=False)
    before = {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()}
    original = render.render_html

    def changed(page):
        out = original(page)
        return out.replace("</main>", "<p>a new template</p></main>") if isinstance(page, DigestWeekPage) else out

    monkeypatch.setattr(render, "render_html", changed)
    with pytest.raises(InputError, match=r"2 archived pages would change: digest/2026-W19.html, digest/2026-W20.html"):
        render_site(releases, tmp_path / "site", digests_dir=archive, progress=False)
    assert {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()} == before
    report = render_site(releases, tmp_path / "site", digests_dir=archive, progress=False, rerender_archive=True)
    assert len(report.superseded) == 2 and all(s.startswith("digest/2026-W") for s in report.superseded)
    assert "a new template" in (tmp_path / "site" / "digest" / "2026-W20.html").read_text()


def test_week_pages_an_earlier_site_version_archived_stay_as_published(archive, tmp_path, monkeypatch):
    """A new week page layout is a new site version (the grouped page is 4, "Listed again" 5): weeks published
    before it keep their pages byte for byte, new weeks get the new page, and --rerender-archive rewrites the old
    ones (keeping each beside)."""
    from reporter.site import writer

    releases, site = tmp_path / "none", tmp_path / "site"
    original = render.render_html

    def old_layout(page):
        out = original(page)
        return out.replace("</main>", "<p>the page before</p></main>") if isinstance(page, DigestWeekPage) else out

    assert writer.SITE_VERSION >= 5
    first = tmp_path / "first"
    shutil.copytree(archive / "2026-W19", first / "2026-W19")
    monkeypatch.setattr(writer, "SITE_VERSION", writer.SITE_VERSION - 1)
    monkeypatch.setattr(render, "render_html", old_layout)
    render_site(releases, site, digests_dir=first, progress=False)
    monkeypatch.undo()
    page = site / "digest" / "2026-W19.html"
    before = page.read_bytes()
    assert b"the page before" in before
    report = render_site(releases, site, digests_dir=archive, progress=False)
    assert "digest/2026-W19.html" in report.kept and page.read_bytes() == before
    assert b"the page before" not in (site / "digest" / "2026-W20.html").read_bytes(), "a new week: the new page"
    report = render_site(releases, site, digests_dir=archive, progress=False, rerender_archive=True)
    assert b"the page before" not in page.read_bytes() and report.kept == ()
    assert any(s.startswith("digest/2026-W19.superseded-") for s in report.superseded)


def test_a_calibration_that_disagrees_with_the_decisions_is_refused(tmp_path):
    doc = week_document("2026-W20", prior=())
    doc["calibration"]["kept"] += 1
    write_week(tmp_path / "digests", doc)
    with pytest.raises(InputError, match=r"decisions.json: the calibration .* disagrees"):
        render_site(tmp_path / "none", tmp_path / "site", digests_dir=tmp_path / "digests", progress=False)
    assert not (tmp_path / "site").exists()


def test_an_empty_archive_renders_no_digest(tmp_path):
    (tmp_path / "digests").mkdir()
    report = render_site(tmp_path / "none", tmp_path / "site", digests_dir=tmp_path / "digests", progress=False)
    assert report.digests == 0 and not (tmp_path / "site" / "digest").exists()
    assert "No weekly digest has been published yet." in (tmp_path / "site" / "index.html").read_text()


def test_render_command_renders_the_archive(site, archive, tmp_path, capsys):
    assert main(["render", "--releases", str(site["releases"]), "--digests", str(archive),
                 "--out", str(tmp_path / "out"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["digests"] == 2
    assert (tmp_path / "out" / "digest" / "2026-W19.md").exists() and (tmp_path / "out" / "digest" / "feed.xml").exists()
    assert main(["render", "--releases", str(site["releases"]), "--digests", str(archive),
                 "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "2 digest weeks" in out and "0 files written" in out


# --- the build ----------------------------------------------------------------------------------------


def _workspace(tmp_path: Path, weeks=("2026-W19", "2026-W20"), graph: bool = True) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    fixture = ROOT / "tests" / "fixtures" / "site_workspace"
    shutil.copy(fixture / "pool.jsonl", ws / "pool.jsonl")
    shutil.copytree(fixture / "specs", ws / "specs")
    shutil.copytree(ROOT / "examples" / "novelty", ws / "novelty")
    (ws / "digest" / "papers").mkdir(parents=True)
    for name in ("watchlist.txt", "criteria.md"):
        shutil.copy(EXAMPLE / name, ws / "digest" / name)
    for week in weeks:
        shutil.copy(EXAMPLE / "papers" / f"{week}.jsonl", ws / "digest" / "papers" / f"{week}.jsonl")
    (ws / "reporter.toml").write_text(
        'pool = "pool.jsonl"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n'
        + ('graph = "novelty/events.jsonl"\n' if graph else "")
        + '[digest]\npapers = "digest/papers"\nwatchlist = "digest/watchlist.txt"\n'
          'criteria = "digest/criteria.md"\narchive = "digests"\n')
    return ws


def test_a_build_runs_the_pending_weeks_in_order_and_the_home_page_shows_the_latest(tmp_path):
    ws = _workspace(tmp_path)
    report = build(load_workspace(ws), progress=False)
    assert report.digest == ("2026-W19", "2026-W20") and report.site.digests == 2
    for week in report.digest:
        assert (ws / "digests" / week / "decisions.json").is_file()
        assert (ws / "digests" / week / "novelty.jsonl").is_file()
    home = parse_html((ws / "site" / "index.html").read_text())
    digest = home.find("section", id="digest")
    assert digest.find("a").attrs["href"] == "digest/2026-W20.html" and "2026-W20" in digest.text()
    w20 = json.loads((ws / "digests" / "2026-W20" / "decisions.json").read_text())
    keeps = [d["title"] for d in w20["decisions"] if d["decision"] == "KEEP"]
    assert [a.find("bdi").text() for a in digest.find("ol", id="digest-keeps").find_all("a")] == keeps
    # W20's prior was W19, decided in the same build: the journal versions are tagged.
    assert w20["prior_weeks"] == ["2026-W19"]
    assert any("journal-version-of:2026-W19" in d["tags"] for d in w20["decisions"])
    # The graph's verdicts beside the KEEPs: pmid:90000004 is looked up by its preprint's DOI,
    # pmid:90000012 has no key to look it up by.
    page = parse_html((ws / "site" / "digest" / "2026-W20.html").read_text())
    keep = {li.find("a", **{"class": "id"}).text(): li for li in _papers(page.find("section", id="kept"))}
    assert keep["pmid:90000004"].find("dd", **{"data-verdict": "novel"})
    assert "not checked" in keep["pmid:90000012"].text()
    # The same again: nothing new to decide, no byte changed.
    before = {p: p.read_bytes() for sub in ("site", "digests") for p in (ws / sub).rglob("*") if p.is_file()}
    again = build(load_workspace(ws), progress=False)
    assert again.digest == () and again.site.written == 0
    assert {p: p.read_bytes() for sub in ("site", "digests") for p in (ws / sub).rglob("*") if p.is_file()} == before


def test_the_graph_check_never_changes_a_decision(tmp_path):
    ws = _workspace(tmp_path)
    build(load_workspace(ws), progress=False)
    settings = load_workspace(ws).digest
    alone = tmp_path / "alone"
    run_weeks(type(settings)(**{**settings.__dict__, "archive": alone}), ["2026-W19", "2026-W20"])
    for week in ("2026-W19", "2026-W20"):
        assert (ws / "digests" / week / "decisions.json").read_bytes() == (alone / week / "decisions.json").read_bytes()


def test_weeks_one_build_at_a_time_and_future_weeks_wait(tmp_path):
    ws = _workspace(tmp_path, weeks=("2026-W19",), graph=False)
    from datetime import date
    first = build(load_workspace(ws), progress=False, as_of=date(2026, 5, 11))
    assert first.digest == ("2026-W19",) and not (ws / "digests" / "2026-W19" / "novelty.jsonl").exists()
    shutil.copy(EXAMPLE / "papers" / "2026-W20.jsonl", ws / "digest" / "papers" / "2026-W20.jsonl")
    (ws / "digest" / "papers" / "2026-W21.jsonl").write_text("")
    second = build(load_workspace(ws), progress=False, as_of=date(2026, 5, 18))
    assert second.digest == ("2026-W20",) and second.digest_later == ("2026-W21",)
    assert json.loads((ws / "digests" / "2026-W20" / "decisions.json").read_text())["prior_weeks"] == ["2026-W19"]
    text = (ws / "site" / "digest" / "2026-W19.html").read_text()
    assert "published without one" in text
    index = parse_html((ws / "site" / "digest" / "index.html").read_text())
    assert [r.find("a").text() for r in index.find("tbody").find_all("tr")] == ["2026-W20", "2026-W19"]


def test_a_refused_build_publishes_no_week(tmp_path, capsys):
    ws = _workspace(tmp_path, weeks=("2026-W19",), graph=False)
    build(load_workspace(ws), progress=False)
    page = ws / "site" / "digest" / "2026-W19.html"
    page.write_text(page.read_text().replace("</body>", "<!-- tampered --></body>"))
    shutil.copy(EXAMPLE / "papers" / "2026-W20.jsonl", ws / "digest" / "papers" / "2026-W20.jsonl")
    assert main(["build", "--workspace", str(ws)]) == 2
    assert "digest/2026-W19.html" in capsys.readouterr().err
    assert not (ws / "digests" / "2026-W20").exists(), "the week is published only after the writer's checks"
    assert not (ws / "site" / "digest" / "2026-W20.html").exists()


def test_a_build_removes_the_temporaries_a_killed_run_left_in_the_archive(tmp_path):
    """A `.tmp-decisions.json.*` of a run killed while writing survived every later build (issue 21)."""
    import signal
    import subprocess
    import sys
    ws = _workspace(tmp_path, weeks=("2026-W19",), graph=False)
    build(load_workspace(ws), progress=False)
    code = ("import os, sys\nfrom reporter.files import atomic_path\nwith atomic_path(sys.argv[1]) as tmp:\n"
            "    tmp.write_bytes(b'x' * (2 << 20))\n    os.kill(os.getpid(), 9)\n")
    dead = subprocess.run([sys.executable, "-c", code, str(ws / "digests" / "2026-W20" / "decisions.json")])
    assert dead.returncode == -signal.SIGKILL and list((ws / "digests").rglob(".tmp-*"))
    shutil.copy(EXAMPLE / "papers" / "2026-W20.jsonl", ws / "digest" / "papers" / "2026-W20.jsonl")
    assert build(load_workspace(ws), progress=False).digest == ("2026-W20",)
    assert list((ws / "digests").rglob(".tmp-*")) == []


def test_the_example_week_lists_again_the_papers_its_prior_week_decided(tmp_path):
    """The example's real cs.GT weeks: 2606.19618 (a DROP in 2026-W25) is listed again in 2026-W26; its page and
    twin show it with that week's decision and a link to it, and do not decide it. (2606.19968, a REVIEW there
    under rules digest.3, is a KEEP since digest.4, so 2026-W26 decides it again: already covered.)"""
    example = ROOT / "examples" / "digest"
    archive = tmp_path / "digests"
    assert main(["digest", "--papers", str(example / "papers"), "--watchlist", str(example / "watchlist.txt"),
                 "--criteria", str(example / "criteria.md"), "--archive", str(archive),
                 "--from", "2026-W25", "--to", "2026-W26"]) == 0
    w25 = {d["id"]: d["decision"] for d in json.loads((archive / "2026-W25" / "decisions.json").read_text())["decisions"]}
    doc = json.loads((archive / "2026-W26" / "decisions.json").read_text())
    again = {a["id"]: (a["week"], a["decision"]) for a in doc["listed_again"]}
    assert again == {"arxiv:2606.19618": ("2026-W25", w25["arxiv:2606.19618"])}
    assert (w25["arxiv:2606.19618"], w25["arxiv:2606.19968"]) == ("DROP", "KEEP")
    assert not again.keys() & {d["id"] for d in doc["decisions"]}
    render_site(None, tmp_path / "site", digests_dir=archive, progress=False)
    tree = parse_html((tmp_path / "site" / "digest" / "2026-W26.html").read_text(encoding="utf-8"))
    section = tree.find(id="listed-again")
    assert section.find("h2").text() == "Listed again: 1"
    items = [li.text() for li in section.find_all("li")]
    assert items == ["arxiv:2606.19618: DROP in 2026-W25"]
    assert [a.attrs["href"] for a in section.find_all("a")] == ["https://arxiv.org/abs/2606.19618", "2026-W25.html"]
    md = (tmp_path / "site" / "digest" / "2026-W26.md").read_text(encoding="utf-8")
    assert "## Listed again: 1" in md and "): DROP in [2026-W25](2026-W25.md)" in md


def test_the_feed_counts_papers_for_review_and_links_absolutely_with_a_self_link(archive, tmp_path):
    """Issue 33, item 7: "for review" counted the page's groups, not its papers; the links were relative and the
    feed had no rel="self", so a reader given the feed alone had nothing to resolve them against."""
    from reporter.config import load_workspace
    doc = json.loads((archive / "2026-W20" / "decisions.json").read_text())
    reviews = sum(d["decision"] == "REVIEW" for d in doc["decisions"])
    (tmp_path / "reporter.toml").write_text('pool = "p.jsonl"\nspecs = "specs"\nreleases = "releases"\n'
                                            '[site]\npath = "site"\nbase_url = "https://example.org/d"\n')
    render_site(tmp_path / "none", tmp_path / "site", digests_dir=archive, progress=False,
                workspace=load_workspace(tmp_path))
    feed = ET.fromstring((tmp_path / "site" / "digest" / "feed.xml").read_bytes())
    links = {link.get("rel"): link.get("href") for link in feed.findall(f"{ATOM}link")}
    assert links == {"self": "https://example.org/d/digest/feed.xml",
                     "alternate": "https://example.org/d/digest/index.html"}
    entry = feed.find(f"{ATOM}entry")
    assert entry.find(f"{ATOM}link").get("href") == "https://example.org/d/digest/2026-W20.html"
    assert f", {reviews} for review, " in entry.find(f"{ATOM}summary").text and reviews == 10
    assert 'href="https://example.org/d/digest/2026-W20.html"' in entry.find(f"{ATOM}content").text
    # Without base_url: relative to the feed, self included.
    relative = ET.fromstring(render_feed_only(archive, tmp_path / "rel"))
    assert {link.get("rel"): link.get("href") for link in relative.findall(f"{ATOM}link")} == {
        "self": "feed.xml", "alternate": "index.html"}


def render_feed_only(archive, out):
    render_site(out / "none", out / "site", digests_dir=archive, progress=False)
    return (out / "site" / "digest" / "feed.xml").read_bytes()
