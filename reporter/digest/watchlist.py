"""The watchlist: the phrases a reader follows, each with a weight (docs/digest.md, "Watchlist and criteria").

Two forms, told apart by the first non-blank character (`[` is JSON):

- text: one phrase a line, optionally a TAB and a weight; `#` at the start
  of a line or after a space or tab starts a comment (so `C#` is a phrase);
- JSON: a list of `"phrase"` or `{"phrase": ..., "weight": ...}`.

A phrase is a phrase of the rule language (normalised text, word
boundaries, a trailing `*`), checked by the one matcher,
`reporter.routing.match_phrases`; a phrase it refuses is refused here with
the file and the line. The tool never changes the watchlist.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..files import MiB, read_capped
from ..routing import match_phrases

DEFAULT_WEIGHT = 1.0
_COMMENT = re.compile(r"(^|[ \t])#.*$")


@dataclass(frozen=True)
class WatchEntry:
    """One watchlist phrase."""

    phrase: str
    """The phrase as written (rule language: normalised, word boundaries, trailing `*`)."""
    weight: float = DEFAULT_WEIGHT
    """A positive multiplier of the match axis (the largest among the matched entries counts; capped at 1.0)."""
    line: int = 0
    """The line of the file it was read from (1-based)."""


@dataclass(frozen=True)
class Watchlist:
    """A loaded watchlist: its entries in file order."""

    name: str
    """The file's name (what a rationale and an error cite)."""
    entries: tuple[WatchEntry, ...]
    """The phrases, in file order, each once."""

    @property
    def phrases(self) -> tuple[str, ...]:
        """The phrases, in file order (the term list handed to match_phrases)."""
        return tuple(e.phrase for e in self.entries)


def load_watchlist(path: Path) -> Watchlist:
    """Read and check a watchlist file (text or JSON); InputError naming the file and line."""
    return parse_watchlist(read_text(path, "watchlist", "watchlist"), str(path))


TEXT_CAP = 16 * MiB
"""The largest watchlist or criteria document read (real ones are a few KB; docs/limits.md)."""


def read_text(path: Path, what: str, key: str) -> str:
    """A UTF-8 input file's text; InputError naming it (and its setting, `key`: `watchlist`, `criteria`) when it
    is missing, a folder, a FIFO or a device, larger than TEXT_CAP, or not UTF-8."""
    path = Path(path)
    try:
        data = read_capped(path, TEXT_CAP, f"[digest] {key} (or --{key})")
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc}); save the {what} as UTF-8") from None


def parse_watchlist(text: str, where: str) -> Watchlist:
    """Parse a watchlist's text; `where` names the file in errors."""
    text = text.removeprefix("\ufeff")
    rows = _json_rows(text, where) if text.lstrip().startswith("[") else _text_rows(text, where)
    entries: list[WatchEntry] = []
    seen: dict[str, int] = {}
    for line, phrase, weight in rows:
        if not phrase.strip():
            raise InputError(f"{where}:{line}: empty phrase; write a phrase before the weight, or delete the line")
        if phrase in seen:
            raise InputError(f"{where}:{line}: the phrase {phrase!r} is already on line {seen[phrase]}; keep one")
        seen[phrase] = line
        entries.append(WatchEntry(phrase, weight, line))
    if not entries:
        raise InputError(f"{where}: no phrases; write one phrase a line (optionally a TAB and a weight)")
    check_phrases([(e.phrase, f"{where}:{e.line}") for e in entries])
    return Watchlist(Path(where).name, tuple(entries))


def check_phrases(phrases: Sequence[tuple[str, str]]) -> None:
    """Refuse a phrase the rule language refuses, naming where it was written (one match_phrases call)."""
    try:
        match_phrases([], [p for p, _ in phrases])
    except InputError as exc:
        i, reason = exc.index, exc.reason  # set by match_phrases
        raise InputError(f"{phrases[i][1]}: the phrase {_short(phrases[i][0])} is not a phrase of the rule "
                         f"language: {reason}") from None


def _weight(value: object, where: str) -> float:
    """A positive, finite weight."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise InputError(f"{where}: weight {value.strip()!r} is not a number; write e.g. 1.5 after the TAB") \
                from None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:  # an int too large for a float
            raise InputError(f"{where}: weight {_short(value)} is too large; any weight of 2 or more already "
                             f"gives a matched paper the full match axis, so write e.g. 2") from None
    if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: weight {_short(value)} must be a positive number (1.0 when left out)")
    return value


def _short(value: object) -> str:
    """A value for a message: its repr, cut to 60 characters (an int of 5,000 digits has no repr at all)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"of about {int(value.bit_length() * 0.30103):,} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text_rows(text: str, where: str) -> list[tuple[int, str, float]]:
    rows = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw).rstrip()
        if not line.strip():
            continue
        phrase, tab, weight = line.partition("\t")
        if tab and "\t" in weight:
            raise InputError(f"{where}:{number}: more than one TAB; write the phrase, one TAB, then the weight")
        rows.append((number, phrase.strip(), _weight(weight, f"{where}:{number}") if tab else DEFAULT_WEIGHT))
    return rows


def _json_rows(text: str, where: str) -> list[tuple[int, str, float]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg}); a JSON watchlist is a list of "
                         f'"phrase" or {{"phrase": ..., "weight": ...}}') from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read; a JSON watchlist is a flat list of "
                         f'"phrase" or {{"phrase": ..., "weight": ...}}') from None
    except ValueError as exc:  # a number of more than 4,300 digits (Python's int() limit)
        raise InputError(f"{where}: not a JSON watchlist this tool reads ({exc}); write a weight as a "
                         f"short number such as 1.5") from None
    if not isinstance(data, list):
        raise InputError(f"{where}: a JSON watchlist must be a list")
    rows = []
    for line, item in zip(_item_lines(text), data):
        at = f"{where}:{line}"
        if isinstance(item, str):
            rows.append((line, item.strip(), DEFAULT_WEIGHT))
        elif isinstance(item, dict) and isinstance(item.get("phrase"), str) and set(item) <= {"phrase", "weight"}:
            rows.append((line, item["phrase"].strip(), _weight(item.get("weight", DEFAULT_WEIGHT), at)))
        else:
            raise InputError(f'{at}: an entry must be "phrase" or {{"phrase": "...", "weight": 1.5}}, not '
                             f"{json.dumps(item)[:80]}")
    return rows


def _item_lines(text: str) -> list[int]:
    """The line each element of a (valid) top-level JSON list starts on."""
    decoder, lines = json.JSONDecoder(), []
    pos = text.index("[") + 1
    while True:
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            return lines
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
