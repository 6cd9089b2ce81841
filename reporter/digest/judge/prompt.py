"""The criteria judge's prompt, its answer and the validation of an answer, and the judge's generation.

The prompt is the panel's assembly (`reporter.panel.prompt.assemble_prompt`:
one hash, one pair of messages) of the judge's own fragments: the task, the
criteria document with its line numbers, the answer schema, then the paper
(`Title: ...` and `Abstract: ...`, or its title alone). The generation is
the panel's too (`generation_for`), of the task `judge`, the judges and the
prompt's hash, with the criteria document's sha256: change any of them and
the answers recorded before stop counting (they stay in the database and on
disk).

An answer is `{"fit", "criteria_lines", "reason"}`, checked here whatever the
server did with `response_format`: a fit other than `silent` must cite at
least one line that is a concept of the document (a bullet of In scope, Out
of scope, Required or Reduced fit). Anything else is that judge's failure,
recorded with its cause (`CAUSES`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...hashing import canonical_json, sha256_file
from ...panel.config import VoterSettings
from ...panel.prompt import Generation, Prompt, assemble_prompt, generation_for
from ...panel.replies import invalid_vote
from ...panel.votes import AnswerSchema, Vote
from ..criteria import Criteria, parse_criteria
from ..watchlist import read_text
from .config import JudgeSettings

TASK_NAME: Final = "judge"
"""The task the state database records the judge's answers under (the panel's store: its `tier` column)."""
FITS: Final = ("in_scope", "borderline", "partial", "out_of_scope", "silent")
"""The answers a judge may give."""
CAUSES: Final = ("unparseable", "unknown_fit", "schema", "refusal", "truncated", "uncited")
"""Why a judge's reply that was paid for is not an answer: the panel's envelope causes, an unknown fit, a
shape that is not the schema's, and a fit other than silent citing no concept line of the criteria."""

TASK = (
    "You judge one scholarly paper against a reader's relevance-criteria document, and only against it. The "
    "document is given line by line, each line after its number. Its concepts are the bullets of its sections "
    "In scope, Out of scope, Required and Reduced fit. Answer in_scope when an In scope concept describes the "
    "paper and it meets every Required concept; borderline when it is close to an In scope concept but a "
    "Reduced fit concept applies or the fit is uncertain; partial when only a part of the paper fits an In "
    "scope concept; out_of_scope when an Out of scope concept describes it, it fails a Required concept, or "
    "no In scope concept fits it while the document speaks to its topic; silent when the document says "
    "nothing about papers like it. Cite the line numbers of the concepts your answer rests on: at least one "
    "for every fit except silent. Never judge by what the document does not say."
)
CRITERIA_LEAD = "The relevance-criteria document (each line after its number and `| `):\n\n"
SCHEMA = ('Answer with one JSON object and nothing else: {"fit": '
          + " | ".join(f'"{fit}"' for fit in FITS)
          + ', "criteria_lines": [<the line numbers of the concepts you cite>], "reason": "<one sentence>"}')
ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "fit": {"type": "string", "enum": list(FITS)},
        "criteria_lines": {"type": "array", "items": {"type": "integer"}},
        "reason": {"type": "string"},
    },
    "required": ["fit", "criteria_lines", "reason"],
    "additionalProperties": False,
}
"""The JSON schema of a judge's answer (sent as `response_format`, and checked in our code either way)."""
_LINES = re.compile(r"\r\n|\r|\n")
"""Line ends as markdown-it counts them (the concepts' line numbers are its)."""


def numbered(text: str) -> str:
    """The document with each line after its number (1-based, as the concepts' lines), a byte-order mark dropped."""
    lines = _LINES.split(text.removeprefix("\ufeff"))
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the line end of the last line starts no line
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}} | {line}".rstrip() for n, line in enumerate(lines, 1))


def judge_prompt(criteria_text: str) -> Prompt:
    """The judge's prompt for a criteria document's text."""
    return assemble_prompt(TASK, CRITERIA_LEAD + numbered(criteria_text), SCHEMA)


def read_judgement(obj: dict, concept_lines: frozenset[int]) -> Vote:
    """A decoded answer checked against the judge's schema and the document's concept lines: a Vote whose answer
    is the fit and whose detail is `{"criteria_lines": [...]}` (as cited, sorted, each once), or the failure."""
    fit = obj.get("fit")
    if not isinstance(fit, str):
        return invalid_vote("schema", "no fit" if fit is None else f"fit is not a string: {fit!r}")
    if fit not in FITS:
        return invalid_vote("unknown_fit", f"fit {fit!r} is not one of {', '.join(FITS)}")
    extra = sorted(set(obj) - {"fit", "criteria_lines", "reason"})
    if extra:
        return invalid_vote("schema", f"keys outside the schema: {', '.join(map(str, extra))}")
    lines = obj.get("criteria_lines")
    if not isinstance(lines, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in lines):
        return invalid_vote("schema", "no criteria_lines" if lines is None else
                            f"criteria_lines is not a list of line numbers: {lines!r}")
    reason = obj.get("reason")
    if not isinstance(reason, str):
        return invalid_vote("schema", "no reason" if reason is None else f"reason is not a string: {reason!r}")
    cited = sorted(set(lines))
    if fit != "silent" and not concept_lines.intersection(cited):
        return invalid_vote("uncited", f"fit {fit!r} cites no concept line of the criteria (cited: "
                                       f"{cited or 'none'}; the concepts are on lines "
                                       f"{', '.join(map(str, sorted(concept_lines)))})")
    return Vote(answer=fit, reason=reason, detail=canonical_json({"criteria_lines": cited}))


def cited_lines(vote: Vote) -> tuple[int, ...]:
    """The lines a valid judgement cites (its detail), in order."""
    return tuple(int(x) for x in json.loads(vote.detail or "{}").get("criteria_lines", ()))


def judge_answer(criteria: Criteria) -> AnswerSchema:
    """The judge's answer schema, read against this document's concept lines."""
    lines = frozenset(c.line for c in criteria.concepts)
    return AnswerSchema("criteria_judgement", ANSWER_SCHEMA, lambda obj: read_judgement(obj, lines))


@dataclass(frozen=True)
class JudgeSetup:
    """What the judge asks with and what its answers count under, for one criteria document."""

    criteria: Criteria
    """The document, parsed (terms optional)."""
    prompt: Prompt
    """The prompt (its hash is part of the generation)."""
    generation: Generation
    """The task `judge`'s generation: the prompt's hash, the judges, the document's sha256."""
    answer: AnswerSchema
    """The answer schema, checked against the document's concept lines."""
    voters: tuple[VoterSettings, ...]
    """The judges (VoterSettings), in configured order."""


def judge_setup(judge: JudgeSettings, criteria_path: Path) -> JudgeSetup:
    """The judge's prompt, generation and answer schema for the criteria document at `criteria_path`."""
    text = read_text(criteria_path, "criteria document", "criteria")
    criteria = parse_criteria(text, str(criteria_path), need_terms=False)
    prompt = judge_prompt(text)
    generation = generation_for(TASK_NAME, judge.voters, prompt,
                                inputs={"criteria_sha256": sha256_file(Path(criteria_path))})
    return JudgeSetup(criteria, prompt, generation, judge_answer(criteria), judge.voters)
