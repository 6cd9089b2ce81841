"""The digest's criteria judge, offline: its settings, prompt and generation, the validation of an answer, and
Axis 2 from the answers (every mapping, every combination of two judges, every failure rule). Issue 24."""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter.config import load_workspace
from reporter.digest.criteria import parse_criteria
from reporter.errors import InputError
from reporter.panel.store_connect import is_postgres

BASE = ('pool = "pool.jsonl"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n'
        '[digest]\npapers = "papers"\nwatchlist = "w.txt"\ncriteria = "c.md"\n')
JUDGE = ('[[digest.judge.voters]]\nname = "{name}"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "{model}"\n'
         'price_in_per_mtok = 0.15\nprice_out_per_mtok = 0.6\n')


def _load(tmp_path: Path, extra: str):
    (tmp_path / "reporter.toml").write_text(BASE + extra)
    return load_workspace(tmp_path)


# --- [digest.judge] ------------------------------------------------------------------------------------


def test_the_judge_table_parses_with_screenings_voter_keys(tmp_path):
    ws = _load(tmp_path, "[digest.judge]\n" + JUDGE.format(name="a", model="m1")
               + JUDGE.format(name="b", model="gpt-4o-mini").replace("price_in_per_mtok = 0.15\n", "")
               .replace("price_out_per_mtok = 0.6\n", "max_concurrency = 3\n"))
    judge = ws.digest.judge
    assert judge.database == str(tmp_path.resolve() / "state" / "judge.db") and not is_postgres(judge.database)
    assert judge.raw_dir == tmp_path.resolve() / "state" / "judge-raw" and judge.workspace == tmp_path.resolve()
    assert [(v.name, v.model) for v in judge.voters] == [("a", "m1"), ("b", "gpt-4o-mini")]
    assert judge.voters[1].max_concurrency == 3 and judge.voters[1].price_checked is not None  # prices.json
    assert judge.voters[0].structured_output and judge.voters[0].max_tokens == 300


def test_one_judge_is_enough_and_a_digest_without_the_table_has_none(tmp_path):
    assert _load(tmp_path, "").digest.judge is None
    ws = _load(tmp_path, '[digest.judge]\ndatabase = "postgresql://u@127.0.0.1/j"\nraw_dir = "r"\n'
               + JUDGE.format(name="only", model="m"))
    assert is_postgres(ws.digest.judge.database) and ws.digest.judge.raw_dir == tmp_path.resolve() / "r"
    assert len(ws.digest.judge.voters) == 1


@pytest.mark.parametrize("extra, message", [
    ("[digest.judge]\n", "[digest.judge]: key 'voters' must hold 1 or 2 [[digest.judge.voters]] entries, not 0"),
    ("[digest.judge]\n" + JUDGE.format(name="a", model="m") * 3,
     "[digest.judge]: key 'voters' must hold 1 or 2 [[digest.judge.voters]] entries, not 3"),
    ("[digest.judge]\n" + JUDGE.format(name="a", model="m") + JUDGE.format(name="a", model="n"),
     "[digest.judge]: key 'voters' names 'a' twice"),
    ("[digest.judge]\nmodel = \"m\"\n", "[digest.judge]: unknown key 'model'"),
    ("[digest.judge]\n" + JUDGE.format(name="a", model="m").replace("price_in_per_mtok = 0.15\n", ""),
     "[digest.judge.voters[0]]: key 'price_in_per_mtok' is missing: model 'm' is not in the default price table"),
    ("[digest.judge]\n" + JUDGE.format(name="a", model="m") + "api_key = \"sk-1\"\n",
     "[digest.judge.voters[0]]: unknown key 'api_key'"),
])
def test_judge_errors_name_the_table_and_the_key(tmp_path, extra, message):
    with pytest.raises(InputError) as caught:
        _load(tmp_path, extra)
    assert message in str(caught.value)


def test_with_a_judge_a_concept_needs_no_backticked_term():
    text = "## In scope\n- Benchmarks that measure language models\n## Required\n- Must involve language models\n"
    with pytest.raises(InputError, match="without a backticked term"):
        parse_criteria(text, "c.md")
    criteria = parse_criteria(text, "c.md", need_terms=False)
    assert [(c.section, c.prose, c.terms, c.line) for c in criteria.concepts] == [
        ("in scope", "Benchmarks that measure language models", (), 2),
        ("required", "Must involve language models", (), 4)]
    with pytest.raises(InputError, match="has no bullet"):
        parse_criteria("## In scope\nNo bullets.\n", "c.md", need_terms=False)
    with pytest.raises(InputError, match="not a section the digest reads"):  # a term under a misspelt heading
        parse_criteria("## In scope\n- A\n## Out of scop\n- B: `b`\n", "c.md", need_terms=False)


# --- the prompt and the generation ------------------------------------------------------------------------

CRITERIA = """# Criteria

## In scope
- Benchmarks that measure language models
- Models as judges: `LLM judge*`

## Out of scope
- Vision-only benchmarks

## Required
- Must involve language models
"""


def _judge(tmp_path: Path, *models: str, criteria: str = CRITERIA):
    from reporter.digest.judge.config import JudgeSettings
    from reporter.panel.config import VoterSettings
    (tmp_path / "c.md").write_text(criteria, encoding="utf-8")
    voters = tuple(VoterSettings(name=f"j{i}", base_url="http://127.0.0.1:1/v1", model=m, api_key_env=None,
                                 max_concurrency=2, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
                   for i, m in enumerate(models))
    return JudgeSettings(database=str(tmp_path / "j.db"), raw_dir=tmp_path / "raw", voters=voters,
                         workspace=tmp_path)


def test_the_prompt_is_the_task_the_numbered_criteria_the_schema_then_the_paper(tmp_path):
    from reporter.digest.judge import prompt as jp
    from reporter.panel.prompt import messages_for
    setup = jp.judge_setup(_judge(tmp_path, "m"), tmp_path / "c.md")
    system, user = messages_for(setup.prompt, "A {title} with braces", "Its abstract.", False)
    numbered = "\n".join([" 1 | # Criteria", " 2 |", " 3 | ## In scope", " 4 | - Benchmarks that measure language models",
                          " 5 | - Models as judges: `LLM judge*`", " 6 |", " 7 | ## Out of scope",
                          " 8 | - Vision-only benchmarks", " 9 |", "10 | ## Required",
                          "11 | - Must involve language models"])
    assert system == {"role": "system", "content": "\n\n".join([jp.TASK, jp.CRITERIA_LEAD + numbered, jp.SCHEMA])}
    assert jp.TASK.startswith("You judge one scholarly paper against a reader's relevance-criteria document")
    assert jp.SCHEMA.startswith('Answer with one JSON object and nothing else: {"fit": "in_scope" | "borderline"')
    assert user == {"role": "user", "content": "Title: A {title} with braces\n\nAbstract: Its abstract."}
    assert [c.line for c in setup.criteria.concepts] == [4, 5, 8, 11]
    assert messages_for(setup.prompt, "T", None, False)[1]["content"].endswith("judge it from the title alone.")


def test_the_generation_changes_with_the_prompt_the_models_or_the_criteria_and_nothing_else(tmp_path):
    from dataclasses import replace

    from reporter.digest.judge.prompt import judge_setup
    judge = _judge(tmp_path, "m1", "m2")
    first = judge_setup(judge, tmp_path / "c.md").generation
    assert first.tier == "judge" and first.definition["inputs"]["criteria_sha256"]
    assert judge_setup(judge, tmp_path / "c.md").generation.id == first.id
    cheaper = replace(judge, voters=tuple(replace(v, price_in_per_mtok=0, max_concurrency=9) for v in judge.voters))
    assert judge_setup(cheaper, tmp_path / "c.md").generation.id == first.id, "prices and concurrency change no answer"
    other = replace(judge, voters=(judge.voters[0], replace(judge.voters[1], model="m3")))
    assert judge_setup(other, tmp_path / "c.md").generation.id != first.id
    (tmp_path / "c.md").write_text(CRITERIA + "\n", encoding="utf-8")  # one byte more: another sha256
    assert judge_setup(judge, tmp_path / "c.md").generation.id != first.id


def test_the_screens_generation_is_what_it_always_was():
    from reporter.hashing import sha256_json
    from reporter.panel.prompt import generation_for
    from reporter.screening.prompt import build_prompt
    prompt = build_prompt(None)
    assert generation_for("cheap", (), prompt).id == sha256_json({"tier": "cheap", "prompt_hash": prompt.hash,
                                                                 "voters": []})


# --- the answer, validated in our code ----------------------------------------------------------------------


def _read(content, finish="stop", refusal=None, criteria=CRITERIA):
    from reporter.digest.judge.prompt import judge_answer
    from reporter.panel.replies import parse_content
    return parse_content(content, finish, refusal, judge_answer(parse_criteria(criteria, "c.md", need_terms=False)))


@pytest.mark.parametrize("fit", ["in_scope", "borderline", "partial", "out_of_scope"])
def test_a_fit_citing_a_concept_line_is_an_answer(fit):
    vote = _read('{"fit": "%s", "criteria_lines": [11, 4, 4, 2], "reason": "Why."}' % fit)
    assert (vote.answer, vote.invalid_cause, vote.reason) == (fit, None, "Why.")
    from reporter.digest.judge.prompt import cited_lines
    assert cited_lines(vote) == (2, 4, 11), "as cited, sorted, each once (a heading line is kept, not quoted)"


def test_silent_needs_no_line():
    vote = _read('```json\n{"fit": "silent", "criteria_lines": [], "reason": "Nothing on this."}\n```')
    assert vote.answer == "silent" and vote.detail == '{"criteria_lines":[]}'


@pytest.mark.parametrize("content, cause, why", [
    ('{"fit": "in_scope", "criteria_lines": [], "reason": "r"}', "uncited", "cites no concept line"),
    ('{"fit": "partial", "criteria_lines": [1, 3, 99], "reason": "r"}', "uncited", "the concepts are on lines 4, 5"),
    ('{"fit": "out_of_scope", "criteria_lines": [7], "reason": "r"}', "uncited", "cited: [7]"),
    ('{"fit": "In_scope", "criteria_lines": [4], "reason": "r"}', "unknown_fit", "'In_scope' is not one of"),
    ('{"fit": "relevant", "criteria_lines": [4], "reason": "r"}', "unknown_fit", "in_scope, borderline"),
    ('{"fit": 1, "criteria_lines": [4], "reason": "r"}', "schema", "fit is not a string"),
    ('{"label": "include", "reason": "r"}', "schema", "no fit"),
    ('{"fit": "in_scope", "reason": "r"}', "schema", "no criteria_lines"),
    ('{"fit": "in_scope", "criteria_lines": ["4"], "reason": "r"}', "schema", "not a list of line numbers"),
    ('{"fit": "in_scope", "criteria_lines": [true], "reason": "r"}', "schema", "not a list of line numbers"),
    ('{"fit": "in_scope", "criteria_lines": 4, "reason": "r"}', "schema", "not a list of line numbers"),
    ('{"fit": "in_scope", "criteria_lines": [4]}', "schema", "no reason"),
    ('{"fit": "in_scope", "criteria_lines": [4], "reason": 3}', "schema", "reason is not a string"),
    ('{"fit": "in_scope", "criteria_lines": [4], "reason": "r", "score": 5}', "schema", "keys outside the schema"),
    ("The paper is in scope.", "unparseable", "no JSON object"),
    ("", "unparseable", "empty reply"),
])
def test_anything_else_is_that_judges_failure_with_its_cause(content, cause, why):
    vote = _read(content)
    assert vote.answer is None and vote.invalid_cause == cause and why in vote.reason


def test_a_refused_or_cut_reply_is_a_failure_too():
    assert _read(None, refusal="I can't help with that.").invalid_cause == "refusal"
    assert _read("", finish="content_filter").invalid_cause == "refusal"
    assert _read('{"fit": "in_scope", "criteria_lines": [4], "reason": "r"}', finish="length").invalid_cause \
        == "truncated"


# --- Axis 2 from the judges ------------------------------------------------------------------------------

from itertools import product  # noqa: E402

from reporter.digest.decide import Thresholds, decide_week, judge, score_axes  # noqa: E402
from reporter.digest.judge.axis import fits_disagree, judged_axis  # noqa: E402
from reporter.digest.records import JudgeEntry  # noqa: E402
from reporter.pool.record import Record  # noqa: E402
from reporter.digest.watchlist import parse_watchlist  # noqa: E402

FITS = ("in_scope", "borderline", "partial", "out_of_scope", "silent")
KEYWORD_CRITERIA = parse_criteria("""# Criteria

## In scope
- Models as judges: `LLM judge*`, `judge model`

## Out of scope
- Vision-only benchmarks: `image benchmark`

## Required
- Must involve language models: `language model*`, `LLM*`

## Reduced fit
- Surveys: `survey`
""", "criteria.md", need_terms=False)
"""Lines: In scope 4, Out of scope 7, Required 10, Reduced fit 13."""
LINE = {"in_scope": 4, "borderline": 4, "partial": 4, "out_of_scope": 7, "silent": None}
WATCH = parse_watchlist("judge*\n", "w.txt")
PAPER = Record(id="arxiv:1", title="A judge for evaluation", abstract="We study judges of language models.")
"""Match 1.0 (the watchlist in the title and the abstract); the keyword rule: silent (no In scope term)."""
VALUES = {"in_scope": (1.0, 1.0), "borderline": (0.7, 0.4), "partial": (0.4, 0.2), "out_of_scope": (0.0, 0.0),
          "silent": (0.7, 0.7)}


def entry(fit: str | None, voter: str = "a", *, lines: tuple[int, ...] | None = None, failure: str | None = None,
          reason: str = "It fits. More words.") -> JudgeEntry:
    if lines is None:
        lines = () if fit in (None, "silent") else (LINE[fit],)
    return JudgeEntry(voter, f"model-{voter}", fit, lines, reason, failure)


def decided(*entries: JudgeEntry, record: Record = PAPER, criteria=KEYWORD_CRITERIA, **kw):
    [d] = decide_week([record], WATCH, criteria, judged={record.id: entries}, **kw).decisions
    return d


@pytest.mark.parametrize("fit", FITS)
def test_each_fit_maps_to_its_value_in_both_passes(fit):
    d = decided(entry(fit))
    assert d.axes.criteria == VALUES[fit][0] and d.criteria_source == "judge"
    assert d.judges == (entry(fit),)
    [axes] = score_axes([PAPER], WATCH, KEYWORD_CRITERIA, (), {PAPER.id: (entry(fit),)})
    assert judge(PAPER, axes, KEYWORD_CRITERIA, Thresholds(), strict=True).axes.criteria == VALUES[fit][1]
    assert ("criteria-silent" in d.tags) == (fit == "silent")
    if fit == "silent":
        assert d.decision == "REVIEW" and "the criteria are silent, so never KEEP" in d.rationale
        assert "criteria silent 0.70" in d.rationale
    else:
        assert d.decision == ("KEEP" if VALUES[fit][0] >= 0.4 else "REVIEW")


def test_out_of_scope_names_its_cause_by_the_section_it_cites():
    w = parse_watchlist("judge*\n", "w.txt")
    weak = Record(id="arxiv:2", title="Judges", abstract="A note.")  # match 0.7: out of scope 0.0 gives 42, DROP
    for lines, cause in (((7,), "look-alike-trap"), ((10,), "fails-required"), ((4,), "not-in-scope"),
                         ((4, 7), "look-alike-trap")):
        [d] = decide_week([weak], w, KEYWORD_CRITERIA, judged={weak.id: (entry("out_of_scope", lines=lines),)}
                          ).decisions
        assert (d.decision, d.cause) == ("DROP", cause), lines
        quoted = {"look-alike-trap": 'criteria.md:7 "Vision-only benchmarks"',
                  "fails-required": 'criteria.md:10 "Must involve language models"',
                  "not-in-scope": 'criteria.md:4 "Models as judges"'}[cause]
        assert d.rationale.startswith(f"DROP ({cause}): judged out of scope") and f"({quoted}; score" in d.rationale


@pytest.mark.parametrize("a, b", list(product(FITS, FITS)))
def test_two_judges_the_lower_value_counts_and_apart_they_disagree(a, b):
    d = decided(entry(a, "a"), entry(b, "b"))
    assert d.axes.criteria == min(VALUES[a][0], VALUES[b][0])
    scale = ("out_of_scope", "partial", "borderline", "in_scope")
    apart = (a == "silent") != (b == "silent") or ("silent" not in (a, b)
                                                   and abs(scale.index(a) - scale.index(b)) >= 2)
    assert fits_disagree(a, b) == apart
    assert ("judges-disagree" in d.tags) == apart
    if apart or min((a, b), key=lambda f: VALUES[f]) == "silent":
        assert d.decision != "KEEP"
    [axes] = score_axes([PAPER], WATCH, KEYWORD_CRITERIA, (), {PAPER.id: (entry(a, "a"), entry(b, "b"))})
    assert axes.criteria.value(True) == 100 * min(VALUES[a][1], VALUES[b][1]), "the lower in the stricter pass too"
    assert [j.voter for j in d.judges] == ["a", "b"]


def test_disagreeing_judges_never_keep_and_say_so():
    d = decided(entry("in_scope", "a"), entry("partial", "b"))
    assert d.score == 73 and d.decision == "REVIEW" and d.tags == ("judges-disagree",)
    assert d.rationale.startswith("REVIEW: the judges disagree, so never KEEP; ")
    assert ('criteria: judged by a (model-a) in scope per criteria.md:4 "Models as judges" ("It fits."), and by '
            'b (model-b) partial per criteria.md:4 "Models as judges" ("It fits."), the lower (partial) counts, '
            'and the judges disagree') in d.rationale
    assert decided(entry("in_scope", "a"), entry("borderline", "b")).decision == "KEEP", "one step apart: agree"


@pytest.mark.parametrize("cause", ["uncited", "unknown_fit", "unparseable", "refusal", "schema", "truncated"])
def test_a_judges_failure_lets_the_keyword_rule_decide_never_keep(cause):
    keyword_keep = Record(id="arxiv:3", title="An LLM judge", abstract="A judge model of language models.")
    d = decided(entry(None, "a", failure=cause, reason="what was wrong"), entry("in_scope", "b"),
                record=keyword_keep)
    assert d.criteria_source == "keyword" and d.axes.criteria == 1.0 and d.score == 100
    assert d.decision == "REVIEW" and "judge-failed" in d.tags
    assert d.rationale.startswith("REVIEW: a judge failed, so never KEEP; ")
    assert f"criteria: the keyword rule decided, as judge a (model-a) failed ({cause}: what was wrong): in scope" \
        in d.rationale
    assert d.judges[0] == JudgeEntry("a", "model-a", None, (), "what was wrong", cause)


def test_with_no_terms_a_failed_judge_leaves_the_criteria_silent():
    prose = parse_criteria("## In scope\n- Models as judges\n## Required\n- Must involve language models\n",
                           "criteria.md", need_terms=False)
    d = decided(entry(None, failure="refusal"), criteria=prose)
    assert d.axes.criteria == 0.7 and d.tags == ("criteria-silent", "judge-failed") and d.decision == "REVIEW"
    assert d.criteria_source == "keyword"


def test_a_missing_answer_with_the_fallback_is_the_keyword_rule_tagged_judge_missing():
    keyword_keep = Record(id="arxiv:3", title="An LLM judge", abstract="A judge model of language models.")
    d = decided(entry(None, failure="missing", reason=""), record=keyword_keep)
    assert (d.decision, d.criteria_source, d.tags) == ("KEEP", "keyword", ("judge-missing",))
    assert "the keyword rule decided, as judge a (model-a) has not answered yet (--keyword-fallback)" in d.rationale


def test_the_cited_lines_are_quoted_with_the_reason_cut_to_a_sentence():
    long = "The paper proposes an LLM judge, e.g. for code.\n It also " + "x" * 400
    d = decided(entry("in_scope", reason=long))
    assert len(decided(entry("in_scope", reason="y" * 400)).rationale) < 600, "at most 200 characters quoted"
    assert d.criteria_lines == (4,)
    assert ('judged by a (model-a) in scope per criteria.md:4 "Models as judges" ("The paper proposes an LLM judge, '
            'e.g. for code.")') in d.rationale
    assert d.rationale.startswith("KEEP: strong match and judged in scope (score 100: ")


def test_a_judge_entry_reads_back_and_a_malformed_one_is_refused():
    from reporter.digest.records import Decision
    e = entry("partial", lines=(4, 11))
    assert JudgeEntry.from_json(e.to_json()) == e
    failed = entry(None, failure="uncited", reason="cites nothing")
    assert JudgeEntry.from_json(failed.to_json()) == failed
    with pytest.raises(ValueError, match="either a fit or a failure"):
        JudgeEntry.from_json({**e.to_json(), "failure": "schema"})
    d = decided(entry("in_scope", "a"), failed)
    assert Decision.from_json(d.to_json()) == d
    with pytest.raises(ValueError, match="criteria_source"):
        Decision.from_json({**d.to_json(), "criteria_source": "oracle"})
