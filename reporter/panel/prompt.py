"""A prompt assembled from named fragments, its hash, and the generation of a task (what its answers count under).

Two messages: the system message is the task's `task`, `criteria` and
`schema` fragments (the screen's classify prompt, `reporter.screening.prompt`;
the digest's criteria judge); the user message is the work, `work` (title and
abstract) or `work_title_only`. The title is carried verbatim. The prompt hash
covers every fragment's template and the assembly, so editing any word of it,
or the criteria file, makes a new generation and old verdicts stop counting
(they are kept, never deleted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..hashing import sha256_json
from .config import VoterSettings

PROVIDER: Final = "openai-chat"
"""The provider every voter speaks: an OpenAI-compatible Chat Completions API."""

WORK = "Title: {title}\n\nAbstract: {abstract}"
WORK_TITLE_ONLY = "Title: {title}\n\nOnly the title of this work is available; judge it from the title alone."

SYSTEM_FRAGMENTS: Final = ("task", "criteria", "schema")
"""The system message's fragments, in order."""
WORK_FRAGMENTS: Final = {"abstract": "work", "title_only": "work_title_only"}
"""The user message's fragment for a work with an abstract, and for a title-only work."""
SEPARATOR: Final = "\n\n"
"""What joins the system message's fragments."""
ASSEMBLY: Final = {"system": list(SYSTEM_FRAGMENTS), "separator": SEPARATOR, "user": WORK_FRAGMENTS}
"""How the fragments become messages: hashed with them."""

EXAMPLE_WORK: Final = ("An example title", "An example abstract.")
"""The work of the example prompt a generation's definition shows."""


@dataclass(frozen=True)
class Prompt:
    """A prompt's fragments and their hash."""

    fragments: tuple[tuple[str, str], ...]
    """(name, template text) in assembly order: task, criteria, schema, work, work_title_only."""
    hash: str
    """sha256 of the canonical JSON of the fragments and the assembly: the prompt's identity."""

    def fragment(self, name: str) -> str:
        """The template text of fragment `name` (KeyError for an unknown name)."""
        for key, text in self.fragments:
            if key == name:
                return text
        raise KeyError(name)

    @property
    def system(self) -> str:
        """The system message, the same for every work."""
        return SEPARATOR.join(self.fragment(name) for name in SYSTEM_FRAGMENTS)


def assemble_prompt(task: str, criteria: str, schema: str) -> Prompt:
    """A prompt of these system fragments and the work fragments, with its hash (the screen's classify prompt,
    the digest's criteria judge: one assembly, one hash)."""
    fragments = (("task", task), ("criteria", criteria), ("schema", schema),
                 ("work", WORK), ("work_title_only", WORK_TITLE_ONLY))
    return Prompt(fragments=fragments,
                  hash=sha256_json({"fragments": [list(f) for f in fragments], "assembly": ASSEMBLY}))


def work_text(prompt: Prompt, title: str, abstract: str | None, title_only: bool) -> str:
    """The user message of one work; a work without an abstract is judged from its title alone."""
    variant = "title_only" if title_only or abstract is None or not abstract.strip() else "abstract"
    # One pass over the template: a title holding "{abstract}" or braces stays verbatim.
    return prompt.fragment(WORK_FRAGMENTS[variant]).format_map({"title": title, "abstract": abstract})


def messages_for(prompt: Prompt, title: str, abstract: str | None, title_only: bool) -> list[dict]:
    """The Chat Completions messages that classify one work."""
    return [{"role": "system", "content": prompt.system},
            {"role": "user", "content": work_text(prompt, title, abstract, title_only)}]


@dataclass(frozen=True)
class Generation:
    """A task's generation (a screen tier's, the judge's): verdicts count only within the current one."""

    id: str
    """sha256 of the canonical JSON of {tier, prompt_hash, voters} (see `generation_for`)."""
    tier: str
    """The task it counts for (the store's `tier` column: cheap, expensive, judge)."""
    definition: dict
    """What the generation was: the hashed JSON plus the fragments and an example prompt (stored, shown)."""


def voter_identity(voter: VoterSettings) -> dict[str, Any]:
    """The parts of a voter that can change its answers (concurrency, timeout and prices cannot)."""
    return {"name": voter.name, "provider": PROVIDER, "base_url": voter.base_url.rstrip("/"),
            "model": voter.model, "temperature": voter.temperature, "max_tokens": voter.max_tokens,
            "structured_output": voter.structured_output}


def generation_for(tier: str, voters: tuple[VoterSettings, ...], prompt: Prompt,
                   inputs: Mapping[str, str] | None = None) -> Generation:
    """The generation of `tier` with these voters (in configured order) and this prompt.

    `inputs`: the digests of what else the answers depend on (the criteria judge: its criteria document's
    sha256), hashed with the rest; the screen's tiers have none, and their hash is what it always was.
    """
    hashed: dict[str, Any] = {"tier": tier, "prompt_hash": prompt.hash, "voters": [voter_identity(v) for v in voters]}
    if inputs:
        hashed["inputs"] = dict(inputs)
    title, abstract = EXAMPLE_WORK
    definition = {**hashed, "fragments": dict(prompt.fragments),
                  "example": {"work": messages_for(prompt, title, abstract, False),
                              "title_only": messages_for(prompt, title, None, True)}}
    return Generation(id=sha256_json(hashed), tier=tier, definition=definition)


def response_format(name: str, schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `response_format` that asks a server for an answer schema (JSON-schema structured output)."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
