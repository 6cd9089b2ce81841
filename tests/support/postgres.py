"""A real, throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary folder, pg_ctl start.

The server listens on 127.0.0.1 on a free port with trust authentication and
its unix socket inside its own folder, so it never touches a system
cluster. When the process runs as root (CI does) the server runs as the
`postgres` system user, because PostgreSQL refuses to run as root. It is
tuned for throwaway data (no fsync): never point it at anything you keep.

    server = PostgresServer(); server.start()
    url = server.new_database()      # a fresh, empty database per test
    server.stop()                    # stops the server and removes its folder
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SERVER_USER = "postgres"
"""The system user the server runs as when the tests run as root."""

FOLDER_PREFIX = "reporter-pg-"
"""Each server's folder in the system's temporary folder: data, socket, log and the owner's pid."""

OWNER_FILE = "owner.pid"
"""The pid of the process that started the server (a dead owner's server is stopped by the next start)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _version_key(path: str) -> tuple[int, ...]:
    digits = Path(path).parent.name
    return tuple(int(p) for p in digits.split(".") if p.isdigit())


def find_bindir() -> Path | None:
    """The folder holding initdb and pg_ctl: pg_config's bindir, Debian's /usr/lib/postgresql/<v>/bin, or PATH."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=False)
            if out.returncode == 0 and out.stdout.strip():
                candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    return next((c for c in candidates if (c / "initdb").is_file() and (c / "pg_ctl").is_file()), None)


def postgres_available() -> bool:
    """True when a PostgreSQL server can be started here (its binaries are installed, and as root a `postgres` user exists)."""
    if find_bindir() is None:
        return False
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_database(url: str, name: str) -> str:
    """`url` naming database `name` instead of its own."""
    head, _, _ = url.rpartition("/")
    return f"{head}/{name}"


class PostgresServer:
    """One throwaway PostgreSQL cluster; `start` returns the URL of its `postgres` database."""

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.folder: Path | None = None
        self.port: int | None = None
        self.url: str | None = None
        self._names = itertools.count(1)

    def _command(self, *args: str) -> list[str]:
        """A server command, as the `postgres` user when we are root (PostgreSQL refuses to run as root)."""
        if os.geteuid() != 0:
            return list(args)
        if shutil.which("runuser"):
            return ["runuser", "-u", SERVER_USER, "--", *args]
        return ["su", SERVER_USER, "-s", "/bin/sh", "-c", " ".join(f"'{a}'" for a in args)]

    def _run(self, *args: str) -> None:
        out = subprocess.run(self._command(*args), capture_output=True, text=True, timeout=120, check=False,
                             env={**os.environ, "LC_ALL": "C", "LANG": "C"})
        if out.returncode != 0:
            log = self.folder / "server.log" if self.folder else None
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({out.returncode}): {out.stderr.strip()}\n{tail}")

    def start(self) -> str:
        """initdb, start on a free port, and return the URL of the `postgres` database."""
        if self.bindir is None:
            raise RuntimeError("PostgreSQL is not installed: no initdb/pg_ctl found")
        self._stop_orphans()
        self.folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        (self.folder / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
        atexit.register(self.stop)
        if os.geteuid() == 0:
            user = pwd.getpwnam(SERVER_USER)
            os.chown(self.folder, user.pw_uid, user.pw_gid)
        data = self.folder / "data"
        self._run(str(self.bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")
        for attempt in range(5):
            self.port = _free_port()
            options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                       f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(data), "-l", str(self.folder / "server.log"),
                          "-o", options, "-w", "-t", "60", "start")
                break
            except RuntimeError:
                if attempt == 4:  # the port was taken between choosing and binding it, five times over
                    raise
                time.sleep(0.2)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        return self.url

    def _stop_orphans(self) -> None:
        """Stop the servers of test runs that were killed before they could stop theirs (no atexit on SIGKILL)."""
        for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
            try:
                owner = int((folder / OWNER_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if _alive(owner):
                continue
            orphan = PostgresServer()
            orphan.folder = folder
            orphan.stop()

    def new_database(self) -> str:
        """A fresh, empty database on this server; its URL."""
        assert self.url is not None, "start the server first"
        return create_database(self.url, f"t{os.getpid()}_{next(self._names)}")

    def stop(self) -> None:
        """Stop the server (immediately: its data is throwaway) and remove its folder."""
        if self.folder is None:
            return
        data = self.folder / "data"
        if (data / "postmaster.pid").exists():
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
            except (RuntimeError, subprocess.SubprocessError):
                pass
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


_created = itertools.count(1)


def create_database(url: str, name: str | None = None) -> str:
    """CREATE DATABASE on the server of `url` (a fresh, empty one); returns the new database's URL."""
    import psycopg

    name = name or f"t{os.getpid()}_{time.monotonic_ns()}_{next(_created)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(url, name)
