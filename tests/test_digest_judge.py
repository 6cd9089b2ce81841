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
