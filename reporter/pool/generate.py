"""Seeded example pool: invented works that look like a replication campaign's keyword survivors.

Everything here is generated: authors, venues and cited studies are invented
names, DOIs use the test prefix 10.5555, and the Parquet schema carries a
`reporter.generated` marker. The same seed and row count give a
byte-identical file (for a given pyarrow version).

Speed comes from never formatting a row in Python: each row group draws
template and word indices in bulk with numpy, and Arrow kernels
(`take`, `binary_join_element_wise`) assemble the strings. Each row group
has its own random streams (seeded by seed and group number), so memory
stays bounded at any size and a larger pool starts with the same works as
a smaller one.

The generator knows a hidden truth per row (its `kind`: a replication
study, an OSF preregistration, an erratum, ...); `generate_labels`
recomputes it from the seed kept in the metadata and writes a seeded,
slightly noisy `work_id,label` file so that label statistics mean something.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..progress import Progress

GROUP_ROWS = 65_536
MAX_ROWS = 50_000_000  # work_id schemes stay unique below this (OSF ids have 5 characters)
GENERATOR_VERSION = "2"
MARKER_KEY = b"reporter.generated"

SCHEMA = pa.schema([
    ("work_id", pa.string()),
    ("source", pa.string()),
    ("title", pa.string()),
    ("abstract", pa.string()),
    ("type", pa.string()),
    ("doi", pa.string()),
    ("published", pa.date32()),
    ("venue", pa.string()),
    ("authors", pa.list_(pa.string())),
])

# --- sources, kinds and the hidden truth -------------------------------------

SOURCES = ("openalex", "pubmed", "crossref", "osf", "biorxiv", "medrxiv", "arxiv")
SOURCE_P = (0.40, 0.20, 0.14, 0.06, 0.07, 0.07, 0.06)
FIELDS = ("psy", "med", "econ")
# Field mix per source (psychology, medicine, economics).
FIELD_P = {"openalex": (0.45, 0.35, 0.20), "pubmed": (0.25, 0.75, 0.0), "crossref": (0.40, 0.30, 0.30),
           "osf": (0.85, 0.10, 0.05), "biorxiv": (0.20, 0.80, 0.0), "medrxiv": (0.05, 0.95, 0.0),
           "arxiv": (0.15, 0.05, 0.80)}

KINDS = ("paper", "mention", "replication", "reproduction", "osf_replication", "osf_prereg",
         "osf_other", "erratum", "retraction", "editorial", "comment", "nonpaper")
INCLUDE_KINDS = frozenset({"replication", "reproduction", "osf_replication"})
"""The hidden truth: a replication, reproduction or reanalysis study (or its registration) is an include."""

_JOURNAL = {"paper": 0.815, "mention": 0.06, "replication": 0.016, "reproduction": 0.008,
            "erratum": 0.03, "retraction": 0.007, "editorial": 0.015, "comment": 0.014, "nonpaper": 0.015}
_PREPRINT = {"paper": 0.855, "mention": 0.07, "replication": 0.035, "reproduction": 0.02,
             "retraction": 0.01, "comment": 0.01}
_OSF = {"osf_replication": 0.28, "osf_prereg": 0.45, "osf_other": 0.27}
KIND_P = {"openalex": _JOURNAL, "pubmed": _JOURNAL, "crossref": _JOURNAL, "osf": _OSF,
          "biorxiv": _PREPRINT, "medrxiv": _PREPRINT, "arxiv": _PREPRINT}

# Share of rows per kind whose abstract is missing, and how much of that is null (vs "").
MISSING_ABSTRACT = {"paper": 0.07, "mention": 0.03, "replication": 0.05, "reproduction": 0.05,
                    "osf_replication": 0.70, "osf_prereg": 0.55, "osf_other": 0.80, "erratum": 0.80,
                    "retraction": 0.75, "editorial": 0.70, "comment": 0.60, "nonpaper": 0.96}
NULL_SHARE_OF_MISSING = 0.7

TYPES = {"paper": "article", "mention": "article", "replication": "article", "reproduction": "article",
         "osf_replication": "registration", "osf_prereg": "registration", "osf_other": "project",
         "erratum": "erratum", "retraction": "retraction", "editorial": "editorial", "comment": "letter",
         "nonpaper": "paratext"}

# --- word banks -----------------------------------------------------------------
# A bank is a list, or a dict field -> list (drawn by each row's field).

GIVEN = ["Anna", "Jonas", "Mira", "Tomás", "Ingrid", "Kwame", "Leila", "Pavel", "Sofia", "Hiroshi",
         "Amara", "Lucas", "Noor", "Élodie", "Rafael", "Yuki", "Björn", "Chiara", "Dmitri", "Fatima",
         "Gustav", "Helena", "Ivan", "Jana", "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya",
         "Rosa", "Stefan", "Thandiwe", "Ulla", "Vera", "Wen", "Ximena", "Yusuf", "Zofia", "Aurélie"]
SUR_HEAD = ["Har", "Vel", "Ost", "Brann", "Kel", "Mor", "Tal", "Lind", "Quen", "Sae", "Hé", "Ør",
            "Dü", "Ša", "Fen", "Gro", "Ivar", "Jor", "Kras", "Lom", "Nev", "Pell", "Rav", "Strå",
            "Tor", "Ulv", "Wend", "Yar", "Zel", "Cor"]
SUR_TAIL = ["vik", "mere", "bert", "stad", "quist", "ović", "ström", "dez", "ani", "wold", "ley",
            "ssen", "mann", "ová", "escu", "haven", "ford", "ino", "ek", "dottir"]
PLACES = ["Halvern", "Ostmark", "Brennick", "Talvoro", "Quenford", "Lindmere", "Saevik", "Korrin",
          "Vellström", "Marrow Bay", "Ilvestad", "Dunmere"]
SUBJECTS = {"psy": ["Experimental Psychology", "Social Cognition", "Personality Research",
                    "Behavioural Science", "Developmental Psychology", "Cognitive Studies"],
            "med": ["Clinical Medicine", "Public Health", "Epidemiology", "Cardiology Reports",
                    "Primary Care Research", "Health Services Research"],
            "econ": ["Applied Economics", "Labour Studies", "Development Economics",
                     "Behavioural Economics", "Public Finance", "Economic Policy"]}
VENUE_HEAD = ["{place} Journal of {subject}", "Annals of {place} {subject}", "{place} Review of {subject}",
              "Proceedings of the {place} Society for {subject}", "{subject} Letters ({place})"]

BANKS: dict[str, list[str] | dict[str, list[str]]] = {
    "construct": {
        "psy": ["ego depletion", "anchoring", "the Stroop effect", "facial feedback", "power posing",
                "stereotype threat", "social priming", "the endowment effect", "loss aversion",
                "implicit bias", "moral licensing", "the bystander effect", "cognitive dissonance",
                "the sunk cost effect", "delay discounting", "growth mindset", "the framing effect",
                "construal level", "embodied cognition", "the testing effect", "the spacing effect",
                "retrieval-induced forgetting", "the mere exposure effect", "the misinformation effect",
                "the cheerleader effect", "verbal overshadowing", "the Simon effect", "attentional bias",
                "self-control training", "the red-romance effect", "money priming", "the halo effect"],
        "med": ["vitamin D supplementation", "low-dose aspirin", "intermittent fasting",
                "a brief alcohol intervention", "cognitive behavioural therapy", "exercise training",
                "statin therapy", "early mobilisation", "mindfulness-based stress reduction",
                "telemonitoring", "proton pump inhibitor use", "metformin", "a smoking cessation programme",
                "high-intensity interval training", "omega-3 supplementation", "a nurse-led follow-up",
                "remote blood pressure monitoring", "antibiotic prophylaxis", "a school-based vaccination programme"],
        "econ": ["minimum wage increases", "microfinance access", "conditional cash transfers",
                 "present bias", "trade liberalisation", "default enrolment", "tax salience",
                 "peer effects", "information nudges", "class size reductions", "monetary policy shocks",
                 "remote work", "rent control", "loss-framed incentives", "mobile money adoption",
                 "unconditional basic income"]},
    "outcome": {
        "psy": ["persistence on an unsolvable task", "reaction times", "recall accuracy", "risk taking",
                "prosocial behaviour", "self-reported well-being", "donation amounts", "moral judgments",
                "test performance", "choice consistency", "anxiety symptoms", "attitude change",
                "willingness to pay", "eyewitness accuracy", "interpersonal trust"],
        "med": ["all-cause mortality", "HbA1c levels", "systolic blood pressure", "hospital readmission",
                "depressive symptoms", "length of stay", "infection rates", "pain scores",
                "quality of life", "fracture risk", "cognitive decline", "adverse events",
                "medication adherence", "functional recovery"],
        "econ": ["employment", "household consumption", "savings rates", "test scores", "labour supply",
                 "firm productivity", "retirement contributions", "wages", "school enrolment",
                 "house prices", "investment", "female labour force participation", "tax compliance"]},
    "population": {
        "psy": ["undergraduate students", "online participants recruited via a crowdsourcing platform",
                "adolescents", "older adults", "children aged 4 to 7", "a community sample",
                "participants from 12 countries", "first-year psychology students", "working adults",
                "bilingual speakers"],
        "med": ["adults with type 2 diabetes", "patients undergoing hip replacement", "pregnant women",
                "older adults in primary care", "children with asthma", "intensive care patients",
                "patients with chronic low back pain", "smokers", "nursing home residents",
                "patients with heart failure"],
        "econ": ["low-income households", "teenage workers", "small firms", "rural villages",
                 "public-school students", "new employees", "municipalities", "online shoppers",
                 "retail investors", "smallholder farmers"]},
    "method": {
        "psy": ["a two-group between-subjects experiment", "a within-subjects experiment",
                "a 2 x 2 factorial experiment", "an online experiment", "a laboratory experiment",
                "a multi-site study", "a longitudinal panel study", "an experience-sampling study"],
        "med": ["a randomised controlled trial", "a prospective cohort study", "a cross-sectional survey",
                "a retrospective chart review", "a case-control study", "a cluster-randomised trial",
                "a registry-based cohort study", "a pragmatic trial"],
        "econ": ["a difference-in-differences design", "a regression discontinuity design",
                 "a field experiment", "an instrumental variables approach", "a natural experiment",
                 "a laboratory experiment", "administrative panel data", "a synthetic control method"]},
    "field_topic": {"psy": ["social cognition", "judgment and decision making", "memory", "motivation"],
                    "med": ["clinical epidemiology", "preventive medicine", "chronic disease management"],
                    "econ": ["labour economics", "development economics", "behavioural economics"]},
    "method_extra": {
        "psy": ["Attention checks were included, and participants who failed two or more were excluded.",
                "Manipulation checks confirmed that the induction worked as intended.",
                "Reaction times faster than 200 ms or slower than 3,000 ms were removed before analysis.",
                "Participants received course credit or a small payment for taking part."],
        "med": ["Blood samples were analysed in triplicate, with two technical replicates per plate.",
                "Each assay included three biological replicates per condition.",
                "Outcome assessors were blinded to group allocation.",
                "Adverse events were recorded at every visit and adjudicated by an independent committee.",
                "Replicate measurements were averaged before analysis.",
                "Allocation was concealed with sequentially numbered, opaque, sealed envelopes.",
                "Diagnoses were ascertained from linked hospital records and death registrations.",
                "Adherence was monitored with pill counts at each follow-up visit.",
                "The trial was approved by the regional ethics committee and registered before enrolment.",
                "Laboratory staff were unaware of the clinical characteristics of the participants.",
                "Data were double-entered and checked for consistency before analysis.",
                "An independent data monitoring committee reviewed safety data every six months."],
        "econ": ["Standard errors were clustered at the village level.",
                 "We used administrative records linked to survey data for the full sample.",
                 "Pre-trends were tested with an event-study specification.",
                 "All monetary values were converted to constant 2015 prices."]},
    "effect_verb": ["increases", "reduces", "improves", "predicts", "is associated with", "has no effect on",
                    "moderates", "impairs", "modestly improves", "does not change"],
    "direction": ["higher", "lower", "slightly higher", "markedly lower", "similar"],
    "year": [str(y) for y in range(1978, 2020)],
    # Real abstracts are mostly ASCII (11.6% of a real pool's rows hold any non-ASCII byte),
    # so the Unicode variants below are kept rare.
    "year_range": ["2012–2015"] + ["2014-2016", "2016-2019", "2009-2013", "2018-2021", "2011-2014"] * 4,
    "d": ["1", "2", "3", "4", "1a", "2b"],
    "k": ["2", "3", "4", "5", "6", "8", "12"],
    "sites": ["3", "6", "9", "14", "23", "36"],
    "countries": ["2", "5", "8", "11", "19"],
    "weeks": ["4", "6", "8", "12", "24", "52"],
    "pct": [str(x) for x in range(12, 89, 3)],
    "age": [f"{x}.{y}" for x in (19, 21, 34, 45, 52, 67, 71) for y in (1, 4, 8)],
    "power": ["80", "90", "95"],
    "n": [f"{x:,}" for x in (24, 36, 48, 60, 88, 120, 156, 201, 240, 312, 398, 480, 612, 845, 1020,
                               1436, 2210, 3874, 5120, 12480)],
    "effect_size": [f"d = {x:.2f}" for x in np.arange(-0.12, 0.61, 0.07)] * 6 +
                   [f"OR {x:.2f}" for x in np.arange(0.71, 1.45, 0.09)] * 6 +
                   [f"b = {x:.2f}" for x in np.arange(-0.2, 0.35, 0.05)] * 3 +
                   [f"β = {x:.2f}" for x in np.arange(-0.2, 0.35, 0.1)],
    "orig_d": ["0.48", "0.62", "0.81", "0.55", "1.02"],
    "pvalue": ["p = .003", "p = .041", "p = .27", "p = .68", "p < .001", "p = .012", "p = .09"],
    "ci": ["95% CI [0.02, 0.31]", "95% CI [-0.08, 0.14]", "95% CI [0.11, 0.47]", "95% CI [-0.21, 0.05]"] * 5 +
          ["95% CI [−0.08, 0.14]"],
    "bf": ["4.2", "7.9", "11.3", "23.6"],
    "sig": ["signiﬁcant"] + ["significant"] * 39,
    "meta": ["meta-analysis"] * 6 + ["meta‐analysis", "meta analysis"],
    "findings": ["ﬁndings"] + ["findings"] * 29 + ["results"] * 10,
    "lab_word": ["laboratories", "labs", "sites"],
}


def _surnames() -> list[str]:
    return [h + t for h in SUR_HEAD for t in SUR_TAIL]


def _venues() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f, subjects in SUBJECTS.items():
        out[f] = [v.format(place=p, subject=s) for v in VENUE_HEAD for p in PLACES for s in subjects]
    return out


BANKS["surname"] = _surnames()
BANKS["venue"] = _venues()
BANKS["author"] = [f"{g} {s}" for g in GIVEN for s in BANKS["surname"][::7]] + \
                  [f"{g[0]}. {s}" for g in GIVEN for s in BANKS["surname"][3::11]]

# --- templates --------------------------------------------------------------------
# "{bank}" draws from a bank, "{Bank}" the same capitalised, "{@set}" renders another set.
# A set is a list of templates or of (template, weight).

HOSTILE_TITLES = [
    "<script>alert(1)</script> A direct replication of the anchoring effect",
    "<img src=x onerror=alert(1)> Failed to replicate ego depletion in a multi-site study",
    "Anchoring | Adjustment | Priming: three replications | one table",
    "**Bold** claims and _italic_ doubts: a [link](javascript:alert(1)) to a reanalysis",
    "Pneumonoultramicroscopicsilicovolcanoconiosis" * 6 + " and other very long words",
    "دراسة تكرارية لتأثير الترسيخ لدى طلاب الجامعات",
    "שחזור של אפקט ההטרמה במדגם מקוון",
    "Replication of the Stroop effect \u202edetacilper ton\u202c in older adults",
    "{{ 7*7 }} and {% if true %}template{% endif %} syntax in a title",
    "A meta‐analysis of the ﬁrst replication wave – 2007–2015 — Hébert & Ødegård revisited",
    "&lt;b&gt;Entity-encoded&lt;/b&gt; title &amp; a `backtick` or two",
    "| col | col |\n|---|---|\n| a table | in a title |",
    "Tabs\tand   runs of    spaces  in a  replication  title ",
    "🧪 Replicating a priming effect 🔬 with emoji",
]

TITLES: dict[str, list] = {
    "paper_title": [
        "Effects of {construct} on {outcome} in {population}",
        "{Construct} and {outcome} among {population}: {method}",
        "Does {construct} affect {outcome}? Evidence from {method}",
        "Association between {construct} and {outcome} in {population}",
        "{Construct} {effect_verb} {outcome}: results from {method}",
        "The role of {construct} in {outcome}",
        "{Construct} as a predictor of {outcome} in {population}",
        "Revisiting {construct}: {outcome} in {population}",
        "Heterogeneous effects of {construct} on {outcome}",
        "A {meta} of {construct} and {outcome}",
        "{Construct}, {outcome} and {field_topic}: a longitudinal perspective",
        "When does {construct} matter for {outcome}? {Method}",
    ],
    "rep_title": [
        ("A direct replication of {Surname} and {Surname2} ({year})", 2),
        "Failed to replicate: {construct} and {outcome}",
        "{Construct} does not replicate: a registered replication report",
        "Replicating {construct}: a multi-site study with {n} participants",
        ("A preregistered replication of the effect of {construct} on {outcome}", 2),
        "Conceptual replication of {Surname} et al. ({year}) in {population}",
        "Many Labs {d}: replicability of {construct} across {sites} {lab_word}",
        "Is {construct} real? A close replication of {Surname} ({year})",
        "Replication and extension of research on {construct} and {outcome}",
        "Revisiting the evidence for {construct}: a high-powered replication",
        "{Construct} and {outcome}: a replication in {population}",
        "No evidence for {construct}: two failed replications",
    ],
    "repro_title": [
        "A reanalysis of {Surname} et al. ({year}): {construct} and {outcome}",
        "Computational reproducibility of published {construct} {findings}",
        "Reproduction of {Surname} & {Surname2} ({year}) using the original data",
        "Re-analysis of the effect of {construct} on {outcome}",
        "{Construct} and {outcome} revisited: a robustness reproduction",
        "Are the {findings} on {construct} reproducible? A reanalysis",
    ],
    "osf_rep_title": [
        ("Exact Replication of {Surname} & {Surname2} ({year})", 3),
        "Replication of {Surname} et al. ({year}), Study {d}",
        "Registered Replication: {Construct}",
        "{Surname} & {Surname2} ({year}) replication",
        "Close replication of {construct}",
        "Direct Replication of {Surname} ({year}) - {Construct}",
        "Replicating {Surname} et al. ({year})",
        "{Construct}: a student replication project",
    ],
    "osf_prereg_title": [
        ("Preregistration: {Construct} and {outcome}", 3),
        ("Pre-registration of a study on {construct}", 2),
        "Pre‐registration – {Construct} in {population}",
        "{Construct} and {outcome} (preregistration)",
        "Hypotheses and analysis plan: {construct}",
        ("Study {d}: {Construct} and {outcome}", 2),
        ("{Construct} in {population}", 2),
        "Does {construct} predict {outcome}?",
        "Registered Report Stage 1: {construct} and {outcome}",
    ],
    "osf_other_title": [
        "Data and materials for a study on {construct}",
        "Supplementary materials: {Construct}",
        "Stimuli for {construct} experiments",
        "Code and data: {Construct} and {outcome}",
        "{Construct} project",
        "Lab materials ({Surname} lab)",
    ],
    "erratum_title": [
        ("Erratum", 2), "ERRATUM", ("Erratum to: {@paper_title}", 2), ("Correction to: {@paper_title}", 3),
        "Corrigendum: {@paper_title}", "Correction: {@rep_title}", "Author Correction: {@paper_title}",
        "Publisher Correction: {@paper_title}", "Corrigendum to “{@paper_title}”",
    ],
    "retraction_title": [
        "Retraction Note: {@paper_title}", "Retracted: {@paper_title}", "Notice of retraction: {@paper_title}",
        "Expression of concern: {@paper_title}", "Withdrawn: {@paper_title}", "RETRACTED: {@rep_title}",
    ],
    "editorial_title": [
        ("Editorial", 2), "Editorial: {Construct} at a crossroads",
        "Editorial: the replication crisis and {field_topic}", "Introduction to the special issue on {construct}",
        "Guest editorial: {Construct}", "From the editor", "A note from the editors on replicability",
    ],
    "comment_title": [
        "Comment on {Surname} et al. ({year})", "Reply to {Surname}: {construct} remains robust",
        "Response to: {@rep_title}", "Letter to the editor regarding {construct}",
        "Commentary: {@paper_title}", "Comment on “{@rep_title}”",
    ],
    "nonpaper_title": [
        ("Table of Contents", 3), ("Front Matter", 3), "Back Matter", ("Issue Information", 3), "Cover Image",
        "Masthead", "Editorial Board", "Index", "Contents", "Reviewers 2019", "Acknowledgement to Reviewers",
        "Issue Information ‐ Table of Contents", "TABLE OF CONTENTS", "Front Cover",
    ],
}

SENTENCES: dict[str, list] = {
    "bg": [
        "{Construct} has been proposed as an important determinant of {outcome}, yet the evidence from "
        "{population} remains mixed and is based largely on small samples with limited statistical power.",
        "Previous research suggests that {construct} {effect_verb} {outcome}, but most studies relied on "
        "self-report measures, convenience samples and cross-sectional designs that cannot separate cause "
        "from selection.",
        "Understanding how {construct} relates to {outcome} is central to current theories of {field_topic}, "
        "and the question has attracted considerable attention from researchers and practitioners over the "
        "past two decades.",
        "Despite a growing literature on {construct}, little is known about its consequences for {outcome} "
        "among {population}, for whom the mechanisms proposed in earlier work may not apply in the same way.",
        "There is an ongoing debate about whether {construct} meaningfully {effect_verb} {outcome} once "
        "plausible confounders, measurement error and differences in baseline risk are taken into account.",
    ],
    "bg2": [
        "Earlier work reported effects of widely varying size, and publication bias and flexible analysis "
        "have both been suggested as explanations for the heterogeneity across studies and settings.",
        "Most of this evidence comes from high-income settings and from samples recruited at a single "
        "institution, which limits what can be said about other populations and about long-term effects.",
        "Measurement of {outcome} has also differed substantially between studies, which complicates any direct "
        "comparison of the published estimates and makes pooled figures hard to interpret.",
        "A recent {meta} found a pooled effect of {effect_size} with substantial heterogeneity between studies and "
        "clear signs of small-study effects in the funnel plot.",
    ],
    "aim": [
        "In this study we examined whether {construct} {effect_verb} {outcome} in {population}, and whether "
        "the association depends on age, sex and baseline levels of {outcome}.",
        "The aim of the present study was to estimate the association between {construct} and {outcome} using "
        "{method}, with prespecified primary and secondary outcomes.",
        "We tested the hypothesis that {construct} {effect_verb} {outcome}, and explored whether this effect "
        "differs between {population} and comparison groups drawn from the same setting.",
        "Here we report {method} designed to quantify the effect of {construct} on {outcome} over a follow-up "
        "period of {weeks} weeks.",
    ],
    "method": [
        "We used {method} including {n} {population} recruited between {year_range}, with follow-up "
        "assessments completed by the large majority of those enrolled at baseline.",
        "Data were collected from {n} participants ({pct}% female, mean age {age} years) and analysed with "
        "mixed-effects models that included random intercepts for site and participant.",
        "Participants were randomly assigned to one of two conditions, and {outcome} was assessed at baseline, "
        "immediately after the intervention and again after {weeks} weeks.",
        "The primary outcome was {outcome}; secondary outcomes included {outcome2} and {outcome3}, all measured "
        "with instruments validated in comparable samples.",
        "All analyses were preregistered, and the sample size of {n} was determined by a power analysis "
        "targeting {power}% power to detect the smallest effect of interest.",
    ],
    "method2": [
        "Models were adjusted for age, sex, socioeconomic status, study site and the baseline value of "
        "{outcome}, and standard errors accounted for clustering.",
        "Missing data were handled by multiple imputation under a missing-at-random assumption, and complete-case "
        "analyses are reported as a sensitivity check.",
        "Robustness checks included alternative specifications, placebo outcomes, leave-one-site-out analyses and "
        "a comparison of responders with non-responders.",
        "{method_extra}",
    ],
    "result": [
        "{Construct} was associated with {direction} {outcome} ({effect_size}, {pvalue}), and the association "
        "remained after adjustment for the prespecified covariates.",
        "Compared with the control condition, participants exposed to {construct} showed {direction} "
        "{outcome} ({effect_size}; {ci}) at the end of follow-up.",
        "We found no evidence that {construct} {effect_verb} {outcome} ({effect_size}, {pvalue}), and "
        "equivalence tests rejected effects larger than the smallest effect of interest.",
        "The effect was statistically {sig} in the full sample ({pvalue}) but not in the preregistered subgroup "
        "analyses, where the confidence intervals were wide.",
    ],
    "result2": [
        "Effects were larger among {population} and were attenuated after adjustment for baseline differences "
        "between the groups that took part.",
        "Sensitivity analyses that excluded outliers, used alternative outcome definitions or restricted the "
        "sample to complete cases yielded similar estimates.",
        "Heterogeneity across sites was low (I2 = {pct}%), and no single site changed the pooled estimate by "
        "more than a small amount.",
        "The {findings} were robust to alternative model specifications and to the choice of covariates.",
    ],
    "conclusion": [
        "These results suggest that {construct} may be a useful target for interventions aimed at improving "
        "{outcome} in {population}, although effects were modest.",
        "Our {findings} provide limited support for the role of {construct} in {outcome} and call for larger, "
        "well-controlled studies with longer follow-up.",
        "Policy makers and practitioners should interpret these estimates with caution given the design and "
        "the possibility of residual confounding.",
        "Taken together, the evidence indicates that {construct} {effect_verb} {outcome} in {population}, "
        "with implications for theory and practice in {field_topic}.",
    ],
    "limitation": [
        "Limitations include the reliance on self-reported {outcome}, the relatively short follow-up and the "
        "modest number of events in some subgroups.",
        "Because the sample was drawn from a small number of sites, generalisability to other settings and "
        "periods remains uncertain.",
    ],
    "mention": [
        "Future studies should attempt to replicate these {findings} in larger and more diverse samples before "
        "strong conclusions are drawn.",
        "The results replicate earlier observations in {population} and extend them to {outcome}.",
        "Independent replication is needed before these {findings} inform practice or policy.",
        "All data and analysis code are openly available so that others can reproduce the results reported here.",
        "The association was replicated in an independent validation cohort of {n} {population}.",
        "This pattern is consistent with concerns about reproducibility in the wider literature on {field_topic}.",
        "The main finding was reproduced using an alternative estimator and a different sample definition.",
    ],
    "rep_aim": [
        "We conducted a preregistered direct replication of {Surname} and {Surname2} ({year}), who reported "
        "that {construct} {effect_verb} {outcome}.",
        "This registered replication report tests the robustness of {construct} across {sites} {lab_word} "
        "using a common protocol agreed with the original authors.",
        "We report a close replication of Study {d} of {Surname} et al. ({year}) with a sample {k} times "
        "larger than the original and a preregistered analysis plan.",
        "The present study is a conceptual replication of earlier findings on {construct} and {outcome}, "
        "carried out in {population}.",
        "Because the original evidence for {construct} rests on a single small study, we attempted to "
        "replicate it with {n} participants.",
    ],
    "rep_method": [
        "Materials and procedures followed the original study as closely as possible and were reviewed by the "
        "original authors before data collection began.",
        "The replication protocol, sample size and analysis plan were registered on the Open Science Framework "
        "before any data were collected.",
        "Data were collected in {sites} {lab_word} in {countries} countries (total N = {n}), following a "
        "shared protocol and a common analysis script.",
    ],
    "rep_result": [
        "The original effect did not replicate: the estimate was close to zero ({effect_size}, {ci}).",
        "We failed to replicate the original finding ({effect_size}, {pvalue}), and the result was similar in "
        "every participating site.",
        "The effect replicated in direction but was substantially smaller than originally reported "
        "({effect_size} vs. d = {orig_d}).",
        "The replication effect size was consistent with the original estimate ({effect_size}; {ci}).",
        "Bayes factors favoured the null hypothesis over the original effect (BF01 = {bf}).",
    ],
    "rep_conclusion": [
        "These results cast doubt on the robustness of {construct} and suggest that the original estimate "
        "was inflated.",
        "Our {findings} support the original claim, though with a smaller effect than first reported.",
        "We discuss possible moderators and the implications for the replicability of research on {field_topic}.",
    ],
    "repro_aim": [
        "We reanalysed the publicly available data of {Surname} et al. ({year}) to assess the computational "
        "reproducibility of their main result.",
        "This reproduction attempt used the original data and code to recompute the reported effect of "
        "{construct} on {outcome}.",
        "We conducted a re-analysis of {Surname} and {Surname2} ({year}) applying alternative but equally "
        "defensible analytic choices.",
    ],
    "repro_method": [
        "We followed the reported analysis pipeline step by step and documented every deviation from the "
        "published description.",
        "A multiverse analysis covering {k} analytic specifications was used to assess the robustness of the "
        "headline estimate.",
    ],
    "repro_result": [
        "The main estimate could be reproduced exactly, but {k} of the secondary results differed from the "
        "published values.",
        "Using the original data, we were unable to reproduce the headline estimate; the recomputed effect "
        "was {effect_size}.",
        "All reported results were reproducible up to rounding error.",
    ],
    "osf_rep_desc": [
        "Preregistration of a replication of {Surname} & {Surname2} ({year}), Study {d}.",
        "This project contains the materials, data and analysis scripts for our replication of {construct}.",
        "Direct replication conducted as part of a student replication project in {field_topic}.",
    ],
    "osf_rep_plan": ["Hypotheses, sampling plan and analysis plan follow the original study as closely as possible."],
    "osf_prereg_desc": [
        "We will test whether {construct} {effect_verb} {outcome} in {population}.",
        "This preregistration describes the hypotheses, design and analysis plan of a study on {construct}.",
        "Study {d} of a project on {construct} and {outcome}.",
    ],
    "osf_hyp": [
        "H1: {Construct} will predict {outcome}. H2: This effect will be stronger in {population}.",
        "We plan to recruit {n} participants; data collection has not begun at the time of registration.",
    ],
    "osf_prereg_rep_mention": [
        "A replication sample of {n} participants will be collected to test the robustness of the main effect.",
        "If the effect is found, we will attempt to replicate it in a second, independent sample.",
        "The design builds on our earlier study, which we will replicate with a larger sample.",
    ],
    "osf_other_desc": [
        "Materials, data and code for a study on {construct}.",
        "This component holds the stimuli used in the experiments.",
        "Raw data and analysis scripts.",
    ],
    "erratum_body": [
        "In the original article, there was an error in Table {d}. The correct values appear below. The "
        "authors apologise for this error.",
        "The authors regret that the name of one author was misspelled in the published version of this article.",
        "This article corrects an error in the reported effect size for {outcome}; the conclusions are unchanged.",
    ],
    "retraction_body": [
        "This article has been retracted at the request of the editors after concerns were raised about the "
        "integrity of the data.",
        "The authors have withdrawn this manuscript because an error in the analysis invalidated the main conclusion.",
    ],
    "editorial_body": [
        "In this issue we bring together {k} articles on {construct} and reflect on what the field has learned "
        "about {outcome}.",
        "The replication crisis has prompted journals to rethink how they evaluate evidence; this editorial sets "
        "out our new policy on registered reports.",
        "We thank the reviewers and authors who contributed to this volume and introduce two new associate editors.",
    ],
    "comment_body": [
        "We comment on the recent report by {Surname} et al. ({year}) and argue that its conclusions do not "
        "follow from the data presented.",
        "In their reply, the authors maintain that {construct} {effect_verb} {outcome} and address the "
        "methodological concerns raised by the commentators.",
    ],
    "nonpaper_body": ["This issue's table of contents.", "Cover image caption and credits.",
                      "The list of reviewers who served this journal in the past year."],
}

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


# --- the renderer --------------------------------------------------------------

_SLOT = re.compile(r"\{(@?\w+)\}")
# Slots drawn once per row, so a work's title and abstract share a topic and a cited study;
# a trailing digit ({outcome2}, {Surname2}) draws a fresh value from the same bank.
FIXED_SLOTS = ("construct", "outcome", "population", "method", "field_topic", "surname", "surname2", "year", "d")


@dataclass(frozen=True)
class _Bank:
    values: pa.Array
    offsets: np.ndarray  # per field
    sizes: np.ndarray    # per field


def _compile_bank(bank: list[str] | dict[str, list[str]], capital: bool) -> _Bank:
    per_field = [bank] * len(FIELDS) if isinstance(bank, list) else [bank[f] for f in FIELDS]
    if capital:
        per_field = [[v[:1].upper() + v[1:] for v in vs] for vs in per_field]
    if isinstance(bank, list):
        return _Bank(pa.array(per_field[0], pa.string()), np.zeros(len(FIELDS), np.int64),
                     np.full(len(FIELDS), len(per_field[0]), np.int64))
    sizes = np.array([len(vs) for vs in per_field], np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return _Bank(pa.array([v for vs in per_field for v in vs], pa.string()), offsets, sizes)


def _parse(template: str) -> list[tuple[str, str]]:
    parts, pos = [], 0
    for m in _SLOT.finditer(template):
        if m.start() > pos:
            parts.append(("lit", template[pos:m.start()]))
        name = m.group(1)
        parts.append(("set", name[1:]) if name.startswith("@") else ("bank", name))
        pos = m.end()
    if pos < len(template):
        parts.append(("lit", template[pos:]))
    return parts


class _Renderer:
    """Renders template sets for many rows at once with Arrow kernels."""

    def __init__(self) -> None:
        self.banks: dict[str, _Bank] = {}
        for name, bank in BANKS.items():
            self.banks[name] = _compile_bank(bank, capital=False)
            self.banks[name[:1].upper() + name[1:]] = _compile_bank(bank, capital=True)
        self.sets: dict[str, tuple[list[list[tuple[str, str]]], np.ndarray]] = {}
        for name, items in {**TITLES, **SENTENCES}.items():
            templates = [it if isinstance(it, tuple) else (it, 1) for it in items]
            weights = np.array([w for _, w in templates], float)
            self.sets[name] = ([_parse(t) for t, _ in templates], weights / weights.sum())

    def fixed(self, rng: np.random.Generator, fields: np.ndarray) -> dict[str, np.ndarray]:
        """Per-row choices that stay the same in a work's title and abstract (its topic, its cited study)."""
        return {name: (rng.random(len(fields)) * self.banks[name.rstrip("0123456789")].sizes[fields]
                       ).astype(np.int64) for name in FIXED_SLOTS}

    def draw(self, rng: np.random.Generator, name: str, fields: np.ndarray,
             fixed: dict[str, np.ndarray] | None = None, rows: np.ndarray | None = None) -> pa.Array:
        """One value of bank `name` per row, from each row's field (the row's fixed choice for a topic slot)."""
        bank = self.banks[name.rstrip("0123456789")]
        key = name[:1].lower() + name[1:]
        if fixed is not None and key in fixed:
            pick = fixed[key][rows]
        else:
            pick = (rng.random(len(fields)) * bank.sizes[fields]).astype(np.int64)
        return bank.values.take(pa.array(bank.offsets[fields] + pick))

    def render(self, rng: np.random.Generator, name: str, fields: np.ndarray,
               fixed: dict[str, np.ndarray] | None = None, rows: np.ndarray | None = None) -> pa.Array:
        """One rendering of template set `name` per row (rows: the rows' positions in `fixed`)."""
        templates, weights = self.sets[name]
        n = len(fields)
        if rows is None:
            rows = np.arange(n)
        choice = rng.choice(len(templates), size=n, p=weights) if len(templates) > 1 else np.zeros(n, np.int64)
        pieces, order = [], []
        for t, parts in enumerate(templates):
            sel = np.flatnonzero(choice == t)
            if sel.size:
                pieces.append(self._template(rng, parts, fields[sel], fixed, rows[sel]))
                order.append(sel)
        if not pieces:
            return pa.array([], pa.string())
        out = pa.concat_arrays(pieces)
        inverse = np.empty(n, np.int64)
        inverse[np.concatenate(order)] = np.arange(n)
        return out.take(pa.array(inverse))

    def _template(self, rng: np.random.Generator, parts: list[tuple[str, str]], fields: np.ndarray,
                  fixed: dict[str, np.ndarray] | None, rows: np.ndarray) -> pa.Array:
        args = []
        for kind, value in parts:
            if kind == "lit":
                args.append(pa.scalar(value, pa.string()))
            elif kind == "bank":
                args.append(self.draw(rng, value, fields, fixed, rows))
            else:
                args.append(self.render(rng, value, fields, fixed, rows))
        if all(isinstance(a, pa.Scalar) for a in args):
            return pa.array(["".join(a.as_py() for a in args)] * len(fields), pa.string())
        return pc.binary_join_element_wise(*args, "")


_RENDERER: _Renderer | None = None


def _renderer() -> _Renderer:
    global _RENDERER  # compiled once per process: banks and templates are constants
    if _RENDERER is None:
        _RENDERER = _Renderer()
    return _RENDERER


# --- one row group ----------------------------------------------------------------

def _group_rng(seed: int, group: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, group, stream])


def _group_kinds(seed: int, group: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source, kind and field codes of one row group: the hidden truth, drawn from its own stream."""
    rng = _group_rng(seed, group, 0)
    source = rng.choice(len(SOURCES), size=n, p=SOURCE_P)
    kind = np.zeros(n, np.int64)
    field = np.zeros(n, np.int64)
    u_kind, u_field = rng.random(n), rng.random(n)
    for s, name in enumerate(SOURCES):
        sel = source == s
        probs = KIND_P[name]
        codes = np.array([KINDS.index(k) for k in probs])
        cum = np.cumsum(np.array(list(probs.values())) / sum(probs.values()))
        kind[sel] = codes[np.minimum(np.searchsorted(cum, u_kind[sel], side="right"), len(codes) - 1)]
        fcum = np.cumsum(FIELD_P[name])
        field[sel] = np.minimum(np.searchsorted(fcum, u_field[sel], side="right"), len(FIELDS) - 1)
    return source, kind, field


def _hostile_rows(seed: int, group: int, n: int) -> np.ndarray:
    """Rows that get a pinned hostile title: every row group holds each hostile title once."""
    rng = _group_rng(seed, group, 3)
    return rng.permutation(n)[:min(n, len(HOSTILE_TITLES))]


def _scatter(values: pa.Array, mask: np.ndarray) -> pa.Array:
    """Spread `values` (one per True in mask) to len(mask) rows, null elsewhere."""
    pos = np.cumsum(mask) - 1
    return values.take(pa.array(np.where(mask, pos, 0), mask=~mask))


def _replace_where(base: pa.Array, mask: np.ndarray, new: pa.Array) -> pa.Array:
    """base with the rows of mask replaced by `new` (one value per True)."""
    if not mask.any():
        return base
    return pc.if_else(pa.array(mask), _scatter(new, mask), base)


def _texts(rng: np.random.Generator, kind: np.ndarray, field: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """Titles and abstracts of one row group, by each row's kind and field."""
    r = _renderer()
    n = len(kind)
    fixed = r.fixed(rng, field)
    titles = pa.nulls(n, pa.string())
    for k, name in enumerate(KINDS):
        mask = kind == k
        if mask.any():
            rows = np.flatnonzero(mask)
            titles = _replace_where(titles, mask, r.render(rng, TITLE_SET[name], field[rows], fixed, rows))
    # Abstracts: position j of every kind's plan, one render per sentence set.
    depth = max(len(p) for p in PLANS.values())
    positions = []
    for j in range(depth):
        by_set: dict[str, np.ndarray] = {}
        for k, name in enumerate(KINDS):
            plan = PLANS[name]
            if j < len(plan):
                set_name, p = plan[j]
                present = (kind == k) & (rng.random(n) < p)
                by_set[set_name] = by_set.get(set_name, np.zeros(n, bool)) | present
        column = pa.nulls(n, pa.string())
        for set_name in sorted(by_set):
            mask = by_set[set_name]
            if mask.any():
                rows = np.flatnonzero(mask)
                column = _replace_where(column, mask, r.render(rng, set_name, field[rows], fixed, rows))
        positions.append(column)
    abstracts = pc.binary_join_element_wise(*positions, " ", null_handling="skip")
    return titles, abstracts


def _edit(arr: pa.Array, mask: np.ndarray, fn) -> pa.Array:
    """arr with fn applied to the rows of mask."""
    return _replace_where(arr, mask, fn(arr.filter(pa.array(mask))))


def _oddities(rng: np.random.Generator, titles: pa.Array, abstracts: pa.Array
              ) -> tuple[pa.Array, pa.Array]:
    """Whitespace oddities a real pool has: double spaces, newlines, stray edges, CRLF."""
    u, v = rng.random(len(titles)), rng.random(len(titles))
    titles = _edit(titles, u < 0.012, lambda a: pc.replace_substring(a, " ", "  ", max_replacements=1))
    titles = _edit(titles, (u >= 0.012) & (u < 0.017),
                   lambda a: pc.replace_substring(a, ": ", ":\n", max_replacements=1))
    titles = _edit(titles, (u >= 0.017) & (u < 0.021), lambda a: pc.binary_join_element_wise(" ", a, " \n", ""))
    abstracts = _edit(abstracts, v < 0.03, lambda a: pc.replace_substring(a, ". ", ".\n\n", max_replacements=2))
    abstracts = _edit(abstracts, (v >= 0.03) & (v < 0.06),
                      lambda a: pc.replace_substring(a, ", ", ",  ", max_replacements=3))
    abstracts = _edit(abstracts, (v >= 0.06) & (v < 0.07),
                      lambda a: pc.replace_substring(a, ". ", ".\r\n", max_replacements=1))
    return titles, abstracts


def _base36(x: np.ndarray, width: int) -> pa.Array:
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", np.uint8)
    digits = np.empty((len(x), width), np.uint8)
    for j in range(width - 1, -1, -1):
        digits[:, j] = alphabet[x % 36]
        x = x // 36
    return pa.array(digits.view(f"S{width}").ravel()).cast(pa.string())


def _num(x: np.ndarray, width: int = 0) -> pa.Array:
    s = pa.array(x.astype(np.int64)).cast(pa.string())
    return pc.utf8_lpad(s, width=width, padding="0") if width else s


def _ids(source: np.ndarray, counters: dict[int, int], published: np.ndarray
         ) -> tuple[pa.Array, pa.Array]:
    """work_id and doi per row: a per-scheme counter, scrambled by a bijection so ids look random."""
    n = len(source)
    work_id = pa.nulls(n, pa.string())
    doi = pa.nulls(n, pa.string())
    rxiv = (SOURCES.index("biorxiv"), SOURCES.index("medrxiv"))
    scheme = np.where(np.isin(source, rxiv), rxiv[0], source)  # bioRxiv and medRxiv share one DOI scheme
    base = dict(counters)
    for s, name in enumerate(SOURCES):
        mask = source == s
        if not mask.any():
            continue
        key = int(scheme[mask][0])
        k = np.cumsum(scheme == key)[mask] - 1 + base.get(key, 0)
        if name == "osf":
            code = _base36((k * 48_271 + 1_000_003) % 36**5, 5)
            wid = pc.binary_join_element_wise("osf:", code, "")
            d = pc.binary_join_element_wise("10.5555/osf.io/", code, "")
        elif name == "pubmed":
            wid = pc.binary_join_element_wise("pmid:", _num(10_000_000 + (k * 7_919 + 4_242) % 90_000_000), "")
            d = pc.binary_join_element_wise("10.5555/pm.", _num((k * 6_481 + 77) % 10**8, 8), "")
        elif name == "openalex":
            wid = pc.binary_join_element_wise("openalex:W", _num(4_000_000_000 + (k * 2_654_435_761) % 2**32), "")
            d = pc.binary_join_element_wise("10.5555/oa.", _num((k * 104_729 + 11) % 10**9, 9), "")
        elif name == "crossref":
            d = pc.binary_join_element_wise("10.5555/ex.", _num((k * 15_485_863 + 5) % 10**9, 9), "")
            wid = pc.binary_join_element_wise("doi:", d, "")
        elif name == "arxiv":
            month = k // 90_000
            yymm = (15 + (month // 12)) * 100 + 1 + month % 12
            wid = pc.binary_join_element_wise("arxiv:", _num(yymm, 4), ".",
                                              _num(10_000 + (k % 90_000 * 27_011 + 3) % 90_000, 5), "")
            d = pc.binary_join_element_wise("10.5555/arxiv.", _num(yymm, 4), ".",
                                            _num(10_000 + (k % 90_000 * 27_011 + 3) % 90_000, 5), "")
        else:
            days = published[mask].astype("datetime64[D]").astype(str)
            date = pc.replace_substring(pa.array(days), "-", ".")
            d = pc.binary_join_element_wise("10.5555/", date, ".", _num((k * 1_299_709 + 1) % 10**7, 7), "")
            wid = pc.binary_join_element_wise("doi:", d, "")
        work_id = _replace_where(work_id, mask, wid)
        doi = _replace_where(doi, mask, d)
    for key in np.unique(scheme):
        counters[int(key)] = base.get(int(key), 0) + int((scheme == key).sum())
    return work_id, doi


def _group_table(seed: int, group: int, n: int, counters: dict[int, int]) -> pa.Table:
    """One row group of the pool: rows group*GROUP_ROWS onwards, from the group's own random streams."""
    source, kind, field = _group_kinds(seed, group, n)
    rng = _group_rng(seed, group, 1)
    titles, abstracts = _texts(rng, kind, field)
    titles, abstracts = _oddities(rng, titles, abstracts)
    # Hostile titles (exactly as written): pinned once per group, plus a small random share.
    hostile_pos = _hostile_rows(seed, group, n)
    extra = rng.random(n) < 0.0002
    extra[hostile_pos] = False
    hostile = np.full(n, -1, np.int64)
    hostile[hostile_pos] = np.arange(len(hostile_pos))
    hostile[extra] = rng.integers(0, len(HOSTILE_TITLES), int(extra.sum()))
    hmask = hostile >= 0
    titles = _replace_where(titles, hmask, pa.array(HOSTILE_TITLES, pa.string()).take(pa.array(hostile[hmask])))
    # Missing abstracts (null or ""), by kind; a few null or blank titles.
    u = rng.random(n)
    miss_p = np.array([MISSING_ABSTRACT[k] for k in KINDS])[kind]
    missing = u < miss_p
    null_abs = missing & (u < miss_p * NULL_SHARE_OF_MISSING)
    abstracts = pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), abstracts)
    abstracts = pc.if_else(pa.array(missing & ~null_abs), pa.scalar("", pa.string()), abstracts)
    t = rng.random(n)
    osf_other = kind == KINDS.index("osf_other")
    no_title = ((t < 0.003) | (osf_other & (t < 0.06))) & ~hmask
    blank_title = (t >= 0.003) & (t < 0.004) & ~hmask
    titles = pc.if_else(pa.array(no_title), pa.scalar(None, pa.string()), titles)
    titles = pc.if_else(pa.array(blank_title), pa.scalar("  ", pa.string()), titles)
    # Dates: 2000-01-01 to 2026-06-30, weighted to recent years; OSF from 2013.
    start = np.where(source == SOURCES.index("osf"), 15_706, 10_957)  # 2013-01-01, 2000-01-01
    published = (start + (np.sqrt(rng.random(n)) * (20_634 - start)).astype(np.int64)).astype("datetime64[D]")
    work_id, doi = _ids(source, counters, published)
    no_doi = (rng.random(n) < 0.12) & np.isin(source, [SOURCES.index(s) for s in ("openalex", "pubmed", "arxiv")])
    doi = pc.if_else(pa.array(no_doi), pa.scalar(None, pa.string()), doi)
    names = np.array(SOURCES, dtype=object)[source]
    venue, authors = _venues_authors(rng, names, kind, field)
    type_names = np.array([TYPES[k] for k in KINDS], dtype=object)[kind]
    type_names[np.isin(names, ["biorxiv", "medrxiv", "arxiv"]) & (type_names == "article")] = "preprint"
    return pa.Table.from_arrays(
        [work_id, pa.array(names, pa.string()), titles, abstracts, pa.array(type_names, pa.string()), doi,
         pa.array(published, pa.date32()), venue, authors], schema=SCHEMA)


def _venues_authors(rng: np.random.Generator, names: np.ndarray, kind: np.ndarray, field: np.ndarray
                    ) -> tuple[pa.Array, pa.Array]:
    """Invented journal names (the platform's name for OSF and preprint servers) and 1-12 invented authors."""
    r = _renderer()
    venue = r.draw(rng, "venue", field)
    for source, platform in (("osf", "OSF Registries"), ("biorxiv", "bioRxiv"), ("medrxiv", "medRxiv"),
                             ("arxiv", "arXiv")):
        venue = pc.if_else(pa.array(names == source), pa.scalar(platform), venue)
    count = np.minimum(1 + rng.geometric(0.3, len(kind)), 12)
    count[kind == KINDS.index("nonpaper")] = 0
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    people = r.draw(rng, "author", np.zeros(int(offsets[-1]), np.int64))
    return venue, pa.ListArray.from_arrays(pa.array(offsets), people)


def _marker(seed: int, rows: int) -> dict[bytes, bytes]:
    return {MARKER_KEY: f"seeded example data (reporter.pool.generate, seed={seed}, rows={rows}): "
                        f"not real works".encode(),
            b"reporter.generated.seed": str(seed).encode(),
            b"reporter.generated.rows": str(rows).encode(),
            b"reporter.generated.version": GENERATOR_VERSION.encode()}


def generate_pool(path: Path, rows: int = 200_000, seed: int = 0, *, progress: bool = True,
                  labels: Path | None = None) -> Path:
    """Write a seeded example pool of `rows` invented works to `path` (Parquet); optionally its labels."""
    if not 0 < rows <= MAX_ROWS:
        raise ValueError(f"rows must be between 1 and {MAX_ROWS:,}, got {rows:,}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    schema = SCHEMA.with_metadata(_marker(seed, rows))
    bar = Progress("generate pool", total=rows, enabled=progress)
    counters: dict[int, int] = {}
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd", compression_level=1,
                              use_dictionary=["source", "type", "venue"], write_statistics=False) as writer:
            for group, start in enumerate(range(0, rows, GROUP_ROWS)):
                n = min(GROUP_ROWS, rows - start)
                table = _group_table(seed, group, n, counters)
                writer.write_table(table.replace_schema_metadata(schema.metadata), row_group_size=GROUP_ROWS)
                bar.advance(n)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    bar.close()
    if labels is not None:
        generate_labels(path, labels, seed)
    return path


def pool_truth(pool: Path) -> tuple[int, np.ndarray]:
    """The pool's generator seed and every row's hidden kind (indices into KINDS), recomputed."""
    meta = pq.read_schema(pool).metadata or {}
    if MARKER_KEY not in meta:
        raise ValueError(f"{pool}: not a generated example pool (no {MARKER_KEY.decode()} metadata)")
    seed, rows = int(meta[b"reporter.generated.seed"]), int(meta[b"reporter.generated.rows"])
    kinds = []
    for group, start in enumerate(range(0, rows, GROUP_ROWS)):
        n = min(GROUP_ROWS, rows - start)
        kinds.append(_group_kinds(seed, group, n)[1].astype(np.int8))
    return seed, np.concatenate(kinds)


def generate_labels(pool: Path, out_csv: Path, seed: int = 0, *, include_share: float = 0.5,
                    exclude_share: float = 0.02, noise: float = 0.015) -> Path:
    """Write work_id,label for a seeded subset of a generated pool, from its hidden truth (with a little noise)."""
    _, kinds = pool_truth(pool)
    include = np.isin(kinds, [KINDS.index(k) for k in INCLUDE_KINDS])
    rng = np.random.default_rng([seed, 7_771])
    u = rng.random(len(kinds))
    chosen = np.where(include, u < include_share, u < exclude_share)
    flip = rng.random(len(kinds)) < noise
    label = include ^ flip
    out_csv = Path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_csv.with_name(out_csv.name + ".tmp")
    start = 0
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["work_id", "label"])
        for batch in pq.ParquetFile(pool).iter_batches(batch_size=GROUP_ROWS, columns=["work_id"]):
            ids = batch.column(0).to_pylist()
            for i in np.flatnonzero(chosen[start:start + len(ids)]):
                w.writerow([ids[i], "include" if label[start + i] else "exclude"])
            start += len(ids)
    tmp.replace(out_csv)
    return out_csv


def main(argv: list[str] | None = None) -> int:
    """python -m reporter.pool.generate OUT --rows N --seed S [--labels CSV]."""
    parser = argparse.ArgumentParser(
        prog="python -m reporter.pool.generate",
        description="Write a seeded example pool of invented works (Parquet).",
        epilog="Example: python -m reporter.pool.generate data/pool.parquet --rows 200000 --seed 0 "
               "--labels data/labels.csv")
    parser.add_argument("out", type=Path, help="the Parquet file to write")
    parser.add_argument("--rows", type=int, default=200_000, help="number of works (default 200000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--labels", type=Path, default=None, help="also write work_id,label CSV here")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        generate_pool(args.out, args.rows, args.seed, progress=not args.quiet, labels=args.labels)
    except ValueError as exc:
        print(f"generate: error: {exc}", file=sys.stderr)
        return 2
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({args.rows:,} rows, {size / 1e6:,.1f} MB) in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
