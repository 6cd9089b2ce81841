"""The `reporter` command: one subcommand per stage, each registered by its own module.

Exit codes: 0 success, 2 bad input (the message names the file and what to
fix; nothing half-written), 1 internal failure.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import InputError, InternalError
from .files import resource_error

# Each module defines register(subparsers) that adds its commands and sets
# `func` (args -> exit code) on each parser.
COMMAND_MODULES = (
    "reporter.routing.commands",
    "reporter.build",
    "reporter.site.commands",
    "reporter.novelty.commands",
    "reporter.digest.commands",
    "reporter.screening.commands",
    "reporter.fetch.commands",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="reporter",
        description="Route scholarly works through a rule book, check novelty against a citation graph, "
                    "and publish every decision as a static site.",
        epilog="Example: reporter build   (in the repository: builds the example site into site/)",
    )
    from . import __version__
    parser.add_argument("--version", action="version", version=f"reporter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a stage not built yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and map failures to exit codes."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"reporter {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except InternalError as exc:
        print(f"reporter {args.command}: internal error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"reporter {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        message = resource_error(exc)
        if message is None:
            raise
        print(f"reporter {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
