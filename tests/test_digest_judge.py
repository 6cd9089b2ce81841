"""The digest's criteria judge, offline: its settings, prompt and generation, the validation of an answer, and
Axis 2 from the answers (every mapping, every combination of two judges, every failure rule). Issue 24."""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter.config import load_workspace
from reporter.digest.criteria import parse_criteria
from reporter.errors import InputError

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
    assert judge.database == str(tmp_path.resolve() / "state" / "judge.db") and not judge.is_postgres
    assert judge.raw_dir == tmp_path.resolve() / "state" / "judge-raw" and judge.workspace == tmp_path.resolve()
    assert [(v.name, v.model) for v in judge.voters] == [("a", "m1"), ("b", "gpt-4o-mini")]
    assert judge.voters[1].max_concurrency == 3 and judge.voters[1].price_checked is not None  # prices.json
    assert judge.voters[0].structured_output and judge.voters[0].max_tokens == 300


def test_one_judge_is_enough_and_a_digest_without_the_table_has_none(tmp_path):
    assert _load(tmp_path, "").digest.judge is None
    ws = _load(tmp_path, '[digest.judge]\ndatabase = "postgresql://u@127.0.0.1/j"\nraw_dir = "r"\n'
               + JUDGE.format(name="only", model="m"))
    assert ws.digest.judge.is_postgres and ws.digest.judge.raw_dir == tmp_path.resolve() / "r"
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
    from reporter.screening.config import VoterSettings
    (tmp_path / "c.md").write_text(criteria, encoding="utf-8")
    voters = tuple(VoterSettings(name=f"j{i}", base_url="http://127.0.0.1:1/v1", model=m, api_key_env=None,
                                 max_concurrency=2, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
                   for i, m in enumerate(models))
    return JudgeSettings(database=str(tmp_path / "j.db"), raw_dir=tmp_path / "raw", voters=voters,
                         workspace=tmp_path)


def test_the_prompt_is_the_task_the_numbered_criteria_the_schema_then_the_paper(tmp_path):
    from reporter.digest.judge import prompt as jp
    from reporter.screening.prompt import messages_for
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
    from reporter.screening.prompt import build_prompt, generation_for
    prompt = build_prompt(None)
    assert generation_for("cheap", (), prompt).id == sha256_json({"tier": "cheap", "prompt_hash": prompt.hash,
                                                                 "voters": []})


# --- the answer, validated in our code ----------------------------------------------------------------------


def _read(content, finish="stop", refusal=None, criteria=CRITERIA):
    from reporter.digest.judge.prompt import judge_answer
    from reporter.screening.provider import parse_content
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
