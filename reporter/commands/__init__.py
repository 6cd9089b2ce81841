"""The command line's verbs, at the edge: one thin module per verb (or per stage's verbs).

Each module defines `register(subparsers)`, adding its commands with their flags, help and examples, and the
functions that run them: load the workspace (reporter.config), read the environment and the clock, hand each
stage its own typed settings, and print. reporter/cli.py names the module of each command. Nothing below this
package imports it: the stages never see the command line, the workspace file or the environment.

- `route.py`: `reporter route`, `reporter diagnose`;
- `build.py`: `reporter build` (the pipeline is reporter/build.py); `render.py`: `reporter render`;
- `serve.py`: `reporter serve` (the server is reporter/site/server.py);
- `novelty.py`: `reporter novelty`, `reporter novelty-ingest`;
- `digest.py`: `reporter digest`; `judge.py`: `reporter judge`;
- `screen.py`: `reporter screen`, `reporter export`;
- `fetch.py`: `reporter fetch`; `mail.py`: `reporter mail`; `certify.py`: `reporter certify`;
- `init.py`: `reporter init`; `help.py`: `reporter help`;
- `feedback.py`: `reporter feedback` (the reader's marks; reporter/digest/feedback.py and proposals.py).

`find_workspace` (below) is how every command finds ./reporter.toml.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def find_workspace(given: Path | None, *, inputs_given: bool = False) -> Path | None:
    """Where a command reads reporter.toml, the same way for every command.

    `--workspace DIR` when given; else the current folder when it holds a
    reporter.toml and the command was not handed its inputs by flags
    (`inputs_given`: route's --pool, render's --releases, --digests, --novelty
    or --pool, digest's four paths); else None, the flags alone. The commands
    that always read a workspace (build, screen, certify, fetch, mail, judge)
    default --workspace to the current folder.
    """
    if given is not None:
        return given
    if not inputs_given and Path("reporter.toml").is_file():
        return Path(".")
    return None


def database_passwords(ws: Any, environ: Mapping[str, str]) -> Any:
    """Hand the PostgreSQL passwords of the workspace's state databases (`[screen] password_env`, `[digest.judge]
    password_env`: the variables holding them) to the store's connector, for this process only: the password is in
    no setting, no message and no file. Returns `ws`, so a command writes `database_passwords(load_workspace(...),
    os.environ)`."""
    from ..panel.store_connect import give_password
    digest = getattr(ws, "digest", None)
    for table, settings in (("[screen]", getattr(ws, "screen", None)), ("[digest.judge]", getattr(digest, "judge", None))):
        if settings is not None and settings.password_env:
            give_password(settings.database, f"{table} password_env", settings.password_env,
                          environ.get(settings.password_env))
    return ws
