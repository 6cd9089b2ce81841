"""The `render` and `serve` commands."""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
from pathlib import Path

from ..errors import InputError
from .render import render_site


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `reporter render` and `reporter serve`."""
    p = subparsers.add_parser(
        "render", help="render the site from existing release folders",
        description="Render every release folder under --releases (as written by `reporter route --out`) "
                    "into --out, without re-running anything. Archived release and rule pages are never "
                    "rewritten; a build that would change one stops with exit 2.",
        epilog="Examples (in the example workspace, after `reporter build`):\n"
               "  reporter render --releases releases --out site\n"
               "  reporter render --releases releases --out site --novelty state/novelty.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--releases", type=Path, required=True, metavar="DIR",
                   help="the releases folder (index.json and one folder per release)")
    p.add_argument("--digests", type=Path, metavar="DIR",
                   help="digest weeks to render (accepted; digests are not rendered yet)")
    p.add_argument("--novelty", type=Path, metavar="PATH",
                   help="a results JSONL of `reporter novelty --batch --out`: adds the novelty page "
                        "(novelty.html, rebuilt at every render, never archived) and links it from the home page")
    p.add_argument("--out", type=Path, default=Path("site"), metavar="DIR", help="output folder (default: site)")
    p.add_argument("--rerender-archive", action="store_true",
                   help="re-render archived pages whose bytes would change, keeping each old file "
                        "beside the new one as NAME.superseded-<sha>.html")
    p.add_argument("--json", action="store_true", help="print the render report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run_render)

    s = subparsers.add_parser(
        "serve", help="serve the site on 127.0.0.1 for a look",
        description="Serve a rendered site folder on 127.0.0.1 (never on another interface) until Ctrl-C.",
        epilog="Example (after `reporter build`):\n  reporter serve --dir site --port 8000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--dir", type=Path, default=Path("site"), metavar="DIR", help="site folder (default: site)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    s.set_defaults(func=run_serve)


def run_render(args: argparse.Namespace) -> int:
    """reporter render."""
    report = render_site(args.releases, args.out, digests_dir=args.digests,
                         rerender_archive=args.rerender_archive, progress=not (args.quiet or args.json),
                         novelty=args.novelty)
    if args.json:
        print(json.dumps({
            "out": str(report.out), "releases": list(report.releases), "unlisted": list(report.unlisted),
            "digests": report.digests, "novelty": report.novelty, "pages": report.pages, "written": report.written,
            "unchanged": report.unchanged, "superseded": list(report.superseded),
            "largest_page": {"path": report.largest_page[0], "bytes": report.largest_page[1]},
        }, indent=2, sort_keys=True))
        return 0
    print(f"rendered {len(report.releases)} release(s) into {report.out}: {report.pages} pages "
          f"(HTML and Markdown each), {report.written} file(s) written, {report.unchanged} unchanged; "
          f"largest page {report.largest_page[0]} ({report.largest_page[1] / 1024:.1f} KB)")
    if report.novelty is not None:
        print(f"novelty page: {report.novelty} checked candidate(s) from {args.novelty}")
    if report.superseded:
        print(f"kept {len(report.superseded)} superseded archived file(s) beside their new versions")
    for rid in report.unlisted:
        print(f"note: {args.releases / rid} is not listed in index.json and was not rendered", file=sys.stderr)
    if args.digests is not None:
        print("note: digest pages are not rendered yet", file=sys.stderr)
    return 0


def make_server(root: Path, port: int) -> http.server.ThreadingHTTPServer:
    """An HTTP server for a site folder, bound to 127.0.0.1 only."""
    if not (root / "index.html").is_file():
        raise InputError(f"{root}: no index.html here; render the site first (reporter render --out {root})")
    handler = functools.partial(_QuietHandler, directory=str(root))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        sys.stderr.write("serve: " + (format % args) + "\n")


def run_serve(args: argparse.Namespace) -> int:
    """reporter serve."""
    try:
        server = make_server(args.dir, args.port)
    except OSError as exc:
        raise InputError(f"127.0.0.1:{args.port}: cannot listen: {exc.strerror}; try another --port") from None
    host, port = server.server_address[:2]
    print(f"serving {args.dir} at http://{host}:{port}/index.html (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
