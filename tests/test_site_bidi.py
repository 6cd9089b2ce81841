"""Ids with bidi controls cannot reorder the text around them (issue 8, item 8)."""

import json

from support.routing import TODAY, write_pool, write_specs
from support.site import Node, parse_html

from reporter.routing.release import route_release
from reporter.build import render_site

RLO = "\u202e"
WORK = f"doi:10.1/{RLO}evil"
RULE = f"rule-{RLO}reversed"


def _strings_outside_bdi(node: Node, needle: str, inside: bool = False) -> list[str]:
    """Text nodes holding `needle` isolated neither by a <bdi> nor by Unicode isolates (FSI ... PDI).

    A <pre> block is exempt: each of its lines is a paragraph of its own, so a
    control in the spec as written reorders at most the rest of that line.
    """
    found = []
    for child in node.children:
        if isinstance(child, str):
            if needle in child.replace(f"\u2068{needle}\u2069", "") and not inside:
                found.append(child)
        else:
            found += _strings_outside_bdi(child, needle, inside or child.tag in ("bdi", "pre"))
    return found


def test_ids_with_bidi_controls_are_isolated_on_every_page(tmp_path):
    rules = [{"id": RULE, "pile": "screen", "precedence": 10, "match": {"field": "text", "phrase": "replication"}},
             {"id": "plain", "pile": "discard", "precedence": 5, "match": {"field": "title", "phrase": "erratum"}}]
    specs = write_specs(tmp_path, rules)
    pool = write_pool(tmp_path / "pool.parquet", [
        {"work_id": WORK, "source": "crossref", "title": "A replication", "abstract": "A replication study."},
        {"work_id": "doi:10.1/plain", "source": "crossref", "title": "Erratum", "abstract": "Erratum text."}])
    release = route_release(pool, specs, tmp_path / "releases", progress=False, as_of=TODAY)
    render_site(tmp_path / "releases", tmp_path / "site", progress=False)
    pages = sorted((tmp_path / "site").rglob("*.html"))
    shown = 0
    for page in pages:
        text = page.read_text()
        tree = parse_html(text)
        for needle in (WORK, RULE):
            body = tree.find("body")
            assert _strings_outside_bdi(body, needle) == [], f"{page}: {needle!r} outside <bdi>"
            shown += text.count(needle)
        title = tree.find("title").text()
        if RULE in title:
            assert f"\u2068{RULE}\u2069" in title, title  # a <title> cannot hold <bdi>: Unicode isolates
    assert shown > 0
    rule_page = next(p for p in pages if p.parent.name == "rules" and "plain" not in p.name)
    assert f"\u2068{RULE}\u2069" in parse_html(rule_page.read_text()).find("h1").text()
    # plain ASCII ids are not wrapped: their pages keep their bytes
    plain = (tmp_path / "site" / "releases" / release.release_id / "rules" / "plain.html").read_text()
    assert "<bdi>plain</bdi>" not in plain and "\u2068plain" not in plain
    assert json.loads((release.release_dir / "rule_stats.json").read_text())["rules"][0]["id"] in (RULE, "plain")
