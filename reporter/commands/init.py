"""`reporter init [DIR] [--digest-only]`: start a workspace anywhere, from the starter files the package ships.

The starters are package data (reporter/starter/routing/ and reporter/starter/digest/): a commented
reporter.toml, a starter rule book (or a watchlist and a criteria document) and a README with a line for
each file, chosen so that `reporter build` in the new folder succeeds at once. docs/workspace.md says
what each key means; `reporter help workspace` prints it.
"""

from __future__ import annotations

import argparse
import tomllib
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from ..errors import InputError
from ..files import make_dirs, write_new

WORKSPACE_FILE = "reporter.toml"
EMPTY_FOLDERS = {"digest": ("papers",), "routing": ()}
"""Folders a starter makes empty (a wheel carries no empty folder): the digest's papers, filled by `reporter fetch`."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add `reporter init`."""
    p = sub.add_parser(
        "init", help="start a workspace: a commented reporter.toml, a starter rule book and a README",
        description="Write a new workspace into DIR (default: the current folder; made when absent): a commented "
                    "reporter.toml, a starter rule book in specs/ and a README with a line for each file. Its "
                    "[example] table makes a seeded pool of invented works on the first `reporter build`, so the "
                    "build succeeds at once; point `pool` at your data when you have it. With --digest-only: a "
                    "weekly digest alone (no pool, rule book or releases): a watchlist, a criteria document and "
                    "an empty papers/ folder. Never replaces a file: when one of its files is there with other "
                    "content (or DIR already has a reporter.toml) it writes nothing. The keys: docs/workspace.md "
                    "(`reporter help workspace`).",
        epilog="Example (then `cd my-campaign` and `reporter build`):\n  reporter init my-campaign\n"
               "  reporter init weekly --digest-only",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR",
                   help="the workspace folder (default: the current folder)")
    p.add_argument("--digest-only", action="store_true",
                   help="a digest workspace: site and [digest] only, nothing routed")
    p.set_defaults(func=run_init)


def starter_files(kind: str) -> dict[str, bytes]:
    """The starter's files by their path in the new workspace (`routing` or `digest`), read from package data."""
    found: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for entry in node.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif not entry.name.startswith("."):
                found[prefix + entry.name] = entry.read_bytes()
    walk(files("reporter") / "starter" / kind, "")
    return dict(sorted(found.items()))


def run_init(args: argparse.Namespace) -> int:
    """Check that nothing would be replaced, then write every file, reporter.toml last."""
    kind = "digest" if args.digest_only else "routing"
    target: Path = args.dir
    starter = starter_files(kind)
    if (target / WORKSPACE_FILE).exists():
        raise InputError(f"{target / WORKSPACE_FILE}: this folder is a workspace already; `reporter init` writes "
                         f"nothing over it: run `reporter build` here, or name another folder")
    for rel, data in starter.items():
        path = target / rel
        blocker = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise InputError(f"{blocker}: is a file where `reporter init` would make a folder; it wrote nothing: "
                             f"move the file aside, or name another folder")
        if path.exists() and not (path.is_file() and path.read_bytes() == data):
            raise InputError(f"{path}: is there already, with other content; `reporter init` never replaces a file "
                             f"and wrote nothing: move it aside, or name another folder")
    # reporter.toml last: a run killed half-way leaves no workspace, and a second run completes it (a file
    # with the starter's own bytes is no conflict).
    for rel in sorted(starter, key=lambda r: r == WORKSPACE_FILE):
        make_dirs((target / rel).parent)
        write_new(target / rel, starter[rel])
    for folder in EMPTY_FOLDERS[kind]:
        make_dirs(target / folder)
    listed = ", ".join([*starter, *(f"{f}/" for f in EMPTY_FOLDERS[kind])])
    where = "" if target == Path(".") else f"cd {target} && "
    print(f"wrote a {'digest ' if args.digest_only else ''}workspace in {target}: {listed}")
    if args.digest_only:
        print(f"next: {where}reporter build  (then add a [fetch.<source>] table and `reporter fetch --week "
              f"YYYY-Www` for papers; README.md says what each file is)")
    else:
        rows = tomllib.loads(starter[WORKSPACE_FILE].decode())["example"]["rows"]
        print(f"next: {where}reporter build  (makes {rows:,} invented works first, then open site/index.html; "
              f"README.md says what each file is)")
    print("every key: docs/workspace.md, or `reporter help workspace`")
    return 0
