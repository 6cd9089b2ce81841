"""The hand-computed fixture: a tiny rule book and pool where every fate of routing.md occurs.

test_routing_fixture.py checks the engine against numbers worked out by hand
from these rules and rows (the comments on each row say which rules match it
and why); test_routing_labels_diagnose.py reuses them. Change a row or a rule here
and the hand-computed numbers there change too.
"""

RULES = {
    "discards.json": [
        {"id": "discard-erratum", "pile": "discard", "precedence": 100,
         "match": {"field": "title", "any_phrase": ["erratum", "corrigendum"]}},
        {"id": "osf-discard-prereg", "pile": "discard", "precedence": 90,
         "description": "OSF preregistrations report no outcome",
         "match": {"all": [{"column": "source", "in": ["osf"]}, {"column": "type", "in": ["registration"]},
                           {"field": "title", "phrase": "preregistration"}]},
         "domain": {"column": "source", "in": ["osf"]}},
    ],
    "screen.json": [
        {"id": "osf-replication-title", "pile": "screen", "precedence": 80,
         "match": {"all": [{"column": "source", "in": ["osf"]}, {"field": "title", "regex": r"replicat\w* of"}]}},
        {"id": "shadow-trial", "pile": "screen", "precedence": 60, "shadow": True,
         "match": {"field": "text", "phrase": "trial"}},
        {"id": "generic-replication", "pile": "screen", "precedence": 50,
         "match": {"field": "text", "any_phrase": ["replication study", "failed to replicate", "reproducib*"]}},
        {"id": "cheap-reanalysis", "pile": "screen_cheap", "precedence": 40,
         "match": {"field": "abstract", "phrase": "reanalysis"}},
        {"id": "empty-osf", "pile": "screen", "precedence": 10,
         "match": {"all": [{"column": "source", "in": ["osf"]}, {"empty": "text"}]}},
    ],
    "hold.json": [
        {"id": "hold-protocol", "pile": "hold", "precedence": 30, "match": {"field": "title", "phrase": "protocol"}},
        {"id": "hold-hebert", "pile": "hold", "precedence": 20, "match": {"field": "title", "phrase": "HÉBERT"}},
    ],
}

ROWS = [
    # erratum (wins, discard) + generic "replication study" (outranked by discard-erratum)
    {"work_id": "doi:10.1/w1", "source": "crossref", "type": "article",
     "title": "Erratum: replication study of X", "abstract": "We correct a figure."},
    # osf-discard-prereg wins; generic outranked by it
    {"work_id": "osf:a1", "source": "osf", "type": "registration",
     "title": "Preregistration: replication study of priming", "abstract": None},
    # generic wins; no abstract but OSF with a title: screened title-only; a domain miss of osf-discard-prereg
    {"work_id": "osf:a2", "source": "osf", "type": "registration",
     "title": "A replication study of ego depletion", "abstract": None},
    # osf-replication-title wins (regex "Replication of"); title-only; another domain miss
    {"work_id": "osf:a3", "source": "osf", "type": "registration",
     "title": "Exact Replication of Rinck (2007)", "abstract": None},
    # generic wins but no abstract, not OSF: pending/no_text; shadow would win, would not move (pending->pending)
    {"work_id": "pmid:5", "source": "pubmed", "type": "article",
     "title": "Failed to replicate: a trial", "abstract": "   "},
    # generic wins via reproducib*; cheap-reanalysis outranked; shadow would win into the same pile
    {"work_id": "pmid:6", "source": "pubmed", "type": "article",
     "title": "Reproducibility of trials", "abstract": "A reanalysis of trial data."},
    # hold-protocol wins; the shadow would win and move it hold -> screen
    {"work_id": "doi:10.1/w7", "source": "crossref", "type": "article",
     "title": "Study protocol for a trial", "abstract": "We describe the protocol."},
    # nothing matches: "pretrial" and "trials" are not the word "trial"
    {"work_id": "arxiv:2601.00008", "source": "arxiv", "type": "preprint",
     "title": "Pretrial detention", "abstract": "Nothing matches here; trials."},
    # no text at all, not OSF: nothing matches
    {"work_id": "doi:10.1/w9", "source": "biorxiv", "type": "preprint", "title": None, "abstract": None},
    # cheap-reanalysis wins (screen_cheap)
    {"work_id": "doi:10.1/w10", "source": "medrxiv", "type": "preprint",
     "title": "A meta\u2010analysis of \ufb01ndings", "abstract": "The reanalysis\nof  old data."},
    # hold-hebert: NFKC + Unicode lower-casing + Unicode word boundary
    {"work_id": "doi:10.1/w11", "source": "crossref", "type": "article",
     "title": "Hébert et al. revisited", "abstract": "Some text."},
    # "Hébertson" is not the word "Hébert"; "replication" alone is in no rule: unrouted
    {"work_id": "doi:10.1/w12", "source": "crossref", "type": "article",
     "title": "Hébertson replication", "abstract": "Other text."},
    # empty-osf wins; OSF but no title either: always no_text; in the OSF domain but not paying: no miss
    {"work_id": "osf:a4", "source": "osf", "type": "registration", "title": None, "abstract": " "},
]
