"""A file linked to a huge sparse one: what a state file read with a size cap must refuse before reading it."""

from __future__ import annotations

from pathlib import Path

HUGE = 256 * 1024 * 1024
"""The size of issue 30 item 10's file (a decisions.json linked to it was read whole: 486 MiB peak)."""


def link_to_huge(path: Path, size: int = HUGE) -> int:
    """Make `path` a symbolic link to a sparse file of `size` bytes beside it (no disk used); returns the size."""
    path = Path(path)
    target = path.parent / f".huge-{path.name}"
    with open(target, "wb") as f:
        f.truncate(size)
    path.unlink(missing_ok=True)
    path.symlink_to(target)
    return size
