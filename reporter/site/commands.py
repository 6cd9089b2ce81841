"""The `render` and `serve` commands."""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import stat
import sys
import urllib.parse
from http import HTTPStatus
from pathlib import Path

from ..errors import InputError
from ..plurals import count
from .render import render_site
from .titles import PoolRef


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `reporter render` and `reporter serve`."""
    p = subparsers.add_parser(
        "render", help="render the site from existing release folders",
        description="Render every release folder under --releases (as written by `reporter route --out`) "
                    "into --out, without re-running anything. Archived release and rule pages are never "
                    "rewritten; a build that would change one stops with exit 2. Without --releases (and "
                    "without a workspace that has one) the site has no release: a digest-only site, whose home "
                    "page shows the digest of --digests.",
        epilog="Examples (in the example workspace, after `reporter build`):\n"
               "  reporter render --releases releases --out site\n"
               "  reporter render --releases releases --out site --novelty state/novelty.jsonl\n"
               "  reporter render --releases releases --digests digests --out site\n"
               "  reporter render --releases releases --out site --workspace .\n"
               "  reporter render --digests digests --out site",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--releases", type=Path, metavar="DIR",
                   help="the releases folder (index.json and one folder per release; default: the --workspace's, "
                        "else none: a digest-only site)")
    p.add_argument("--digests", type=Path, metavar="ARCHIVE",
                   help="a digest archive (`reporter digest --archive`): renders every published week's page "
                        "(digest/YYYY-Www.html, archived), the week index, digest/feed.xml and the home page's "
                        "latest week")
    p.add_argument("--novelty", type=Path, metavar="PATH",
                   help="a results JSONL of `reporter novelty --batch --out`: adds the novelty page "
                        "(novelty.html, rebuilt at every render, never archived) and links it from the home page")
    p.add_argument("--workspace", type=Path, metavar="DIR",
                   help="the workspace (reporter.toml): its pool gives the titles of the works the diff and status "
                        "pages show that no sample holds (moved works, lost includes), and its [screen] state is what "
                        "the newest release's status page shows (read only, never written). Without it the status "
                        "pages show no screening, and those works show their ids only (see --pool)")
    p.add_argument("--pool", type=Path, metavar="PATH",
                   help="without --workspace: the pool (Parquet, JSONL or CSV) whose titles the diff and status pages "
                        "show for works no sample holds")
    p.add_argument("--overlay", type=Path, metavar="PATH", help="with --pool: its text overlay, whose titles win")
    p.add_argument("--against", action="append", default=[], metavar="ID",
                   help="also compare the newest release with this earlier one (a release id, a unique prefix of "
                        "6 or more characters, or a label): releases/<newest>/against/<id>.html; may be repeated. "
                        "Every render compares each release with its previous one, and the newest also with the "
                        "three before that")
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
    workspace = pool = None
    if args.workspace is not None:
        if args.pool is not None:
            raise InputError("--pool goes without --workspace: the workspace names its own pool")
        from ..config import load_workspace
        workspace = load_workspace(args.workspace)
    elif args.pool is not None:
        pool = PoolRef(args.pool, args.overlay)
    elif args.overlay is not None:
        raise InputError("--overlay goes with --pool")
    releases = args.releases
    if releases is None and workspace is not None and workspace.has_routing:
        releases = workspace.routing().releases
    if releases is None and args.digests is None and args.novelty is None:
        raise InputError("nothing to render: give --releases DIR (the releases folder), --digests ARCHIVE (a digest "
                         "archive: a digest-only site) or --novelty PATH, or --workspace DIR with a releases folder")
    report = render_site(releases, args.out, digests_dir=args.digests,
                         rerender_archive=args.rerender_archive, progress=not (args.quiet or args.json),
                         novelty=args.novelty, workspace=workspace, against=args.against, pool=pool)
    if args.json:
        print(json.dumps({
            "out": str(report.out), "releases": list(report.releases), "unlisted": list(report.unlisted),
            "digests": report.digests, "novelty": report.novelty, "pages": report.pages, "written": report.written,
            "unchanged": report.unchanged, "superseded": list(report.superseded), "kept": list(report.kept),
            "largest_page": {"path": report.largest_page[0], "bytes": report.largest_page[1]},
        }, indent=2, sort_keys=True))
        return 0
    weeks = f" and {count(report.digests, 'digest week')}" if report.digests else ""
    print(f"rendered {count(len(report.releases), 'release')}{weeks} into {report.out}: {report.pages} pages "
          f"(HTML and Markdown each), {count(report.written, 'file')} written, {report.unchanged} unchanged; "
          f"largest page {report.largest_page[0]} ({report.largest_page[1] / 1024:.1f} KB)")
    if report.novelty is not None:
        print(f"novelty page: {count(report.novelty, 'checked candidate')} from {args.novelty}")
    if report.superseded:
        print(f"kept {count(len(report.superseded), 'superseded archived file')} beside their new versions")
    if report.kept:
        print(f"left {count(len(report.kept), 'archived file')} of an earlier site version as they were published "
              f"(--rerender-archive re-renders them in this version's layout)")
    for rid in report.unlisted:
        print(f"note: {releases / rid} is not listed in index.json and was not rendered", file=sys.stderr)
    return 0


def make_server(root: Path, port: int) -> http.server.ThreadingHTTPServer:
    """An HTTP server for a site folder, bound to 127.0.0.1 only (see `_SiteHandler` for what it serves)."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: a port is a number from 0 to 65535 (0 picks a free one)")
    if not (root / "index.html").is_file():
        raise InputError(f"{root}: no index.html here; render the site first (reporter render --out {root})")
    handler = functools.partial(_SiteHandler, directory=str(Path(root).resolve()))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """GET and HEAD of the site's regular files, and nothing else.

    A request must name this server in its Host header (`127.0.0.1:PORT` or
    `localhost:PORT`; 400 without one, 421 for another name), so a page of
    another site that a DNS trick points at 127.0.0.1 reads nothing. A path
    is served only when it resolves (symbolic links followed) to a regular
    file inside the site folder; a folder serves its index.html, and
    anything else is 404: no listings, no links out, no devices or pipes.
    """

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
        sys.stderr.write("serve: " + (format % args) + "\n")

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        if not host:
            self.send_error(HTTPStatus.BAD_REQUEST, "Host header required")
            return False
        port = self.server.server_address[1]
        allowed = {f"127.0.0.1:{port}", f"localhost:{port}"} | ({"127.0.0.1", "localhost"} if port == 80 else set())
        if host not in allowed:
            self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "this server answers only to 127.0.0.1 and localhost")
            return False
        return True

    def _inside(self, path: str) -> Path | None:
        """The resolved path when it lies inside the site folder, else None."""
        root = Path(self.directory)
        try:
            target = Path(path).resolve()
        except (OSError, ValueError, RuntimeError):
            return None
        return target if target == root or root in target.parents else None

    def _open_regular(self, path: Path):
        """The file opened for reading when it is a regular file (never blocks on a pipe), else None."""
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        f = os.fdopen(fd, "rb")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            f.close()
            return None
        return f

    def send_head(self):
        if not self._host_ok():
            return None
        fs_path = self.translate_path(self.path)
        target = self._inside(fs_path)
        folder = target is not None and target.is_dir()
        if folder:
            target = self._inside(os.path.join(fs_path, "index.html"))
        f = self._open_regular(target) if target is not None else None
        if f is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        url = urllib.parse.urlsplit(self.path)
        if folder and not url.path.endswith("/"):  # so the index's relative links resolve
            f.close()
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            location = "/" + url.path.lstrip("/") + "/" + (f"?{url.query}" if url.query else "")
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        size = os.fstat(f.fileno()).st_size
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-type", self.guess_type(str(target)))
        self.send_header("Content-Length", str(size))
        self.end_headers()
        return f

    def list_directory(self, path) -> None:  # never reached through send_head; no listings either way
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")


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
