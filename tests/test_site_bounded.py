"""Big releases stay light: page sizes do not grow with the pool; invariants hold for any pool."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reporter.build import render_site
from reporter.site.compute import flow_steps
from reporter.site.diff import ABSENT, compute_diff, state_counts
from reporter.routing.artifacts import load_releases
from support.site import toy_rules, write_release

BENCH = Path(__file__).resolve().parents[1] / "bench" / "render.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_render", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _largest(releases: Path, out: Path) -> dict[str, int]:
    render_site(releases, out, progress=False)
    return {p.relative_to(out).as_posix().split("/", 2)[-1]: p.stat().st_size
            for p in out.rglob("*.html")}


def test_page_sizes_do_not_grow_with_the_pool(tmp_path):
    bench = _bench()
    sizes = {}
    for rows in (2_000, 300_000):
        releases = tmp_path / f"r{rows}"
        bench.make_release(releases, rows, seed=1)
        bench.make_release(releases, rows, seed=2, move=0.02)
        sizes[rows] = _largest(releases, tmp_path / f"s{rows}")
    small, big = max(sizes[2_000].values()), max(sizes[300_000].values())
    assert big < 200 * 1024, f"largest page {big} bytes"
    assert big < small * 1.1, f"pages grew with the pool: {small} -> {big} bytes"


works_strategy = st.lists(
    st.fixed_dictionaries({
        "source": st.sampled_from(["openalex", "osf", "pubmed"]),
        "title": st.one_of(st.none(), st.sampled_from(["replication of x", "erratum: y", "a trial", "editorial z",
                                                        "meta-analysis of q", "conference abstract: r", "other"])),
        "abstract": st.one_of(st.none(), st.just(""), st.sampled_from(["we replicate", "a randomised trial",
                                                                        "nothing", "meta-analysis"])),
    }), min_size=1, max_size=40)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(works=works_strategy, keep=st.integers(min_value=0, max_value=40))
def test_the_flow_never_grows_and_the_diff_counts_every_work_once(tmp_path_factory, works, keep):
    releases = tmp_path_factory.mktemp("prop") / "releases"
    pool = [dict(w, work_id=f"doi:10.1/{i}") for i, w in enumerate(works)]
    write_release(releases, pool, toy_rules(1))
    second = pool[:keep] + [dict(w, work_id=w["work_id"] + "b") for w in pool[keep:]]
    write_release(releases, second, toy_rules(2))
    found = load_releases(releases).releases
    if len(found) < 2:
        return  # identical inputs: one release
    old, new = found
    steps = flow_steps(new.stats)
    main = [s.main.count for s in steps]
    assert main == sorted(main, reverse=True) and main[0] == len(second)
    for before, after in zip(steps, steps[1:]):
        left = sum(box.count for box in (before.side, before.waiting) if box is not None)  # left, or waits
        assert after.main.count == before.main.count - left
    assert sum(line.count for line in steps[-1].main.lines) == main[-1]
    data = compute_diff(old, new, seed=0)
    assert sum(data.transitions.values()) == len(pool) + len(second) - min(keep, len(pool))
    # new and gone works per pile are the (not in release) row and column; moved works are in both, pile changed
    assert {s: n for s, n, _w in data.new} == {a: n for (b, a), n in data.transitions.items() if b == ABSENT}
    assert {s: n for s, n, _w in data.left} == {b: n for (b, a), n in data.transitions.items() if a == ABSENT}
    assert data.moved.num_rows == sum(n for (b, a), n in data.transitions.items() if ABSENT not in (b, a) and b != a)
    assert len(set(data.moved.column("work_id").to_pylist())) == data.moved.num_rows
    for release, side in ((old, 0), (new, 1)):
        seen: dict[str, int] = {}
        for pair, n in data.transitions.items():
            if pair[side] != ABSENT:
                seen[pair[side]] = seen.get(pair[side], 0) + n
        assert seen == {s: n for s, n in state_counts(release).items() if n}
    assert json.loads((releases / "index.json").read_text()) == [old.release_id, new.release_id]
