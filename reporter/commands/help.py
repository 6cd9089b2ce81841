"""`reporter help [TOPIC]`: the documentation (docs/) as the installed package ships it, printed.

docs/ travels in the wheel as package data (reporter/docs, a link to the repository's docs/ folder in a
checkout), so a workspace started with `reporter init` outside the repository can read what each key
means: `reporter help workspace`.
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from importlib.resources.abc import Traversable

from ..errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add `reporter help`."""
    p = sub.add_parser(
        "help", help="print a page of the documentation: reporter help workspace",
        description="Print a page of the documentation the package ships (Markdown, as in docs/ of the "
                    "repository). Without TOPIC: every page with its title. A command's flags: "
                    "reporter COMMAND --help.",
        epilog="Example:\n  reporter help\n  reporter help workspace\n  reporter help design/cli",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("topic", nargs="?", metavar="TOPIC",
                   help="a page: workspace, rules, pool, digest, screening, ... or design/cli")
    p.set_defaults(func=run_help)


def doc_pages() -> dict[str, Traversable]:
    """Every documentation page by its topic: its path under docs/ without `.md` (`workspace`, `design/cli`)."""
    pages: dict[str, Traversable] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for entry in node.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".md"):
                pages[prefix + entry.name[:-3]] = entry
    walk(files("reporter") / "docs", "")
    return dict(sorted(pages.items()))


def _title(page: Traversable) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def run_help(args: argparse.Namespace) -> int:
    """Print the page, or the list of pages."""
    pages = doc_pages()
    if args.topic is None:
        width = max(map(len, pages))
        print("reporter help TOPIC prints a page of the documentation:")
        for topic, page in pages.items():
            print(f"  {topic:<{width}}  {_title(page)}")
        return 0
    topic = args.topic.removesuffix(".md").removeprefix("docs/")
    if topic not in pages:
        raise InputError(f"no documentation page {args.topic!r}; the pages: {', '.join(pages)} (a command's flags: "
                         f"reporter COMMAND --help)")
    print(pages[topic].read_text(encoding="utf-8"), end="")
    return 0
