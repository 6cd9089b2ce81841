"""What the status page reports of the screen (reporter/screening/report.py), on votes a person can check.

The expensive screen's six works (no cheap voters), voters a and b:

    work        label    a                     b                   verdict
    a1          include  include               include             admit
    pmid:101    exclude  exclude               exclude             discard
    pmid:102    include  exclude               invalid (unparse.)  admit
    osf:abc01   include  exclude               exclude             discard   <- a lost include
    a6          exclude  cannot_be_determined  exclude             admit
    pmid:103    include  include               (provider failure)  incomplete

Kappa on the four works with two valid votes (a1, 101, abc01, a6): observed
3/4; a's answers include 1, exclude 2, cbd 1; b's include 1, exclude 3, so
chance agreement (1*1 + 2*3 + 1*0) / 16 = 7/16 and kappa (12/16 - 7/16) /
(9/16) = 5/9.
"""

from __future__ import annotations

import pytest
from test_screen_scope import HOSTILE, LABELS, gens, make_workspace, record, route

from reporter.panel.store import open_store
from reporter.panel.votes import Vote
from reporter.routing.labels import load_labels, wilson
from reporter.screening.calibration import rate
from reporter.screening.report import cohen_kappa, screen_report, workspace_report

INC, EXC, CBD = Vote("include", reason="r"), Vote("exclude", reason="r"), Vote("cannot_be_determined", reason="r")
BAD = Vote(None, "unparseable", "no JSON")
VOTES = {"doi:10.5555/a1": {"a": INC, "b": INC}, "pmid:101": {"a": EXC, "b": EXC}, "pmid:102": {"a": EXC, "b": BAD},
         "osf:abc01": {"a": EXC, "b": EXC}, "doi:10.5555/a6": {"a": CBD, "b": EXC}, "pmid:103": {"a": INC}}
VERDICTS = {"doi:10.5555/a1": "admit", "pmid:101": "discard", "pmid:102": "admit", "osf:abc01": "discard",
            "doi:10.5555/a6": "admit"}


@pytest.fixture()
def screened(tmp_path):
    """The workspace with the votes above recorded; the store open read-only."""
    ws, rdir = route(make_workspace(tmp_path / "ws"))
    gen = gens(ws)["expensive"]
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "expensive", gen, votes=VOTES, verdicts=VERDICTS, failures=(("pmid:103", "b", "HTTP 500"),),
               tokens=(100, 20, 0.001))
    with open_store(ws.screen.database, readonly=True, where="[screen] database") as store:
        yield ws, rdir, screen_report(ws, rdir, store=store, labels=load_labels(ws.labels))


def test_kappa_and_wilson_on_numbers_a_person_can_check():
    pairs = [("include", "include"), ("exclude", "exclude"), ("exclude", "exclude"), ("cannot_be_determined", "exclude")]
    observed, kappa = cohen_kappa(pairs)
    assert observed == 0.75 and kappa == pytest.approx(5 / 9)
    assert cohen_kappa([("exclude", "exclude")] * 3) == (1.0, None)  # chance agreement 1: undefined
    assert cohen_kappa([]) == (None, None)
    share, low, high = rate(2, 3)
    assert share == pytest.approx(2 / 3) and (low, high) == wilson(2, 3)
    assert (round(low, 4), round(high, 4)) == (0.2077, 0.9385)  # p=2/3, n=3, z=1.96
    assert rate(0, 0) is None


def test_the_report_counts_exactly(screened):
    _ws, _rdir, report = screened
    cheap, screen = report.tiers
    assert not cheap.configured and cheap.voters == () and cheap.calibration is None
    assert screen.generation is not None and len(screen.scope.work_ids) == 6
    assert (screen.screened, screen.claimed, screen.claimable, screen.failures) == (5, 0, 1, 1)
    assert screen.outcomes == (("admit", 3), ("discard", 2), ("incomplete", 1))
    a, b = screen.voters
    assert a.answers == (("include", 2), ("exclude", 3), ("cannot_be_determined", 1), ("invalid", 0))
    assert b.answers == (("include", 1), ("exclude", 3), ("cannot_be_determined", 0), ("invalid", 1))
    assert dict(b.invalid)["unparseable"] == 1 and sum(n for _c, n in b.invalid) == 1
    assert b.failures == (("HTTP 500", 1),) and a.failures == ()
    assert (a.input_tokens, a.output_tokens, a.cost_usd) == (600, 120, pytest.approx(0.006))
    assert (b.input_tokens, b.output_tokens, b.cost_usd) == (500, 100, pytest.approx(0.005))
    ag = screen.agreement
    assert (ag.voters, ag.both, ag.valid, ag.observed) == (("a", "b"), 5, 4, 0.75)
    assert ag.kappa == pytest.approx(5 / 9)
    table = dict(ag.table)  # rows: a's answer; columns: b's include, exclude, cbd, invalid
    assert table == {"include": (1, 0, 0, 0), "exclude": (0, 2, 0, 1), "cannot_be_determined": (0, 1, 0, 0),
                     "invalid": (0, 0, 0, 0)}
    f = report.funnel
    assert (f.paying, f.cheap, f.cheap_configured, f.cheap_proceeded) == (6, 2, False, 2)
    assert (f.screen, f.admitted, f.discarded, f.incomplete, f.hand_off) == (6, 3, 2, 1, 3)
    assert report.database_exists and report.database == "state/screen.db" and report.labels
    assert [name for name, _t in report.fragments] == ["task", "criteria", "schema", "work", "work_title_only"]
    assert "Exclude <b>errata</b> & **notices**." in dict(report.fragments)["criteria"]
    assert [role for role, _t in report.example] == ["system", "user"]
    _cheap_plan, plan = report.plan
    assert plan.works == 1 and plan.decided == 5  # only pmid:103 (b's vote is missing) would be sent


def test_calibration_against_the_labels(screened):
    _ws, _rdir, report = screened
    cal = report.tiers[1].calibration
    in_scope = {w: lab for w, lab in LABELS.items() if w in report.tiers[1].scope.work_ids}
    assert (cal.labelled, cal.includes) == (6, sum(lab == "include" for lab in in_scope.values())) == (6, 4)
    gate = cal.gate
    assert gate.columns == ("admit", "discard", "incomplete")
    assert dict(gate.rows) == {"include": (2, 1, 1), "exclude": (1, 1, 0)}
    assert (gate.includes, gate.kept, gate.judged, gate.discarded) == (3, 2, 5, 2)
    assert gate.recall == (pytest.approx(2 / 3), *wilson(2, 3))
    assert gate.saved == (pytest.approx(2 / 5), *wilson(2, 5))
    a, b = cal.voters
    assert a.columns == ("include", "exclude", "cannot_be_determined", "invalid", "no vote")
    assert dict(a.rows) == {"include": (2, 2, 0, 0, 0), "exclude": (0, 1, 1, 0, 0)}
    assert (a.includes, a.kept, a.judged, a.discarded) == (4, 2, 6, 3)
    assert dict(b.rows) == {"include": (1, 1, 0, 1, 1), "exclude": (0, 2, 0, 0, 0)}
    assert (b.includes, b.kept, b.judged, b.discarded) == (3, 2, 5, 3)
    assert [(w.work_id, w.title) for w in cal.lost] == [("osf:abc01", HOSTILE)] and cal.lost_total == 1


def test_no_database_means_nothing_screened_and_nothing_created(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws", cheap=True))
    report = workspace_report(ws, rdir, load_labels(ws.labels))
    assert not report.database_exists and not (tmp_path / "ws" / "state").exists()
    cheap, screen = report.tiers
    assert cheap.configured and cheap.outcomes == (("discard", 0), ("proceed", 0), ("incomplete", 2))
    assert screen.outcomes == (("admit", 0), ("discard", 0), ("incomplete", 4))
    assert screen.scope.pending_cheap == 2 and report.funnel.cheap_undecided == 2
    assert [p.works for p in report.plan] == [2, 4] and report.plan[1].may_come == 2
    assert workspace_report(route(make_workspace(tmp_path / "plain", screen=False))[0], rdir) is None


def test_the_cheap_tier_reports_its_own_outcomes(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws", cheap=True))
    cheap_gen = gens(ws)["cheap"]
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "cheap", cheap_gen, votes={"pmid:101": {"c1": EXC, "c2": EXC}, "pmid:102": {"c1": INC}},
               verdicts={"pmid:101": "discard", "pmid:102": "proceed"})
        report = screen_report(ws, rdir, store=store, labels=load_labels(ws.labels))
    cheap, screen = report.tiers
    assert cheap.outcomes == (("discard", 1), ("proceed", 1), ("incomplete", 0))
    assert screen.scope.work_ids == ("doi:10.5555/a1", "pmid:102", "osf:abc01", "doi:10.5555/a6", "pmid:103")
    f = report.funnel
    assert (f.cheap_discarded, f.cheap_proceeded, f.cheap_undecided, f.screen) == (1, 1, 0, 5)
    # pmid:102 is a labelled include the cheap tier passed on; pmid:101 an exclude it discarded.
    assert dict(cheap.calibration.gate.rows) == {"include": (0, 1, 0), "exclude": (1, 0, 0)}
    assert cheap.calibration.lost == () and cheap.calibration.gate.saved[0] == 0.5
