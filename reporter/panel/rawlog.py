"""The raw-response files: one append-only JSONL file per runner, so no reply that was paid for is lost.

A runner appends every reply it receives to `raw_dir/<runner>.jsonl` and
fsyncs it before it writes the vote row that names the line (file name and
byte offset). It holds an exclusive `flock` on its file for as long as it
lives; the kernel drops the lock when the process ends, however it ends, so
a file whose lock can be taken belongs to a runner that is gone
(`dead_runners`). Its lines past the last offset the store recorded are the
replies whose vote row was never written (`orphans`): the next runner
adopts them instead of asking again (`replay` reads such a line back into a
reply, its body validated again; `reply_usage` is what a line records of one).

A line is `{tier, generation, work_id, voter, model, at, status, usage,
body}` in canonical JSON, `body` being the HTTP response text as received
(the voter's key masked in it, `reporter.masking`). The API key is never part of a line. Every append starts on a
line boundary, so a line cut by `kill -9` stays a line of its own, which
readers skip.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import file_mode, make_dirs
from ..hashing import canonical_json
from .config import VoterSettings

SUFFIX = ".jsonl"
"""Every raw file is `<runner>.jsonl`."""

LINE_FIELDS = ("tier", "generation", "work_id", "voter", "model", "at", "status", "usage", "body")
"""The keys of every line, and no others."""

RUNNER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A runner id is also a file name: letters, digits, dot, dash, underscore."""

LOCK_WAIT_SECONDS = 2.0
"""How long opening a runner's file waits for a lock that another process only tests (dead_runners)."""


@dataclass(frozen=True)
class RawReply:
    """One line of a raw file, with where it is."""

    file: str
    """The raw file's name inside raw_dir (`<runner>.jsonl`): the vote row's `raw_file`."""
    offset: int
    """The line's byte offset in that file: the vote row's `raw_offset`."""
    tier: str
    """cheap or expensive."""
    generation: str
    """The tier's generation hash when the reply was asked."""
    work_id: str
    """The work asked about."""
    voter: str
    """The voter's name."""
    model: str
    """The model the request named."""
    at: str
    """When the reply arrived (UTC, ISO 8601)."""
    status: int
    """The HTTP status of the reply."""
    usage: Any
    """What the runner counted for the reply (tokens, cost, whether estimated), or None."""
    body: str
    """The HTTP response body as received, the voter's key masked in it."""


def raw_line(*, tier: str, generation: str, work_id: str, voter: str, model: str, at: str, status: int,
             usage: Mapping[str, Any] | None, body: str) -> dict[str, Any]:
    """One line's fields (keyword-only, so nothing else, such as a request with its key, slips in)."""
    return {"tier": tier, "generation": generation, "work_id": work_id, "voter": voter, "model": model,
            "at": at, "status": status, "usage": None if usage is None else dict(usage), "body": body}


def check_runner_id(runner: str) -> str:
    """The runner id, refused unless it is a plain file name (it names the raw file)."""
    if not RUNNER_ID.fullmatch(runner):
        raise InputError(f"runner id {runner!r}: use 1 to 128 letters, digits, '.', '-' or '_' "
                         f"(it names the raw-response file), starting with a letter or digit")
    return runner


class RawLog:
    """A runner's own raw file, opened for appending and locked until `close`."""

    def __init__(self, raw_dir: Path, runner: str) -> None:
        self.name = check_runner_id(runner) + SUFFIX
        self.path = make_dirs(Path(raw_dir)) / self.name
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, file_mode())
        try:
            _lock(self._fd, self.path)
            self._end = os.fstat(self._fd).st_size
            if self._end and os.pread(self._fd, 1, self._end - 1) != b"\n":
                self._write(b"\n")  # a line cut by a kill stays a line of its own, skipped by readers
            if created:
                _fsync_dir(self.path.parent)
        except BaseException:
            os.close(self._fd)
            raise

    def append(self, lines: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
        """Append lines, fsync, and return each line's (file name, byte offset), in order.

        A failed write (a full disk) is cut back to the last whole line and
        raised, so the file never holds half a line followed by another.
        """
        data = bytearray()
        where = []
        for line in lines:
            where.append((self.name, self._end + len(data)))
            data += canonical_json(_fields(line)).encode("utf-8") + b"\n"
        if data:
            start = self._end
            try:
                self._write(bytes(data))
                os.fsync(self._fd)
            except BaseException:
                os.ftruncate(self._fd, start)
                self._end = start
                raise
        return where

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
            self._end += n

    def close(self, *, keep_empty: bool = True) -> None:
        """Close the file, which drops the lock: from now on the runner counts as gone. `keep_empty=False` (a run's
        end) first removes the file when nothing was ever written to it: a run that asked nothing leaves no file."""
        if self._fd >= 0:
            if not keep_empty and self._end == 0:
                self.path.unlink(missing_ok=True)  # still locked: no other runner can be adopting it
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> RawLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_raw_log(raw_dir: Path, runner: str) -> RawLog:
    """Open (or create) raw_dir/<runner>.jsonl for appending, locked for the runner's life."""
    return RawLog(raw_dir, runner)


def _fields(line: Mapping[str, Any]) -> dict[str, Any]:
    keys = set(line)
    if keys != set(LINE_FIELDS):
        raise ValueError(f"a raw line has exactly the fields {LINE_FIELDS}; got {sorted(keys)}")
    return dict(line)


def _lock(fd: int, path: Path) -> None:
    """Take the file's exclusive lock; a `dead_runners` test holds it only a moment, a live runner for good."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return  # a file system without flock: the file goes unlocked (and never counts as dead)
        if time.monotonic() > deadline:
            raise InputError(f"{path}: another live runner holds this raw file; give each runner its own id")
        time.sleep(0.01)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def raw_files(raw_dir: Path) -> list[str]:
    """The raw files' names in raw_dir, sorted ([] when the folder does not exist)."""
    try:
        entries = os.scandir(raw_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        return sorted(e.name for e in entries
                      if e.name.endswith(SUFFIX) and not e.name.startswith(".") and e.is_file(follow_symlinks=False))


def is_dead(path: Path) -> bool:
    """True when the file's lock can be taken: the runner that wrote it has ended (the lock is let go at once)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the lock taken above
    return True


def dead_runners(raw_dir: Path) -> list[str]:
    """The runners whose raw file nobody holds: ended, however they ended (sorted ids)."""
    raw_dir = Path(raw_dir)
    return [name[: -len(SUFFIX)] for name in raw_files(raw_dir) if is_dead(raw_dir / name)]


def orphans(raw_dir: Path, positions: Mapping[str, int], *,
            runners: Iterable[str] | None = None) -> Iterator[RawReply]:
    """The lines past each file's last recorded offset (`positions`: file name -> offset of its last vote row).

    Those are replies whose vote row may never have been written. A cut final
    line (a kill mid-write) and any line that is not a whole raw line are
    skipped. `runners` limits the read to those runners' files.
    """
    raw_dir = Path(raw_dir)
    names = raw_files(raw_dir) if runners is None else sorted(check_runner_id(r) + SUFFIX for r in runners)
    for name in names:
        yield from _read_past(raw_dir / name, name, positions.get(name))


def _read_past(path: Path, name: str, last: int | None) -> Iterator[RawReply]:
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        offset = 0
        if last is not None:
            f.seek(last)
            offset = last + len(f.readline())  # the recorded line itself
        for raw in f:
            reply = _parse(raw, name, offset)
            offset += len(raw)
            if reply is not None:
                yield reply


def _parse(raw: bytes, name: str, offset: int) -> RawReply | None:
    if not raw.endswith(b"\n"):
        return None  # the final line was cut mid-write
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != set(LINE_FIELDS):
        return None
    text_keys = ("tier", "generation", "work_id", "voter", "model", "at", "body")
    if not all(isinstance(data[k], str) for k in text_keys) or not isinstance(data["status"], int):
        return None
    return RawReply(file=name, offset=offset, **data)


def replay(line: RawReply, voter: VoterSettings, environ: Mapping[str, str], answer: Any) -> Any:
    """The reply a raw line holds, its body validated again as if it had just arrived (the voter's key masked).

    `answer`: the AnswerSchema of the line's task, the reply is read against it.
    """
    from .prices import cost_usd
    from .provider import Reply
    from .replies import read_masked, usage_count
    secret = environ.get(voter.api_key_env) if voter.api_key_env else None
    body, vote, usage, _text = read_masked(line.body, secret, answer)
    noted = line.usage if isinstance(line.usage, dict) else {}
    # What the line noted, else the body's usage; a number the database cannot hold is no count (usage_count).
    tokens_in = usage_count(noted, "input_tokens")
    tokens_in = usage_count(usage, "prompt_tokens") if tokens_in is None else tokens_in
    tokens_out = usage_count(noted, "output_tokens")
    tokens_out = usage_count(usage, "completion_tokens") if tokens_out is None else tokens_out
    cost = noted.get("cost_usd")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not 0 <= cost < math.inf \
            or "input_tokens" in noted and usage_count(noted, "input_tokens") is None \
            or "output_tokens" in noted and usage_count(noted, "output_tokens") is None:
        cost = cost_usd(voter.price_in_per_mtok, voter.price_out_per_mtok, tokens_in, tokens_out)
    return Reply(vote=vote, body=body, status=line.status, input_tokens=tokens_in, output_tokens=tokens_out,
                 cost_usd=float(cost), usage_estimated=bool(noted.get("estimated", not usage)))


def reply_usage(reply: Any) -> dict[str, Any]:
    """What the raw line records of a reply's usage: tokens, cost and whether the tokens were estimated."""
    return {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens, "cost_usd": reply.cost_usd,
            "estimated": bool(reply.usage_estimated)}
