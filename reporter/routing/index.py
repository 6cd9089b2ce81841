"""The releases folder's own files: index.json, the order releases were first published in (docs/release-format.md).

`reporter route --out` and `reporter build` write a releases folder: one
folder per release, named by its id (a release.json inside), and index.json
listing the ids oldest first. Routing is the only reader and writer of the
index: publishing appends to it under the folder's lock (locks.locked), and
the typed reader (artifacts.load_releases) and `--release` (published.find_release)
read it. Hidden folders are a run's temporaries, never releases.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..files import MiB, read_capped, write_text
from ..locks import locked
from .folder import MANIFEST_FILE

INDEX = "index.json"
"""The releases index, at the top of a releases folder."""
INDEX_CAP = 16 * MiB
"""The largest releases index.json read: about 200,000 release ids (docs/limits.md)."""


def read_index(folder: Path) -> list[str]:
    """Release ids of a releases folder in the order first written (index.json); [] when it has no releases.

    Refuses a folder whose index.json is missing while release folders exist:
    the index is the only record of the order releases were published in.
    """
    path = Path(folder) / INDEX
    if not path.exists():
        found = release_folders(folder)
        if found:
            shown = json.dumps(found[:3]) if len(found) <= 3 else f"{found[0]} and {len(found) - 1} more"
            raise InputError(
                f"{path}: missing, but {folder} holds {len(found)} release folder(s) ({shown}). index.json "
                f"is the only record of the order releases were published in (the home page, the latest "
                f"release and every diff follow it), so it is not rebuilt by guessing and nothing was written. "
                f"Restore it from a backup or version control, or, if you know the order, write it by hand: "
                f"a JSON list of the release ids, oldest first")
        return []
    try:
        data = json.loads(read_capped(path, INDEX_CAP, "release index").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"{path}: not valid UTF-8 JSON ({exc}); it should be a list of release ids") from None
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise InputError(f"{path}: should be a JSON list of release id strings")
    if len(set(data)) != len(data):
        raise InputError(f"{path}: lists a release id twice")
    return data


def release_folders(folder: Path) -> list[str]:
    """Names of the release folders (a manifest inside) of a releases folder, sorted; hidden ones are temporary."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob(f"*/{MANIFEST_FILE}") if not p.parent.name.startswith("."))


def append_index(folder: Path, release_id: str) -> None:
    """Add a release id at the end of index.json (once), under the folder's lock."""
    with locked(folder):
        ids = read_index(folder)
        if release_id not in ids:
            write_text(Path(folder) / INDEX, json.dumps([*ids, release_id], indent=2) + "\n")


def start_index(folder: Path) -> None:
    """Write an empty index.json into a releases folder that has none and no release yet (under its lock).

    Publishing does this before it renames the first release into place, so a
    run killed between the rename and the index leaves a listed-less release
    the next run lists, never a release folder without an index.
    """
    with locked(folder):
        if not (Path(folder) / INDEX).exists():
            read_index(folder)  # refuses release folders without their index
            write_text(Path(folder) / INDEX, "[]\n")
