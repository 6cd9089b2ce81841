"""Bad input found late still exits 2 with a message, never a traceback (issue 8, item 6 leftovers)."""

from pathlib import Path

from reporter.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "novelty"


def test_deeply_nested_candidate_and_results_are_input_errors(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["novelty", "--candidate", str(deep), "--graph", str(EXAMPLES / "events.jsonl")]) == 2
    assert "deep.json: JSON nested too deeply to read" in capsys.readouterr().err
    batch = tmp_path / "batch.jsonl"
    batch.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["novelty", "--batch", str(batch), "--graph", str(EXAMPLES / "events.jsonl"), "--json"]) == 2
    assert "batch.jsonl: line 1: JSON nested too deeply to read" in capsys.readouterr().err
    results = tmp_path / "results.jsonl"
    results.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["render", "--releases", str(tmp_path / "none"), "--out", str(tmp_path / "site"),
                 "--novelty", str(results)]) == 2
    assert "results.jsonl: line 1: JSON nested too deeply to read" in capsys.readouterr().err


def test_an_output_folder_that_is_a_file_is_named(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    fixture = ROOT / "tests" / "fixtures" / "site_workspace"
    assert main(["route", "--pool", str(fixture / "pool.jsonl"), "--specs", str(fixture / "specs"),
                 "--out", str(blocker / "releases"), "--json"]) == 2
    assert f"{blocker} is a file" in capsys.readouterr().err
