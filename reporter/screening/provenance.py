"""Where a hand-off came from: the provenance sidecar `<out>.provenance.json`, and the same in the Parquet metadata.

`reporter export` writes, beside the CSV or Parquet file, one canonical JSON
document (`provenance`) saying which release and screening generation the
rows are of, each voter's model and base URL (scheme and host only: no path,
query or user information, so never a key), the prompt hash, the tool's
version, the certificates that gated the export (`--require-certified`), the
counts of every tier (as `reporter screen --status` gives them) and the
spend, the methods disclosure kept with it (`disclosure`: its id, the sha256
of its JSON, its file in the workspace's state and its archived page in the
site; reporter/disclose/snapshot.py), whether the file is `partial` (written with `--partial` while works
were leased or unclaimed, and why), and the exported file's name, rows and
sha256. A Parquet file carries the same document (without the file's own
sha256) in its key-value metadata under `PARQUET_KEY`. Same inputs, same
bytes: no clock in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import __version__
from ..files import write_json
from ..hashing import canonical_json, sha256_file
from .config import TIERS, ScreenWorkspace
from .prompt import load_prompt
from .status import ScreenStatus, export_blockers

SUFFIX = ".provenance.json"
"""The sidecar is the exported file's name plus this: `handoff.csv.provenance.json`."""

PARQUET_KEY = "reporter.provenance"
"""The Parquet key-value metadata key holding the provenance document."""

FORMAT_VERSION = 1
"""The sidecar's `provenance_version`."""


def provenance_path(out: Path) -> Path:
    """The sidecar of an exported file."""
    out = Path(out)
    return out.with_name(out.name + SUFFIX)


def base_url_host(base_url: str) -> str:
    """A voter's base URL reduced to its scheme, host and port: no user information, path or query."""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}" if host else ""


def provenance(ws: ScreenWorkspace, status: ScreenStatus, *, rows: int, partial: bool,
               certificates: Sequence[Mapping[str, Any]], require_certified: bool,
               disclosure: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The provenance document of a hand-off of `rows` rows of `status`'s release (the file's name and sha256 are
    added by `write_provenance`); `disclosure`: the methods disclosure kept with it (its id, file and page)."""
    prompt = load_prompt(ws.screen)
    tiers = {t.tier: t for t in status.tiers}
    voters = [{"tier": tier, "name": v.name, "model": v.model, "base_url": base_url_host(v.base_url),
               "provider": "openai-chat"}
              for tier in TIERS for v in getattr(ws.screen, tier)]
    return {
        "provenance_version": FORMAT_VERSION,
        "release_id": status.release_id,
        "generation": tiers["expensive"].generation,
        "generations": {t.tier: t.generation for t in status.tiers},
        "prompt_hash": prompt.hash,
        "tool": "reporter", "tool_version": __version__,
        "voters": voters,
        "require_certified": require_certified,
        "certificates": [dict(c) for c in certificates],
        "rows": rows,
        "counts": {t.tier: {"scope": t.scope, "done": t.done, "admitted": t.admitted, "discarded": t.discarded,
                            "failed": t.failed, "leased": t.leased_works, "unclaimed": t.unclaimed}
                   for t in status.tiers},
        "spend": round(status.spend, 6),
        "spend_by_voter": [{"tier": t.tier, "voter": v.voter, "model": v.model, "votes": v.votes,
                            "spend": round(v.spend, 6)} for t in status.tiers for v in t.voters],
        "budget": status.budget,
        "partial": partial,
        "incomplete": export_blockers(status),
        "disclosure": dict(disclosure) if disclosure is not None else None,
    }


def parquet_metadata(doc: Mapping[str, Any]) -> dict[bytes, bytes]:
    """The Parquet key-value metadata carrying the document."""
    return {PARQUET_KEY.encode(): canonical_json(doc).encode("utf-8")}


def write_provenance(out: Path, doc: Mapping[str, Any]) -> Path:
    """Write the sidecar of `out` (already written): the document plus the file's name and sha256, atomically."""
    out = Path(out)
    path = provenance_path(out)
    write_json(path, {**doc, "file": out.name, "sha256": sha256_file(out)})
    return path
