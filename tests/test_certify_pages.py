"""What a reviewer reads of the certificates: each one's own archived page, the hand-off's certification on the
status page (in the flow diagram and under it, whole, at 390 px and in print, in Chromium), on the home page,
and the works the samples rescued (issue 32, items 5-7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CERTIFIED_SHEETS
from support.site import parse_html
from test_certify_export import certify, run, screened, ws  # noqa: F401 (fixtures)
from test_screen_run import PREFIX

from reporter.certify.results import all_certificates, load_certificates, state_dir


def _newest(site_build) -> str:
    return site_build["ids"][-1]


def _page(site: Path, path: str):
    return parse_html((site / path).read_text(encoding="utf-8"))


def test_each_certificate_has_its_own_archived_page_linked_from_the_status_page(site_build):
    rid = _newest(site_build)
    certs = load_certificates(state_dir(site_build["workspace"].root), rid)
    assert {c.stratum for c in certs} == set(CERTIFIED_SHEETS)
    status = _page(site_build["site"], f"releases/{rid}/status.html")
    manifest = json.loads((site_build["site"] / "manifest.json").read_text())
    archived = {f["path"] for f in manifest["files"] if f.get("archived")} if isinstance(manifest.get("files"), list) \
        else {p for p, f in manifest["files"].items() if f.get("archived")}
    for cert in certs:
        row = status.find("tr", id=next(r.attrs["id"] for r in status.find_all("tr")
                                        if r.attrs.get("id", "").startswith("cert-")
                                        and r.find("th").text().startswith(cert.stratum + "rule")
                                        or r.attrs.get("id") == f"cert-{cert.stratum}"))
        link = next(a for a in row.find_all("a") if a.text().startswith("certificate "))
        assert link.attrs["href"] == f"certificates/{cert.id}.html"
        path = f"releases/{rid}/certificates/{cert.id}.html"
        assert path in archived and f"releases/{rid}/certificates/{cert.id}.md" in archived
        page = _page(site_build["site"], path)
        verdict = page.find("p", id="verdict").text()
        assert f"at most {cert.max_relevant:,} of the {cert.N:,} works are relevant" in verdict
        rows = {r.find("th").text(): r.find("td").text() for r in page.find("table", id="certificate-table")
                .find_all("tr") if r.find_all("td")}
        assert rows["certificate id"] == cert.id and rows["labelled by"].startswith("not said")
        assert rows["sheet drawn"] == "2026-07-06T00:00:00+00:00 by golden"
        assert f"seed {cert.seed}" in rows["sample"] and "sample 1 of the 1 drawn of this stratum" in rows["sample"]
        assert rows["relevant means"].startswith("labels.csv (sha256 ")


def test_the_hand_off_verdict_is_said_whole_under_the_flow_and_on_the_home_page(site_build):
    rid = _newest(site_build)
    status = _page(site_build["site"], f"releases/{rid}/status.html")
    said = status.find("p", id="hand-off").text()
    # the discard pile is the one discarding stratum of the fixture (no screen shown); its certificate counts
    # at most 1 relevant in the pile, and the sample's one relevant work is rescued: none missed
    assert said.startswith("The hand-off's certification: certified by the certificates of discard: at most 0 "
                           "relevant works missed, at 95%"), said
    home = _page(site_build["site"], "index.html")
    assert home.find("p", id="certification").text().startswith("The hand-off's certification: certified by")
    md = (site_build["site"] / "index.md").read_text(encoding="utf-8")
    assert "The hand-off's certification: certified by" in md


def test_a_superseded_certificate_keeps_its_page_and_rescued_works_are_listed(ws, capsys):  # noqa: F811
    first = certify(capsys, ws, "screen:discarded")
    second = certify(capsys, ws, "screen:discarded", lambda i, r: "include")
    assert second["supersedes"] == first["id"]
    assert run(capsys, "render", "--releases", ws / "releases", "--out", ws / "site", "--workspace", ws)[0] == 0
    rid = second["release"]
    assert {c.id for c in all_certificates(state_dir(ws), rid)} == {first["id"], second["id"]}
    for cert in (first, second):
        assert (ws / "site" / "releases" / rid / "certificates" / f"{cert['id']}.html").exists()
    page = _page(ws / "site", f"releases/{rid}/certificates/{second['id']}.html")
    assert page.find("a", href=f"{first['id']}.html") is not None, "it links the certificate it superseded"
    status = _page(ws / "site", f"releases/{rid}/status.html")
    (item,) = status.find("ul", id="rescued").find_all("li")
    assert item.text().startswith(f"{PREFIX}W003, of screen:discarded") and second["id"][:12] in item.text()
    row = next(r for r in status.find("table", id="certificates-table").find_all("tr")
               if r.find_all("th") and r.find("th").text() == "screen:discarded")
    assert f"2 certificates of this stratum kept; this one supersedes {first['id'][:12]}" in row.text()
    # not every discarding stratum is certified: the hand-off is not, and the page says so in words
    assert status.find("p", id="hand-off").text().startswith(
        "The hand-off's certification: not certified: no certificate that counts for discard, screen_cheap:discarded")


def test_a_joint_certificate_gates_alone_and_per_stratum_ones_are_diagnosis(ws, capsys):  # noqa: F811
    certify(capsys, ws, "discard")
    joint = certify(capsys, ws, "discarded")
    assert run(capsys, "render", "--releases", ws / "releases", "--out", ws / "site", "--workspace", ws)[0] == 0
    status = _page(ws / "site", f"releases/{joint['release']}/status.html")
    said = status.find("p", id="hand-off").text()
    assert said.startswith(f"The hand-off's certification: certified by one sample of everything discarded "
                           f"(certificate {joint['id'][:12]}): at most 0 relevant works missed, at 95%; "
                           f"recall at least 100.0% (2 found)"), said
    row = next(r for r in status.find("table", id="certificates-table").find_all("tr")
               if r.find_all("th") and r.find("th").text() == "discard")
    assert "diagnosis only: the hand-off is gated by discarded" in row.text()


# --- the flow box in Chromium: the whole verdict inside its box, at 390 px and in print ----------------------

NOTES_JS = """() => {
  const svg = document.querySelector('svg#status-flow');
  const rects = Array.from(svg.querySelectorAll('rect'));
  return Array.from(svg.querySelectorAll('text.lbl, text.ok, text.bad, text.neutral')).map(t => {
    const x = parseFloat(t.getAttribute('x')), y = parseFloat(t.getAttribute('y'));
    const box = rects.find(r => { const rx = +r.getAttribute('x'), ry = +r.getAttribute('y');
      return rx <= x && x <= rx + +r.getAttribute('width') && ry <= y && y <= ry + +r.getAttribute('height'); });
    return {text: t.textContent, right: x + t.getComputedTextLength(),
            room: box ? +box.getAttribute('x') + +box.getAttribute('width') : null};
  });
}"""


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("media,width", [("screen", 390), ("screen", 1280), ("print", 704)])
def test_the_flow_box_shows_the_whole_verdict(site_build, media, width):
    from test_site_browser import CHROMIUM, ARGS
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    playwright = pytest.importorskip("playwright.sync_api")
    rid = _newest(site_build)
    url = (site_build["site"] / "releases" / rid / "status.html").resolve().as_uri()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.emulate_media(media=media)
            page.goto(url, wait_until="load")
            notes = page.evaluate(NOTES_JS)
            said = " ".join(n["text"] for n in notes)
            assert "within 10%" in said and "The hand-off's certification:" in said
            assert "certified by the certificates of discard" in said
            cut = [n for n in notes if n["room"] is None or n["right"] > n["room"] - 2]
            assert cut == [], f"text past the right edge of its box: {cut}"
            hand_off = page.locator("#hand-off")
            assert hand_off.is_visible()
            box = hand_off.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, box
        finally:
            browser.close()


def test_a_joint_certificate_goes_stale_when_the_screen_discards_more(ws, capsys):  # noqa: F811
    import sqlite3
    joint = certify(capsys, ws, "discarded")
    conn = sqlite3.connect(ws / "state" / "screen.db")
    with conn:
        conn.execute("UPDATE verdicts SET outcome = 'discard' WHERE work_id = ? AND tier = 'expensive'",
                     (PREFIX + "W004",))
    conn.close()
    assert run(capsys, "render", "--releases", ws / "releases", "--out", ws / "site", "--workspace", ws)[0] == 0
    status = _page(ws / "site", f"releases/{joint['release']}/status.html")
    assert status.find("p", id="hand-off").text().startswith("The hand-off's certification: not certified")
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and "The joint stratum discarded's certificate does not gate it: its certificate is stale: " \
        "the stratum held 3 works then and 4 now" in err, err
