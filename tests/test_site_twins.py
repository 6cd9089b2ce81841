"""The twins say their section prose once (issue 31, item 7): a sentence of 40 characters or more that both an HTML
template and a Markdown template write is a sentence that drifts (two did: the dropped papers' grouping and the
transitions table's note). Such prose lives in a documented page-model field both twins render; this test fails
when one comes back into both template folders, unless the allow-list below names it with the markup that
makes the two spellings differ."""

from __future__ import annotations

import html
import re

from reporter.site import env

LONG = 40
LINK = "a link inside it: HTML <a href>, Markdown [text](url)"
CODE = "a code span inside it: HTML <code>, Markdown backticks (or plain where the twin has none)"
STRONG = "a value set in bold: HTML <strong data-key> (the tests' and the script's hook), Markdown **"
VALUE = ("a value inside it, formatted by the twin's filters (|num, |count, |mark) in its own markup; a field would "
         "make the model write markup")
ALLOWED = {
    "Axis 2 came from the judges' recorded answers (generation {}); each paper's rationale names its judge, the "
    "criteria lines it cited and its reason.": "the generation id: HTML <span class=\"id\"> with <bdi>, Markdown plain",
    "Both tiers ask with this prompt (hash {}); a tier's generation covers it and the tier's voters.": CODE,
    "Current generation {} (its voters, their request parameters and the prompt): verdicts of other generations do "
    "not count here.": CODE,
    "It also publishes the weekly digest of papers worth reading and the novelty checks against a citation graph; "
    "the glossary says what each of our words means.": LINK,
    "Label findings for this rule are on the release's status page.": LINK,
    "Labelled includes the gate discarded: {}": "a heading with its count; HTML repeats it as the table's aria-label",
    "Most works are pending ({} of {}, {}), and that is expected": LINK + "; " + STRONG,
    ": pending is not a decision and costs nothing.": "the end of the pending note, after its two openings (most "
                                                       "works pending, or how many): " + LINK + "; " + STRONG,
    "No rule matched {} of them; {} would go to screening but have no abstract to read.": VALUE,
    "No rule was added, edited or removed: all {} are the same.": VALUE,
    "Of {} in the domain the rule matched {}; {} it did not match went to a paying pile.": STRONG,
    "For every rule, matched = won + no_text + outranked.": "the identity in bold: HTML <strong>, Markdown **",
    "Release {} is the first release in the releases folder's index, so there is nothing to compare it with.": LINK,
    "The identity holds: matched {} = won {} + no_text {} + outranked {}.": VALUE,
    "This site shows what reporter decided about a weekly pool of scholarly works: each release routes every work "
    "through a declarative rule book into piles (discarded, set aside, sent on to be screened by model voters, or "
    "left pending), and every count on these pages leads to the rule and the text that made it.": CODE,
    "{} Up to {} are listed per cell; the counts are complete.": VALUE + " (after the candidates' note, a field)",
    "Week {}, {}: {} kept, {} for review, {} dropped.": CODE + "; " + STRONG,
    "Works in both releases that changed pile: {}": "a heading with its count (HTML <h2 id>, Markdown ##)",
    "Works screened on their title alone get the work_title_only fragment instead of work.": CODE,
    "of release {} (its row in the release's rules), sending works to {} at precedence {}.": LINK + "; " + STRONG,
    "{} Label findings and screening progress are on the status page; what changed since the previous release, "
    "and why, is on the release diff.": LINK,
    "{} New weeks also arrive in the Atom feed.": LINK,
    "{} The glossary says what each of our words means.": LINK,
    "{} candidates checked against the graph:": LINK + "; " + STRONG,
}


def _jinja(src: str) -> str:
    """Comments gone, each expression a `{}`, each statement a paragraph break."""
    src = re.sub(r"\{#.*?#\}", " ", src, flags=re.S)
    src = re.sub(r"\{\{.*?\}\}", "{}", src, flags=re.S)
    return re.sub(r"\{%.*?%\}", "\n\n", src, flags=re.S)


BLOCK = ("p|li|ul|ol|h\\d|section|nav|table|tr|td|th|thead|tbody|div|dl|dt|dd|caption|figure|figcaption|summary|"
         "details|header|footer|main")


def html_text(src: str) -> str:
    """The prose of an HTML template: block elements break paragraphs, inline tags go, entities are decoded."""
    src = re.sub(r"<(script|style)\b.*?</\1>", "\n\n", _jinja(src), flags=re.S)
    src = re.sub(rf"</?({BLOCK})\b[^>]*>", "\n\n", src)
    return html.unescape(re.sub(r"<[^>]*>", "", src))


def md_text(src: str) -> str:
    """The prose of a Markdown template: links keep their text, emphasis, code marks and escapes go, table cells,
    headings, list items and quotes break paragraphs."""
    src = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", _jinja(src))
    src = src.replace("**", "").replace("`", "").replace("|", "\n\n")
    src = re.sub(r"^\s*(#+|-|\d+\.|>)\s", "\n\n", src, flags=re.M)
    return re.sub(r"\\(.)", r"\1", src)


def sentences(text: str) -> set[str]:
    """The sentences of LONG characters or more, whitespace made single spaces."""
    found = set()
    for para in re.split(r"\n\s*\n", text):
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z{(\[])", " ".join(para.split())):
            if len(s.strip()) >= LONG:
                found.add(s.strip())
    return found


def twin_sentences() -> dict[str, list[str]]:
    """Each sentence both an HTML and a Markdown template write, with the templates that write it."""
    where: dict[str, set[str]] = {}
    for folder, ext, text in (("html", "html", html_text), ("md", "md", md_text)):
        for path in env.TEMPLATES.joinpath(folder).rglob(f"*.{ext}"):
            for s in sentences(text(path.read_text(encoding="utf-8"))):
                where.setdefault(s, set()).add(f"{folder}/{path.relative_to(env.TEMPLATES / folder).as_posix()}")
    return {s: sorted(w) for s, w in where.items()
            if any(p.startswith("html/") for p in w) and any(p.startswith("md/") for p in w)}


def test_no_sentence_is_written_in_both_twins():
    shared = twin_sentences()
    written_twice = {s: w for s, w in shared.items() if s not in ALLOWED}
    assert not written_twice, ("sentences written in both an HTML and a Markdown template (move each into a "
                               "documented field of its page model, reporter/site/models/, and render the field in "
                               f"both): {written_twice}")
    assert not ALLOWED.keys() - shared.keys(), f"allowed but no longer in both twins: {ALLOWED.keys() - shared.keys()}"


def test_the_reader_finds_a_sentence_through_the_markup_of_each_twin():
    prose = "The pool of this release was made by a seeded generator; its works are invented."
    page = f'<p class="notice"><strong>Generated.</strong> {prose} ({{{{ x }}}})</p>'
    twin = f"> **Generated.** {prose} ({{{{ x }}}})"
    assert prose in sentences(html_text(page)) & sentences(md_text(twin))
    linked = ("<p>Label findings for this rule are on the release&#39;s <a href=\"{{ s.html }}\">status page</a>.</p>",
              "Label findings for this rule are on the release's [status page]({{ s.md|url }}).")
    assert sentences(html_text(linked[0])) == sentences(md_text(linked[1]))
    assert not sentences(html_text("<p>{{ generated_note }}</p>"))
