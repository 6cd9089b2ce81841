"""The site's local server: `reporter serve` (reporter/commands/serve.py) serves a rendered site folder with it."""

from __future__ import annotations

import functools
import http.server
import os
import stat
import sys
import urllib.parse
from http import HTTPStatus
from pathlib import Path

from ..errors import InputError


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
