"""The flow diagram on a phone (issue 37, item 6), in headless Chromium as tests/test_site_browser.py drives it.

At 390 px the diagram is drawn stacked in one column: no sideways scroll, shown at about its size (13 px text
stays about 13 px), no label shortened and none running into its number; wider screens keep the two columns.
The home page's pile table fits its box. Screenshots go where test_site_browser.py puts its own.
"""

from __future__ import annotations

import pytest
from test_site_browser import PHONE_PX, Visit, _path, browser, screenshots  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FLOW_JS = """() => Array.from(document.querySelectorAll('figure.flow')).map(fig => {
  const shown = Array.from(fig.querySelectorAll('svg')).filter(s => getComputedStyle(s).display !== 'none');
  const svg = shown[0], box = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll('text'));
  const outside = texts.filter(t => { const r = t.getBoundingClientRect();
    return r.left < box.left - 0.5 || r.right > box.right + 0.5; }).map(t => t.textContent);
  const clashes = [];
  for (const n of texts.filter(t => t.dataset.key)) {
    const rn = n.getBoundingClientRect();
    for (const t of texts) {
      if (t === n || t.getAttribute('y') !== n.getAttribute('y')) continue;
      const rt = t.getBoundingClientRect();
      if (rt.left < rn.left && rt.right > rn.left - 3) clashes.push(t.textContent + ' | ' + n.textContent);
    } }
  return {shown: shown.map(s => s.id), scroll: [fig.scrollWidth, fig.clientWidth], outside, clashes,
          scale: box.width / svg.viewBox.baseVal.width, cut: texts.filter(t => t.textContent.includes('\\u2026'))
          .map(t => t.textContent)};
})"""


@pytest.mark.parametrize("name", ["release", "status"])
@pytest.mark.parametrize("width", [PHONE_PX, 1280])
def test_the_flow_diagram_is_stacked_and_readable_on_a_phone(browser, novelty_site, screenshots, name, width):
    base = novelty_site["site"].resolve().as_uri() + "/"
    visit = Visit(browser, base + _path(novelty_site, name), base, width=width)
    try:
        (flow,) = visit.page.evaluate(FLOW_JS)
        wide = "flow-chart" if name == "release" else "status-flow"
        assert flow["shown"] == [f"{wide}-narrow" if width == PHONE_PX else wide]
        assert flow["scroll"][0] <= flow["scroll"][1], f"the diagram scrolls sideways: {flow['scroll']}"
        assert flow["outside"] == [] and flow["clashes"] == [] and flow["cut"] == [], flow
        assert flow["scale"] >= 0.95, f"drawn at {flow['scale']:.2f} of its size: too small to read"
        visit.page.locator("figure.flow").first.screenshot(path=str(screenshots / f"flow-{name}-{width}.png"))
    finally:
        visit.close()


def test_the_home_pile_table_fits_its_box_on_a_phone(browser, novelty_site):
    base = novelty_site["site"].resolve().as_uri() + "/"
    visit = Visit(browser, base + "index.html", base, width=PHONE_PX)
    try:
        wrap = visit.page.evaluate("() => { const w = document.querySelector('#latest-table').closest('.table-wrap');"
                                   " return [w.scrollWidth, w.clientWidth]; }")
        assert wrap[0] <= wrap[1], f"the pile table overflows its box: {wrap}"
    finally:
        visit.close()


A4_PAGE_PX = 1031
"""An A4 page's height less the print stylesheet's 12 mm margins, at 96 px per inch."""


@pytest.mark.parametrize("name", ["release", "status"])
def test_on_paper_the_flow_prints_as_its_table_from_page_one(browser, novelty_site, name):
    """Issue 37, item 11: the flow diagram (one picture a page tall) moved whole to page 2 and left page 1 mostly
    blank. On paper the diagram is not drawn; its table (the same numbers) starts on page 1, and a folded long
    table is opened for the print."""
    base = novelty_site["site"].resolve().as_uri() + "/"
    visit = Visit(browser, base + _path(novelty_site, name), base, width=704)
    try:
        page = visit.page
        page.emulate_media(media="print")
        page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
        state = page.evaluate("""() => ({
          figure: getComputedStyle(document.querySelector('figure.flow')).display,
          top: document.querySelector('table.flow').getBoundingClientRect().top + window.scrollY,
          shown: document.querySelector('table.flow').getClientRects().length > 0,
          closed: Array.from(document.querySelectorAll('details.fold')).filter(d => !d.open).length})""")
        assert state["figure"] == "none" and state["shown"] and state["closed"] == 0, state
        assert state["top"] < A4_PAGE_PX, f"the flow's table starts below page 1: {state['top']} px"
        page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
        assert page.evaluate("() => Array.from(document.querySelectorAll('details.fold')).filter(d => d.open)"
                             ".length") == 0  # closed again after the print
    finally:
        visit.close()
