"""What a disclosure is drafted from: the records of what ran for one release, gathered into one `Evidence`.

The command's edge loads the workspace and hands in the stages' readers' results (the release, the screen's
report, the digest's measured precision); this module adds the run records that concern the release and what
the screen's raw replies say of the models that answered (the `model` field of each OpenAI response, which
the raw files keep verbatim in each line's `body`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..panel.rawlog import orphans
from ..routing.artifacts import Release
from ..runs import RunRecord, path_text, read_run_files

PANEL_KINDS = ("screen", "judge")
"""The runs whose records name models."""


@dataclass(frozen=True)
class Observed:
    """What the raw replies say of one voter of one step: the model asked for and the model that answered."""

    task: str
    """The step (cheap, expensive, judge)."""
    voter: str
    configured: tuple[str, ...]
    """The model names the requests named (one, unless the configuration changed between runs)."""
    reported: tuple[str, ...]
    """The `model` each answer's response named, in the order first seen in time ("" for an answer that named
    none)."""
    first: str
    """When the first reply arrived (UTC, ISO 8601)."""
    last: str
    answers: int
    """Replies with HTTP status 200."""
    source: str
    """The raw folder, as a record path."""


@dataclass(frozen=True)
class Evidence:
    """Everything a disclosure of one release may say, each with where it was read."""

    root: Path
    """The workspace."""
    release: Release
    release_source: str
    """The release's manifest (routing.index.MANIFEST_FILE), as a record path."""
    runs: tuple[tuple[str, RunRecord], ...]
    """The run records that concern the release (its route, screens, certifications), plus the digest's
    feedback runs, oldest first: (record path, record)."""
    screen: Any = None
    """The screen's report of the release (`screening.report.ScreenReport`), or None."""
    screen_settings: Any = None
    """The workspace's [screen] settings (`screening.config.ScreenSettings`), or None."""
    observed: tuple[Observed, ...] = ()
    certificates: tuple[tuple[str, Any], ...] = ()
    """(file as a record path, `certify.record.Certificate`): the release's current certificates."""
    feedback: Mapping[str, Any] | None = None
    """The digest's measured KEEP precision (`digest.feedback.measure`), or None without marks."""
    feedback_source: str = ""
    labels_source: str = ""
    """The workspace's labels file (calibration), as a record path, or "" without one."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def of(self, *kinds: str) -> list[tuple[str, RunRecord]]:
        """The records of these kinds, oldest first."""
        return [(p, r) for p, r in self.runs if r.kind in kinds]


def rel(path: Path | str, root: Path) -> str:
    """A path as a record path (`runs.path_text`): relative to the workspace when inside it."""
    return path_text(Path(path), root)


def release_runs(state_dir: Path, root: Path, release_id: str) -> tuple[tuple[str, RunRecord], ...]:
    """The run records that concern the release: its route, its screens, its certifications, and the feedback."""
    kept = []
    for path, r in read_run_files(state_dir):
        s = r.settings
        if (r.kind == "route" and s.get("release_id") == release_id
                or r.kind in PANEL_KINDS and s.get("ran_on") == release_id
                or r.kind == "certify" and s.get("release") == release_id
                or r.kind == "feedback"):
            kept.append((rel(path, root), r))
    return tuple(kept)


def observed_models(raw_dir: Path | None, root: Path, generations: Sequence[str],
                    scopes: Mapping[str, Collection[str]] | None = None) -> tuple[Observed, ...]:
    """Per (step, voter) of these generations, the models the raw replies were asked of and answered as;
    `scopes` (step -> work ids): only the replies on the release's works (a generation outlives a release)."""
    if raw_dir is None or not Path(raw_dir).is_dir():
        return ()
    wanted = set(generations)
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for line in orphans(Path(raw_dir), {}):  # no recorded offsets: every whole line of every file
        if line.generation not in wanted or scopes is not None and line.work_id not in scopes.get(line.tier, ()):
            continue
        entry = seen.setdefault((line.tier, line.voter), {"configured": {}, "reported": {}, "at": [], "answers": 0})
        _first(entry["configured"], line.model, line.at)
        entry["at"].append(line.at)
        if line.status == 200:
            entry["answers"] += 1
            _first(entry["reported"], reported_model(line.body), line.at)
    source = rel(raw_dir, root)
    return tuple(Observed(task, voter, _by_time(e["configured"]), _by_time(e["reported"]), min(e["at"]),
                          max(e["at"]), e["answers"], source)
                 for (task, voter), e in sorted(seen.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1])))


def reported_model(body: str) -> str:
    """The `model` an OpenAI chat completion names ("" when the body is not one or names none)."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else ""


def _first(seen: dict[str, str], name: str, at: str) -> None:
    """Note when `name` was first seen (the raw files are read in runner-id order, not in time)."""
    if name not in seen or at < seen[name]:
        seen[name] = at


def _by_time(seen: dict[str, str]) -> tuple[str, ...]:
    """The names in the order they were first seen (then by name)."""
    return tuple(sorted(seen, key=lambda name: (seen[name], name)))


def _order(task: str) -> int:
    return {"cheap": 0, "expensive": 1}.get(task, 2)
