"""`reporter serve`: serve a rendered site folder on 127.0.0.1 (the server is reporter/site/server.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from ..site.server import make_server


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `reporter serve`."""
    s = subparsers.add_parser(
        "serve", help="serve the site on 127.0.0.1 for a look",
        description="Serve a rendered site folder on 127.0.0.1 (never on another interface) until Ctrl-C.",
        epilog="Example (after `reporter build`):\n  reporter serve --dir site --port 8000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--dir", type=Path, default=Path("site"), metavar="DIR", help="site folder (default: site)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    s.set_defaults(func=run_serve)


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
