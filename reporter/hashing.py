"""Canonical JSON and content digests: the vocabulary of release ids and manifests."""

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


def sha256_text(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
