"""A release's certificates on its status page: on the flow diagram's box of their stratum and in a list, with
their standing in words and colour; never on the archived pages, never another release's (issue 25, item 4)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import CERTIFIED_SHEETS
from support.site import parse_html
from test_build import _workspace
from test_certify_export import certify, run, screened, ws  # noqa: F401 (fixtures)
from test_certify_sheets import label
from test_screen_run import PREFIX
from test_site_models import _stats

from reporter.build import build
from reporter.certify.config import CertifySettings
from reporter.certify.results import load_certificates, state_dir
from reporter.config import load_workspace
from reporter.routing.artifacts import load_releases
from reporter.screening.report import ScreenFunnel
from reporter.site import compute
from reporter.site.certified import NONE_YET, NO_WORKSPACE, Certified, standing
from reporter.site.env import md_escape, render_html, render_md
from reporter.site.status_page import build_status_page

DISCARD_LINE = "12 works; 12 sampled, 1 relevant: at most 1 relevant (8.3%), 95%"
"""The golden workspace's discard certificate (conftest.CERTIFIED_SHEETS: 1 include of all 12 works)."""


def _status(site: Path, rid: str):
    return parse_html((site / "releases" / rid / "status.html").read_text(encoding="utf-8"))


def _flow_text(tree) -> list[tuple[str, str]]:
    """The flow diagram's text labels: (class, text)."""
    return [(t.attrs["class"], t.text()) for t in tree.find("svg", id="status-flow").find_all("text")]


def _box_notes(tree) -> str:
    """The certificate lines drawn in the flow's boxes, joined back into sentences (they are wrapped at spaces)."""
    texts = [text for css, text in _flow_text(tree) if css in ("lbl", "ok", "bad", "neutral")]
    return " ".join(texts)


def _md_rows(md: str, first: str) -> list[list[str]]:
    """The cells of the Markdown table rows whose first cell starts with `first`."""
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in md.splitlines() if line.startswith("| ")]
    return [r for r in rows if r and r[0].startswith(first)]


def test_the_status_page_draws_each_certificate_on_its_box_and_lists_it(site_build):
    tree = _status(site_build["site"], site_build["ids"][-1])
    notes = _box_notes(tree)
    assert f"Certificate of discard: {DISCARD_LINE}" in notes
    assert " ".join(t for c, t in _flow_text(tree) if c == "ok").startswith(
        "meets the target: at most 8.3% relevant, within 10%")
    assert "Certificate of discard/rule:meta-analysis: 4 works; 4 sampled, 2 labelled, 0 relevant" in notes
    # the box of the pile holds them: its rectangle is tall enough for the lines drawn in it
    box = next(r for r in tree.find("svg", id="status-flow").find_all("rect")
               if r.text().startswith("Discarded by a rule"))
    top, bottom = float(box.attrs["y"]), float(box.attrs["y"]) + float(box.attrs["height"])
    ys = [float(t.attrs["y"]) for t in tree.find("svg", id="status-flow").find_all("text")
          if t.text().startswith(("Certificate of", "meets the target", "partial:"))]
    assert len(ys) >= 3 and all(top < y < bottom for y in ys)
    row = tree.find("tr", id="cert-discard")
    cells = row.find_all("td")
    assert [c.text() for c in cells[:2]] == [DISCARD_LINE, "meets the target: at most 8.3% relevant, within 10%"]
    assert cells[1].find("span").attrs["class"] == "ok"
    assert re.fullmatch(r"12 of 12 rows labelled \(seed \d+; sample 1 of the 1 drawn of this stratum\)", cells[2].text())
    assert cells[4].find("code").text() == CERTIFIED_SHEETS["discard"]
    sheet = site_build["releases"].parent / CERTIFIED_SHEETS["discard"]
    assert hashlib.sha256(sheet.read_bytes()).hexdigest() in cells[4].text()
    assert cells[5].text() == "Discarded by a rule"


def test_a_partial_certificate_of_a_rules_wins_links_the_rule_page_and_never_meets_the_target(site_build):
    tree = _status(site_build["site"], site_build["ids"][-1])
    row = next(r for r in tree.find("table", id="certificates-table").find_all("tr")
               if r.find_all("th") and r.find("th").text().startswith("discard/rule:meta-analysis"))
    assert row.find("a").attrs["href"] == "rules/meta-analysis.html"
    cells = row.find_all("td")
    assert cells[0].text().endswith("(partial)") and "2 labelled" in cells[0].text()
    assert cells[1].text() == "partial: 2 of 4 rows labelled" and cells[1].find("span").attrs["class"] == "bad"
    assert re.match(r"partial: 2 of 4 rows labelled \(seed \d+; sample 1 of the 1 drawn of this stratum\), the "
                    r"sheet's first rows", cells[2].text())
    # the hostile sheet name stays text
    assert cells[4].find("code").text() == CERTIFIED_SHEETS["discard/rule:meta-analysis"]
    assert not cells[4].find_all("b") and not cells[4].find_all("i")


def test_the_markdown_twin_lists_the_same_certificates(site_build):
    md = (site_build["site"] / "releases" / site_build["ids"][-1] / "status.md").read_text(encoding="utf-8")
    [discard] = [r for r in _md_rows(md, "discard") if r[0] == "discard"]
    assert discard[1] == DISCARD_LINE
    assert discard[2] == "meets the target: at most 8.3% relevant, within 10%"
    assert discard[3].startswith("12 of 12 rows labelled (seed ") and discard[6] == "Discarded by a rule"
    rule = _md_rows(md, "discard/rule:meta-analysis")[0]
    assert "[meta-analysis](rules/meta-analysis.md)" in rule[0] and rule[2] == "partial: 2 of 4 rows labelled"
    assert "meta \\<b\\>\\|\\*x\\*\\<i\\>" in rule[5]  # escaped, one cell


def test_a_certificate_of_another_release_is_not_shown(site_build):
    first, newest = site_build["ids"]
    assert load_certificates(state_dir(site_build["workspace"].root), newest)
    tree = _status(site_build["site"], first)
    assert not tree.find_all("table", id="certificates-table")
    assert "Certificate of" not in _box_notes(tree)
    assert tree.find("section", id="certificates").find_all("p")[-1].text() == NONE_YET
    md = (site_build["site"] / "releases" / first / "status.md").read_text(encoding="utf-8")
    assert DISCARD_LINE not in md
    # and a release's archived pages never show one: they only link to the status page
    for page in (site_build["site"] / "releases" / newest).rglob("*.html"):
        if page.name not in ("status.html",):
            assert DISCARD_LINE not in page.read_text(encoding="utf-8"), page


def _page(site_build, settings: CertifySettings, **changes):
    """The newest release's status page with its discard certificate changed, held to `settings`."""
    releases = load_releases(site_build["releases"]).releases
    rel = releases[-1]
    certs = load_certificates(state_dir(site_build["workspace"].root), rel.release_id)
    cert = dataclasses.replace(next(c for c in certs if c.stratum == "discard"), **changes)
    return build_status_page(rel, certified=Certified({rel.release_id: (cert,)}, settings))


@pytest.mark.parametrize("settings, tone, words", [
    (CertifySettings(max_missed_fraction=0.1), "ok", "meets the target: at most 8.3% relevant, within 10%"),
    (CertifySettings(max_missed_fraction=0.05), "bad", "misses the target: at most 8.3% relevant, above 5%"),
    (CertifySettings(), "neutral", "no target set ([certify] min_recall, max_missed_fraction)"),
    (CertifySettings(max_missed_fraction=0.1, confidence=0.99), "bad", "computed at 95%, below the 99% required"),
])
def test_the_standing_is_said_in_words_and_coloured_the_same(site_build, settings, tone, words):
    page = _page(site_build, settings)
    view = page.certificates[0]
    assert (view.tone, view.standing) == (tone, words)
    tree = parse_html(render_html(page))
    assert tree.find("tr", id="cert-discard").find("span", **{"class": tone}).text() == words
    drawn = [t.text() for t in tree.find("svg", id="status-flow").find_all("text", **{"class": tone})]
    assert " ".join(drawn).startswith(words)  # then the hand-off's verdict, when it has the same tone
    assert _md_rows(render_md(page), "discard")[0][2] == md_escape(words)  # the same words, escaped


def test_hostile_strata_and_sheets_stay_text_in_the_diagram_the_list_and_the_twin(site_build):
    hostile = "discard/rule:<script>alert(1)</script>|**x**"
    page = _page(site_build, CertifySettings(), stratum=hostile, rule="<script>alert(1)</script>|**x**",
                 kind="wins", sheet="<img src=x onerror=alert(1)>.csv")
    html = render_html(page)
    tree = parse_html(html)
    assert not tree.find_all("img") and len(tree.find_all("script")) == 1  # the page's own script only
    assert "Certificateofdiscard/rule:<script>alert(1)</script>|**x**:" in _box_notes(tree).replace(" ", ""), \
        "a long word is broken to fit its box, never cut"
    row = tree.find("table", id="certificates-table").find_all("tr")[1]
    assert [a.text() for a in row.find_all("a")] == [f"certificate {page.certificates[0].certificate}"], \
        "the release has no such rule: no link but to the certificate's own page"
    md = render_md(page)
    [cells] = _md_rows(md, "discard/rule:\\<script\\>")
    assert len(cells) == 8 and "\\<img src=x onerror=alert(1)\\>" in cells[5]


def test_a_render_without_a_workspace_says_it_shows_no_certificates(site_build):
    rel = load_releases(site_build["releases"]).releases[-1]
    page = build_status_page(rel)
    assert page.certificates == () and page.certify_note == NO_WORKSPACE
    assert "Certificate of" not in _box_notes(parse_html(render_html(page)))


# --- the screen's discards: on the box of their tier, stale once the tier discarded more ------------------


def test_a_screen_certificate_is_drawn_on_its_tiers_discard_box_and_goes_stale(ws, capsys):  # noqa: F811
    certify(capsys, ws, "screen:discarded")
    certify(capsys, ws, "screen_cheap:discarded", lambda i, r: "include")
    assert run(capsys, "render", "--releases", ws / "releases", "--out", ws / "site", "--workspace", ws)[0] == 0
    rid = json.loads((ws / "releases" / "index.json").read_text())[-1]
    tree = _status(ws / "site", rid)
    rows = {r.find("th").text(): r.find_all("td") for r in tree.find("table", id="certificates-table").find_all("tr")
            if r.find_all("td")}
    assert rows["screen:discarded"][5].text() == "Discarded by the two-voter screen"
    assert rows["screen_cheap:discarded"][5].text() == "Discarded by the cheap screen"
    assert rows["screen_cheap:discarded"][3].text().startswith("at least ")  # labels and verdicts: a recall bound
    notes = _box_notes(tree)
    assert "Certificate of screen:discarded: 1 work; 1 sampled, 0 relevant" in notes
    conn = sqlite3.connect(ws / "state" / "screen.db")
    with conn:  # the screen discards one more work: the certificate no longer covers what it discarded
        conn.execute("UPDATE verdicts SET outcome = 'discard' WHERE work_id = ? AND tier = 'expensive'",
                     (PREFIX + "W004",))
    conn.close()
    assert run(capsys, "render", "--releases", ws / "releases", "--out", ws / "site", "--workspace", ws)[0] == 0
    tree = _status(ws / "site", rid)
    row = tree.find("tr", id=next(r.attrs["id"] for r in tree.find_all("tr")
                                  if r.attrs.get("id", "").startswith("cert-screen-discarded")))
    words = row.find_all("td")[1]
    assert words.find("span").attrs["class"] == "bad"
    assert words.text() == ("stale: the tier had discarded 1 work then and has discarded 2 in its current "
                            "generation; certify a new sample")


def test_standing_is_stale_in_another_generation():
    cert = SimpleNamespace(kind="screen", tier="expensive", generation="g1", N=3,
                           standing=lambda settings: (True, "meets the target"))
    report = SimpleNamespace(tiers=(SimpleNamespace(tier="expensive", configured=True, generation="g2",
                                                    outcomes=(("discard", 3),)),))
    assert standing(cert, CertifySettings(), report)[0] is False
    assert "in an earlier generation" in standing(cert, CertifySettings(), report)[1]
    same = SimpleNamespace(tiers=(SimpleNamespace(tier="expensive", configured=True, generation="g1",
                                                  outcomes=(("discard", 3),)),))
    assert standing(cert, CertifySettings(), same) == (True, "meets the target")
    assert standing(cert, CertifySettings(), None) == (True, "meets the target")


def test_each_stratum_has_its_box():
    f = ScreenFunnel(paying=40, cheap=15, cheap_configured=True, cheap_discarded=6, cheap_proceeded=7,
                     cheap_undecided=2, screen=32, admitted=20, discarded=9, incomplete=3, hand_off=20)
    steps = compute.flow_steps(_stats(), f)
    assert compute.box_of(steps, "discard", None).key == "fl-out-discard"
    assert compute.box_of(steps, "hold", None).key == "fl-wait-hold"
    assert compute.box_of(steps, "screen", None).key == "fl-text"
    assert compute.box_of(steps, None, "cheap").key == "fl-sc-cheap-discard"
    assert compute.box_of(steps, None, "expensive").key == "fl-sc-screen-discard"
    assert compute.box_of(compute.flow_steps(_stats()), None, "expensive") is None  # no screen shown: no box
    assert compute.box_of(steps, "no-such-pile", None) is None


# --- the build: certificates read once in its gather step ------------------------------------------------


def test_a_build_shows_the_certificates_of_the_release_it_built(tmp_path, capsys):
    root = _workspace(tmp_path)
    report = build(load_workspace(root), progress=False)
    sheet = root / "discard.csv"
    assert run(capsys, "certify", "--workspace", root, "--pile", "discard", "--n", 5, "--out", sheet)[0] == 0
    label(sheet, lambda i, r: "exclude")
    assert run(capsys, "certify", "--workspace", root, "--sheet", sheet)[0] == 0
    again = build(load_workspace(root), progress=False)
    assert again.release_id == report.release_id and not again.created
    tree = _status(root / "site", report.release_id)
    row = tree.find("tr", id="cert-discard")
    line = "9 works; 5 sampled, 0 relevant: at most 2 relevant (22%), 95%"
    assert row.find_all("td")[0].text() == line
    assert row.find_all("td")[4].find("code").text() == "discard.csv"
    assert f"Certificate of discard: {line}" in _box_notes(tree)
