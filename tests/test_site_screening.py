"""The screening section of the status page: what it shows, escaped, in HTML and its Markdown twin; builds.

The votes are those of tests/test_screen_report.py, plus a1 discarded, so
two labelled includes were lost: one with a DOI (linked to doi.org) and the
OSF record whose title is hostile markup.
"""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest
from support.site import parse_html
from test_site_markdown_escape import PLACEHOLDERS, assert_same_structure, fill
from test_screen_report import EXC, VERDICTS, VOTES
from test_screen_scope import CRITERIA, HOSTILE, gens, make_workspace, record, route

from reporter.build import build
from reporter.config import load_workspace
from reporter.panel.store import open_store
from reporter.routing.artifacts import load_release
from reporter.routing.labels import load_labels
from reporter.screening.report import screen_report
from reporter.build import render_site
from reporter.site import env
from reporter.site.models import Grid, Row
from reporter.site.status_page import NO_WORKSPACE, NOT_CONFIGURED, build_status_page

DAY = date(2026, 6, 1)


@pytest.fixture()
def page(tmp_path):
    """The status page model of a screened release, and the release."""
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    gen = gens(ws)["expensive"]
    votes = {**VOTES, "doi:10.5555/a1": {"a": EXC, "b": EXC}}
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "expensive", gen, votes=votes, verdicts={**VERDICTS, "doi:10.5555/a1": "discard"},
               failures=(("pmid:103", "b", "HTTP 500"),))
        report = screen_report(ws, rdir, store=store, labels=load_labels(ws.labels))
    rel = load_release(rdir.parent, rdir.name)
    return build_status_page(rel, report)


def rows_and_grids(obj):
    """Every Row and Grid of a page model, depth first."""
    if isinstance(obj, (Row, Grid)):
        yield obj
    elif isinstance(obj, tuple):
        for x in obj:
            yield from rows_and_grids(x)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from rows_and_grids(getattr(obj, f.name))


def cell(value) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def test_the_status_page_shows_the_screen(page):
    html = parse_html(env.render_html(page))
    section = html.find("section", id="screening")
    keys = [n.attrs["data-key"] for n in html.find_all("td") if n.attrs.get("data-key")]
    assert len(keys) == len(set(keys)), "a data-key is used twice"
    keyed = {n.attrs["data-key"]: n.text() for n in section.find_all("td") if n.attrs.get("data-key")}
    assert keyed["sc-expensive-screened"] == "5" and keyed["sc-expensive-routed"] == "6"
    assert (keyed["sc-expensive-admit"], keyed["sc-expensive-discard"], keyed["sc-expensive-incomplete"]) == \
        ("2", "3", "1")
    assert keyed["sc-expensive-votes-a-include"] == "1" and keyed["sc-expensive-votes-b-invalid"] == "1"
    assert keyed["sc-expensive-invalid-b-unparseable"] == "1"
    assert keyed["sc-expensive-plan-works"] == "1"  # only pmid:103 lacks a vote
    assert keyed["s-sc-screen-admit"] == "2" and keyed["s-sc-handoff"] == "2"
    assert "Cohen's kappa" in section.text()
    headings = [h.text() for h in section.find_all("h3")]
    assert headings == ["Cheap tier (discard-only)", "Expensive screen", "The prompt", "The funnel after routing"]
    assert [s.text() for s in section.find_all("summary")][:1] == ["The assembled prompt, for an example work"]
    # Every number of a chart equals the table cell with the same key.
    for text in section.find_all("text"):
        if text.attrs.get("data-key"):
            assert text.text() == keyed[text.attrs["data-key"]], text.attrs["data-key"]
    assert any(t.attrs.get("data-key", "").startswith("sc-expensive-tok-") for t in section.find_all("text"))


def test_data_strings_are_escaped(page):
    text = env.render_html(page)
    html = parse_html(text)
    assert len(html.find_all("script")) == 1  # the page's own sort script; the hostile title is text
    assert not html.find_all("b")  # the criteria's <b>errata</b> is shown, not obeyed
    lost = html.find("table", id="screen-expensive-lost-table")
    rows = lost.find("tbody").find_all("tr")
    assert [r.find("td").text() for r in rows] == ["doi:10.5555/a1", "osf:abc01"]
    assert rows[0].find("a").attrs["href"] == "https://doi.org/10.5555/a1"  # built from the id
    assert rows[1].find("a").attrs["href"] == "https://osf.io/abc01/"  # OSF ids link too (issue 12)
    assert rows[1].find_all("td")[1].text() == HOSTILE
    pres = [p.text() for p in html.find_all("pre")]
    assert any(CRITERIA in p for p in pres)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_the_markdown_twin_has_the_same_numbers(page):
    md = env.render_md(page)
    html = parse_html(env.render_html(page))
    keyed = {n.attrs["data-key"]: n.text() for n in html.find_all("td") if n.attrs.get("data-key")}
    found = list(rows_and_grids(page.screening)) + list(page.funnel)
    assert len(found) > 20
    for item in found:
        if isinstance(item, Row):
            assert f"| {env.md_escape(item.label)} | {env.md_escape(item.value)} |" in md, item
            if item.key:
                assert keyed[item.key] == item.value
            continue
        for r in item.rows:
            line = "| " + " | ".join(env.md_escape(x) for x in (r.label, *(cell(c.value) for c in r.cells))) + " |"
            assert line in md, line
            for c in r.cells:
                if c.key:
                    assert keyed[c.key] == cell(c.value)
    assert "[doi:10.5555/a1](https://doi.org/10.5555/a1)" in md.replace("\u2060", "").replace("\\", "")


@pytest.mark.parametrize("texts", [["1. x", "- y", "https://evil.example"], ["<script>x</script>", "**b** | c", "a@b.com"],
                                   ["===", "`code`", "    indented"]])
def test_data_stays_text_in_the_markdown_twin(page, texts):
    reference = env.render_md(fill(page, PLACEHOLDERS))
    assert_same_structure(env.render_md(fill(page, texts)), reference, dict(zip(PLACEHOLDERS, texts)),
                          "the status page with screening")


def test_a_build_with_screen_and_no_database_shows_the_plan_and_creates_nothing(tmp_path):
    root = make_workspace(tmp_path / "ws", cheap=True)
    report = build(load_workspace(root), as_of=DAY, environ={}, progress=False)
    # Neither the database nor the raw folder: only the dry run's prompt lengths, kept (issue 37, item 4).
    assert [p.name for p in (root / "state").iterdir()] == ["screen-lengths.json"]
    page = parse_html((root / "site" / "releases" / report.release_id / "status.html").read_text())
    keyed = {n.attrs["data-key"]: n.text() for n in page.find_all("td") if n.attrs.get("data-key")}
    assert keyed["sc-cheap-plan-works"] == "2" and keyed["sc-expensive-plan-works"] == "4"
    assert keyed["sc-expensive-plan-may-come"] == "2"
    assert "does not exist yet" in page.find("section", id="screening").text()
    md = (root / "site" / "releases" / report.release_id / "status.md").read_text()
    assert "| works that would be sent now | 4 |" in md


def test_without_screen_the_section_says_how_to_configure_it(tmp_path):
    root = make_workspace(tmp_path / "ws", screen=False)
    report = build(load_workspace(root), as_of=DAY, environ={}, progress=False)
    text = (root / "site" / "releases" / report.release_id / "status.html").read_text()
    section = parse_html(text).find("section", id="screening")
    assert "Screening is not configured" in section.text() and "[[screen.expensive.voters]]" in section.text()
    assert NOT_CONFIGURED.split(".")[0] in section.text() and not section.find_all("h3", id="screen-expensive")


def test_render_shows_the_screen_with_its_workspace_and_says_so_without(tmp_path):
    root = make_workspace(tmp_path / "ws")
    ws, rdir = route(root)
    render_site(ws.releases, tmp_path / "plain", progress=False)
    plain = parse_html((tmp_path / "plain" / "releases" / rdir.name / "status.html").read_text())
    assert NO_WORKSPACE.split(",")[0] in plain.find("section", id="screening").text()
    render_site(ws.releases, tmp_path / "with", progress=False, workspace=ws)
    shown = parse_html((tmp_path / "with" / "releases" / rdir.name / "status.html").read_text())
    assert shown.find("h3", id="screen-expensive")
    assert not (root / "state").exists()
    # An older release's status page points at the newest one, which the screen runs on.
    (root / "specs" / "rules" / "rules.json").write_text((root / "specs" / "rules" / "rules.json").read_text()
                                                        .replace('"precedence": 50', '"precedence": 51'))
    ws2, newer = route(root)
    render_site(ws.releases, tmp_path / "two", progress=False, workspace=ws2)
    old = parse_html((tmp_path / "two" / "releases" / rdir.name / "status.html").read_text())
    assert f"newest release, {newer.name[:12]}" in old.find("section", id="screening").text()
    # A pool changed since the newest release: a render says so on the page; a build would route it anew.
    ws2.pool.write_text(ws2.pool.read_text().replace("three labs", "four labs"))
    render_site(ws.releases, tmp_path / "changed", progress=False, workspace=ws2)
    changed = parse_html((tmp_path / "changed" / "releases" / newer.name / "status.html").read_text())
    assert "the pool differs from the one release" in changed.find("section", id="screening").text()


def test_requests_sent_and_never_answered_are_said_on_the_status_page(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    with open_store(ws.screen.database, where="[screen] database") as store:
        store.register_runner("killed-1", "host", 1)
        store.note_requests("killed-1", sent=7, answered=2)
        store.register_runner("clean-2", "host", 2)
        store.note_requests("clean-2", sent=4, answered=4)
        report = screen_report(ws, rdir, store=store, labels=None)
    assert [(r.runner, r.in_flight) for r in report.in_flight] == [("killed-1", 5)]
    page = build_status_page(load_release(rdir.parent, rdir.name), report)
    assert "5 requests of 1 run were sent and never answered" in page.screening.note
    section = parse_html(env.render_html(page)).find("section", id="screening")
    assert "5 requests of 1 run were sent and never answered" in section.text()


def test_a_screen_state_that_cannot_be_read_refuses_the_build_and_removes_the_staged_release(tmp_path):
    """The screen is read after routing staged the release: its refusal leaves no staged folder behind."""
    from reporter.errors import InputError
    root = make_workspace(tmp_path / "ws")
    (root / "state").mkdir()
    (root / "state" / "screen.db").write_bytes(b"not a database, just bytes\x00\xff" * 64)
    with pytest.raises(InputError, match="screen.db"):
        build(load_workspace(root), as_of=DAY, environ={}, progress=False)
    assert not (root / "site").exists()
    assert [p.name for p in (root / "releases").iterdir() if p.name not in (".lock", "index.json")] == []


def test_works_leased_by_a_runner_are_said_on_the_status_page_with_their_runner_host_and_lease(tmp_path):
    """The status page says what `reporter screen --status` says of leases (issue 34, item 1)."""
    import json
    from reporter.screening.scope import tier_scope
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    gen = gens(ws)
    rid = json.loads((rdir / "release.json").read_text())["release_id"]
    ids = tier_scope(ws, rdir, "expensive", cheap_generation=gen["cheap"], store=None).work_ids
    with open_store(ws.screen.database, where="[screen] database") as store:
        store.register_runner("far-away-7", "<b>host-b</b>", 7)
        store.seed_scope(rid, "expensive", gen["expensive"], list(ids))
        assert len(store.claim(rid, "expensive", gen["expensive"], "far-away-7", 2, 3600)) == 2
        report = screen_report(ws, rdir, store=store, labels=None)
        store.heartbeat("far-away-7", 0.001)  # its lease runs out: reclaimable
        import time
        time.sleep(0.01)
        expired = screen_report(ws, rdir, store=store, labels=None)
    page = build_status_page(load_release(rdir.parent, rdir.name), report)
    note = page.screening.note
    assert "Expensive screen: 2 works held by runner far-away-7 on <b>host-b</b> since " in note
    assert " UTC; leased until " in note
    section = parse_html(env.render_html(page)).find("section", id="screening")
    assert "2 works held by runner far-away-7 on <b>host-b</b>" in section.text(), "the host is text, escaped"
    assert "<b>host-b</b>" not in env.render_html(page)
    assert "2 works held by runner far-away-7" in env.render_md(page)
    again = build_status_page(load_release(rdir.parent, rdir.name), expired).screening.note
    assert "its lease ran out at " in again and "the next reporter screen --run takes them over" in again


def test_a_refused_build_keeps_no_lengths(tmp_path):
    """Issue 37, items 2 and 4: the dry run's prompt lengths are written only once the build has published; a build
    the site's checks refuse leaves the state folder as it was."""
    from reporter.errors import InputError
    root = make_workspace(tmp_path / "ws")
    report = build(load_workspace(root), as_of=DAY, environ={}, progress=False)
    kept = root / "state" / "screen-lengths.json"
    assert kept.exists()
    kept.unlink()
    page = root / "site" / "releases" / report.release_id / "index.html"
    page.write_text(page.read_text() + "<!-- changed -->")  # an archived page the next render would rewrite
    with pytest.raises(InputError, match="archived page would change"):
        build(load_workspace(root), as_of=DAY, environ={}, progress=False)
    assert not kept.exists()
