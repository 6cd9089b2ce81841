"""The screen's classify prompt: its task, criteria and schema fragments, assembled by the panel.

The fragments are the screen's (`TASK`, the criteria of `[screen] criteria`
or `DEFAULT_CRITERIA`, `SCHEMA`); the assembly, the work fragments, the
prompt hash and the generation are the panel's (`reporter.panel.prompt`), the
same for every task that asks the panel.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..panel.prompt import Prompt, assemble_prompt
from .answer import ANSWERS
from .config import ScreenSettings

TASK = (
    "You screen scholarly works for a systematic review. Read the work below and decide whether it "
    "meets the inclusion criteria. Answer include when it meets them or may well meet them, exclude "
    "only when it clearly does not, and cannot_be_determined when the text given is not enough to decide."
)
DEFAULT_CRITERIA = (
    "Include: original research, reviews and protocols that bear on the review's topic.\n"
    "Exclude: works clearly outside the topic, and items that are not research "
    "(errata, retractions, editorials, news, conference announcements)."
)
CRITERIA_LEAD = "Inclusion and exclusion criteria:\n\n"
SCHEMA = ('Answer with one JSON object and nothing else: {"label": '
          + " | ".join(f'"{answer}"' for answer in ANSWERS) + ', "reason": "<one sentence>"}')


def build_prompt(criteria: str | None = None) -> Prompt:
    """The prompt with the given criteria text (None: the built-in default criteria)."""
    body = DEFAULT_CRITERIA if criteria is None else criteria.removeprefix("\ufeff").strip()
    return assemble_prompt(TASK, CRITERIA_LEAD + body, SCHEMA)


def load_prompt(settings: ScreenSettings) -> Prompt:
    """The workspace's prompt: the criteria file `[screen] criteria` when set, else the default criteria."""
    path = settings.criteria
    if path is None:
        return build_prompt(None)
    fix = "write the inclusion and exclusion criteria there, or remove the key to use the built-in default"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: [screen] criteria: file not found; {fix}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: [screen] criteria: not UTF-8 text ({exc}); save it as UTF-8") from None
    except OSError as exc:
        raise InputError(f"{path}: [screen] criteria: cannot be read ({exc.strerror or exc}); {fix}") from None
    if not text.removeprefix("\ufeff").strip():
        raise InputError(f"{path}: [screen] criteria: the file is empty; {fix}")
    return build_prompt(text)
