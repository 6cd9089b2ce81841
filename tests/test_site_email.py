"""The digest's e-mail edition: `digest/YYYY-Www.email.html`, `.email.txt` and `.eml` beside each week page.

Over the hand-made weeks of tests/support/digest.py (hostile titles, ids and
rationales) and a generated week of 2,000 papers decided by `reporter digest`:
the three files per week, byte-identical across builds and archived; the HTML
self-contained (inline styles, no script, no external resource) with every
data string escaped; the text free of markup escapes and of control and bidi
characters; the message multipart/alternative of the two with a Subject
naming the week and the kept count, deterministic headers, and no header a
title could add; links absolute under `[site] base_url`; under 100 KB for
2,000 papers.
"""

from __future__ import annotations

import email
import email.headerregistry
import json
import re
from dataclasses import fields
from email.policy import default as default_policy
from pathlib import Path

import jinja2.meta
import pytest

from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.hashing import dump_json
from reporter.ids import PAPER_PAGES
from reporter.build import render_site
from reporter.site.digest_pages import digest_week
from reporter.site.email_edition import REVIEW_SHOWN, build_email_edition, email_files
from reporter.site.env import email_html_env, text_env
from reporter.site.models.email import EmailEdition, EmailPaper
from reporter.site.paper_text import authors_line, snippet
from support.digest import HOSTILE, two_thousand_paper_week, week_document, write_week
from support.site import parse_html

FILES = ("email.html", "email.txt", "eml")
KB = 1024


def _files(site: Path, week: str) -> dict[str, bytes]:
    return {ext: (site / "digest" / f"{week}.{ext}").read_bytes() for ext in FILES}


def _with_texts(doc: dict, authors: list[str], abstract: str | None) -> dict:
    """A decisions.json document whose every decision carries authors and an abstract (issue 23, item 2)."""
    for d in doc["decisions"]:
        d["authors"], d["abstract"] = authors, abstract
    return doc


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    folder = tmp_path_factory.mktemp("email") / "digests"
    write_week(folder, _with_texts(week_document("2026-W19", hostile=False, prior=()), ["Ada Lovelace"], None))
    authors = ["Ada Lovelace", "Bob\r\nBcc: evil@example.org", "C \u202eD\u202c", "Dee Fourth"]
    doc = _with_texts(week_document("2026-W20"), authors, "See criteria.md and benchmark* <b>x</b>\x07 " * 20)
    doc["decisions"][0]["title"] = "Title\r\nBcc: evil@example.org\r\n\r\n<script>x</script> criteria.md"
    write_week(folder, doc)
    return folder


@pytest.fixture(scope="module")
def site(archive, tmp_path_factory):
    out = tmp_path_factory.mktemp("email_site") / "site"
    render_site(out.parent / "no-releases", out, digests_dir=archive, progress=False)
    return out


def test_each_week_has_the_three_files_byte_identical_across_builds(site, archive, tmp_path):
    again = tmp_path / "site"
    render_site(tmp_path / "no-releases", again, digests_dir=archive, progress=False)
    for week in ("2026-W19", "2026-W20"):
        assert _files(site, week) == _files(again, week)
    manifest = json.loads((site / "manifest.json").read_text())["files"]
    assert all(manifest[f"digest/2026-W20.{ext}"]["archived"] for ext in FILES)
    report = render_site(tmp_path / "no-releases", again, digests_dir=archive, progress=False)
    assert report.written == 0


def test_the_html_is_self_contained_with_inline_styles_only(site):
    text = (site / "digest" / "2026-W20.email.html").read_text(encoding="utf-8")
    tree = parse_html(text)
    tags = {n.tag for n in tree.iter()}
    assert not tags & {"script", "style", "link", "img", "iframe", "object", "embed", "form", "svg", "base"}
    assert not re.search(r"@import|@font-face|url\(|\bsrc=", text)
    assert tree.find("body").attrs["style"]
    for a in tree.find_all("a"):
        target = a.attrs["href"]
        assert target.startswith("2026-W20.html") or any(
            target.startswith(url.split("{}")[0]) for _, url in PAPER_PAGES.values()), target


def test_data_is_escaped_in_the_html_and_plain_in_the_text(site):
    html = (site / "digest" / "2026-W20.email.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>x</b>" not in html
    assert "\x07" not in html
    text = (site / "digest" / "2026-W20.email.txt").read_text(encoding="utf-8")
    assert HOSTILE[0] in text  # a title shown as the text it is
    assert "criteria.md" in text and "benchmark*" in text and "<b>x</b>" in text
    assert "\\" not in text, "no Markdown escapes in the plain text"
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
    assert max(len(line) for line in text.splitlines() if "://" not in line and "#p-" not in line) <= 76


def test_the_message_is_both_parts_with_a_subject_naming_the_week_and_the_kept_count(site):
    files = _files(site, "2026-W20")
    msg = email.message_from_bytes(files["eml"], policy=default_policy)
    assert msg["Subject"] == "Weekly digest 2026-W20: 3 papers kept"
    assert msg["Date"] == "Mon, 18 May 2026 00:00:00 +0000"
    assert re.fullmatch(r"<digest-2026-W20\.[0-9a-f]{24}@reporter\.invalid>", msg["Message-ID"])
    assert msg.get_content_type() == "multipart/alternative"
    plain, html = msg.get_payload()
    assert plain.get_content_type() == "text/plain" and html.get_content_type() == "text/html"
    assert plain.get_content().replace("\r\n", "\n") == files["email.txt"].decode("utf-8")
    assert html.get_content().replace("\r\n", "\n") == files["email.html"].decode("utf-8")
    assert msg["From"] is None and msg["To"] is None, "the site is public: `reporter mail` adds From and To"
    assert b"\r\n" in files["eml"] and b"\n" not in files["eml"].replace(b"\r\n", b"")


def test_a_title_or_an_author_with_cr_lf_opens_no_header(site):
    raw = _files(site, "2026-W20")["eml"]
    msg = email.message_from_bytes(raw, policy=default_policy)
    assert list(msg.keys()) == ["Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"]
    for part in msg.get_payload():
        assert list(part.keys()) == ["Content-Type", "Content-Transfer-Encoding"]
    assert b"\r\nBcc:" not in raw


def test_every_keep_the_first_reviews_and_the_drops_by_cause(tmp_path):
    doc = week_document("2026-W21", hostile=False)
    keep = doc["decisions"][0]
    reviews = [dict(keep, id=f"doi:10.5555/review.{i:02d}", decision="REVIEW", score=60, rationale=f"REVIEW {i}")
               for i in range(REVIEW_SHOWN + 5)]
    doc["decisions"] = [d for d in doc["decisions"] if d["decision"] == "KEEP"] + reviews + [
        d for d in doc["decisions"] if d["decision"] == "DROP"]
    doc["calibration"].update(review=len(reviews), histogram=_histogram(doc))
    keep.update(authors=["A One", "B Two", "C Three", "D Four"], abstract="word " * 200)
    edition = build_email_edition(digest_week(dump_json(doc).encode(), "x"))
    assert [p.id for p in edition.keep] == [d["id"] for d in doc["decisions"] if d["decision"] == "KEEP"]
    first = edition.keep[0]
    assert first.authors == "A One, B Two, C Three et al." and first.snippet.endswith("…")
    assert first.why == keep["rationale"] and edition.keep[2].authors == "" and edition.keep[2].snippet == ""
    assert [p.id for p in edition.review] == [r["id"] for r in reviews[:REVIEW_SHOWN]]
    assert (edition.review_total, edition.review_more) == (len(reviews), 5)
    assert [(c.label, c.count) for c in edition.dropped] == [
        ("Already covered", 1), ("Look-alike trap", 1), ("Fails required", 1), ("Not in scope", 1), ("Weak match", 3)]
    html, text = (data.decode() for _, data in email_files(digest_week(dump_json(doc).encode(), "x"))[:2])
    assert "5 more papers for review" in html and "5 more papers for review" in text
    assert "A One, B Two, C Three et al." in text


def test_authors_and_snippets():
    assert authors_line([]) == "" and authors_line(["A"]) == "A" and authors_line(["A", "B", "C"]) == "A, B, C"
    assert authors_line(["A", "B", "C", "D"]) == "A, B, C et al."
    assert snippet(None) == "" and snippet(" a\n b ") == "a b"
    cut = snippet("word " * 100)
    assert len(cut) <= 280 and cut.endswith("…") and not cut.endswith(" …")


def test_links_are_absolute_under_the_site_base_url(archive, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reporter.toml").write_text('pool = "p.jsonl"\nspecs = "specs"\nreleases = "releases"\n'
                                      '[site]\npath = "out"\nbase_url = "https://example.org/digest-site/"\n')
    workspace = load_workspace(ws)
    assert (workspace.site, workspace.base_url) == (ws / "out", "https://example.org/digest-site")
    render_site(ws / "releases", workspace.site, digests_dir=archive, workspace=workspace, progress=False)
    html = (workspace.site / "digest" / "2026-W20.email.html").read_text()
    text = (workspace.site / "digest" / "2026-W20.email.txt").read_text()
    page = "https://example.org/digest-site/digest/2026-W20.html"
    assert f'href="{page}"' in html and f'href="{page}#p-' in html and page in text
    assert "2026-W20.html" not in html.replace(page, "")
    msg = email.message_from_bytes((workspace.site / "digest" / "2026-W20.eml").read_bytes(), policy=default_policy)
    assert msg["Message-ID"].endswith("@example.org>")


@pytest.mark.parametrize("table, complaint", [
    ('[site]\nbase_url = "ftp://example.org"\n', "http:// or https://"),
    ('[site]\nbase_url = "https://example.org/?a=1"\n', "without a query"),
    ('[site]\nbase = "https://example.org"\n', "unknown key 'base'"),
    # item 4 of issue 30: published in every e-mail and feed.xml, so refused (and never repeated)
    ('[site]\nbase_url = "https://digest:hunter2@example.org/site"\n', "must not hold a user name or a password"),
    # item 9: the host is the Message-ID's domain, which must be ASCII
    ('[site]\nbase_url = "https://ëxample.org/site"\n', "write it as 'https://xn--xample-ova.org/site'"),
])
def test_a_bad_site_table_is_refused(tmp_path, table, complaint):
    (tmp_path / "reporter.toml").write_text('pool = "p"\nspecs = "s"\nreleases = "r"\n' + table)
    with pytest.raises(InputError, match=re.escape(complaint)) as caught:
        load_workspace(tmp_path)
    assert "[site]" in str(caught.value) and "hunter2" not in str(caught.value)


def test_the_templates_use_exactly_the_documented_fields():
    documented = {f.name for f in fields(EmailEdition)}
    used = set()
    for env, name in ((email_html_env(), "digest_week.html"), (text_env(), "digest_week.txt")):
        source = env.loader.get_source(env, name)[0]
        names = jinja2.meta.find_undeclared_variables(env.parse(source))
        assert names <= documented, f"{name} reads undocumented {names - documented}"
        used |= names
        paper = set(re.findall(r"\bp\.([a-z_]+)", source))
        assert paper <= {f.name for f in fields(EmailPaper)}, paper
    assert used == documented


# --- a week of 2,000 papers ---------------------------------------------------------------------------

def test_a_week_of_2000_papers_makes_an_email_under_100_kb(tmp_path, capsys):
    archive = two_thousand_paper_week(tmp_path / "week")
    site = tmp_path / "site"
    render_site(tmp_path / "no-releases", site, digests_dir=archive, progress=False)
    files = _files(site, "2026-W20")
    doc = json.loads((archive / "2026-W20" / "decisions.json").read_text())
    kept = doc["calibration"]["kept"]
    assert kept == 25 and doc["calibration"]["review"] > REVIEW_SHOWN, doc["calibration"]
    assert doc["close_in_meaning"] and b"CLOSE IN MEANING, MISSED BY THE WATCHLIST" in files["email.txt"]
    with capsys.disabled():
        print("\n2,000-paper week, 25 KEEPs:", ", ".join(f"{ext} {len(data):,} bytes" for ext, data in files.items()))
    for ext, data in files.items():
        assert len(data) < 100 * KB, f"{ext}: {len(data):,} bytes"


def _histogram(doc: dict) -> list[int]:
    histogram = [0] * 10
    for d in doc["decisions"]:
        histogram[min(d["score"] // 10, 9)] += 1
    return histogram


def test_every_field_at_its_cap_still_makes_an_email_under_100_kb():
    """25 KEEPs and REVIEWs whose titles, authors, abstracts and rationales are all longer than the e-mail shows."""
    doc = week_document("2026-W20", hostile=False)
    long = {"title": "T" * 299 + " x" * 50, "rationale": "R " * 300, "authors": ["N" * 120] * 30,
            "abstract": "word " * 400, "merged_ids": []}
    doc["decisions"] = [dict(doc["decisions"][0], id=f"arxiv:2605.{10000 + i}", **long) for i in range(25)] + [
        dict(doc["decisions"][0], id=f"arxiv:2605.{20000 + i}", decision="REVIEW", score=60, **long)
        for i in range(300)]
    doc["calibration"].update(kept=25, review=300, dropped=0, histogram=_histogram(doc))
    week = digest_week(dump_json(doc).encode(), "x")
    for path, data in email_files(week, "https://example.org/a/long/path/where/the/site/is/published"):
        assert len(data) < 100 * KB, f"{path}: {len(data):,} bytes"


@pytest.mark.parametrize("base_url, domain", [
    ("https://example.org/digest", "example.org"),
    ("https://EXAMPLE.org./digest", "example.org"),  # the root's dot is no part of a Message-ID's domain
    ("http://[::1]:8080/", "[IPv6:::1]"),  # an IP address is a domain literal (RFC 5322 no-fold-literal)
    ("http://192.0.2.1/", "[192.0.2.1]"),
    (None, "reporter.invalid"),
])
def test_the_message_id_domain_is_one_rfc_5322_accepts(base_url, domain):
    """Issue 30, adversarial: `<...@::1>` and `<...@example.org.>` are not Message-IDs a mail server accepts."""
    from reporter.site.email_edition import message_domain

    assert message_domain(base_url) == domain
    parsed = email.headerregistry.HeaderRegistry()("Message-ID", f"<digest-2026-W20.0@{domain}>")
    assert not parsed.defects


# --- issue 33, items 5 and 7: keys, the decisive reason first, the footer -------------------------------


def _keyed(doc: dict) -> dict:
    """The document as rules digest.4 writes it: every decision with its key."""
    from reporter.digest.records import paper_key
    for d in doc["decisions"]:
        d["key"] = paper_key(d["id"])
    return {**doc, "rules": "digest.4"}


LONG_RATIONALE = ("KEEP: strong match and in scope (score 100: match 1.00, criteria 1.00, novelty 1.00); match: "
                  + ", ".join(f"'phrase number {i}'" for i in range(14)) + " in the title (weight 1.5); criteria: in "
                  'scope criteria.md:4 "Gaussian splatting"; novelty: not in the prior four weeks.')


def test_a_keyed_week_shows_keys_says_the_concept_first_and_has_the_footer(tmp_path):
    from reporter.digest.records import paper_key
    from reporter.site.email_edition import FOOTER, decisive_first
    doc = _keyed(week_document("2026-W20", hostile=False))
    doc["decisions"][0]["rationale"] = LONG_RATIONALE
    assert LONG_RATIONALE.index("criteria.md:4") > 300  # cut at 300, the old e-mail lost the concept
    edition = build_email_edition(digest_week(dump_json(doc).encode(), "w20"))
    first = edition.keep[0]
    assert first.key == paper_key("doi:10.5555/keep.1") and len(first.key) == 8
    assert first.why.startswith('KEEP: strong match and in scope (score 100: match 1.00, criteria 1.00, novelty '
                                '1.00); criteria: in scope criteria.md:4 "Gaussian splatting"; match: ')
    assert edition.footer == FOOTER
    files = dict(email_files(digest_week(dump_json(doc).encode(), "w20")))
    txt = files["digest/2026-W20.email.txt"].decode()
    assert f"doi:10.5555/keep.1, key {first.key}, score 100" in txt and "List-Unsubscribe" in txt
    assert f"key <code>{first.key}</code>" in files["digest/2026-W20.email.html"].decode()
    # A rationale of another shape is left as it is.
    assert decisive_first("DROP (weak-match): nothing") == "DROP (weak-match): nothing"
    # A week decided before keys (rules digest.3): its e-mail is as it was published, no key, no footer.
    plain = week_document("2026-W20", hostile=False)
    plain["decisions"][0]["rationale"] = LONG_RATIONALE
    old = build_email_edition(digest_week(dump_json(plain).encode(), "w20"))
    assert old.footer == "" and old.keep[0].key == ""
    assert old.keep[0].why.startswith(LONG_RATIONALE[:200]) and "criteria.md:4" not in old.keep[0].why


def test_latex_in_titles_reads_as_text_in_a_keyed_week(tmp_path):
    """Issue 33, item 7: raw `$...$` in titles on the page, in the e-mail and the feed (arXiv titles are TeX)."""
    from reporter.site.digest_pages import build_week_page
    from reporter.site.paper_text import plain_math
    assert plain_math("An $O(n^2)$ algorithm for $\\varepsilon$-EFX") == "An O(n²) algorithm for ε-EFX"
    assert plain_math("$\\mathcal{O}(\\log n)$ regret, $\\frac{1}{2}$-approx") == "O(log n) regret, 1/2-approx"
    assert plain_math("Costs $5 and $6 each") == "Costs $5 and $6 each"  # two prices, not a formula
    assert plain_math("$n^{1/3}$ and $x_{ij}$") == "n^(1/3) and x_(ij)"
    doc = _keyed(week_document("2026-W20", hostile=False))
    doc["decisions"][0]["title"] = "Fair $\\alpha$-shares in $O(n^2)$ <b>time</b>"
    week = digest_week(dump_json(doc).encode(), "w20")
    assert build_week_page(week).keep[0].title == "Fair α-shares in O(n²) <b>time</b>"  # escaped by the templates
    assert build_email_edition(week).keep[0].title == "Fair α-shares in O(n²) <b>time</b>"
    plain = week_document("2026-W20", hostile=False)
    plain["decisions"][0]["title"] = doc["decisions"][0]["title"]
    old = digest_week(dump_json(plain).encode(), "w20")  # a week before keys: its pages stay as published
    assert build_week_page(old).keep[0].title == "Fair $\\alpha$-shares in $O(n^2)$ <b>time</b>"


def test_many_papers_listed_again_are_counted_per_prior_week(tmp_path):
    """Issue 33, item 7: "Listed again" listed 240 weekend relistings one a line; a keyed week folds them."""
    from reporter.site.digest_pages import build_week_page
    from reporter.site.digest_views import LISTED_AGAIN_SHOWN
    doc = _keyed(week_document("2026-W20", hostile=False))
    again = [{"id": f"arxiv:2605.9{i:04d}", "week": "2026-W19", "decision": "DROP" if i % 5 else "REVIEW"}
             for i in range(240)]
    page = build_week_page(digest_week(dump_json({**doc, "listed_again": again}).encode(), "w20"))
    assert len(page.listed_again) == 240 and [(f.week.label, f.summary) for f in page.listed_again_folded] == [
        ("2026-W19", "240 papers: REVIEW 48, DROP 192")]
    few = build_week_page(digest_week(dump_json({**doc, "listed_again": again[:LISTED_AGAIN_SHOWN]}).encode(), "w"))
    assert few.listed_again_folded == ()
    old = build_week_page(digest_week(dump_json({**week_document("2026-W20", hostile=False),
                                                 "listed_again": again}).encode(), "w20"))
    assert old.listed_again_folded == ()  # a week before keys: its page as published
    write_week(tmp_path / "digests", {**doc, "listed_again": again})
    render_site(tmp_path / "none", tmp_path / "site", digests_dir=tmp_path / "digests", progress=False)
    section = parse_html((tmp_path / "site/digest/2026-W20.html").read_text()).find("section", id="listed-again")
    assert section.find("h2").text() == "Listed again: 240"
    assert [li.text() for li in section.find_all("li")] == ["2026-W19: 240 papers: REVIEW 48, DROP 192"]
    assert "- [2026-W19](2026-W19.md): 240 papers: REVIEW 48, DROP 192" in (
        tmp_path / "site/digest/2026-W20.md").read_text()


def test_a_keyed_week_says_what_relevance_is(tmp_path):
    """Issue 33, item 7: "relevance 16.63" was shown beside each paper unexplained."""
    write_week(tmp_path / "digests", _keyed(week_document("2026-W20", hostile=False)))
    render_site(tmp_path / "none", tmp_path / "site", digests_dir=tmp_path / "digests", progress=False)
    kept = parse_html((tmp_path / "site/digest/2026-W20.html").read_text()).find("section", id="kept")
    note = kept.find_all("p")[1]
    assert note.text().startswith("Relevance, beside each paper, orders papers of one score")
    assert note.find("a").attrs["href"] == "../glossary.html#term-relevance"
    glossary = parse_html((tmp_path / "site/glossary.html").read_text())
    assert glossary.find("dt", id="term-relevance").text() == "relevance"
    assert "[More in the glossary](../glossary.md)" in (tmp_path / "site/digest/2026-W20.md").read_text()
