"""One record of what ran: every stage run that changes state writes one `RunRecord` (docs/runs.md).

A shared leaf (it imports no stage). A command's edge makes a `RunStart`
(the workspace's state folder, the argv as given with every secret masked,
the clock, the tool's version) and hands it to the stage; the stage, at the
end of its run, writes one record through `write_run`: what ran, its inputs
and outputs with their sha256, its settings, the models and prompt hashes,
named counts, cost, started and ended, and how it ended. Records live in
`state/runs/YYYY/<started>-<kind>-<id>.json`, one file per run, written whole
or not at all (`files.write_new`: never over another); `read_runs` is their
one reader.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import __version__
from .clock import Clock, run_clock
from .errors import InputError
from .files import MiB, parse_json, read_capped, write_new
from .hashing import dump_json, sha256_bytes, sha256_file, sha256_files
from .locks import remove_debris
from .masking import mask_secret
from .text import replace_surrogates

SCHEMA_VERSION = 1
KINDS = ("route", "screen", "judge", "digest", "certify", "mail", "fetch", "feedback")
"""What a record can be the run of."""
STATUSES = ("done", "stopped", "interrupted", "failed")
"""How a run ended: done; stopped (by --max-cost, or by a cap it was given); interrupted (Ctrl-C, SIGTERM:
it drained and ended); failed (after changing state)."""
STATE_DIR = "state"
"""The workspace's state folder (beside reporter.toml)."""
RUNS_DIR = "runs"
"""The records' folder inside the workspace's state folder (`state/runs/`)."""
RECORD_LIMIT = 4 * MiB
"""The most bytes one record may hold when read back (one is a few kilobytes)."""
SECRET_MARK = "[secret]"
"""What a secret reads as in a record."""


@dataclass(frozen=True)
class FileRef:
    """A file (or folder) a run read or wrote, with its content digest at the time."""

    role: str
    """What it is to the run (`pool`, `specs`, `release`, `decisions`, `certificate`, ...)."""
    path: str
    """Relative to the workspace (the state folder's parent) when inside it, else absolute; bytes that are not
    UTF-8 written as `\\xNN`."""
    sha256: str
    """sha256 of the file's bytes; of a folder, `hashing.sha256_files` of its files; empty when it is gone."""


@dataclass(frozen=True)
class ModelUse:
    """One voter of a panel's run: who answered, with which prompt and generation."""

    task: str
    """The panel's task (cheap, expensive, judge)."""
    voter: str
    model: str
    host: str
    """The base URL's host (and port) only: never a path, a query or user information."""
    prompt_sha256: str
    generation: str


@dataclass(frozen=True)
class RunRecord:
    """What one run did (the fields of docs/runs.md)."""

    kind: str
    command: tuple[str, ...]
    """The argv as the user gave it (`reporter` first), every secret masked."""
    tool_version: str
    started: str
    """UTC, ISO 8601 to the second (`2026-07-07T00:00:00Z`)."""
    ended: str
    status: str
    inputs: tuple[FileRef, ...] = ()
    outputs: tuple[FileRef, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The stage's settings as JSON values, without secrets (an API key's variable name, never its value)."""
    models: tuple[ModelUse, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        """The record as JSON values (the file's fields)."""
        return {"schema_version": self.schema_version, "kind": self.kind, "command": list(self.command),
                "tool_version": self.tool_version, "started": self.started, "ended": self.ended,
                "status": self.status, "inputs": [_ref_json(r) for r in self.inputs],
                "outputs": [_ref_json(r) for r in self.outputs], "settings": dict(self.settings),
                "models": [dict(vars(m)) for m in self.models], "counts": dict(self.counts),
                "cost_usd": self.cost_usd}


@dataclass(frozen=True)
class RunStart:
    """What a command's edge knows of a run before the stage starts it: where records go, the argv, the clock."""

    state_dir: Path
    """The workspace's state folder (records go to its `runs/`)."""
    command: tuple[str, ...]
    """The argv, secrets already masked."""
    clock: Clock
    started: str
    secrets: tuple[str, ...] = ()
    """Every secret the run may hold (API keys, the SMTP password): masked in every string of the record."""
    tool_version: str = __version__

    @property
    def root(self) -> Path:
        """The workspace: paths inside it are recorded relative to it."""
        return self.state_dir.parent

    def ref(self, role: str, path: Path | str) -> FileRef:
        """A FileRef of `path` as it is now (a folder: the digest of its files; a missing path: no digest)."""
        return file_ref(role, Path(path), self.root)

    def named(self, role: str, path: Path | str, digest: str) -> FileRef:
        """A FileRef of `path` with a digest the caller already has: the file is not read again (a 500 MB
        pool costs half a CPU-second to hash)."""
        return FileRef(role, path_text(Path(path), self.root), digest)

    def write(self, kind: str, status: str, *, inputs: Iterable[FileRef] = (), outputs: Iterable[FileRef] = (),
              settings: Mapping[str, Any] | None = None, models: Iterable[ModelUse] = (),
              counts: Mapping[str, int] | None = None, cost_usd: float = 0.0) -> Path:
        """Write this run's one record, ended now; the record's path."""
        record = RunRecord(kind, self.command, self.tool_version, self.started, stamp(self.clock()), status,
                           tuple(inputs), tuple(outputs), dict(settings or {}), tuple(models),
                           {k: int(v) for k, v in (counts or {}).items() if v is not None}, round(float(cost_usd), 6))
        return write_run(self.state_dir, record, self.secrets)


def start_run(state_dir: Path, argv: Sequence[str], clock: Clock, secrets: Iterable[str | None] = ()) -> RunStart:
    """A run starting now: the argv as given (`reporter` is put first), with every secret masked."""
    kept = tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s)))
    command = tuple(_mask(str(a), kept) for a in ("reporter", *argv))
    return RunStart(Path(state_dir), command, clock, stamp(clock()), kept)


def state_of(root: Path) -> Path:
    """The state folder of the workspace at `root` (where its runs' records go)."""
    return Path(root) / STATE_DIR


def settings_json(value: Any) -> Any:
    """A stage's settings as JSON values: dataclasses as objects, paths as text, a URL's password masked."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: settings_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): settings_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [settings_json(v) for v in value]
    if isinstance(value, Path):
        return os.fsencode(value).decode("utf-8", "backslashreplace")
    if isinstance(value, str) and "@" in value and "://" in value:
        try:
            password = urlsplit(value).password
        except ValueError:
            password = None
        return value.replace(f":{password}@", f":{SECRET_MARK}@") if password else value
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def start_command_run(args: Any, state_dir: Path, environ: Mapping[str, str],
                      secrets: Iterable[str | None] = ()) -> RunStart:
    """A command's run, at its edge: the argv `cli.main` kept (`args.argv`), the clock `run_clock(environ)`."""
    return start_run(state_dir, getattr(args, "argv", ()), run_clock(environ), secrets)


def stamp(moment: datetime) -> str:
    """A UTC instant as the records write it: `2026-07-07T00:00:00Z`."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_of(base_url: str) -> str:
    """A base URL's host and port, nothing else (no user information, path or query)."""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        return ""


def file_ref(role: str, path: Path, root: Path) -> FileRef:
    """A FileRef of `path` now, its name relative to `root` when inside it."""
    path = Path(path)
    try:
        digest = sha256_files(sorted(p for p in path.rglob("*") if p.is_file()), path) if path.is_dir() \
            else sha256_file(path)
    except OSError:
        digest = ""
    return FileRef(role, path_text(path, root), digest)


def path_text(path: Path, root: Path) -> str:
    """A path as records name it: relative to `root` when inside it, else absolute; bytes not UTF-8 as `\\xNN`."""
    try:
        shown = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        shown = Path(os.path.abspath(path))
    return os.fsencode(shown).decode("utf-8", "backslashreplace")


def record_name(record: RunRecord, data: bytes, n: int = 1) -> str:
    """The record's file name: its start, kind and the first 12 digits of its bytes' sha256 (`-n` after another)."""
    start = record.started.replace("-", "").replace(":", "")
    return f"{start}-{record.kind}-{sha256_bytes(data)[:12]}{'' if n == 1 else f'-{n}'}.json"


def write_run(state_dir: Path, record: RunRecord, secrets: Sequence[str] = ()) -> Path:
    """Write `record` into `state_dir/runs/YYYY/`, whole or not at all, never over another record; its path."""
    check_record(record.to_json(), "a run record")
    data = dump_json(_clean(record.to_json(), secrets)).encode("utf-8")
    folder = Path(state_dir) / RUNS_DIR / record.started[:4]
    remove_debris(folder, recursive=False)  # a killed run's temporary, never a live one's
    n = 1
    while not write_new(folder / (name := record_name(record, data, n)), data):
        n += 1
    return folder / name


def read_runs(state_dir: Path) -> list[RunRecord]:
    """Every run record of a workspace's state folder, oldest first (then by file name); [] when none.

    A record that is not one this tool wrote (too large, not JSON, a field missing or of the wrong type, an
    unknown kind or status, a newer schema_version) is an InputError naming the file."""
    return [r for _, r in read_run_files(state_dir)]


def read_run_files(state_dir: Path) -> list[tuple[Path, RunRecord]]:
    """`read_runs` with each record's file (a disclosure cites the record a sentence comes from)."""
    folder = Path(state_dir) / RUNS_DIR
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(p for p in folder.glob("*/*.json") if not p.name.startswith(".")):
        where = f"run record {path}"
        data = parse_json(read_capped(path, RECORD_LIMIT, "run record"), where)
        found.append((path, record_from_json(data, where)))
    return sorted(found, key=lambda pair: (pair[1].started, pair[0].name))


def record_from_json(data: Any, where: str) -> RunRecord:
    """A record read back, checked field by field (an InputError naming `where` and the field)."""
    check_record(data, where)
    return RunRecord(data["kind"], tuple(data["command"]), data["tool_version"], data["started"], data["ended"],
                     data["status"], tuple(FileRef(**r) for r in data["inputs"]),
                     tuple(FileRef(**r) for r in data["outputs"]), data["settings"],
                     tuple(ModelUse(**m) for m in data["models"]), data["counts"], float(data["cost_usd"]),
                     data["schema_version"])


_FIELDS: dict[str, Any] = {"schema_version": int, "kind": str, "command": list, "tool_version": str,
                           "started": str, "ended": str, "status": str, "inputs": list, "outputs": list,
                           "settings": dict, "models": list, "counts": dict, "cost_usd": (int, float)}
_REF_FIELDS = ("path", "role", "sha256")
_MODEL_FIELDS = ("generation", "host", "model", "prompt_sha256", "task", "voter")


def check_record(data: Any, where: str) -> None:
    """An InputError naming `where` and the field unless `data` is a run record of this schema."""
    def bad(key: str, what: str) -> InputError:
        return InputError(f"{where}: `{key}` {what}; a run record is written whole by this tool: restore or "
                          f"remove the file")
    if not isinstance(data, dict):
        raise InputError(f"{where}: not a JSON object; restore or remove the file")
    for key, kind in _FIELDS.items():
        value = data.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise bad(key, "is missing or of the wrong type")
    if data["schema_version"] != SCHEMA_VERSION:
        raise bad("schema_version", f"is {data['schema_version']}; this tool reads {SCHEMA_VERSION}")
    if data["kind"] not in KINDS:
        raise bad("kind", f"is {data['kind']!r}, not one of {', '.join(KINDS)}")
    if data["status"] not in STATUSES:
        raise bad("status", f"is {data['status']!r}, not one of {', '.join(STATUSES)}")
    if not all(isinstance(a, str) for a in data["command"]):
        raise bad("command", "holds a value that is not a string")
    for key, fields in (("inputs", _REF_FIELDS), ("outputs", _REF_FIELDS), ("models", _MODEL_FIELDS)):
        for item in data[key]:
            if not isinstance(item, dict) or sorted(item) != list(fields) or \
                    not all(isinstance(item[f], str) for f in fields):
                raise bad(key, f"holds an entry that is not {{{', '.join(fields)}}} of strings")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in data["counts"].values()):
        raise bad("counts", "holds a value that is not a whole number")
    if not math.isfinite(data["cost_usd"]) or data["cost_usd"] < 0:
        raise bad("cost_usd", "is not a finite amount of dollars, 0 or more")


def _ref_json(ref: FileRef) -> dict[str, str]:
    return {"role": ref.role, "path": ref.path, "sha256": ref.sha256}


def _mask(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret masked, and any lone surrogate (a file name's byte that is not UTF-8) as `\\xNN`."""
    for secret in secrets:
        text = mask_secret(text, secret, SECRET_MARK)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            text = replace_surrogates(text)
    return text


def _clean(value: Any, secrets: Sequence[str]) -> Any:
    """Every string of a JSON value (keys too) through `_mask`."""
    if isinstance(value, str):
        return _mask(value, secrets)
    if isinstance(value, list):
        return [_clean(v, secrets) for v in value]
    if isinstance(value, dict):
        return {_mask(k, secrets): _clean(v, secrets) for k, v in value.items()}
    return value
