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
    "reporter.commands.init",
    "reporter.commands.help",
    "reporter.commands.feedback",
    "reporter.commands.disclose",
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
    "init": "reporter.commands.init", "help": "reporter.commands.help",
    "feedback": "reporter.commands.feedback",
    "disclose": "reporter.commands.disclose",
}
# Each command's one-line help, in the order `reporter --help` lists them. A command line that names no
# command (`reporter --version`, `reporter --help`, `reporter`, a misspelt command) is parsed against this
# table and imports no command module at all: every stage's imports cost 0.5 CPU-s, the start of every
# command (issue 35, item 4). tests/test_cli_errors.py checks it against what the modules register.
COMMAND_HELP = {
    "route": "route the pool into piles and write a release folder",
    "diagnose": "sample a pile or a rule's wins, matches or domain misses; measure precision",
    "build": "route, check novelty, decide the digest weeks and render the site, for a workspace",
    "render": "render the site from existing release folders",
    "serve": "serve the site on 127.0.0.1 for a look",
    "novelty": "check candidates for novelty against the ingested graph",
    "novelty-ingest": "turn OpenAlex works into graph events",
    "digest": "decide a week's papers (KEEP / REVIEW / DROP) and write decisions.json",
    "judge": "plan (default) or run (--run) the digest's criteria judge over some weeks",
    "screen": "plan (default) or run (--run) the two-voter screen of a release",
    "export": "write the hand-off: the works the screen admitted, as CSV or Parquet",
    "fetch": "fetch a week (or a window) of papers from arXiv, bioRxiv, medRxiv, PubMed and OpenAlex",
    "mail": "send a digest week's e-mail edition through SMTP, once (a dry run without --send)",
    "certify": "sample a discard pile into a sheet to label, and bound how many relevant works it holds",
    "init": "start a workspace: a commented reporter.toml, a starter rule book and a README",
    "help": "print a page of the documentation: reporter help workspace",
    "feedback": "mark published papers wanted or not wanted; measured precision and proposals",
    "disclose": "draft a release's methods disclosure (PRISMA-trAIce, RAISE) from the run records",
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


def build_parser(command: str | None = None, *, listing: bool = False) -> argparse.ArgumentParser:
    """The argument parser: with every registered command, or only the module of `command` when it is one,
    or (`listing`) with each command named from COMMAND_HELP and no command module imported."""
    parser = argparse.ArgumentParser(
        prog="reporter",
        description="Literature screening that shows its work. Route scholarly works through a rule book into "
                    "piles (each release named by its inputs' hashes; on every core or a Dask cluster); screen "
                    "the screening piles with two model voters, the cost shown first; certify how many relevant "
                    "works a discard pile can still hold; check papers and claims for novelty against a citation "
                    "graph; fetch a week of papers (arXiv, bioRxiv, medRxiv, PubMed, OpenAlex) and decide it "
                    "KEEP / REVIEW / DROP (by keywords and criteria, or a model judge) in a weekly digest with a "
                    "feed and an e-mail edition. A static site "
                    "shows every decision.",
        epilog="Example: reporter init my-campaign   (then `reporter build` in my-campaign; in the repository, "
               "`reporter build` builds the example site). reporter help lists the documentation.",
    )
    from . import __version__
    parser.add_argument("--version", action="version", version=f"reporter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if listing:
        for name, text in COMMAND_HELP.items():
            sub.add_parser(name, help=text)
        return parser
    own = COMMAND_MODULE.get(command or "")
    for name in (own,) if own else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and map failures to exit codes."""
    argv = sys.argv[1:] if argv is None else list(argv)
    set_command_environment(argv[0] if argv else None)
    command = argv[0] if argv else None
    parser = build_parser(command, listing=command not in COMMAND_MODULE)
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
