"""Page models, links, escaping, the flow and CSV cells: small pieces with answers a person can check."""

from __future__ import annotations

import copy
import importlib
import dataclasses
import json

import jinja2
import pytest
from jinja2 import meta as jmeta

from support.routing import TODAY

from reporter.errors import InputError
from reporter.site import compute, env, links, models
from reporter.site.charts import flow_chart
from reporter.csvcells import csv_bytes
from reporter.site.page_parts import flow_rows
from reporter.routing.artifacts import RuleStats, SampleWork, check_stats

PAGES = models.PAGES  # every class with a TEMPLATE, found in reporter/site/models/
GLOBALS = {"csp", "static_style", "static_script"}


def _names(environment: jinja2.Environment, name: str, seen: set[str]) -> set[str]:
    """Variables a template (with the templates it extends) reads from its context."""
    source = environment.loader.get_source(environment, name)[0]
    ast = environment.parse(source)
    imported = {node.target for node in ast.find_all(jinja2.nodes.Import)}
    found = set(jmeta.find_undeclared_variables(ast)) - imported
    for ref in jmeta.find_referenced_templates(ast):
        if ref and ref not in seen and not ref.startswith("_macros/"):
            seen.add(ref)
            found |= _names(environment, ref, seen)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.__name__)
def test_templates_use_exactly_the_documented_fields(page):
    fields = {f.name for f in dataclasses.fields(page)}
    html = _names(env.html_env(), f"{page.TEMPLATE}.html", set()) - GLOBALS
    md = _names(env.md_env(), f"{page.TEMPLATE}.md", set())
    assert html <= fields, f"{page.__name__}.html reads undocumented {html - fields}"
    assert md <= fields, f"{page.__name__}.md reads undocumented {md - fields}"
    assert html | md == fields, f"{page.__name__}: fields no template shows: {fields - html - md}"


def test_the_registry_finds_every_page_and_every_template_has_a_model():
    names = {p.TEMPLATE for p in PAGES}
    assert len(names) == len(PAGES) >= 9
    templates = {path.stem for path in env.TEMPLATES.joinpath("html").iterdir() if path.name.endswith(".html")}
    assert names == templates - {"base"}, "a template without a page model, or a model without a template"


def test_every_model_field_has_a_docstring():
    import ast
    import inspect
    import pkgutil
    modules = [importlib.import_module(f"{models.__name__}.{m.name}") for m in pkgutil.iter_modules(models.__path__)]
    assert len(modules) >= 8
    classes = [n for module in modules for n in ast.parse(inspect.getsource(module)).body
               if isinstance(n, ast.ClassDef)]
    for cls in classes:
        body = cls.body
        for i, node in enumerate(body):
            if isinstance(node, ast.AnnAssign) and node.target.id != "TEMPLATE":
                nxt = body[i + 1] if i + 1 < len(body) else None
                assert isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant), \
                    f"{cls.name}.{node.target.id} has no docstring"


def test_page_models_are_frozen():
    for cls in [c for c in vars(models).values() if dataclasses.is_dataclass(c)]:
        assert cls.__dataclass_params__.frozen, cls.__name__


def test_md_escape_makes_markup_literal():
    hostile = "<script>x</script> | **b** _i_ [l](u) `c` ~s~ & $m$ #h \\"
    out = env.md_escape(hostile)
    assert out == ("\\<script\\>x\\</script\\> \\| \\*\\*b\\*\\* \\_i\\_ \\[l\\](u) \\`c\\` \\~s\\~ \\& \\$m\\$ "
                   "\\#h \\\\")
    assert env.md_escape("a\nb\r\nc\u2028d\x00") == "a b c d"
    assert env.md_escape("x \u202eevil\u202c y") == "x evil y"
    assert env.md_escape(None) == ""
    assert env.md_escape(env.Md("**kept**")) == "**kept**"
    assert env.md_mark(" match ") == " **match** "
    assert env.md_url("a b(c)") == "a%20b%28c%29"


def test_slug_is_safe_and_unique():
    assert links.slug("osf-replication-title") == "osf-replication-title"
    a, b = links.slug("doi:10.1/x"), links.slug("doi:10.1-x")
    assert a != b and a.startswith("doi-10.1-x-")
    assert links.slug("Rule") != links.slug("rule")
    assert links.slug("../etc") != "../etc" and "/" not in links.slug("../etc")
    for s in ["", "a/b", "..", "日本語", "<script>"]:
        assert all(c.isalnum() or c in "._-" for c in links.slug(s))


def test_links_are_relative_from_each_page():
    rid = "ab" * 32
    assert links.href(links.HOME, links.release_path(rid)).html == f"releases/{rid}/index.html"
    rule = links.rule_path(rid, "x")
    assert links.href(rule, links.HOME).html == "../../../index.html"
    assert links.href(rule, links.release_path(rid), "rule-x") == links.Href("../index.html#rule-x", "../index.md")
    assert links.href(links.status_path(rid), links.status_path(rid), "lost").html == "#lost"


def _stats_doc(**changes):
    """rule_stats.json of a pool of 100 works (each rule's forecast, domain and spec empty)."""
    doc = {
        "release_id": "r" * 64, "rows": 100, "title_only": 0, "pool": {"rows": 100}, "pending": {"unrouted": 10, "no_text": 5},
        "piles": {"discard": 40, "hold": 5, "screen_cheap": 15, "screen": 25, "pending": 15},
        "pile_order": [{"name": "discard", "kind": "discard"}, {"name": "hold", "kind": "hold"},
                       {"name": "screen_cheap", "kind": "screen"}, {"name": "screen", "kind": "screen"},
                       {"name": "pending", "kind": "pending"}],
        "overlay": None, "identity_holds": True,
        "rules": [
            {"id": "d", "pile": "discard", "shadow": False, "matched": 50, "won": 40, "no_text": 0, "outranked": 10},
            {"id": "h", "pile": "hold", "shadow": False, "matched": 5, "won": 5, "no_text": 0, "outranked": 0},
            {"id": "c", "pile": "screen_cheap", "shadow": False, "matched": 20, "won": 15, "no_text": 2,
             "outranked": 3},
            {"id": "s", "pile": "screen", "shadow": False, "matched": 30, "won": 25, "no_text": 3, "outranked": 2},
        ],
        "overlap": {"rules": ["d", "h", "c", "s"], "matrix": [[50, 0, 0, 0], [0, 5, 0, 0], [0, 0, 20, 0], [0, 0, 0, 30]]},
    }
    for r in doc["rules"]:
        r.update({k: None for k in ("would_win", "would_move", "domain", "domain_rows", "domain_matched",
                                    "domain_miss")}, precedence=1, domain_miss_winners=[], outranked_by=[], spec={})
    return {**doc, **changes}


def _stats(**changes) -> RuleStats:
    """The record of `_stats_doc`."""
    return RuleStats.from_doc(_stats_doc(**changes))


def test_the_flow_names_what_left_at_each_step_and_ends_at_the_paying_piles():
    stats = _stats()
    steps = compute.flow_steps(stats)
    main = [s.main.count for s in steps]
    # 100 in; 10 match no rule (90); discard 40 and hold 5 leave (45); 5 lack text (40) = 15 + 25.
    assert main == [100, 90, 45, 40]
    # Read top to bottom, what left the flow or waits stands beside the box it came from: the box below is this
    # one less both.
    for before, after in zip(steps, steps[1:]):
        gone = sum(box.count for box in (before.side, before.waiting) if box is not None)
        assert after.main.count == before.main.count - gone
    # Issue 37, item 11: only the discards left the flow; pending works (no rule, no text) and held ones wait.
    assert [s.side.title if s.side else None for s in steps] == [None, "Discarded by a rule", None, None]
    assert [s.waiting.title if s.waiting else None for s in steps] == [
        "Pending: no rule matched", "Set aside by a rule (hold)", "Pending: no text to screen (no abstract)", None]
    assert {line.key: line.count for line in steps[1].side.lines} == {"fl-pile-discard": 40, "fl-rule-d": 40}
    assert {line.key: line.count for line in steps[1].waiting.lines} == {"fl-pile-hold": 5, "fl-rule-h": 5}
    assert [line.label for line in (*steps[1].side.lines, *steps[1].waiting.lines)] == [
        "discard: discarded by a rule", "d", "hold: set aside by a rule (hold)", "h"]
    rows = {r.key: r for r in flow_rows(steps)}
    assert [rows[k].kind for k in ("fl-out-unrouted", "fl-wait-hold", "fl-out-no_text", "fl-out-discard")] == \
        ["waiting", "waiting", "waiting", "removed"]
    split = {line.key: line.count for line in steps[3].main.lines}
    assert split == {"fl-to-screen_cheap": 15, "fl-to-screen": 25} and sum(split.values()) == steps[3].main.count
    assert steps[0].main.lines == ()  # no per-source counts in these statistics
    chart = flow_chart("c", "t", "The flow", steps)
    shown = {label.key: label.text for label in chart.labels if label.key}
    assert shown["fl-text"] == "40" and shown["fl-pile-discard"] == "40" and len(shown) == 8 + 6
    assert len(chart.arrows) == 3 + 3  # down between the four boxes, and right to the boxes beside each
    assert [b.css for b in chart.bars].count("box-out") == 1 and [b.css for b in chart.bars].count("box-wait") == 3
    # The phone's layout: the same numbers, in one column 360 units wide, an arrow to every box of what left or
    # waits and down between the four.
    narrow = chart.narrow
    assert narrow.width == 360 and {label.key: label.text for label in narrow.labels if label.key} == shown
    assert all(b.x >= 0 and b.x + b.w <= narrow.width for b in narrow.bars) and len(narrow.arrows) == 4 + 3


def test_the_flow_shows_each_source_when_the_statistics_count_them():
    stats = _stats(sources={"pubmed": 60, "osf": 30, "arxiv": 10})
    lines = compute.flow_steps(stats)[0].main.lines
    assert [(x.label, x.count) for x in lines] == [("pubmed", 60), ("osf", 30), ("arxiv", 10)]
    many = _stats(sources={f"s{i:02d}": 10 for i in range(10)})
    lines = compute.flow_steps(many)[0].main.lines
    assert len(lines) == compute.FLOW_SOURCES + 1 and (lines[-1].label, lines[-1].count) == ("2 more sources", 20)
    bad = _stats_doc(sources={"pubmed": 60})
    with pytest.raises(InputError, match="sources hold 60 rows, not rows=100"):
        check_stats(bad, "rule_stats.json")


def test_the_flow_goes_on_through_the_screen_to_the_hand_off():
    from reporter.screening.report import ScreenFunnel
    f = ScreenFunnel(paying=40, cheap=15, cheap_configured=True, cheap_discarded=6, cheap_proceeded=7,
                     cheap_undecided=2, screen=32, admitted=20, discarded=9, incomplete=3, hand_off=20)
    steps = compute.flow_steps(_stats(), f)
    main = [s.main.count for s in steps]
    # 40 with text; the cheap screen keeps 6 + 2 of its 15 (32 reach the screen: 25 + 7); 20 admitted, handed off.
    assert main == [100, 90, 45, 40, 32, 20, 20]
    for before, after in zip(steps, steps[1:]):
        gone = sum(box.count for box in (before.side, before.waiting) if box is not None)
        assert after.main.count == before.main.count - gone
    assert {x.key: x.count for x in steps[4].main.lines} == {"fl-sc-direct": 25, "fl-sc-cheap-proceed": 7}
    # Works the cheap screen or the screen has not decided yet wait: they are never in a box of what left.
    assert (steps[3].side.count, steps[3].waiting.count) == (6, 2)
    assert (steps[4].side.count, steps[4].waiting.count) == (9, 3)
    assert all("not decided" not in s.side.title and "no verdict" not in s.side.title.lower()
               for s in steps if s.side is not None)
    rows = {r.key: r for r in flow_rows(steps)}
    assert rows["fl-sc-cheap-incomplete"].kind == "waiting" and rows["fl-sc-cheap-incomplete"].label.startswith("waiting: ")
    assert rows["fl-sc-cheap-discard"].kind == "removed" and rows["fl-sc-cheap-discard"].label.startswith("left the flow: ")
    chart = flow_chart("c", "t", "The flow", steps)
    assert [b.css for b in chart.bars].count("box-wait") == 2 + 3  # and pending (no rule, no text) and held
    assert "box-wait" in {legend.css for legend in chart.legend}


def test_plain_names_say_what_a_pile_means():
    stats = _stats(pile_order=[{"name": "discard", "kind": "discard", "tier": None},
                                       {"name": "screen_cheap", "kind": "screen", "tier": "cheap"},
                                       {"name": "screen", "kind": "screen", "tier": "expensive"}])
    assert compute.plain_name("pending/unrouted", stats) == "no rule matched"
    assert compute.plain_name("pending/no_text", stats) == "no text to screen"
    assert compute.plain_name("screen_cheap", stats) == "to the cheap screen (discard-only)"
    assert compute.plain_name("screen", stats) == "to the two-voter screen"
    assert compute.plain_name("discard", stats) == "discarded by a rule"


def test_csv_cells_never_start_a_formula():
    rows = [['=HYPERLINK("http://x")', 3], ["+1", -2], ["-x", None], ["@SUM(A1)", 0], ["\tx", 5],
            ["plain, with comma", 1], ["line\nbreak", 2]]
    lines = csv_bytes(["work", "n"], rows).decode().split("\r\n")
    assert lines == ["work,n", "\"'=HYPERLINK(\"\"http://x\"\")\",3", "'+1,-2", "'-x,", "'@SUM(A1),0", "'\tx,5",
                     '"plain, with comma",1', '"line\nbreak",2', ""]


def test_identity_totals_add_up_to_the_pool():
    t = compute.identity_totals(_stats())
    assert t.won + t.no_text + t.unrouted == t.rows == 100


def test_broken_statistics_are_refused_with_the_rule_named():
    check_stats_ok = _stats_doc()
    check_stats(check_stats_ok, "rule_stats.json")
    bad = copy.deepcopy(check_stats_ok)
    bad["rules"][3]["outranked"] = 1
    with pytest.raises(InputError, match=r"rule s: matched 30 != won \+ no_text \+ outranked 29"):
        check_stats(bad, "rule_stats.json")
    bad = copy.deepcopy(check_stats_ok)
    bad["piles"]["screen"] = 26
    with pytest.raises(InputError, match="rows"):
        check_stats(bad, "rule_stats.json")
    bad = copy.deepcopy(check_stats_ok)
    del bad["rules"][0]["outranked_by"]
    with pytest.raises(InputError, match="outranked_by"):
        check_stats(bad, "rule_stats.json")


def test_overlap_pairs_are_the_off_diagonal_counts_largest_first():
    stats = _stats(overlap={"rules": ["a", "b", "c"], "matrix": [[5, 2, 0], [2, 4, 3], [0, 3, 9]]})
    pairs, n = compute.overlap_pairs(stats)
    assert pairs == [("b", "c", 3), ("a", "b", 2)] and n == 2


def test_share_is_a_percentage_with_one_decimal():
    assert compute.share(1, 3) == "33.3%" and compute.share(0, 0) == "—"
    assert json.loads(json.dumps(compute.share(2, 8))) == "25.0%"


def test_the_context_window_is_the_one_routing_recorded():
    from reporter.site.release_page import work_view
    w = SampleWork.from_doc({"work_id": "doi:1", "pile": "screen",
                             "context": {"field": "title", "before": "abcde", "match": "trial", "after": "xy"}})
    (cut,) = work_view("index.html", "r" * 64, w, set(), window=5).snippets
    assert (cut.cut_before, cut.cut_after) == (True, False)
    (whole,) = work_view("index.html", "r" * 64, w, set(), window=80).snippets
    assert (whole.cut_before, whole.cut_after) == (False, False)


def test_every_matched_span_is_shown_when_samples_hold_several():
    from reporter.site.release_page import work_view
    spans = [{"field": "title", "before": "an ", "match": "animal", "after": " study"},
             {"field": "abstract", "before": "we ", "match": "reproduce", "after": " it"}]
    w = SampleWork.from_doc({"work_id": "doi:10.1234/x", "pile": "hold", "context": spans[0], "contexts": spans})
    view = work_view("index.html", "r" * 64, w, set(), window=80)
    assert [(c.field, c.match) for c in view.snippets] == [("title", "animal"), ("abstract", "reproduce")]
    assert view.href.html == "https://doi.org/10.1234/x"


def test_a_release_without_its_context_window_is_refused(tmp_path):
    from conftest import SITE_WORKSPACE

    from reporter.routing import route_release
    from reporter.routing.artifacts import load_release
    result = route_release(SITE_WORKSPACE / "pool.jsonl", SITE_WORKSPACE / "specs", tmp_path, workers=1,
                           progress=False, as_of=TODAY)
    samples = json.loads((result.release_dir / "samples.json").read_text())
    assert load_release(tmp_path, result.release_id).samples.context_chars == samples["context_chars"] == 80
    del samples["context_chars"]
    (result.release_dir / "samples.json").write_text(json.dumps(samples))
    with pytest.raises(InputError, match="samples.json: lacks the field 'context_chars'"):
        load_release(tmp_path, result.release_id)


def test_the_generated_banner_reads_the_markers_fields_in_the_pages_words():
    """Issue 37, item 10: the release page printed the marker whole, naming `reporter.pool.generate`, a module
    that no longer exists. The marker's bytes stay (they are the pool's); the page reads its seed and rows."""
    from reporter.example.generate import _marker, MARKER_KEY
    from reporter.site.release_page import generated_words
    whole = _marker(0, 200000)[MARKER_KEY].decode()
    assert "reporter.pool.generate" in whole  # the pool's bytes, unchanged
    assert generated_words(whole) == ("It holds 200,000 works drawn with seed 0.",
                                      "python -m reporter.example POOL --rows 200000 --seed 0")
    cut = _marker(0, 202000, (190000, 200000))[MARKER_KEY].decode()
    assert generated_words(cut) == (
        "It holds 202,000 works drawn with seed 0, leaving out rows 190,000 to 199,999.",
        "python -m reporter.example POOL --rows 202000 --seed 0 --without 190000:200000")
    assert generated_words("made by hand") == ("", None)  # no fields: the banner, without detail
    assert generated_words(None) == (None, None) and generated_words("") == (None, None)
