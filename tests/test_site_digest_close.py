"""The week's "Close in meaning, missed by the watchlist" on the page, its twin and the e-mail (issue 33, item 2).

A hand-made week with `close_in_meaning` (hostile titles, a hostile concept and phrase): the section comes after
the KEEPs, each paper linked to its entry (a REVIEW) or its own page (a DROP), with its similarity, the nearest
concept quoted and the phrase it suggests; the e-mail lists the first EMAIL_CLOSE. A week without the field (rules
before digest.4, or `semantic = false`) shows no section: its pages are as they were (tests/golden).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support.digest import HOSTILE, week_document, write_week
from support.site import parse_html, toy_rules, toy_works, write_release

from reporter.build import render_site
from reporter.digest.archive import read_week
from reporter.errors import InputError
from reporter.hashing import canonical_json
from reporter.site.email_edition import EMAIL_CLOSE

CONCEPT = 'criteria.md:8 "<b>Protein</b> | **language** [x](https://evil.example)"'
CLOSE = [
    {"id": "openalex:W123", "similarity": 0.7123, "nearest_concept": "criteria.md:8", "concept": CONCEPT,
     "suggested_phrase": "<script>x</script> | `tick`"},
    {"id": "doi:10.5555/drop.5", "similarity": 0.65, "nearest_concept": "criteria.md:8", "concept": CONCEPT,
     "suggested_phrase": None},
    {"id": "doi:10.5555/review.near", "similarity": 0.6, "nearest_concept": "criteria.md:8", "concept": "",
     "suggested_phrase": "enzyme design"},
    {"id": "weird:<script>", "similarity": 0.55, "nearest_concept": "criteria.md:8", "concept": CONCEPT,
     "suggested_phrase": "protein models"},
]


def _document(close) -> dict:
    return {**week_document("2026-W20"), "rules": "digest.4", "close_in_meaning": close}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("close")
    write_week(root / "digests", week_document("2026-W19", hostile=False, prior=()))
    write_week(root / "digests", _document(CLOSE))
    write_release(root / "releases", toy_works(), toy_rules(1))
    render_site(root / "releases", root / "site", digests_dir=root / "digests", progress=False)
    return root / "site"


def test_the_section_comes_after_the_keeps_with_each_paper_linked_and_quoted(site):
    tree = parse_html((site / "digest/2026-W20.html").read_text(encoding="utf-8"))
    ids = [s.attrs.get("id") for s in tree.find_all("section")]
    assert ids.index("close") == ids.index("kept") + 1
    section = tree.find("section", id="close")
    assert section.find("h2").text() == "Close in meaning, missed by the watchlist: 4"
    rows = section.find("ol", id="close-list").find_all("li")
    assert [li.attrs["data-id"] for li in rows] == [e["id"] for e in CLOSE]
    first = rows[0]
    assert first.find("a").attrs["href"].startswith("#p-openalex-w123-")  # a REVIEW: its entry on the page
    assert first.find("a").text() == HOSTILE[3]
    assert "REVIEW, similarity 0.7123; nearest " + CONCEPT in first.text()
    assert first.find("code").text() == "<script>x</script> | `tick`"
    assert rows[1].find("a").attrs["href"] == "https://doi.org/10.5555/drop.5"  # a DROP: its own page
    assert "DROP, similarity 0.6500" in rows[1].text() and not rows[1].find_all("code")
    assert "nearest criteria.md:8;" in rows[2].text(), "without a quote, the line"
    assert not rows[3].find_all("a"), "an id that names no page gets no link"
    assert not section.find_all("b") and not section.find_all("script")
    toc = next(n for n in tree.find_all("nav") if n.attrs.get("class") == "toc")
    assert [a.attrs["href"] for a in toc.find_all("a")][:3] == ["#kept", "#close", "#review"]


def test_a_week_without_the_list_has_no_section(site):
    page = (site / "digest/2026-W19.html").read_text(encoding="utf-8")
    assert 'id="close"' not in page and "Close in meaning" not in page
    assert "Close in meaning" not in (site / "digest/2026-W19.md").read_text(encoding="utf-8")
    assert "CLOSE IN MEANING" not in (site / "digest/2026-W19.email.txt").read_text(encoding="utf-8")


def test_the_twin_says_the_same_and_keeps_data_as_text(site):
    text = (site / "digest/2026-W20.md").read_text(encoding="utf-8")
    assert text.index("## Close in meaning, missed by the watchlist: 4") < text.index("## For review")
    tokens = MarkdownIt("commonmark").parse(text)
    assert not any(c.type in ("html_inline", "html_block") for t in tokens for c in [t, *(t.children or [])])
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content.startswith("Close in meaning"))
    items = []
    for t in tokens[start:]:
        if t.type == "heading_open" and items:
            break
        if t.type == "inline" and t.level > 1 and "similarity" in t.content:
            items.append(t)
    assert len(items) == 4
    links = [c.attrs["href"] for c in items[0].children if c.type == "link_open"]
    assert links == ["2026-W20.md"]  # the twin's link to a paper on its own page (as its merges do)
    words = "".join(c.content for c in items[0].children if c.type == "text").replace("\u2060", "")  # no autolink
    assert words.endswith('REVIEW, similarity 0.7123; nearest ' + CONCEPT + '; the watchlist could add '
                          '"<script>x</script> | `tick`"'), words
    assert not any(c.type == "link_open" and "evil" in c.attrs.get("href", "") for t in tokens
                   for c in (t.children or []))


def test_the_email_lists_the_first_few(site):
    html = (site / "digest/2026-W20.email.html").read_text(encoding="utf-8")
    txt = (site / "digest/2026-W20.email.txt").read_text(encoding="utf-8")
    assert EMAIL_CLOSE == 3
    assert "CLOSE IN MEANING, MISSED BY THE WATCHLIST: 4" in txt
    assert "1 more paper on the week page:\n2026-W20.html#close" in txt
    body = txt[txt.index("CLOSE IN MEANING"):txt.index("FOR REVIEW")]
    assert "openalex:W123, REVIEW, similarity 0.7123" in body and "weird:<script>" not in body
    assert "On the week page: 2026-W20.html#close" in body  # the DROP: the week page's list
    tree = parse_html(html)
    heading = next(h for h in tree.find_all("h2") if h.text().startswith("Close in meaning"))
    assert heading.text() == "Close in meaning, missed by the watchlist: 4"
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x" not in html


@pytest.mark.parametrize("entry, match", [
    ({"id": "doi:10.5555/keep.1"}, "not KEEP"),
    ({"id": "doi:10.5555/nowhere"}, "not KEEP"),
    ({"similarity": "high"}, "not a number"),
    ({"similarity": float("nan")}, "not a number"),
    ({"nearest_concept": 8}, "not text"),
])
def test_a_malformed_list_is_refused_naming_the_file(entry, match):
    doc = _document([{**CLOSE[0], **entry}])
    data = json.dumps(doc).encode() if entry.get("similarity") != entry.get("similarity") else \
        canonical_json(doc).encode()
    with pytest.raises(InputError, match=f"decisions.json.*{match}"):
        read_week(data, "decisions.json")
    with pytest.raises(InputError, match="at most 5"):
        read_week(canonical_json(_document([CLOSE[0]] * 6)).encode(), "decisions.json")
    with pytest.raises(InputError, match="twice"):
        read_week(canonical_json(_document([CLOSE[0], CLOSE[0]])).encode(), "decisions.json")


def test_an_empty_list_says_so(tmp_path):
    write_week(tmp_path / "digests", week_document("2026-W19", hostile=False, prior=()))
    write_week(tmp_path / "digests", _document([]))
    write_release(tmp_path / "releases", toy_works(), toy_rules(1))
    render_site(tmp_path / "releases", tmp_path / "site", digests_dir=tmp_path / "digests", progress=False)
    page = (tmp_path / "site" / "digest/2026-W20.html").read_text(encoding="utf-8")
    assert "No paper outside the KEEPs came close enough in meaning this week." in page
    assert "came close enough" in Path(tmp_path / "site" / "digest/2026-W20.email.txt").read_text(encoding="utf-8")


def test_a_paper_ranked_with_meaning_shows_both_parts_of_its_order():
    from reporter.digest.records import Axes, Decision
    from reporter.site.digest_groups import ranking, relevance

    plain = Decision("doi:10.5555/a", "KEEP", 100, Axes(1, 1, 1), "r", (), "T", relevance=3.14159)
    assert relevance(plain) == "relevance 3.1416", "a week of older rules reads as before"
    meant = Decision("doi:10.5555/a", "KEEP", 100, Axes(1, 1, 1), "r", (), "T", relevance=3.14159, similarity=0.61)
    assert ranking(meant, {"doi:10.5555/a": "rank 2 of 30"}) == "rank 2 of 30 · relevance 3.1416 · similarity 0.6100"
