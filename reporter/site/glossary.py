"""The glossary page: every word of ours a page uses, with its plain meaning.

A newcomer meets pile names, "pending", "Stage 3" and input names on every
page; each page's footer links here, and the home page says so in its first
paragraph. The pile entries are the piles of the releases on the site, with
the meaning routing gives them (`compute.plain_name`); the input entries are
the diff page's (`INPUT_WHAT`); the verdicts are the novelty page's.
"""

from __future__ import annotations

from ..routing.artifacts import INPUT_NAMES, Release
from .compute import plain_name
from .diff_page import INPUT_WHAT
from .links import GLOSSARY, slug
from .models import GlossaryPage, Term
from .novelty_page import VERDICT_MEANINGS
from .page_parts import meta

ROUTING = (
    ("work", "One record of the pool: a paper, a preprint, a registration, with its id (doi:..., pmid:..., osf:...), "
             "its title and its abstract."),
    ("rule", "A declarative test of a work's text (a phrase in the title, a regular expression in the abstract, "
             "a source) that sends the works it matches to one pile. The rule book is specs/rules/*.json."),
    ("precedence", "When several rules match a work, the one of highest precedence decides its pile; the others "
                   "count it as outranked."),
    ("matched, won, outranked, no_text", "For every rule, matched = won + no_text + outranked: each work it "
                                          "matched went to its pile (won), was held back for lack of text "
                                          "(no_text), or was won by a rule of higher precedence (outranked)."),
    ("pile", "Where routing puts a work. A discard pile and a hold pile take works out of the flow; a screening "
             "pile sends them on to the model voters, which costs money; pending holds what no rule decided."),
    ("pending", "Not decided by routing, and costing nothing: either no rule matched the work (pending: "
                "unrouted), or a rule would send it to screening but it has no abstract to read (pending: "
                "no_text). In a weekly pool most works are pending: the rule book is written for the works "
                "worth a decision."),
    ("to screening (paying piles)", "The works of the screening piles: what the screen would send to the "
                                    "voters, and pay for."),
    ("shadow rule", "A rule scored on every work that never wins: its forecast says what it would do if it "
                    "were promoted."),
    ("domain, domain miss", "A rule may declare the works it is meant to govern (its domain); a miss is a work "
                            "of the domain the rule did not match that still went to a paying pile."),
)
RELEASES = (
    ("release", "One routing of one pool by one rule book: a folder named by the sha256 of its six inputs (its "
                "id, shortened to 12 characters), often with a label such as 2026-W27. Same inputs, same id "
                "and the same bytes; a changed input makes a new release and never touches an old one."),
    ("archived page", "A release's page and its rule pages are published once and never rewritten; the status "
                      "and diff pages are rebuilt at every build."),
)
SCREENING = (
    ("cheap screen (discard-only)", "The first screening tier: two inexpensive voters that may only discard a "
                                    "work, on two excludes; every other work goes on to the two-voter screen."),
    ("two-voter screen", "Two model voters read each work's title and abstract against the criteria; the screen "
                         "discards on two excludes and admits everything else."),
    ("not decided yet, no verdict yet", "Works a screening tier has not answered for yet: they wait, and may "
                                        "still go on; they have not left the flow."),
    ("Stage 3", "The full-text review that comes after the screen, outside this tool: the works the screen "
                "admitted are handed off to it, and the command reporter export writes their list."),
)
CERTIFY = (
    ("certificate", "A signed statement about what was not handed on: a seeded random sample of a release's "
                    "discards (one stratum, or all of them at once: discarded), labelled by a person, bounds "
                    "exactly how many relevant works the discards can still hold, at a stated confidence (95%: "
                    "a sample like this one would mislead at most 5% of the time). Each has its own archived "
                    "page and is never overwritten; a later one supersedes it. It holds for its release only: "
                    "at the next release the labels carry over, the certificate does not."),
    ("relevant", "A work the review would include, as the certificate's criteria document (or labels file) "
                 "says and its labeller judged: a label of include or unsure (doubt counts against the "
                 "discards, never for them). A relevant work found in a sample is rescued into the hand-off."),
    ("recall lower bound", "found / (found + the most relevant works the discards can still hold): with the "
                           "certificate's confidence, the screen and the samples together found at least this "
                           "share of the relevant works in the pool. The target a reviewer signs is a recall, "
                           "such as 95% at 95% ([certify] min_recall); it says nothing of works never in the "
                           "pool."),
)
DIGEST = (
    ("KEEP, REVIEW, DROP", "The weekly digest's three decisions: a paper worth reading this week, one a person "
                           "should look at, and one left out, each with its reason."),
    ("relevance", "The number that orders papers of one score (relevance 16.63): BM25F of the watchlist phrases "
                  "and In scope terms over the title (which weighs three times the abstract) and the abstract, "
                  "with the week as the corpus, so a term few papers of the week hold weighs more than a common "
                  "one, and repeating a term counts less and less. It compares papers of one week only, and never "
                  "changes a score or a decision: only their order, and who stays under the cap."),
    ("key", "Eight characters that name a paper on its week's page and in the e-mail: reporter feedback --wanted "
            "KEY (or --not-wanted KEY) marks it, and the digest index then shows the measured precision."),
    ("required-unconfirmed", "A tag: no term of a Required concept is in the title or the abstract. That is no "
                             "evidence of failing it, so the criteria score is borderline (0.70), not 0."),
    ("criteria silent", "No concept of the criteria document matched the paper. Its criteria score is written "
                        "\"criteria silent 0.70 (a stand-in)\": 0.70 stands in for a fit nobody measured, so the "
                        "paper can be REVIEW but never KEEP."),
    ("look-alike trap", "A paper that matched an Out of scope concept of the criteria document while no In scope "
                        "concept is in its title: it looks like the topic and is not. Its criteria score is 0, so "
                        "it is never KEEP."),
)


def build_glossary(releases: tuple[Release, ...]) -> GlossaryPage:
    """The glossary, with the piles of every release on the site (newest meaning first) among its terms."""
    piles: dict[str, str] = {}
    for rel in reversed(releases):
        for p in rel.stats.pile_order:
            piles.setdefault(p.name, plain_name(p.name, rel.stats))
    # A pile named like a word already explained (the pending pile: "pending") is that entry, not a second one.
    pile_terms = tuple(_term(f"pile {name}", name, f"A pile: {meaning}.") for name, meaning in piles.items()
                       if name not in {word for word, _ in ROUTING})
    inputs = tuple(_term(f"input {name}", name, f"A release input: {INPUT_WHAT[name]}.") for name in INPUT_NAMES)
    verdicts = tuple(_term(f"verdict {name}", name, meaning) for name, meaning in VERDICT_MEANINGS.items())
    groups = (("Routing", tuple(_term(w, w, m) for w, m in ROUTING) + pile_terms),
              ("Releases and their six inputs", tuple(_term(w, w, m) for w, m in RELEASES) + inputs),
              ("Screening", tuple(_term(w, w, m) for w, m in SCREENING)),
              ("Certified discards", tuple(_term(w, w, m) for w, m in CERTIFY)),
              ("The weekly digest", tuple(_term(w, w, m) for w, m in DIGEST)),
              ("Novelty verdicts", verdicts))
    return GlossaryPage(meta=meta(GLOSSARY, "What the words mean", [("Home", "index")], archived=False),
                        groups=groups)


def _term(key: str, word: str, meaning: str) -> Term:
    return Term(f"term-{slug(key)}", word, meaning)
