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


def test_the_command_table_names_each_commands_own_module():
    """`reporter route ...` imports only the routing commands: the table must match what the modules register."""
    import argparse
    import importlib

    from reporter.cli import COMMAND_MODULE, COMMAND_MODULES
    registered = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        registered.update({command: name for command in sub.choices})
    assert COMMAND_MODULE == registered
    help_text, loaded = _help_and_modules("route", ("reporter.site", "reporter.digest", "reporter.screening", "openai"))
    assert loaded == []
    assert "--workers" in help_text


def test_the_listing_without_imports_matches_the_registered_commands():
    """`reporter --help` lists the commands from COMMAND_HELP without importing them (issue 35, item 4): the
    listing must read exactly as the one built from every command module (names, order, one-line help)."""
    from reporter.cli import COMMAND_HELP, COMMAND_MODULE, build_parser
    assert list(COMMAND_HELP) == list(COMMAND_MODULE)
    assert build_parser(listing=True).format_help() == build_parser().format_help()


HEAVY = ("reporter.commands", "reporter.config", "reporter.routing", "reporter.digest", "reporter.site",
         "reporter.screening", "reporter.novelty", "reporter.panel", "reporter.fetch", "reporter.pool",
         "pyarrow", "numpy", "pandas", "openai", "httpx", "jinja2", "markdown_it", "hyperscan", "ahocorasick_rs",
         "psycopg", "duckdb", "yaml", "tomllib")


def test_version_and_help_import_no_command():
    """`reporter --version`, `reporter --help`, a bare `reporter` and a misspelt command start without any
    command module or heavy library (issue 35, item 4: every stage up front was 0.5-1.2 CPU-s a start)."""
    for argv in (["--version"], ["--help"], ["-h"], [], ["rout"]):
        text, loaded = _help_and_modules(argv, HEAVY)
        assert loaded == [], (argv, loaded)
    text, _ = _help_and_modules(["--version"], HEAVY)
    assert text.startswith("reporter ")
    text, _ = _help_and_modules(["--help"], HEAVY)
    assert "novelty-ingest" in text and "certify" in text


def _help_and_modules(command: str | list[str], prefixes: tuple[str, ...]) -> tuple[str, list[str]]:
    """`reporter COMMAND --help` (or `reporter ARGV` for a list) in a fresh process: its output, and the loaded
    modules named with `prefixes`."""
    import json
    import subprocess
    import sys
    argv = command if isinstance(command, list) else [command, "--help"]
    probe = (f"import json, sys; from reporter.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             f"print(json.dumps(sorted(m for m in sys.modules"
             f" if m == 'reporter.build' or m.startswith({prefixes!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    *text, last = out.strip().splitlines()
    return "\n".join(text), json.loads(last)


def test_an_unknown_command_lists_every_command(capsys):
    import pytest
    with pytest.raises(SystemExit):
        main(["rout"])
    err = capsys.readouterr().err
    assert "invalid choice: 'rout'" in err and "'fetch'" in err and "'route'" in err


def test_every_commands_help_reads_as_text(capsys):
    """Each `reporter COMMAND --help` prints plain text: no doubled `%%` from a description argparse never
    %-formats (`diagnose` once printed "Wilson 95%% interval"), and no unformatted `%(default)s`."""
    import pytest

    from reporter.cli import COMMAND_MODULE
    for command in sorted(COMMAND_MODULE):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "%%" not in out and "%(" not in out, (command, out)
        assert out.startswith(f"usage: reporter {command}"), command



def test_build_help_loads_no_stage():
    """`reporter build --help` imports the command's module only, not the pipeline it runs."""
    help_text, loaded = _help_and_modules("build", ("reporter.site", "reporter.digest", "reporter.screening",
                                                    "reporter.routing", "reporter.novelty"))
    assert loaded == []
    assert "--rerender-archive" in help_text


STAGE_LIBRARIES = ("pyarrow", "numpy", "polars", "openai", "httpx", "httpx2", "jinja2", "hyperscan", "psycopg", "duckdb",
                   "pandas", "tokenizers", "safetensors", "rapidfuzz")


def test_every_commands_help_loads_no_heavy_library():
    """`reporter COMMAND --help` for every command imports its command module and no stage library (issue 35,
    item 4): a command module imports its stage inside the function that runs it (0.3-0.7 CPU-s a help page
    before, for novelty, digest, judge, screen, fetch, certify and disclose)."""
    from reporter.cli import COMMAND_MODULE
    heavy = {}
    for command in sorted(COMMAND_MODULE):
        help_text, loaded = _help_and_modules(command, STAGE_LIBRARIES)
        heavy[command] = sorted({m.split(".")[0] for m in loaded} & set(STAGE_LIBRARIES))
        assert help_text.startswith(f"usage: reporter {command}"), command
    assert {c: h for c, h in heavy.items() if h} == {}
