"""The disclosure kept at a hand-off: `reporter export` drafts it and keeps it, never to be rewritten.

A disclosure drafted now changes with every later record of its release (a
new screen run, a certificate), so the fixed moment to keep it is the
hand-off. Its id is the sha256 of the disclosure's canonical JSON; it is
kept at `state/disclosure/<release id>/handoffs/<id>.json` (reporter.naming)
with the moment it was first kept and the hand-off file it went with, by a
write that never replaces a file (`files.write_new`): a second export of the
same records finds it kept and leaves it. The site publishes each kept
disclosure as an archived page (`releases/<id>/disclosure/<id>`), and the
export's provenance sidecar names it (`disclosure`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..files import make_dirs, write_new
from ..hashing import canonical_json, dump_json, sha256_text
from ..naming import disclosure_page_path, disclosure_snapshot_path

SNAPSHOT_VERSION = 1
"""The kept file's `snapshot_version`."""


def snapshot_id(doc: Mapping[str, Any]) -> str:
    """The id of a disclosure: the sha256 of its canonical JSON (the same records draft the same id)."""
    return sha256_text(canonical_json(doc))


def provenance_entry(doc: Mapping[str, Any], root: Path, state_dir: Path) -> dict[str, str]:
    """What the export's provenance names of the disclosure kept with it: its id, its file (relative to the
    workspace) and its archived page in the site. No clock: same records, same entry."""
    sid = snapshot_id(doc)
    path = disclosure_snapshot_path(state_dir, doc["release_id"], sid)
    name = path.relative_to(root).as_posix() if Path(root) in path.parents else str(path)
    return {"id": sid, "file": name, "page": disclosure_page_path(doc["release_id"], sid) + ".html"}


def keep(doc: Mapping[str, Any], state_dir: Path, *, taken_at: str, handoff: Mapping[str, Any]) -> tuple[Path, bool]:
    """Keep the disclosure as it stood at a hand-off; (its file, whether this call wrote it). A disclosure kept
    before (the same id) is left as it is, with the moment and the hand-off it was first kept with."""
    sid = snapshot_id(doc)
    path = disclosure_snapshot_path(state_dir, doc["release_id"], sid)
    if path.exists():
        return path, False
    make_dirs(path.parent)
    kept = {"snapshot_version": SNAPSHOT_VERSION, "id": sid, "taken_at": taken_at,
            "handoff": dict(handoff), "disclosure": dict(doc)}
    return path, write_new(path, dump_json(kept).encode("utf-8"))
