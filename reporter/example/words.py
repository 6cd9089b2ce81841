"""The example generator's words: banks, title and sentence templates, abstract plans.

The lists themselves live in `words.json` (package data, read with
importlib.resources); the numeric banks and the banks whose repeats set
how often a variant appears are built here. Values are drawn by position,
so any edit to a list changes the generated pool (bump GENERATOR_VERSION).

Templates: "{bank}" draws from a bank, "{Bank}" the same capitalised,
"{@set}" renders another set; a set is a list of templates or of
(template, weight).
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np


def _load() -> dict:
    return json.loads(resources.files(__package__).joinpath("words.json").read_text(encoding="utf-8"))


def _weighted(sets: dict[str, list]) -> dict[str, list]:
    """JSON has no tuples: a [template, weight] pair becomes (template, weight)."""
    return {name: [tuple(t) if isinstance(t, list) else t for t in items] for name, items in sets.items()}


_WORDS = _load()

FIELDS = ("psy", "med", "econ")
"""The research fields, in draw order: a bank that is a dict holds one list per field."""

GIVEN: list[str] = _WORDS["given_names"]
SUR_HEAD: list[str] = _WORDS["surname_heads"]
SUR_TAIL: list[str] = _WORDS["surname_tails"]
PLACES: list[str] = _WORDS["places"]
SUBJECTS: dict[str, list[str]] = _WORDS["subjects"]
VENUE_HEAD: list[str] = _WORDS["venue_patterns"]
HOSTILE_TITLES: list[str] = _WORDS["hostile_titles"]
"""Titles written exactly as they are, to try the site's escaping: every row group holds each once."""
TITLES: dict[str, list] = _weighted(_WORDS["titles"])
SENTENCES: dict[str, list] = _weighted(_WORDS["sentences"])

# A bank is a list, or a dict field -> list (drawn by each row's field).
BANKS: dict[str, list[str] | dict[str, list[str]]] = {
    **_WORDS["banks"],
    "year": [str(y) for y in range(1978, 2020)],
    # Real abstracts are mostly ASCII (11.6% of a real pool's rows hold any non-ASCII byte),
    # so the Unicode variants below are kept rare.
    "year_range": ["2012–2015"] + ["2014-2016", "2016-2019", "2009-2013", "2018-2021", "2011-2014"] * 4,
    "pct": [str(x) for x in range(12, 89, 3)],
    "age": [f"{x}.{y}" for x in (19, 21, 34, 45, 52, 67, 71) for y in (1, 4, 8)],
    "n": [f"{x:,}" for x in (24, 36, 48, 60, 88, 120, 156, 201, 240, 312, 398, 480, 612, 845, 1020,
                               1436, 2210, 3874, 5120, 12480)],
    "effect_size": [f"d = {x:.2f}" for x in np.arange(-0.12, 0.61, 0.07)] * 6 +
                   [f"OR {x:.2f}" for x in np.arange(0.71, 1.45, 0.09)] * 6 +
                   [f"b = {x:.2f}" for x in np.arange(-0.2, 0.35, 0.05)] * 3 +
                   [f"β = {x:.2f}" for x in np.arange(-0.2, 0.35, 0.1)],
    "ci": ["95% CI [0.02, 0.31]", "95% CI [-0.08, 0.14]", "95% CI [0.11, 0.47]", "95% CI [-0.21, 0.05]"] * 5 +
          ["95% CI [−0.08, 0.14]"],
    "sig": ["signiﬁcant"] + ["significant"] * 39,
    "meta": ["meta-analysis"] * 6 + ["meta‐analysis", "meta analysis"],
    "findings": ["ﬁndings"] + ["findings"] * 29 + ["results"] * 10,
}
BANKS["surname"] = [h + t for h in SUR_HEAD for t in SUR_TAIL]
BANKS["venue"] = {f: [v.format(place=p, subject=s) for v in VENUE_HEAD for p in PLACES for s in subjects]
                  for f, subjects in SUBJECTS.items()}
BANKS["author"] = [f"{g} {s}" for g in GIVEN for s in BANKS["surname"][::7]] + \
                  [f"{g[0]}. {s}" for g in GIVEN for s in BANKS["surname"][3::11]]

# The ordered sentence plan of each kind's abstract: (sentence set, probability).
PLANS: dict[str, list[tuple[str, float]]] = {
    "paper": [("bg", 1), ("bg2", .6), ("aim", 1), ("method", 1), ("method", .4), ("method2", .8),
              ("result", 1), ("result", .3), ("result2", .7), ("limitation", .4), ("conclusion", 1)],
    "mention": [("bg", 1), ("bg2", .6), ("aim", 1), ("method", 1), ("method2", .8), ("result", 1),
                ("result2", .6), ("mention", 1), ("limitation", .4), ("conclusion", 1)],
    "replication": [("bg", 1), ("bg2", .6), ("rep_aim", 1), ("rep_method", 1), ("method", .6),
                    ("method2", .6), ("rep_result", 1), ("result2", .6), ("limitation", .3),
                    ("rep_conclusion", 1)],
    "reproduction": [("bg", 1), ("bg2", .5), ("repro_aim", 1), ("repro_method", 1), ("method2", .6),
                     ("repro_result", 1), ("result2", .5), ("conclusion", 1)],
    "osf_replication": [("osf_rep_desc", 1), ("osf_rep_plan", .6), ("method", .4)],
    "osf_prereg": [("osf_prereg_desc", 1), ("osf_hyp", .8), ("method", .5), ("osf_prereg_rep_mention", .3),
                   ("method2", .3)],
    "osf_other": [("osf_other_desc", 1)],
    "erratum": [("erratum_body", 1)],
    "retraction": [("retraction_body", 1)],
    "editorial": [("editorial_body", 1), ("bg", .5)],
    "comment": [("comment_body", 1), ("bg", .6), ("result", .4), ("conclusion", .5)],
    "nonpaper": [("nonpaper_body", 1)],
}
TITLE_SET = {"paper": "paper_title", "mention": "paper_title", "replication": "rep_title",
             "reproduction": "repro_title", "osf_replication": "osf_rep_title",
             "osf_prereg": "osf_prereg_title", "osf_other": "osf_other_title", "erratum": "erratum_title",
             "retraction": "retraction_title", "editorial": "editorial_title", "comment": "comment_title",
             "nonpaper": "nonpaper_title"}
"""The title set of each kind."""
