"""The joint and recall bounds and the plan, against an independent computation (scipy.stats.hypergeom), and
`--pile discarded`, `--found`, `--plan`, `[certify] min_recall` on a screened workspace."""

from __future__ import annotations

import json
import random

import pytest
from scipy.stats import hypergeom
from test_certify_export import certify, run, screened, ws  # noqa: F401  (fixtures)
from test_certify_sheets import label
from test_screen_run import PREFIX

from reporter.certify.bound import (allowed_missed, bonferroni, joint_confidence, max_relevant, recall_lower_bound,
                                    smallest_n)

ALPHA = 0.05


def scipy_bound(N: int, n: int, k: int, conf: float) -> int:
    """The largest K with P_K[X <= k] >= 1 - conf, scanning K with scipy's hypergeometric CDF."""
    best = k
    for K in range(k, N - (n - k) + 1):
        if hypergeom.cdf(k, N, K, n) >= 1 - conf - 1e-12:
            best = K
        else:
            break
    return best


def scipy_smallest_n(N: int, k: int, conf: float, allowed: int) -> int | None:
    return next((n for n in range(max(k, 1), N + 1) if scipy_bound(N, n, k, conf) <= allowed), None)


def test_the_bound_agrees_with_scipy_in_random_cases():
    rng = random.Random(32)
    for _ in range(150):
        N = rng.randint(1, 400)
        n = rng.randint(0, N)
        k = rng.randint(0, min(n, 4))
        conf = rng.choice([0.8, 0.9, 0.95, 0.99, 0.9833333333333333])
        assert max_relevant(N, n, k, conf) == scipy_bound(N, n, k, conf), (N, n, k, conf)


def test_three_per_rule_certificates_combined_by_bonferroni_against_one_joint_sample():
    """The issue's case: three strata certified at 95% each hold jointly at 85% only; recomputed at 1 - 0.05/3
    each, their sum is the valid joint bound, and one simple sample of the same labels bounds far tighter."""
    assert joint_confidence([0.95, 0.95, 0.95]) == pytest.approx(0.85)
    per = bonferroni(0.95, 3)
    assert float(per) == pytest.approx(1 - ALPHA / 3)
    strata = [2248, 2248, 2248]
    summed = sum(max_relevant(N, 60, 0, per) for N in strata)
    assert summed == sum(scipy_bound(N, 60, 0, float(per)) for N in strata)
    joint = max_relevant(sum(strata), 180, 0, 0.95)
    assert joint == scipy_bound(sum(strata), 180, 0, 0.95)
    assert joint < summed / 4, (joint, summed)


def test_the_recall_lower_bound_counts_the_rescued_as_found_and_not_as_missed():
    # 89 found by the screen, 2 more found (and rescued) in the sample; the stratum holds at most 30 relevant
    low = recall_lower_bound(91, 2, 30)
    assert low == pytest.approx(91 / (91 + 28))
    assert recall_lower_bound(0, 0, 0) is None
    assert recall_lower_bound(5, 0, 0) == 1


@pytest.mark.parametrize("N,found,recall", [(300, 20, 0.9), (120, 5, 0.8), (250, 40, 0.95)])
def test_the_plan_is_the_smallest_n_scipy_finds(N, found, recall):
    for k in (0, 1, 2):
        allowed = allowed_missed(found, k, N, recall, None)
        # recall (found + k) / (found + U) >= recall, worked out by hand
        assert allowed == max(U for U in range(0, N + 1) if (found + k) / (found + U) >= recall - 1e-12)
        assert smallest_n(N, k, 0.95, allowed) == scipy_smallest_n(N, k, 0.95, allowed), (N, found, recall, k)


def test_the_plan_on_the_issues_pile():
    """6,744 discarded works, 89 found, 95% recall at 95%: about 3,039 labels with none relevant."""
    allowed = allowed_missed(89, 0, 6744, 0.95, None)
    assert allowed == 4
    n = smallest_n(6744, 0, 0.95, allowed)
    assert n == 3039
    assert max_relevant(6744, n, 0, 0.95) <= 4 < max_relevant(6744, n - 1, 0, 0.95)
    assert hypergeom.cdf(0, 6744, 5, n) < ALPHA <= hypergeom.cdf(0, 6744, 5, n - 1)


def test_a_fraction_target_the_whole_stratum_cannot_meet_has_no_n():
    assert allowed_missed(None, 2, 10, None, 0.1) == 1
    assert smallest_n(10, 2, 0.95, 1) is None
    assert allowed_missed(None, 0, 10, 0.95, None) == -1, "recall needs found"
    assert allowed_missed(None, 0, 10, None, None) is None, "no target"


# --- the joint stratum on a screened workspace -------------------------------------------------------------


def toml(ws, text: str) -> None:
    (ws / "reporter.toml").write_text((ws / "reporter.toml").read_text() + "\n" + text)


def test_the_joint_stratum_is_every_discard_and_gates_the_hand_off_alone(ws, capsys):  # noqa: F811
    got = certify(capsys, ws, "discarded")
    assert (got["stratum"], got["kind"], got["N"]) == ("discarded", "joint", 3)
    assert got["strata"] == ["discard", "screen_cheap:discarded", "screen:discarded"]
    # the labels: W002 and W004 admitted and included; nothing relevant in the sample
    assert (got["found"], got["max_relevant"], got["recall_lower_bound"]) == (2, 0, 1.0)
    assert got["joint_confidence"] == 0.95 and got["supersedes"] is None
    out = ws / "h.csv"
    # --partial: the screened fixture keeps one work whose requests failed (reporter export refuses an
    # incomplete screen otherwise, issue 34)
    code, stdout, err = run(capsys, "export", "--workspace", ws, "--out", out, "--require-certified", "--partial")
    assert code == 0, err
    from reporter.certify.gate import gating_certificates
    from reporter.config import load_workspace
    from reporter.routing.published import find_release
    w = load_workspace(ws)
    assert gating_certificates(w, find_release(w.releases, None)) == (got["id"],)


def test_a_per_stratum_certificate_states_its_joint_confidence_and_no_recall_of_its_own(ws, capsys):  # noqa: F811
    got = certify(capsys, ws, "discard")
    assert got["strata"] == ["discard"] and got["joint_confidence"] == pytest.approx(0.85)
    assert got["recall_lower_bound"] is None, "it bounds one of three strata: recall needs them all"


def test_found_and_min_recall(ws, capsys):  # noqa: F811
    toml(ws, "[certify]\nmin_recall = 0.9\n")
    sheet = ws / "discarded.csv"
    assert run(capsys, "certify", "--workspace", ws, "--pile", "discarded", "--n", 2, "--out", sheet)[0] == 0
    label(sheet, lambda i, r: "include" if i == 0 else "exclude")
    code, out, err = run(capsys, "certify", "--workspace", ws, "--sheet", sheet, "--found", 10, "--json",
                         "--labeller", "A. Reviewer")
    assert code == 0, err
    got = json.loads(out)
    # 3 works, 2 labelled, 1 relevant: at most max_relevant(3, 2, 1) relevant; found 10 + 1 rescued
    most = max_relevant(3, 2, 1, 0.95)
    assert (got["found"], got["found_from"], got["max_relevant"], got["min_recall"]) == (11, "--found", most, 0.9)
    assert got["recall_lower_bound"] == pytest.approx(11 / (11 + most - 1))
    assert got["labeller"] == "A. Reviewer" and got["rescued"] == [sheet_first(sheet)]
    assert got["meets_target"] is None or isinstance(got["meets_target"], bool)


def sheet_first(sheet) -> str:
    import csv
    with open(sheet, newline="", encoding="utf-8") as f:
        return next(csv.DictReader(f))["work_id"]


def test_plan_json_and_the_refusal_name_the_same_n(ws, capsys):  # noqa: F811
    toml(ws, "[certify]\nmin_recall = 0.5\n")
    code, out, err = run(capsys, "certify", "--workspace", ws, "--plan", "--pile", "discarded", "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert {k: plan[k] for k in ("N", "found", "min_recall", "confidence")} == {
        "N": 3, "found": 2, "min_recall": 0.5, "confidence": 0.95}
    want = {str(k): smallest_n(3, k, 0.95, allowed_missed(2, k, 3, 0.5, None)) for k in (0, 1, 2)}
    assert plan["n_for_k"] == want
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and f"--pile discarded --n {want['0']} --out discarded.csv" in err, err
    code, _, err = run(capsys, "certify", "--workspace", ws, "--plan", "--pile", "discarded", "--found", 0)
    assert code == 0


def test_plan_needs_found_for_a_recall_target_and_a_target(ws, capsys):  # noqa: F811
    (ws / "reporter.toml").write_text((ws / "reporter.toml").read_text().replace('labels = "labels.csv"\n', ""))
    code, _, err = run(capsys, "certify", "--workspace", ws, "--plan", "--pile", "discarded")
    assert code == 2 and "sets no target" in err
    toml(ws, "[certify]\nmin_recall = 0.95\n")
    code, _, err = run(capsys, "certify", "--workspace", ws, "--plan", "--pile", "discarded")
    assert code == 2 and "give --found N" in err
    code, _, err = run(capsys, "export", "--workspace", ws, "--out", ws / "h.csv", "--require-certified")
    assert code == 2 and "give --found N" in err and not (ws / "h.csv").exists()


def test_the_rescued_work_joins_the_hand_off_marked(ws, capsys):  # noqa: F811
    got = certify(capsys, ws, "screen:discarded", lambda i, r: "include")
    assert got["rescued"] == [PREFIX + "W003"] and got["found"] == 3
    out = ws / "h.csv"
    code, stdout, err = run(capsys, "export", "--workspace", ws, "--out", out, "--partial")
    assert code == 0 and "and 1 rescued by certificates" in stdout, err
    side = json.loads((ws / "h.csv.provenance.json").read_text())
    assert side["rows"] == len(list(open(out, encoding="utf-8"))) - 1, "the sidecar counts the rescued row too"
    import csv
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    rescued = [r for r in rows if r["rescued_by_certificate"]]
    assert [(r["work_id"], r["rescued_by_certificate"], r["screen_outcome"]) for r in rescued] == [
        (PREFIX + "W003", got["id"], "discard")]
    assert rows[-1]["work_id"] == PREFIX + "W003", "after the admitted works"
    assert all(not r["rescued_by_certificate"] for r in rows[:-1])


def test_the_standing_speaks_recall_when_min_recall_is_the_target(ws, capsys):  # noqa: F811
    from reporter.certify.config import CertifySettings
    from reporter.certify.results import load_certificates, state_dir
    certify(capsys, ws, "discarded")
    certify(capsys, ws, "discard")
    certs = {c.stratum: c for c in load_certificates(state_dir(ws), json.loads(
        (ws / "releases" / "index.json").read_text())[-1])}
    joint, one = certs["discarded"], certs["discard"]
    assert joint.standing(CertifySettings(min_recall=0.95)) == (
        True, "meets the recall target: recall at least 100.0%, at least 95% required")
    meets, words = one.standing(CertifySettings(min_recall=0.95))
    assert meets is None and "one of several" in words, "a stratum's certificate cannot meet a recall target alone"
    assert joint.standing(CertifySettings(min_recall=0.95, max_missed_fraction=0.5))[1].startswith(
        "meets the target: at most 0% relevant, within 50%; meets the recall target")


def test_a_plan_for_a_huge_pile_sums_over_the_few_relevant_works_never_the_huge_sample(monkeypatch):
    """95% recall with 89 found in 5,000,000 discards needs n of about 2.25 million: every CDF evaluation runs
    over the smaller of K and n (the hypergeometric is symmetric in them), and the search for the bound gallops
    up from k, so no evaluation handles C(N, n) with n in the millions (that took minutes)."""
    from reporter.certify import bound
    evaluations = []
    numerator = bound._numerator
    monkeypatch.setattr(bound, "_numerator", lambda *a: evaluations.append(a) or numerator(*a))
    N = 5_000_000
    allowed = allowed_missed(89, 0, N, 0.95, None)
    n = smallest_n(N, 0, 0.95, allowed)
    assert allowed == 4 and max_relevant(N, n, 0, 0.95) == 4 < max_relevant(N, n - 1, 0, 0.95)
    assert evaluations and max(min(a[2], a[3]) for a in evaluations) <= 2 * (allowed + 1), \
        "every evaluation sums over a handful of relevant works"
    # and it agrees with scipy at that size
    assert hypergeom.cdf(0, N, 5, n) < ALPHA <= hypergeom.cdf(0, N, 5, n - 1)
