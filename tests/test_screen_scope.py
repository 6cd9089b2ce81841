"""Which works each screening tier screens, and the text the voters see (reporter/screening/scope.py).

A small workspace routed by the real engine: eight works, three rules (an
erratum to discard, replication to the screen, randomised trials to the
cheap tier), an OSF title screened on its own, an overlay that fills an
abstract. The helpers here (`make_workspace`, `route`, `record`) are used by
the other tests/test_screen_*.py files too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.routing import TODAY

from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.panel.store import open_store
from reporter.panel.store_rows import FailureRow, VerdictRow, VoteRow
from reporter.panel.votes import Vote
from reporter.routing.release import route_release
from reporter.screening.plan import generations
from reporter.screening.prompt import load_prompt
from reporter.screening.scope import load_works, screen_piles, tier_scope

HOSTILE = "Replication of <script>alert(1)</script> Smith | **1990** [x](javascript:alert(1))"
WORKS = [
    ("doi:10.5555/a1", "openalex", "A replication of the anchoring effect", "We replicate anchoring in three labs."),
    ("doi:10.5555/a2", "openalex", "Erratum: a replication of the decoy effect", "This corrects Table 2."),
    ("pmid:101", "pubmed", "A randomised trial of aspirin", "Cells were run in triplicate."),
    ("pmid:102", "pubmed", "A randomised trial of zinc", "  "),
    ("osf:abc01", "osf", HOSTILE, None),
    ("doi:10.5555/a6", "openalex", "Priming: a replication study", "A replication study of priming in 40 labs."),
    ("doi:10.5555/a7", "openalex", "Cells under stress", "Nothing to see."),
    ("pmid:103", "pubmed", "Another randomised trial", "A replication of the trial design, in 12 sites."),
]
OVERLAY_ABSTRACT = "Zinc was given in triplicate to 40 patients."
CHEAP = ("pmid:101", "pmid:102")
DIRECT = ("doi:10.5555/a1", "osf:abc01", "doi:10.5555/a6", "pmid:103")
ALL_EXPENSIVE = ("doi:10.5555/a1", "pmid:101", "pmid:102", "osf:abc01", "doi:10.5555/a6", "pmid:103")
LABELS = {"doi:10.5555/a1": "include", "pmid:101": "exclude", "pmid:102": "include", "osf:abc01": "include",
          "doi:10.5555/a6": "exclude", "pmid:103": "include", "doi:10.5555/a2": "include"}
RULES = [
    {"id": "erratum", "pile": "discard", "precedence": 100, "match": {"field": "title", "any_phrase": ["erratum"]}},
    {"id": "replication", "pile": "screen", "precedence": 70,
     "match": {"field": "text", "any_phrase": ["replication", "replicate"]}},
    {"id": "trial", "pile": "screen_cheap", "precedence": 50,
     "match": {"field": "text", "any_phrase": ["randomised trial"]}},
]
PILES = {"piles": [{"name": "discard", "kind": "discard"}, {"name": "screen_cheap", "kind": "screen", "tier": "cheap"},
                   {"name": "screen", "kind": "screen", "tier": "expensive"}, {"name": "pending", "kind": "pending"}],
         "title_only_sources": ["osf"]}
CRITERIA = "Include replication studies.\nExclude <b>errata</b> & **notices**."


def voter_toml(tier: str, name: str, model: str, price_in: float, price_out: float) -> str:
    return (f'\n[[screen.{tier}.voters]]\nname = "{name}"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "{model}"\n'
            f'api_key_env = "TEST_SCREEN_KEY"\nprice_in_per_mtok = {price_in}\nprice_out_per_mtok = {price_out}\n')


def make_workspace(root: Path, *, screen: bool = True, cheap: bool = False, expensive: bool = True,
                   labels: bool = True) -> Path:
    """The test workspace in `root` (created): pool, overlay, rule book, labels and a [screen] table."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pool.jsonl").write_text("".join(
        json.dumps({"work_id": w, "source": s, "title": t, "abstract": a}) + "\n" for w, s, t, a in WORKS))
    (root / "overlay.jsonl").write_text(json.dumps({"work_id": "pmid:102", "abstract": OVERLAY_ABSTRACT}) + "\n"
                                        + json.dumps({"work_id": "doi:10.5555/a1", "abstract": "Not used."}) + "\n")
    (root / "specs" / "rules").mkdir(parents=True, exist_ok=True)
    (root / "specs" / "piles.json").write_text(json.dumps(PILES))
    (root / "specs" / "rules" / "rules.json").write_text(json.dumps(RULES))
    (root / "criteria.md").write_text(CRITERIA)
    (root / "labels.csv").write_text("work_id,label\n" + "".join(f"{w},{lab}\n" for w, lab in LABELS.items()))
    toml = ('pool = "pool.jsonl"\noverlay = "overlay.jsonl"\nspecs = "specs"\nreleases = "releases"\n'
            'site = "site"\n' + ('labels = "labels.csv"\n' if labels else ""))
    if screen:
        toml += '\n[screen]\ndatabase = "state/screen.db"\nraw_dir = "state/raw"\ncriteria = "criteria.md"\n'
        if cheap:
            toml += voter_toml("cheap", "c1", "gpt-4.1-nano", 0.1, 0.4) + voter_toml("cheap", "c2", "qwen-7b", 0, 0)
        if expensive:
            toml += voter_toml("expensive", "a", "gpt-4o-mini", 0.15, 0.6) + voter_toml("expensive", "b", "llama-70b",
                                                                                        0.5, 1.0)
    (root / "reporter.toml").write_text(toml)
    return root


def route(root: Path):
    """(workspace, release folder) after routing the workspace with the real engine."""
    ws = load_workspace(root)
    result = route_release(ws.pool, ws.specs, ws.releases, overlay=ws.overlay, workers=1, progress=False, as_of=TODAY)
    return ws, result.release_dir


def gens(ws) -> dict:
    """Tier -> current generation id."""
    return generations(ws, load_prompt(ws.screen))


def record(store, release_dir: Path, tier: str, generation: str, votes: dict | None = None,
           verdicts: dict | None = None, failures: tuple = (), tokens: tuple[int, int, float] = (100, 20, 0.001)):
    """Record votes (work -> voter -> Vote), verdicts (work -> outcome) and failures ((work, voter, cause)) under a claim."""
    votes, verdicts = votes or {}, verdicts or {}
    ids = sorted(set(votes) | set(verdicts) | {w for w, _v, _c in failures})
    rid = json.loads((Path(release_dir) / "release.json").read_text())["release_id"]
    store.seed_scope(rid, tier, generation, ids)
    assert {j.work_id for j in store.claim(rid, tier, generation, "test-runner", len(ids), 300)} == set(ids)
    tin, tout, cost = tokens
    done = store.record(
        "test-runner",
        votes=[VoteRow(tier, generation, w, voter, vote, tin, tout, cost, "raw.jsonl", i)
               for i, (w, by_voter) in enumerate(sorted(votes.items())) for voter, vote in by_voter.items()],
        verdicts=[VerdictRow(tier, generation, w, outcome) for w, outcome in verdicts.items()],
        failures=[FailureRow(tier, generation, w, voter, cause) for w, voter, cause in failures])
    assert not done.refused
    store.release("test-runner")


@pytest.fixture()
def routed(tmp_path):
    return route(make_workspace(tmp_path / "ws"))


def test_screen_piles_come_from_the_release(routed):
    _ws, rdir = routed
    assert screen_piles(rdir) == {"cheap": ("screen_cheap",), "expensive": ("screen",)}


def test_the_cheap_tier_screens_its_piles(routed):
    ws, rdir = routed
    s = tier_scope(ws, rdir, "cheap", cheap_generation=None, store=None)
    assert s.work_ids == CHEAP and s.direct == 2 and s.from_cheap == 0 and s.pending_cheap == 0


def test_without_cheap_voters_the_cheap_works_go_straight_to_the_screen(routed):
    ws, rdir = routed
    s = tier_scope(ws, rdir, "expensive", cheap_generation=None, store=None)
    assert s.work_ids == ALL_EXPENSIVE  # release order, the cheap works among the screen's own
    assert (s.direct, s.from_cheap, s.pending_cheap) == (4, 2, 0)
    assert "no cheap voters" in s.note


def test_with_cheap_voters_only_proceeded_works_reach_the_screen(tmp_path):
    ws, rdir = route(make_workspace(tmp_path / "ws", cheap=True))
    cheap_gen = gens(ws)["cheap"]
    s = tier_scope(ws, rdir, "expensive", cheap_generation=cheap_gen, store=None)
    assert s.work_ids == DIRECT and (s.direct, s.from_cheap, s.pending_cheap) == (4, 0, 2)
    with open_store(ws.screen.database, where="[screen] database") as store:
        record(store, rdir, "cheap", cheap_gen, verdicts={"pmid:102": "proceed"})
        s = tier_scope(ws, rdir, "expensive", cheap_generation=cheap_gen, store=store)
        assert s.work_ids == ("doi:10.5555/a1", "pmid:102", "osf:abc01", "doi:10.5555/a6", "pmid:103")
        assert (s.direct, s.from_cheap, s.pending_cheap) == (4, 1, 1)
        assert "may still come" in s.note
        record(store, rdir, "cheap", cheap_gen, verdicts={"pmid:101": "discard"})
        s = tier_scope(ws, rdir, "expensive", cheap_generation=cheap_gen, store=store)
        assert (len(s.work_ids), s.from_cheap, s.pending_cheap) == (5, 1, 0)
        # Verdicts of another cheap generation do not count.
        s = tier_scope(ws, rdir, "expensive", cheap_generation="0" * 64, store=store)
        assert s.work_ids == DIRECT and s.pending_cheap == 2


def test_load_works_gives_the_text_routing_saw(routed):
    ws, rdir = routed
    works = load_works(ws, rdir, ALL_EXPENSIVE)
    assert set(works) == set(ALL_EXPENSIVE)
    assert works["pmid:102"].abstract == OVERLAY_ABSTRACT  # the overlay filled the blank abstract
    assert works["doi:10.5555/a1"].abstract == "We replicate anchoring in three labs."  # never overwritten
    osf = works["osf:abc01"]
    assert (osf.title, osf.abstract, osf.title_only) == (HOSTILE, None, True)  # verbatim, title only
    assert not any(works[w].title_only for w in ALL_EXPENSIVE if w != "osf:abc01")
    assert load_works(ws, rdir, []) == {}


def test_load_works_refuses_a_pool_or_overlay_that_changed(routed):
    ws, rdir = routed
    pool = ws.pool.read_text()
    ws.pool.write_text(pool.replace("three labs", "four labs"))
    with pytest.raises(InputError, match="the pool differs from the one release"):
        load_works(ws, rdir, ["doi:10.5555/a1"])
    ws.pool.write_text(pool)
    ws.overlay.write_text(ws.overlay.read_text().replace("40 patients", "41 patients"))
    with pytest.raises(InputError, match="the overlay differs"):
        load_works(ws, rdir, ["pmid:102"])
    with pytest.raises(InputError, match="not in the pool"):
        load_works(ws, rdir, ["doi:10.5555/missing"], check=False)


def test_a_release_that_routes_nothing_to_the_cheap_tier_has_it_dormant(tmp_path):
    root = make_workspace(tmp_path / "ws")
    rules = [r for r in RULES if r["pile"] != "screen_cheap"]
    (root / "specs" / "rules" / "rules.json").write_text(json.dumps(rules))
    ws, rdir = route(root)
    s = tier_scope(ws, rdir, "cheap", cheap_generation=None, store=None)
    assert s.work_ids == () and "dormant" in s.note
