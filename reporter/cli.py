"""The `reporter` command: one subcommand per stage, each registered by its own module.

Exit codes: 0 success, 2 bad input (the message names the file and what to
fix; nothing half-written), 1 internal failure.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from .errors import InputError, InternalError
from .files import resource_error

# Each module defines register(subparsers) that adds its commands and sets
# `func` (args -> exit code) on each parser.
COMMAND_MODULES = (
    "reporter.commands.route",
    "reporter.commands.build",
    "reporter.commands.render",
    "reporter.commands.serve",
    "reporter.commands.novelty",
    "reporter.commands.digest",
    "reporter.commands.judge",
    "reporter.commands.screen",
    "reporter.commands.fetch",
    "reporter.commands.mail",
    "reporter.commands.certify",
    "reporter.commands.feedback",
)
# The module that registers each command. A command line naming one imports
# only that module: importing every stage (the site, the digest, screening's
# HTTP client) costs most of a CPU-second, a tenth of routing a million rows.
# tests/test_cli_errors.py checks this table against what the modules register.
COMMAND_MODULE = {
    "route": "reporter.commands.route", "diagnose": "reporter.commands.route",
    "build": "reporter.commands.build",
    "render": "reporter.commands.render", "serve": "reporter.commands.serve",
    "novelty": "reporter.commands.novelty", "novelty-ingest": "reporter.commands.novelty",
    "digest": "reporter.commands.digest", "judge": "reporter.commands.judge",
    "screen": "reporter.commands.screen", "export": "reporter.commands.screen",
    "fetch": "reporter.commands.fetch",
    "mail": "reporter.commands.mail",
    "certify": "reporter.commands.certify",
    "feedback": "reporter.commands.feedback",
}

# Settings a command gives its own process before any library loads. `reporter route` keeps the
# memory Arrow frees: mimalloc (Arrow's allocator) otherwise returns it to the system and
# page-faults it back for the next batch: 0.3-0.9 CPU-s more system time on the real 1.07M-row
# benchmark pool in the runs measured (docs/decisions.md). The process ends when routing does;
# glibc's side is routing.workers.keep_freed_memory. Routing never calls BLAS, yet OpenBLAS (loaded
# with numpy) starts a thread per core that spins after start-up: 0.1 CPU-s a run, so the route
# command asks it for none. A value already in the environment wins.
COMMAND_ENVIRONMENT = {"route": {"MIMALLOC_PURGE_DELAY": "-1", "OPENBLAS_NUM_THREADS": "1"}}


def set_command_environment(command: str | None) -> None:
    """Set COMMAND_ENVIRONMENT for `command`, only while neither Arrow nor numpy is loaded (they read it once)."""
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return
    for name, value in COMMAND_ENVIRONMENT.get(command or "", {}).items():
        os.environ.setdefault(name, value)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every registered command, or only the module of `command` when it is one."""
    parser = argparse.ArgumentParser(
        prog="reporter",
        description="Route scholarly works through a rule book, check novelty against a citation graph, "
                    "and publish every decision as a static site.",
        epilog="Example: reporter build   (in the repository: builds the example site into site/)",
    )
    from . import __version__
    parser.add_argument("--version", action="version", version=f"reporter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    own = COMMAND_MODULE.get(command or "")
    for name in (own,) if own else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and map failures to exit codes."""
    argv = sys.argv[1:] if argv is None else list(argv)
    set_command_environment(argv[0] if argv else None)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args.argv = tuple(argv)  # as given: a run's record names its command (reporter/runs.py), secrets masked
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"reporter {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except InternalError as exc:
        print(f"reporter {args.command}: internal error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print(f"reporter {args.command}: interrupted", file=sys.stderr)
        return 128 + int(getattr(exc, "signum", signal.SIGINT))
    except OSError as exc:
        message = resource_error(exc)
        if message is None:
            raise
        print(f"reporter {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
