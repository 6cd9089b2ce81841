"""The classify prompt: named fragments, the exact messages, the prompt hash and the generation of a tier."""

import dataclasses
import json
from pathlib import Path

import pytest

from reporter.errors import InputError
from reporter.hashing import sha256_json
from reporter.panel.config import VoterSettings
from reporter.panel.prompt import Generation, Prompt, generation_for, messages_for, response_format
from reporter.panel import prompt as panel_prompt
from reporter.screening import prompt as prompt_module
from reporter.screening.answer import ANSWER_SCHEMA, ANSWERS, SCREEN_ANSWER
from reporter.screening.config import ScreenSettings
from reporter.screening.prompt import build_prompt, load_prompt

DEFAULT_PROMPT_HASH = "67ad3bde3252339885c6770de0d70fbc47504db29ce092e01f3460cbdba7f7bf"
"""The built-in prompt's hash. Changing a fragment changes it, and every workspace's old verdicts stop counting:
update this only for a deliberate prompt change."""

VOTERS = (
    VoterSettings(name="a", base_url="http://127.0.0.1:8000/v1", model="m-a", api_key_env="KEY_A",
                  max_concurrency=8, price_in_per_mtok=0.15, price_out_per_mtok=0.6),
    VoterSettings(name="b", base_url="http://127.0.0.1:8001/v1", model="m-b", api_key_env=None,
                  max_concurrency=4, price_in_per_mtok=0.0, price_out_per_mtok=0.0, temperature=0.2),
)


def _settings(tmp_path: Path, criteria: Path | None = None) -> ScreenSettings:
    return ScreenSettings(database=str(tmp_path / "s.db"), raw_dir=tmp_path / "raw", criteria=criteria)


def _criteria(tmp_path: Path, text: str, name: str = "criteria.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- fragments and messages ----------------------------------------------------------------------------------

def test_the_prompt_is_five_named_fragments_and_two_messages():
    prompt = build_prompt()
    assert [name for name, _ in prompt.fragments] == ["task", "criteria", "schema", "work", "work_title_only"]
    assert prompt.fragment("work") == "Title: {title}\n\nAbstract: {abstract}"
    assert prompt.fragment("work_title_only") == (
        "Title: {title}\n\nOnly the title of this work is available; judge it from the title alone.")
    assert prompt.fragment("criteria").startswith("Inclusion and exclusion criteria:\n\n")
    for answer in ANSWERS:
        assert f'"{answer}"' in prompt.fragment("schema")
    with pytest.raises(KeyError):
        prompt.fragment("footer")
    messages = messages_for(prompt, "A title", "An abstract.", False)
    assert messages == [
        {"role": "system", "content": "\n\n".join(prompt.fragment(n) for n in ("task", "criteria", "schema"))},
        {"role": "user", "content": "Title: A title\n\nAbstract: An abstract."},
    ]
    assert messages[0]["content"] == prompt.system


def test_the_default_prompt_hash_is_pinned():
    assert build_prompt().hash == DEFAULT_PROMPT_HASH
    assert build_prompt(None) == build_prompt()


@pytest.mark.parametrize("title", [
    'Quotes "double" and \'single\' and `back`',
    "Braces {title} {abstract} {} {0} %s \\n \\ backslash",
    "RTL \u202eevil\u202c, zero-width\u200b joiner\u200d, combining e\u0301, emoji \U0001F9EA, CJK 肺癌",
    "  leading and trailing spaces  ",
    "Line\u2028separator and <script>alert(1)</script> | ** _",
])
def test_the_title_is_carried_verbatim(title):
    abstract = "First line.\nSecond line {title}.\n\nA new paragraph with \"quotes\" and \t a tab."
    prompt = build_prompt()
    user = messages_for(prompt, title, abstract, False)[1]["content"]
    assert user == "Title: " + title + "\n\nAbstract: " + abstract
    # The fake server (and a reader of the raw log) finds the work by the text between "Title: " and the first
    # blank line.
    assert user[len("Title: "):].split("\n\n", 1)[0] == title
    only = messages_for(prompt, title, None, True)[1]["content"]
    assert only.startswith("Title: " + title + "\n\n") and only[len("Title: "):].split("\n\n", 1)[0] == title


def test_title_only_rows_and_works_without_an_abstract_use_the_title_only_variant():
    prompt = build_prompt()
    expected = "Title: T\n\nOnly the title of this work is available; judge it from the title alone."
    assert messages_for(prompt, "T", "An abstract the row flags as not to be used.", True)[1]["content"] == expected
    assert messages_for(prompt, "T", None, False)[1]["content"] == expected
    assert messages_for(prompt, "T", " \n\t", False)[1]["content"] == expected
    assert messages_for(prompt, "T", None, True)[0] == messages_for(prompt, "T", "x", False)[0]


# --- the criteria file ---------------------------------------------------------------------------------------

def test_the_criteria_file_is_the_criteria_fragment(tmp_path):
    text = "# Criteria\n\n- Include: randomised trials in adults.\n- Exclude: animal studies.\n"
    prompt = load_prompt(_settings(tmp_path, _criteria(tmp_path, text)))
    assert prompt.fragment("criteria") == "Inclusion and exclusion criteria:\n\n" + text.strip()
    assert "Exclude: animal studies." in messages_for(prompt, "T", "A", False)[0]["content"]
    assert load_prompt(_settings(tmp_path)) == build_prompt(None)
    # A byte-order mark and surrounding blank lines are not part of the criteria.
    bom = load_prompt(_settings(tmp_path, _criteria(tmp_path, "\ufeff\n" + text + "\n\n", "bom.md")))
    assert bom == prompt


@pytest.mark.parametrize("make, complaint", [
    (lambda d: d / "absent.md", "file not found"),
    (lambda d: _criteria(d, ""), "the file is empty"),
    (lambda d: _criteria(d, "\ufeff \n\t\n"), "the file is empty"),
    (lambda d: (d / "latin1.md").write_bytes(b"Exclude: \xe9tudes animales\n") and d / "latin1.md", "not UTF-8"),
    (lambda d: (d / "folder.md").mkdir() or d / "folder.md", "cannot be read"),
])
def test_a_criteria_file_that_cannot_be_used_is_an_input_error_naming_the_key_and_the_path(tmp_path, make,
                                                                                         complaint):
    path = make(tmp_path)
    with pytest.raises(InputError) as caught:
        load_prompt(_settings(tmp_path, path))
    message = str(caught.value)
    assert message.startswith(f"{path}: [screen] criteria: ") and complaint in message, message


# --- the prompt hash -----------------------------------------------------------------------------------------

def test_the_same_settings_give_the_same_hash(tmp_path):
    """The hash is sha256 of the fragments and the assembly as canonical JSON, computed here on its own, and a
    fresh process reading the same criteria file gets the same one (nothing per process, such as str hashing)."""
    import hashlib
    import os
    import subprocess
    import sys
    path = _criteria(tmp_path, "Include: trials.\n")
    prompt = load_prompt(_settings(tmp_path, path))
    text = json.dumps({"fragments": [list(f) for f in prompt.fragments], "assembly": panel_prompt.ASSEMBLY},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert prompt.hash == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert dict(prompt.fragments)["criteria"].endswith("Include: trials.")  # the file's text, stripped
    assert prompt.hash == build_prompt("Include: trials.").hash
    probe = ("import sys; from pathlib import Path; from reporter.screening.prompt import build_prompt; "
             "print(build_prompt(Path(sys.argv[1]).read_text(encoding='utf-8')).hash)")
    other = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert other.stdout.strip() == prompt.hash


def test_any_criteria_change_changes_the_hash(tmp_path):
    hashes = {build_prompt(None).hash, build_prompt("Include: trials.").hash, build_prompt("Include: trials!").hash,
              build_prompt("Include: trials.\nExclude: reviews.").hash}
    assert len(hashes) == 4


@pytest.mark.parametrize("module, constant", [(prompt_module, "TASK"), (prompt_module, "CRITERIA_LEAD"),
                                              (prompt_module, "DEFAULT_CRITERIA"), (prompt_module, "SCHEMA"),
                                              (panel_prompt, "WORK"), (panel_prompt, "WORK_TITLE_ONLY")])
def test_any_fragment_change_changes_the_hash(monkeypatch, module, constant):
    before = build_prompt()
    monkeypatch.setattr(module, constant, getattr(module, constant) + " ")
    after = build_prompt()
    assert after.hash != before.hash and after.fragments != before.fragments


def test_an_assembly_change_changes_the_hash(monkeypatch):
    before = build_prompt()
    monkeypatch.setattr(panel_prompt, "ASSEMBLY", {**panel_prompt.ASSEMBLY, "separator": "\n"})
    assert build_prompt().fragments == before.fragments and build_prompt().hash != before.hash


def test_the_hash_is_the_sha256_of_the_fragments_and_the_assembly():
    prompt = build_prompt("Include: trials.")
    expected = {"fragments": [[name, text] for name, text in prompt.fragments],
                "assembly": {"system": ["task", "criteria", "schema"], "separator": "\n\n",
                             "user": {"abstract": "work", "title_only": "work_title_only"}}}
    assert prompt.hash == sha256_json(expected)


# --- the generation ------------------------------------------------------------------------------------------

def test_a_generation_is_the_sha256_of_tier_prompt_hash_and_voters_in_order():
    prompt = build_prompt()
    generation = generation_for("expensive", VOTERS, prompt)
    hashed = {"tier": "expensive", "prompt_hash": prompt.hash, "voters": [
        {"name": "a", "provider": "openai-chat", "base_url": "http://127.0.0.1:8000/v1", "model": "m-a",
         "temperature": 0.0, "max_tokens": 300, "structured_output": True},
        {"name": "b", "provider": "openai-chat", "base_url": "http://127.0.0.1:8001/v1", "model": "m-b",
         "temperature": 0.2, "max_tokens": 300, "structured_output": True},
    ]}
    assert isinstance(generation, Generation) and generation.tier == "expensive"
    assert generation.id == sha256_json(hashed)
    assert {k: generation.definition[k] for k in hashed} == hashed
    assert generation.definition["fragments"] == dict(prompt.fragments)
    example = generation.definition["example"]
    assert example["work"][1]["content"] == "Title: An example title\n\nAbstract: An example abstract."
    assert example["title_only"][1]["content"].startswith("Title: An example title\n\nOnly the title")
    json.dumps(generation.definition)  # stored as JSON
    assert generation_for("expensive", VOTERS, build_prompt()) == generation


@pytest.mark.parametrize("change", [
    {"model": "m-c"}, {"temperature": 0.7}, {"base_url": "http://127.0.0.1:9000/v1"}, {"max_tokens": 100},
    {"structured_output": False}, {"name": "c"},
])
def test_the_generation_changes_with_what_can_change_an_answer(change):
    prompt = build_prompt()
    before = generation_for("cheap", VOTERS, prompt).id
    changed = (dataclasses.replace(VOTERS[0], **change), VOTERS[1])
    assert generation_for("cheap", changed, prompt).id != before


@pytest.mark.parametrize("change", [
    {"max_concurrency": 64}, {"price_in_per_mtok": 5.0}, {"price_out_per_mtok": 9.0}, {"timeout_seconds": 5.0},
    {"api_key_env": "OTHER_KEY"}, {"base_url": "http://127.0.0.1:8000/v1/"}, {"price_checked": "unchecked"},
])
def test_the_generation_does_not_change_with_what_cannot(change):
    prompt = build_prompt()
    before = generation_for("cheap", VOTERS, prompt).id
    changed = (dataclasses.replace(VOTERS[0], **change), VOTERS[1])
    assert generation_for("cheap", changed, prompt).id == before


def test_the_generation_changes_with_the_prompt_the_tier_and_the_voter_order():
    prompt = build_prompt()
    ids = {generation_for("cheap", VOTERS, prompt).id, generation_for("expensive", VOTERS, prompt).id,
           generation_for("cheap", VOTERS[::-1], prompt).id,
           generation_for("cheap", VOTERS, build_prompt("Include: trials.")).id}
    assert len(ids) == 4


# --- the answer schema ---------------------------------------------------------------------------------------

def test_the_answer_schema_and_the_response_format():
    assert ANSWER_SCHEMA == {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": ["include", "exclude", "cannot_be_determined"]},
                       "reason": {"type": "string"}},
        "required": ["label", "reason"],
        "additionalProperties": False,
    }
    assert response_format(SCREEN_ANSWER.name, SCREEN_ANSWER.schema) == {"type": "json_schema", "json_schema": {
        "name": "screening_vote", "strict": True, "schema": ANSWER_SCHEMA}}


def test_a_prompt_is_frozen():
    prompt = build_prompt()
    with pytest.raises(dataclasses.FrozenInstanceError):
        prompt.hash = "x"  # type: ignore[misc]
    assert isinstance(prompt, Prompt) and hash(prompt) == hash(build_prompt())
