"""The built site in a real headless Chromium (Debian's package, driven by Playwright).

Opens the home page, a release page, a rule page, the release diff, the
status page and the novelty page (the fixture site rendered with novelty
results: the `novelty_site` fixture), and a digest week page, the week index
and the home page with its digest (hand-made weeks with hostile titles: the
`digest_site` fixture) from file:// and from a local HTTP server: no console errors, no failed or external requests, headings in
order, text contrast at WCAG AA, pile counts in the DOM equal to
rule_stats.json, verdict counts equal to the novelty results file, sortable
tables, no horizontal scroll at phone width. A screenshot of each page goes to
`screenshots/` in the folder named by REPORTER_TEST_ARTIFACTS when it is set (CI
can keep that folder), else in pytest's temporary folder
(/tmp/pytest-of-$USER/pytest-<n>/artifacts0/screenshots/), for a person to
look at; never into the source tree. Skips, saying why, only where Chromium or
Playwright is missing (.ci/run installs both).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from reporter.site.server import make_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES = ["home", "release", "rule", "diff", "status", "novelty"]

CONTRAST_JS = """() => {
  const parse = c => { const m = c && c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(parseFloat); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = el => { for (; el; el = el.parentElement) { const c = parse(getComputedStyle(el).backgroundColor);
    if (c && c.a > 0) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const bad = []; let checked = 0;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode; if (!node.textContent.trim()) continue;
    const el = node.parentElement; if (el.closest('title, desc')) continue;
    const cs = getComputedStyle(el); if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    const fg = parse(el.closest('svg') ? cs.fill : cs.color); const bg = background(el);
    const l1 = lum(fg), l2 = lum(bg); const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight) >= 700;
    const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5; checked++;
    if (ratio < need) bad.push(node.textContent.trim().slice(0, 40) + ' ' + ratio.toFixed(2));
  }
  return {bad, checked};
}"""

HEADINGS_JS = """() => Array.from(document.querySelectorAll('h1,h2,h3,h4,h5,h6')).map(h => Number(h.tagName[1]))"""


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium: apt-get install -y chromium (Debian's package)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed: pip install -e '.[test]'")
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        except Exception as exc:  # a broken install: say why and skip rather than hang
            pytest.skip(f"/usr/bin/chromium did not start: {exc}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def screenshots(artifacts):
    """The folder the screenshots go to (see the module docstring)."""
    folder = artifacts / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _serve(folder: Path):
    """Serve a site folder on an ephemeral port for the duration of a fixture; yields its base URL."""
    server = make_server(folder, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def http_base(novelty_site):
    yield from _serve(novelty_site["site"])


def _path(novelty_site, name: str) -> str:
    latest = novelty_site["ids"][-1]
    return {"home": "index.html", "release": f"releases/{latest}/index.html",
            "rule": f"releases/{latest}/rules/replication-text.html",
            "diff": f"releases/{latest}/diff.html", "status": f"releases/{latest}/status.html",
            "novelty": "novelty.html"}[name]


class Visit:
    """A page opened in a fresh context, with everything it logged and requested."""

    def __init__(self, browser, url: str, base: str, width: int = 1100):
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.errors, self.failed, self.external = [], [], []
        self.page.on("console", lambda m: m.type in ("error", "warning") and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.failed.append(r.url))
        self.page.on("request", lambda r: r.url.startswith((base, "data:")) or self.external.append(r.url))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        self.page.goto(url, wait_until="load")

    def assert_clean(self):
        """No console errors, no failed or external requests, one h1 and no skipped heading level, contrast."""
        assert self.errors == [], f"console errors: {self.errors}"
        assert self.failed == [], f"failed requests: {self.failed}"
        assert self.external == [], f"requests outside the site: {self.external}"
        levels = self.page.evaluate(HEADINGS_JS)
        assert levels[0] == 1 and levels.count(1) == 1
        assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), f"headings skip a level: {levels}"
        contrast = self.page.evaluate(CONTRAST_JS)
        assert contrast["checked"] > 10 and contrast["bad"] == [], contrast["bad"]

    def close(self):
        self.context.close()


@pytest.fixture(params=["file", "http"])
def base(request, novelty_site):
    if request.param == "file":
        return novelty_site["site"].resolve().as_uri() + "/"
    return request.getfixturevalue("http_base")


@pytest.mark.parametrize("name", PAGES)
def test_page_opens_cleanly(browser, novelty_site, base, name, screenshots):
    visit = Visit(browser, base + _path(novelty_site, name), base)
    try:
        page = visit.page
        visit.assert_clean()
        # the novelty page has no sortable table: candidates are never re-ordered by anything
        assert page.locator("button.sort").count() > 0 or name in ("status", "novelty"), "the sort script ran"
        page.screenshot(path=str(screenshots / f"{name}-{'file' if base.startswith('file') else 'http'}.png"),
                        full_page=True)
    finally:
        visit.close()


def test_pile_counts_in_the_dom_equal_rule_stats(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    for rid in novelty_site["ids"]:
        stats = json.loads((novelty_site["releases"] / rid / "rule_stats.json").read_text())
        visit = Visit(browser, base + f"releases/{rid}/index.html", base)
        try:
            shown = visit.page.evaluate(
                "() => Object.fromEntries(Array.from(document.querySelectorAll('td[data-pile]'))"
                ".map(td => [td.dataset.pile, Number(td.innerText.replace(/,/g, ''))]))")
            assert {p: shown[p] for p in stats["piles"]} == stats["piles"]
            assert {r: shown[f"pending/{r}"] for r in stats["pending"]} == stats["pending"]
            assert visit.page.locator("[data-key=rows]").inner_text().replace(",", "") == str(stats["rows"])
        finally:
            visit.close()
    visit = Visit(browser, base + "index.html", base)
    try:
        latest = json.loads((novelty_site["releases"] / novelty_site["ids"][-1] / "rule_stats.json").read_text())
        home = visit.page.evaluate(
            "() => Object.fromEntries(Array.from(document.querySelectorAll('#latest-table td[data-pile]'))"
            ".map(td => [td.dataset.pile, Number(td.innerText.replace(/,/g, ''))]))")
        assert home == latest["piles"]
    finally:
        visit.close()


def test_clicking_a_header_sorts_the_table(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    visit = Visit(browser, base + _path(novelty_site, "release"), base)
    try:
        page = visit.page
        column = "() => Array.from(document.querySelectorAll('#rule-table tbody td[data-key$=\"-matched\"]'))" \
                 ".map(td => Number(td.innerText.replace(/,/g, '')))"
        original = page.evaluate(column)
        assert len(original) > 3
        header = page.locator("#rule-table thead th").nth(1)  # counts first: won, matched, ...
        header.locator("button").click()
        assert page.evaluate(column) == sorted(original)
        assert header.get_attribute("aria-sort") == "ascending"
        header.locator("button").click()
        assert page.evaluate(column) == sorted(original, reverse=True)
        assert header.get_attribute("aria-sort") == "descending"
        page.locator("#rule-table thead th").nth(5).locator("button").click()  # the rule id
        names = page.evaluate("() => Array.from(document.querySelectorAll('#rule-table tbody th a'))"
                              ".map(a => a.innerText)")
        assert names == sorted(names, key=str.lower)
    finally:
        visit.close()


PHONE_PX = 390
"""A phone's width in CSS pixels (the issue's stakeholder read the pages at 390 px)."""

WIDE_TABLES_JS = """() => Array.from(document.querySelectorAll('.table-wrap')).filter(w =>
  w.scrollWidth > w.clientWidth + 1).map(w => {
  const first = w.querySelector('tbody tr > :first-child') || w.querySelector('tr > :first-child');
  const hint = w.previousElementSibling;
  const before = first.getBoundingClientRect().left - w.getBoundingClientRect().left;
  w.scrollLeft = w.scrollWidth;
  const after = first.getBoundingClientRect().left - w.getBoundingClientRect().left;
  w.scrollLeft = 0;
  return {table: (w.querySelector('table') || {}).id || w.getAttribute('aria-label'),
          sticky: getComputedStyle(first).position, stays: Math.abs(after - before) < 1,
          hint: !!hint && hint.className === 'scroll-hint' && hint.offsetHeight > 0 ? hint.textContent : null,
          shadow: getComputedStyle(w).backgroundImage.includes('radial-gradient')};
})"""


def _no_sideways_scroll(browser, site: Path, path: str, name: str, screenshots: Path) -> None:
    """The page at 390 px is no wider than the window; a table that is scrolls inside its box with its first
    column fixed, a line above it saying so and a shadow at its edge (a screenshot goes to `screenshots`)."""
    base = site.resolve().as_uri() + "/"
    visit = Visit(browser, base + path, base, width=PHONE_PX)
    try:
        widths = visit.page.evaluate("() => [document.documentElement.scrollWidth, "
                                     "document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"{name}: the page scrolls sideways at {PHONE_PX} px ({widths})"
        for wide in visit.page.evaluate(WIDE_TABLES_JS):
            assert wide["sticky"] == "sticky" and wide["stays"], f"{name}: the first column scrolls away: {wide}"
            assert wide["hint"] and "scroll" in wide["hint"] and wide["shadow"], f"{name}: no scroll cue: {wide}"
        visit.page.screenshot(path=str(screenshots / f"{name}-{PHONE_PX}.png"), full_page=True)
    finally:
        visit.close()


@pytest.mark.parametrize("name", ["home", "release", "rule", "diff", "status", "novelty"])
def test_phone_width_has_no_horizontal_scroll(browser, novelty_site, name, screenshots):
    _no_sideways_scroll(browser, novelty_site["site"], _path(novelty_site, name), name, screenshots)


TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(t => {
  const box = t.closest('.table-wrap') || t.parentElement;
  return {id: t.id || t.className, width: Math.ceil(t.getBoundingClientRect().width), room: box.clientWidth,
          scrolls: box.scrollWidth > box.clientWidth};
})"""


def _site_page(request, name: str) -> tuple[Path, str]:
    """The site folder and path of a page by name: the fixture site's pages, or the digest site's week page."""
    if name in DIGEST_PAGES:
        return request.getfixturevalue("digest_site"), DIGEST_PAGES[name]
    novelty_site = request.getfixturevalue("novelty_site")
    return novelty_site["site"], _path(novelty_site, name)


@pytest.mark.parametrize("name", ["home", "release", "rule", "diff", "status", "digest-week"])
def test_at_1280_px_no_table_scrolls_and_every_count_is_on_screen(browser, request, name, screenshots):
    """The issue's report: domain-miss counts sat off-screen at 1280 px. Counts come first and every table fits."""
    site, path = _site_page(request, name)
    base = site.resolve().as_uri() + "/"
    visit = Visit(browser, base + path, base, width=1280)
    try:
        page = visit.page
        widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"{name} scrolls sideways at 1280 px: {widths}"
        tables = page.evaluate(TABLES_JS)
        assert tables and [t for t in tables if t["scrolls"]] == [], tables
        off = page.evaluate("() => Array.from(document.querySelectorAll('td.n')).filter(td => "
                            "td.getBoundingClientRect().right > document.documentElement.clientWidth).length")
        assert off == 0
        page.screenshot(path=str(screenshots / f"{name}-1280.png"), full_page=True)
    finally:
        visit.close()


A4_PX = 704
"""A4 (210 mm) less the print stylesheet's 12 mm margins, at 96 px per inch."""


SPLIT_WORDS_JS = """() => { const found = [];
  for (const cell of document.querySelectorAll('th, td')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const node = walk.currentNode;
      if (node.parentElement.closest('code, .id')) continue;  // ids and hashes may break anywhere
      const words = /[\\p{L}\\p{N}]{2,}/gu; let m;  // letters and digits: a break after a hyphen is fine
      while ((m = words.exec(node.textContent))) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
        if (lines.size > 1) found.push([cell, node.parentElement, m[0]]);
      } } }
  // A word split across lines is a fault only where it would have fitted the cell's width whole.
  return found.filter(([cell, parent, word]) => {
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
    probe.textContent = word; parent.appendChild(probe);
    const width = probe.getBoundingClientRect().width; probe.remove();
    const cs = getComputedStyle(cell);
    return width <= cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  }).map(([cell, parent, word]) => word); }"""


@pytest.mark.parametrize("name", ["home", "release", "rule", "diff", "status", "digest-week"])
def test_printed_to_a4_no_table_is_clipped(browser, request, name, screenshots):
    """Print media at the width of an A4 page: every table fits its page, no word in a table is split across
    lines ("befor e"), nothing hides, the PDF renders."""
    site, path = _site_page(request, name)
    base = site.resolve().as_uri() + "/"
    visit = Visit(browser, base + path, base, width=A4_PX)
    try:
        page = visit.page
        page.emulate_media(media="print")
        tables = page.evaluate(TABLES_JS)
        assert tables and [t for t in tables if t["scrolls"] or t["width"] > A4_PX] == [], tables
        assert page.evaluate("() => document.documentElement.scrollWidth") <= A4_PX
        hidden = page.evaluate("() => Array.from(document.querySelectorAll('.table-wrap, figure.chart'))"
                               ".filter(e => getComputedStyle(e).overflowX !== 'visible').length")
        assert hidden == 0, "a box that would clip its table on paper"
        assert page.evaluate(SPLIT_WORDS_JS) == [], "words split across lines in a printed table"
        page.screenshot(path=str(screenshots / f"{name}-print.png"), full_page=True)
        pdf = page.pdf(format="A4", margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"})
        assert pdf.startswith(b"%PDF")
        (screenshots / f"{name}-print.pdf").write_bytes(pdf)
    finally:
        visit.close()


def test_the_filter_narrows_a_table_and_without_script_the_table_is_whole(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    url = base + _path(novelty_site, "release")
    visit = Visit(browser, url, base)
    try:
        page = visit.page
        rows = page.locator("#rule-table tbody tr")
        total = rows.count()
        box = page.locator("#rules .filter input")
        assert box.count() == 1 and page.get_by_label("Filter rows").first.is_visible()
        box.fill("osf")
        visible = page.evaluate("() => Array.from(document.querySelectorAll('#rule-table tbody tr'))"
                                ".filter(tr => !tr.hidden).map(tr => tr.textContent)")
        assert 0 < len(visible) < total and all("osf" in text.lower() for text in visible)
        assert page.locator("#rules .filter .muted").inner_text() == f"{len(visible)} of {total} rows"
        box.fill("")
        assert page.evaluate("() => Array.from(document.querySelectorAll('#rule-table tbody tr'))"
                             ".filter(tr => tr.hidden).length") == 0
    finally:
        visit.close()
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(url)
        assert page.locator(".filter").count() == 0 and page.locator("#rule-table tbody tr").count() == total
    finally:
        context.close()


def test_the_flow_diagram_shows_the_numbers_of_its_table(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    for name in ("release", "status"):
        visit = Visit(browser, base + _path(novelty_site, name), base)
        try:
            drawn = visit.page.evaluate(
                "() => Object.fromEntries(Array.from(document.querySelectorAll('figure.flow text[data-key]'))"
                ".map(t => [t.dataset.key, t.textContent]))")
            table = visit.page.evaluate(
                "() => Object.fromEntries(Array.from(document.querySelectorAll('table.flow td[data-key]'))"
                ".map(td => [td.dataset.key, td.textContent.trim()]))")  # folded on the status page: not rendered
            assert drawn and drawn == table
            # Both layouts (two columns, and stacked for a phone) draw the same numbers.
            for layout in ("svg.wide", "svg.narrow"):
                assert visit.page.evaluate(
                    f"() => Object.fromEntries(Array.from(document.querySelectorAll('figure.flow {layout} "
                    f"text[data-key]')).map(t => [t.dataset.key, t.textContent]))") == table
            assert visit.page.locator("figure.flow").is_visible()
        finally:
            visit.close()


def test_visible_verdict_counts_equal_the_results_file(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    lines = [json.loads(x) for x in novelty_site["novelty"].read_text().splitlines() if x.strip()]
    want = {v: sum(line["result"]["verdict"] == v for line in lines)
            for v in ("duplicate", "neighborhood", "novel", "unknown")}
    visit = Visit(browser, base + "novelty.html", base)
    try:
        page = visit.page
        shown = page.evaluate(
            "() => Object.fromEntries(Array.from(document.querySelectorAll('#verdict-table td[data-key]'))"
            ".filter(td => td.offsetParent !== null).map(td => [td.dataset.key, Number(td.innerText)]))")
        assert shown == {f"v-{v}": n for v, n in want.items()}
        rows = page.evaluate(
            "() => Array.from(document.querySelectorAll('#candidate-table tbody tr'))"
            ".map(tr => [tr.id, tr.querySelector('td[data-verdict]').innerText.split('\\n')[0]])")
        assert [verdict for _id, verdict in rows] == [line["result"]["verdict"] for line in lines]
        assert page.locator("#candidate-table a.id").first.inner_text() == "<script>alert('id')</script>"
        assert page.locator("#not-a-ranker").is_visible()
    finally:
        visit.close()
    visit = Visit(browser, base + "index.html", base)
    try:
        visit.page.locator("#novelty a").click()
        visit.page.wait_for_load_state("load")
        assert visit.page.url.endswith("/novelty.html") and visit.errors == []
    finally:
        visit.close()


# --- the digest pages -------------------------------------------------------


@pytest.fixture(scope="module")
def digest_site(site_build, tmp_path_factory):
    """site_build's releases rendered with two hand-made digest weeks (hostile titles, graph verdicts)."""
    from support.digest import graph_rows, week_document, write_week

    from reporter.build import render_site

    root = tmp_path_factory.mktemp("digest_browser")
    write_week(root / "digests", week_document("2026-W19", hostile=False, prior=()))
    doc = week_document("2026-W20")
    write_week(root / "digests", doc, graph_rows(doc))
    render_site(site_build["releases"], root / "site", digests_dir=root / "digests", progress=False)
    return root / "site"


DIGEST_PAGES = {"digest-week": "digest/2026-W20.html", "digest-index": "digest/index.html",
                "digest-home": "index.html"}


@pytest.fixture(params=["file", "http"])
def digest_base(request, digest_site):
    if request.param == "file":
        yield digest_site.resolve().as_uri() + "/"
    else:
        yield from _serve(digest_site)


@pytest.mark.parametrize("name", sorted(DIGEST_PAGES))
def test_digest_pages_open_cleanly(browser, digest_base, name, screenshots):
    base = digest_base
    visit = Visit(browser, base + DIGEST_PAGES[name], base)
    try:
        page = visit.page
        visit.assert_clean()
        assert page.evaluate("() => document.querySelectorAll('script').length") == 1, "only the site's script"
        if name == "digest-week":
            keeps = page.evaluate("() => Array.from(document.querySelectorAll('#keep-list > li > p.paper bdi'))"
                                  ".map(b => b.textContent)")
            assert keeps[0] == "<script>alert('title')</script>", keeps
            histogram = page.evaluate(
                "() => Array.from(document.querySelectorAll('#histogram text[data-key]'))"
                ".map(t => [t.dataset.key, t.childNodes[t.childNodes.length - 1].textContent])")
            cells = page.evaluate(
                "() => Object.fromEntries(Array.from(document.querySelectorAll('#histogram-table td[data-key]'))"
                ".map(td => [td.dataset.key, td.innerText]))")
            assert histogram and all(cells[k] == v for k, v in histogram)
            # The whole abstract is one click away, no script needed: the snippet is the summary until it opens.
            page.click("#keep-list details.abstract > summary")
            opened = page.evaluate("() => { const d = document.querySelector('#keep-list details.abstract');"
                                   " return [d.open, d.querySelector('p').getBoundingClientRect().height > 0,"
                                   " getComputedStyle(d.querySelector('summary > bdi')).display]; }")
            assert opened == [True, True, "none"], opened
        page.screenshot(path=str(screenshots / f"{name}-{'file' if base.startswith('file') else 'http'}.png"),
                        full_page=True)
    finally:
        visit.close()


@pytest.mark.parametrize("name", sorted(DIGEST_PAGES))
def test_digest_pages_have_no_horizontal_scroll_at_phone_width(browser, digest_site, name, screenshots):
    _no_sideways_scroll(browser, digest_site, DIGEST_PAGES[name], name, screenshots)
