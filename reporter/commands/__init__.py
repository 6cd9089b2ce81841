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
- `init.py`: `reporter init`; `help.py`: `reporter help`.

`find_workspace` (below) is how every command finds ./reporter.toml.
"""

from __future__ import annotations

from pathlib import Path


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
