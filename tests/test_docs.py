"""Documentation is tested: every command has help with an example, every rule key is documented."""

import re
from pathlib import Path

import pytest

from reporter.cli import build_parser
from reporter.routing.specs import RULE_KEYS

ROOT = Path(__file__).resolve().parents[1]


def _commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


def test_the_commands_of_the_readme_exist():
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"\| `reporter ([a-z-]+)`", readme))
    assert named and named <= set(_commands())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_has_help_with_an_example(name):
    text = _commands()[name].format_help()
    assert "xample" in text, f"`reporter {name} --help` shows no example"
    assert f"reporter {name}" in text


def test_every_rule_key_is_documented_in_the_project_docs():
    text = (ROOT / "docs" / "rules.md").read_text()
    missing = [key for key in sorted(RULE_KEYS) if f"`{key}`" not in text and f'"{key}"' not in text]
    assert not missing, f"rule keys not documented in docs/: {missing}"


def test_readme_names_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()
