"""What each page says to do next (issue 37, item 5): the home page and the newest status page name the screen's
cost and the command; a status page before screening says so in a line instead of tables of zeros; long tables
fold behind a summary with their count."""

from __future__ import annotations

import dataclasses
from datetime import date

from support.site import parse_html
from test_screen_report import VERDICTS, VOTES
from test_screen_scope import ALL_EXPENSIVE, gens, make_workspace, record, route

from reporter.build import build
from reporter.config import load_workspace
from reporter.money import dollars
from reporter.panel.store import open_store
from reporter.panel.votes import Vote
from reporter.routing.artifacts import load_release
from reporter.screening.plan import plan_screen
from reporter.screening.report import screen_report
from reporter.site import env
from reporter.site.models import LabelRow, Row
from reporter.site.next_step import EXPORT, RUN, screen_next_step
from reporter.site.status_page import IDLE_NOTE, build_status_page

DAY = date(2026, 6, 1)


def _text(node) -> str:
    return " ".join(node.text().split())


def test_before_screening_the_home_and_status_pages_say_what_the_screen_would_cost(tmp_path):
    root = make_workspace(tmp_path / "ws", cheap=True)
    ws = load_workspace(root)
    report = build(ws, as_of=DAY, environ={}, progress=False)
    rdir = ws.releases / report.release_id
    plans = plan_screen(ws, rdir)
    works, cost = sum(p.works for p in plans), dollars(sum(p.total_cost_usd for p in plans))
    want = (f"Next: Nothing is screened yet: the screen would send {works} works and would cost {cost} (an estimate): "
            f"{RUN}.")
    home = parse_html((root / "site" / "index.html").read_text())
    status = parse_html((root / "site" / "releases" / report.release_id / "status.html").read_text())
    for page in (home, status):
        (step,) = [p for p in page.find_all("p") if p.attrs.get("id") == "next-step"]
        assert _text(step) == want and step.find("code").text() == RUN
    # The tiers show their scope and dry run, and one line instead of outcome, vote and agreement tables of zeros.
    section = status.find("section", id="screening")
    assert [_text(p) for p in section.find_all("p") if p.attrs.get("class") == "note"].count(IDLE_NOTE) == 2
    ids = {t.attrs.get("id") for t in section.find_all("table")}
    assert "screen-expensive-counts" in ids and "sc-expensive-costs" in ids
    assert not {i for i in ids if i and ("outcomes" in i or "votes" in i or "agreement" in i or "-cal-" in i)}
    assert not [h for h in section.find_all("h4") if "Gate outcomes" in h.text() or "Agreement" in h.text()]
    for twin in (root / "site" / "index.md", root / "site" / "releases" / report.release_id / "status.md"):
        assert f"**Next:** Nothing is screened yet: the screen would send {works} works and would cost " \
               f"{env.md_escape(cost)} (an estimate): `{RUN}`." in twin.read_text()
    assert IDLE_NOTE in (root / "site" / "releases" / report.release_id / "status.md").read_text()


def test_part_screened_says_what_finishing_costs_and_all_decided_names_the_hand_off(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    gen = gens(ws)["expensive"]
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "expensive", gen, votes=VOTES, verdicts=VERDICTS)
        report = screen_report(ws, rdir, store=store, labels=None)
    step = screen_next_step(report)
    left = sum(p.works for p in report.plan if p.configured)
    assert left == 1 and step.command == RUN
    assert step.text == (f"1 work still waits for the screen; finishing would cost "
                         f"{dollars(sum(p.total_cost_usd for p in report.plan))} (an estimate)")
    # Once every work has a verdict: the admitted works wait to be handed on, and export is the command.
    rest = [w for w in ALL_EXPENSIVE if w not in VERDICTS]
    inc = Vote("include", reason="r")
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "expensive", gen, votes={w: {"a": inc, "b": inc} for w in rest},
               verdicts={w: "admit" for w in rest})
        report = screen_report(ws, rdir, store=store, labels=None)
    step = screen_next_step(report)
    admitted = report.funnel.hand_off
    assert (step.text, step.command) == (f"Every work in the screen's scope is decided: {admitted} admitted works "
                                         f"wait to be handed on", EXPORT)
    # Screened pages show their tables: no idle line.
    page = build_status_page(load_release(rdir.parent, rdir.name), report)
    assert all(t.idle_note == "" for t in page.screening.tiers if t.configured)
    assert page.next_step == step


def test_long_tables_fold_behind_a_summary_with_their_count(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    rel = load_release(rdir.parent, rdir.name)
    page = build_status_page(rel)
    short = parse_html(env.render_html(page))
    assert len(page.label_rules) <= 8 and len(page.flow_rows) > 8
    summaries = [_text(d.find("summary")) for d in short.find_all("details") if "fold" in d.attrs.get("class", "")]
    assert summaries == [f"The diagram's numbers as a table ({len(page.flow_rows)} steps)"]  # a few rules: not folded
    rules = tuple(LabelRow(id=f"rule-{i}", href=None, pile="discard", includes_matched=i, includes_won=0,
                           includes_to_discard=0, won_labelled=0, won_correct=0, precision="—", flagged=False)
                  for i in range(9))
    many = dataclasses.replace(page, labels=(Row("labels in the file", "9", "l-labels"),), label_rules=rules)
    folded = parse_html(env.render_html(many))
    summaries = [_text(d.find("summary")) for d in folded.find_all("details") if "fold" in d.attrs.get("class", "")]
    assert summaries == [f"The diagram's numbers as a table ({len(many.flow_rows)} steps)",
                         f"Findings per rule ({len(many.label_rules)} rules)"]
    # The folded tables are whole in the page (and in the Markdown twin, which never folds).
    assert len(folded.find("table", id="label-table").find("tbody").find_all("tr")) == len(many.label_rules)
    assert all(f"| {env.md_escape(r.id)} |" in env.render_md(many) for r in rules)


def test_a_few_pending_works_are_not_most(tmp_path):
    """Issue 37, item 11: "Most works are pending (2 of 7,233, 0.0%)" read wrong: the note gives the count, and a
    share that rounds to nothing is said so."""
    from reporter.site.home_page import build_home
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    rel = load_release(rdir.parent, rdir.name)
    stats = dataclasses.replace(rel.stats, rows=7233, pending={"unrouted": 2, "no_text": 0})
    home = build_home((dataclasses.replace(rel, stats=stats),))
    assert (home.pending.rows, home.pending.share, home.pending.most) == (2, "under 0.1%", False)
    note = _text(parse_html(env.render_html(home)).find("p", id="pending-note"))
    assert note.startswith("2 of 7,233 works (under 0.1%) are pending: pending is not a decision and costs nothing.")
    assert "**2** of 7,233 works (under 0.1%) are pending: pending is not a decision" in env.render_md(home)
    many = build_home((dataclasses.replace(rel, stats=dataclasses.replace(stats, pending={"unrouted": 4000})),))
    assert _text(parse_html(env.render_html(many)).find("p", id="pending-note")).startswith(
        "Most works are pending (4,000 of 7,233, 55.3%), and that is expected: pending is not a decision")


def test_a_rule_whose_wins_went_to_another_rule_of_the_same_pile_is_explained(tmp_path):
    """Issue 37, item 11: errata now won by a new, higher rule of the same discard pile: no work changed pile, yet
    discard-erratum's wins fell; the diff's rules table says another rule of the pile took them."""
    from support.site import rule, toy_rules, write_release

    from reporter.routing.artifacts import load_releases
    from reporter.site.diff import compute_diff
    from reporter.site.diff_page import Pair, build_diff_page
    from reporter.site.titles import Titles
    releases = tmp_path / "releases"
    works = [{"work_id": f"w{i}", "source": "pubmed", "title": f"erratum: {i}", "abstract": "text"} for i in range(3)]
    works.append({"work_id": "w9", "source": "pubmed", "title": "a trial", "abstract": "a randomised trial"})
    write_release(releases, works, toy_rules())
    write_release(releases, works, [*toy_rules(), rule("errata-new", "discard", 99, "erratum")])
    old, new = load_releases(releases).releases
    data = compute_diff(old, new, seed=0)
    assert data.handed == {"discard-erratum": (0, 3), "errata-new": (3, 0)}
    assert sum(n for (b, a), n in data.transitions.items() if b != a) == 0  # no work changed pile
    page = build_diff_page(new, Pair(new, old, True, data), Titles())
    changes = {c.rule.name: (c.delta, c.same_pile) for c in page.rule_changes}
    assert changes == {"discard-erratum": ("-3", "gave up 3"), "errata-new": ("+3", "took 3")}
    html = parse_html(env.render_html(page))
    assert page.rule_changes_note in _text(html.find("section", id="rules"))
    rows = [[_text(td) for td in tr.find_all("td")] for tr in html.find("table", id="rule-change-table")
            .find("tbody").find_all("tr")]
    assert ["-3", "3", "0", "discard-erratum", "gave up 3"] in rows
    md = env.render_md(page)
    assert "| -3 | 3 | 0 |" in md and "| gave up 3 |" in md and env.md_escape(page.rule_changes_note) in md


def test_a_long_sample_folds_on_the_release_page(tmp_path):
    """Issue 37, item 5: the release page ran to 19,000 px at 1280 (37,000 on a phone), most of it sample tables;
    a sample of more than 8 works folds behind a summary with its count, a short one stays open."""
    from reporter.site.release_page import build_release_page
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    page = build_release_page(load_release(rdir.parent, rdir.name))
    filled = next(s for s in page.samples if s.works)
    long = dataclasses.replace(filled, works=filled.works * 9)
    html = parse_html(env.render_html(dataclasses.replace(page, samples=(long, filled))))
    sections = [s for s in html.find_all("section") if "sample" in s.attrs.get("class", "")]
    folds = [[_text(d.find("summary")) for d in s.find_all("details")] for s in sections]
    assert folds == [[f"The sampled works ({len(long.works)} works)"], []]
    assert len(sections[0].find("table").find("tbody").find_all("tr")) == len(long.works)  # all there, folded
