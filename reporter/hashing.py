"""Canonical JSON and content digests: the vocabulary of release ids and manifests.

Every sha256 the tool computes goes through these helpers (bytes, text, canonical JSON, files).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

CHUNK = 8 * 1024 * 1024


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and fixed separators: same value, same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dump_json(value: Any) -> str:
    """Readable, deterministic JSON for files people open (sorted keys, 2-space indent)."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of bytes: the project's one call of hashlib.sha256 on data in memory."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return sha256_bytes(text.encode("utf-8"))


def sha256_json(value: Any) -> str:
    """Hex sha256 of a value's canonical JSON."""
    return sha256_text(canonical_json(value))


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks (the GIL is released while hashing)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_files(paths: list[Path], root: Path) -> str:
    """Digest of several files: each file's relative name and content digest, in name order."""
    entries = sorted((p.relative_to(root).as_posix(), sha256_file(p)) for p in paths)
    return sha256_json(entries)
