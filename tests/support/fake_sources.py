"""One local HTTP server answering as arXiv, bioRxiv/medRxiv, PubMed's E-utilities and OpenAlex.

The answers are the wire-format fixtures of tests/fixtures/fetch/ (written
from each API's documentation, README there), filtered to the dates asked
and cut into the pages asked, with each API's own paging:

- arXiv   `/arxiv/api/query`: `submittedDate:[… TO …]` in `search_query`, `start`/`max_results`,
  `opensearch:totalResults`;
- bioRxiv `/biorxiv/details/{biorxiv|medrxiv}/{since}/{until}/{cursor}/json`: an absolute cursor,
  `page_size` rows a call (100 on the real server), `messages[0].total`; "no posts found" when empty;
- PubMed  `/eutils/esearch.fcgi` (history server: a fresh WebEnv per search, by the entrez date) and
  `/eutils/efetch.fcgi` (`WebEnv`, `query_key`, `retstart`, `retmax`); an unknown WebEnv is answered
  with `<eFetchResult><ERROR>`, as NCBI answers an expired history;
- OpenAlex `/openalex/works`: `filter=from_publication_date:…,to_publication_date:…`, `per_page`,
  `cursor=*` then opaque cursors in `meta.next_cursor`, null at the end.

Faults are scripted per source: `server.faults["arxiv"] = ["429:7", "ok", "drop"]` makes the next three
arXiv requests a 429 with `Retry-After: 7`, a normal answer, and a dropped connection. Each request takes
the first action left; with none left it is answered normally. Actions: `ok`, `STATUS[:RETRY_AFTER]`
(429, 503, 400, ... with the API's error body for 4xx), `drop` (close without answering), `truncate`
(the full Content-Length, half the body, close), `malformed` (half the body as a whole answer), `empty`
(a page with no records but the real total), `bad-record` (the page's first record without its title),
`hang` (wait for `server.release`, then drop), `error-feed` (arXiv's error feed with a 200), `drip` (the
headers, then the body a byte every 0.2 s), `drip-headers` (the status line and headers a byte every 0.2 s),
`huge:MB` (a 200 of MB mebibytes without a Content-Length), `huge-declared` (a Content-Length of 1.5 GB, no
body), `gzip-bomb` (1 GiB of spaces gzipped, though the client asked for no encoding), `redirect:URL` (a 302
to URL; `{root}` in it is the server's own root), `echo-query` (a 400 whose body repeats the query string as
sent, and as JSON). Hostile totals and cursors: `server.totals[source] = N` makes PubMed, arXiv, bioRxiv and
OpenAlex claim N results; `server.cursors = [...]` makes OpenAlex answer those next cursors in turn (and never
end); `server.same_webenv = True` makes every esearch answer the same WebEnv and query_key, as
NCBI may. Every request is logged in `server.log`.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import random
import re
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reporter.config import load_workspace
from reporter.fetch.http import http_transport
from reporter.fetch.pages import Window
from reporter.fetch.run import FetchResult, Runtime, fetch_sources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fetch"
ALL = ("arxiv", "biorxiv", "medrxiv", "pubmed", "openalex")
"""Every source, in the order `reporter fetch` asks them."""
ENTRY = re.compile(r"\n  <entry>.*?</entry>", re.S)
ARTICLE = re.compile(r"<PubmedArticle>.*?</PubmedArticle>\n", re.S)


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text[:10])


def _compact(text: str) -> dt.date:
    return dt.date(int(text[:4]), int(text[4:6]), int(text[6:8]))


class FakeSources:
    """The server; `base_urls()` gives the [fetch.<source>] base_url of each source."""

    def __init__(self, biorxiv_page_size: int = 100):
        self.biorxiv_page_size = biorxiv_page_size
        self.faults: dict[str, list[str]] = {}
        self.log: list[tuple[str, str, dict[str, str]]] = []
        self.release = threading.Event()
        self.webenvs: set[str] = set()
        self.history: dict[str, list[str]] = {}
        self.totals: dict[str, int] = {}
        self.cursors: list[str] = []
        self.same_webenv = False
        self._lock = threading.Lock()
        self._load()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                fake._answer(self)

            def log_message(self, *args):  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def base_urls(self) -> dict[str, str]:
        return {"arxiv": f"{self.root}/arxiv/api/query", "biorxiv": f"{self.root}/biorxiv",
                "medrxiv": f"{self.root}/biorxiv", "pubmed": f"{self.root}/eutils",
                "openalex": f"{self.root}/openalex"}

    def requests(self, source: str) -> list[dict[str, str]]:
        """The parameters of every request a source received, in order (bioRxiv: path parts as params)."""
        return [params for name, _, params in self.log if name == source]

    # --- the data ------------------------------------------------------------------------------

    def _load(self) -> None:
        feed = (FIXTURES / "arxiv_feed.xml").read_text()
        self.arxiv_head = feed[:feed.index("\n  <entry>")]
        self.arxiv_entries = ENTRY.findall(feed)
        self.arxiv_error = (FIXTURES / "arxiv_error.xml").read_text()
        self.rows = {name: json.loads((FIXTURES / f"{name}_details.json").read_text())["collection"]
                     for name in ("biorxiv", "medrxiv")}
        self.biorxiv_empty = (FIXTURES / "biorxiv_empty.json").read_text()
        efetch = (FIXTURES / "pubmed_efetch.xml").read_text()
        self.pubmed_head = efetch[:efetch.index("<PubmedArticle>")]
        self.articles = ARTICLE.findall(efetch)
        self.esearch = json.loads((FIXTURES / "pubmed_esearch.json").read_text())
        self.efetch_error = (FIXTURES / "pubmed_efetch_error.xml").read_text()
        self.works = json.loads((FIXTURES / "openalex_works.json").read_text())["results"]
        self.openalex_error = (FIXTURES / "openalex_error.json").read_text()

    # --- answering -----------------------------------------------------------------------------

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        source, route = self._route(parts.path)
        with self._lock:
            self.log.append((source, handler.path, params))
            queue = self.faults.get(source) or []
            action = queue.pop(0) if queue else "ok"
        if action == "drop":
            handler.close_connection = True
            return
        if action == "hang":
            self.release.wait(60)
            handler.close_connection = True
            return
        if action in ("drip", "drip-headers", "gzip-bomb") or action.startswith(("huge", "redirect:")):
            self._hostile(handler, action)
            return
        if action == "echo-query":  # an error body that repeats what it was sent, key included
            body = f"bad request: {parts.query} {json.dumps(params)}".encode()
            self._send(handler, 400, body, "text/plain")
            return
        if action == "error-feed":  # the arXiv API's error feed, with a 200
            self._send(handler, 200, self.arxiv_error.encode(), "application/atom+xml; charset=utf-8")
            return
        if action[:3].isdigit():
            status, _, retry_after = action.partition(":")
            self._error(handler, source, int(status), retry_after or None)
            return
        try:
            body, kind = route(parts.path, params, action)
        except LookupError as exc:
            self._send(handler, 404, str(exc).encode(), "text/plain")
            return
        if action == "truncate":
            handler.send_response(200)
            handler.send_header("Content-Type", kind)
            handler.send_header("Content-Length", str(len(body)))
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(body[: len(body) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        if action == "malformed":
            body = body[: len(body) // 2]
        self._send(handler, 200, body, kind)

    def _send(self, handler, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(body)

    def _hostile(self, handler, action: str) -> None:
        """The answers no API should give: a drip, a huge body, a redirect."""
        handler.close_connection = True
        try:
            if action == "drip-headers":
                for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 10_000:
                    if self.release.is_set():
                        return
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    self.release.wait(0.2)
                return
            if action.startswith("redirect:"):
                handler.send_response(302)
                handler.send_header("Location", action.partition(":")[2].replace("{root}", self.root))
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            if action == "gzip-bomb":  # 1 GiB of spaces in about a mebibyte, despite Accept-Encoding: identity
                import zlib
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                block = b" " * (1 << 20)
                handler.send_header("Content-Encoding", "gzip")
                handler.end_headers()
                for _ in range(1024):
                    handler.wfile.write(packer.compress(block))
                handler.wfile.write(packer.flush())
                return
            if action == "huge-declared":
                handler.send_header("Content-Length", str(1_500_000_000))
                handler.end_headers()
                handler.wfile.flush()
                self.release.wait(10)
                return
            if action == "drip":
                handler.send_header("Content-Length", "100000")
                handler.end_headers()
                while not self.release.is_set():
                    handler.wfile.write(b" ")
                    handler.wfile.flush()
                    self.release.wait(0.2)
                return
            handler.end_headers()  # huge:MB, without a length: the body runs to the close
            chunk = b" " * 65536
            for _ in range(int(action.partition(":")[2]) * 16):
                handler.wfile.write(chunk)
        except OSError:
            return  # the client hung up, as it should

    def _error(self, handler, source: str, status: int, retry_after: str | None) -> None:
        headers = {"Retry-After": retry_after} if retry_after else {}
        if status == 400 and source == "arxiv":
            body, kind = self.arxiv_error.encode(), "application/atom+xml; charset=utf-8"
        elif status == 400 and source == "openalex":
            body, kind = self.openalex_error.encode(), "application/json"
        elif status == 429 and source == "pubmed":  # NCBI's answer echoes the key it was sent
            body = json.dumps({"error": "API rate limit exceeded", "api-key": "SECRET-KEY-1234", "count": "11",
                               "limit": "10"}).encode()
            kind = "application/json"
        else:
            body, kind = f"<html><body><h1>{status}</h1></body></html>".encode(), "text/html"
        self._send(handler, status, body, kind, headers)

    def _route(self, path: str):
        if path.startswith("/arxiv/") or path == "/api/query":  # the latter: arXiv at the server's root
            return "arxiv", self._arxiv
        if path.startswith("/biorxiv/details/"):
            return path.split("/")[3], self._details
        if path.startswith("/eutils/"):
            return "pubmed", self._eutils
        if path.startswith("/openalex/"):
            return "openalex", self._openalex
        return "unknown", self._unknown

    def _unknown(self, path, params, action):
        raise LookupError(f"no such endpoint: {path}")

    # arXiv ---------------------------------------------------------------------------------------

    def _arxiv(self, path: str, params: dict[str, str], action: str) -> tuple[bytes, str]:
        m = re.search(r"submittedDate:\[(\d{8})\d{4} TO (\d{8})\d{4}\]", params.get("search_query", ""))
        since, until = (_compact(m.group(1)), _compact(m.group(2))) if m else (dt.date.min, dt.date.max)
        chosen = [e for e in self.arxiv_entries
                  if since <= _day(re.search(r"<published>(.*?)</published>", e).group(1)) <= until]
        start, size = int(params.get("start", 0)), int(params.get("max_results", 10))
        page = [] if action == "empty" else chosen[start:start + size]
        if action == "bad-record" and page:
            page[0] = re.sub(r"<title>.*?</title>", "<title></title>", page[0], count=1, flags=re.S)
        total = self.totals.get("arxiv", len(chosen))
        if "arxiv" in self.totals:  # a claimed total: the entries repeat to fill every page
            page = [chosen[(start + k) % len(chosen)] for k in range(size)]
        head = re.sub(r"(<opensearch:totalResults[^>]*>)\d+", rf"\g<1>{total}", self.arxiv_head)
        head = re.sub(r"(<opensearch:startIndex[^>]*>)\d+", rf"\g<1>{start}", head)
        head = re.sub(r"(<opensearch:itemsPerPage[^>]*>)\d+", rf"\g<1>{size}", head)
        return (head + "".join(page) + "\n</feed>\n").encode(), "application/atom+xml; charset=utf-8"

    # bioRxiv / medRxiv ---------------------------------------------------------------------------

    def _details(self, path: str, params: dict[str, str], action: str) -> tuple[bytes, str]:
        parts = path.split("/")  # '', 'biorxiv', 'details', server, since, until, cursor, 'json'
        server, since, until = parts[3], _day(parts[4]), _day(parts[5])
        cursor = int(parts[6]) if len(parts) > 6 else 0
        params.update({"server": server, "since": parts[4], "until": parts[5], "cursor": str(cursor)})
        chosen = [r for r in self.rows[server] if since <= _day(r["date"]) <= until
                  and (not params.get("category") or r["category"] == params["category"].replace("_", " "))]
        if not chosen:
            return self.biorxiv_empty.encode(), "application/json; charset=UTF-8"
        page = [] if action == "empty" else [dict(r) for r in chosen[cursor:cursor + self.biorxiv_page_size]]
        if action == "bad-record" and page:
            del page[0]["doi"]
        if server in self.totals:  # a claimed total: the rows repeat to fill every page
            page = [dict(chosen[(cursor + k) % len(chosen)]) for k in range(self.biorxiv_page_size)]
        message = {"status": "ok", "interval": f"{since}:{until}", "cursor": str(cursor), "count": len(page),
                   "count_new_papers": str(len({r["doi"] for r in chosen})),
                   "total": str(self.totals.get(server, len(chosen)))}
        text = json.dumps({"messages": [message], "collection": page}).replace("/", "\\/")
        return text.encode(), "application/json; charset=UTF-8"

    # PubMed --------------------------------------------------------------------------------------

    def _entrez(self, article: str) -> dt.date:
        m = re.search(r'PubStatus="entrez"><Year>(\d+)</Year><Month>(\d+)</Month><Day>(\d+)</Day>', article)
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))

    def _eutils(self, path: str, params: dict[str, str], action: str) -> tuple[bytes, str]:
        if path.endswith("/esearch.fcgi"):
            since = dt.date(*map(int, params["mindate"].split("/")))
            until = dt.date(*map(int, params["maxdate"].split("/")))
            chosen = [a for a in self.articles if since <= self._entrez(a) <= until]
            with self._lock:
                webenv = "MCID_" + "1".zfill(24) if self.same_webenv else f"MCID_{len(self.history) + 1:024d}"
                self.webenvs.add(webenv)
                self.history[webenv] = chosen
            doc = json.loads(json.dumps(self.esearch))
            doc["esearchresult"].update({"count": str(self.totals.get("pubmed", len(chosen))), "webenv": webenv,
                                         "querytranslation": f"{params['term']} AND {params['mindate']}:"
                                                             f"{params['maxdate']}[edat]"})
            return json.dumps(doc).encode(), "application/json; charset=UTF-8"
        if path.endswith("/efetch.fcgi"):
            chosen = self.history.get(params.get("WebEnv", "")) if params.get("WebEnv") in self.webenvs else None
            if chosen is None:
                return self.efetch_error.encode(), "text/xml; charset=UTF-8"
            start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
            page = [] if action == "empty" else chosen[start:start + size]
            if action == "bad-record" and page:
                page[0] = re.sub(r"<ArticleTitle>.*?</ArticleTitle>", "", page[0], count=1, flags=re.S)
            return (self.pubmed_head + "".join(page) + "</PubmedArticleSet>\n").encode(), "text/xml; charset=UTF-8"
        raise LookupError(f"no such E-utility: {path}")

    def expire_history(self) -> None:
        """Forget every WebEnv, as NCBI does after a while."""
        with self._lock:
            self.webenvs.clear()

    # OpenAlex ------------------------------------------------------------------------------------

    def _openalex(self, path: str, params: dict[str, str], action: str) -> tuple[bytes, str]:
        if not path.endswith("/works"):
            raise LookupError(f"no such endpoint: {path}")
        filters = dict(part.split(":", 1) for part in params.get("filter", "").split(",") if ":" in part)
        since = _day(filters.get("from_publication_date", "0001-01-01"))
        until = _day(filters.get("to_publication_date", "9999-12-31"))
        chosen = [w for w in self.works if since <= _day(w["publication_date"]) <= until]
        cursor = params.get("cursor", "*")
        start = 0 if cursor == "*" or self.cursors else int(base64.urlsafe_b64decode(cursor.encode()).decode())
        size = int(params.get("per_page", 25))
        page = [] if action == "empty" else [dict(w) for w in chosen[start:start + size]]
        if action == "bad-record" and page:
            page[0].pop("title")
            page[0].pop("display_name")
        following = (base64.urlsafe_b64encode(str(start + size).encode()).decode()
                     if page or action == "empty" else None)
        if self.cursors:  # hostile cursors: these, in turn, forever, each page the week's first works
            with self._lock:
                following = self.cursors[sum(1 for name, _, _ in self.log if name == "openalex") % len(self.cursors)]
            page = [dict(w) for w in chosen[:size]]
        meta = {"count": self.totals.get("openalex", len(chosen)), "db_response_time_ms": 12, "page": None,
                "per_page": size, "next_cursor": following, "groups_count": None}
        return json.dumps({"meta": meta, "results": page, "group_by": []}).encode(), "application/json"


def workspace_toml(fake: FakeSources, sources: tuple[str, ...] = (), *, cache: str = "cache", page_size: int = 2,
                   interval: float | None = 0, timeout: float = 10, extra: dict[str, str] | None = None,
                   fetch: str = "", digest: str = "") -> str:
    """A reporter.toml whose [fetch.<source>] tables point at the fake server (interval None: the etiquette)."""
    lines = ['pool = "pool.jsonl"', 'specs = "specs"', 'releases = "releases"', 'site = "site"', digest,
             "[fetch]", f'cache_dir = "{cache}"', f"timeout_seconds = {timeout}", fetch]
    for name in sources:
        lines += [f"[fetch.{name}]", f'base_url = "{fake.base_urls()[name]}"']
        if interval is not None:
            lines.append(f"min_interval_seconds = {interval}")
        if name in ("arxiv", "pubmed", "openalex"):
            lines.append(f"page_size = {page_size}")
        lines += (extra or {}).get(name, "").splitlines()
    return "\n".join(lines) + "\n"


def write_workspace(root: Path, fake: FakeSources, sources: tuple[str, ...] = ALL, **options) -> Path:
    """Write root/reporter.toml (workspace_toml) and return root."""
    (root / "reporter.toml").write_text(workspace_toml(fake, sources, **options))
    return root


@pytest.fixture(name="fake")
def fake_server():
    """The `fake` fixture: a fake server whose bioRxiv serves 2 rows a call (so a week takes several pages),
    closed after the test."""
    server = FakeSources(biorxiv_page_size=2)
    yield server
    server.close()


WALL_START = 1_780_272_000.0
"""2026-06-01T00:00:00Z: the wall clock of a fetch starts after 2026-W20 (the fixtures' week) has settled."""


class FakeClock:
    """The clock, sleep and wall clock of a fetch: sleeping only moves the clock (and is recorded)."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds

    def wall(self) -> float:
        return WALL_START + self.now


WEEK_20 = Window(dt.date(2026, 5, 11), dt.date(2026, 5, 17))
"""2026-W20, asked after it ended: the week of the fixtures."""


@contextlib.contextmanager
def local_only():
    """Fail the test at once if anything looks up a host other than 127.0.0.1 (no test touches the internet)."""
    real = socket.getaddrinfo

    def lookup(host, *args, **kwargs):
        if host not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"a test tried to reach {host}: point every [fetch.<source>] at the fake server")
        return real(host, *args, **kwargs)

    socket.getaddrinfo = lookup
    try:
        yield
    finally:
        socket.getaddrinfo = real


def run_fetch(root: Path, names: tuple[str, ...], window: Window = WEEK_20, *, clock: FakeClock | None = None,
              environ: dict[str, str] | None = None, transport=None, **options) -> FetchResult:
    """fetch_sources for the workspace in `root`, waits on a FakeClock, jitter seeded, no progress lines."""
    clock = clock or FakeClock()
    ws = load_workspace(root)
    runtime = Runtime(environ or {}, transport=transport or http_transport, clock=clock.clock, sleep=clock.sleep,
                      wall=clock.wall, rng=random.Random(0))
    with local_only():
        return fetch_sources(ws.fetch, names, window, runtime, progress=False, **options)


LAUNCH = ("import sys; from reporter import cli; cli.COMMAND_MODULES = ('reporter.commands.fetch', "
          "'reporter.commands.digest'); sys.exit(cli.main(sys.argv[1:]))")
"""`python -c LAUNCH fetch ...`: `reporter fetch` (and `digest`) as a process, before cli.py lists fetch."""


def cli_main(argv: list[str]) -> int:
    """`reporter ARGV` in this process with only the fetch and digest commands registered (fast to import)."""
    from reporter import cli

    saved = cli.COMMAND_MODULES
    cli.COMMAND_MODULES = ("reporter.commands.fetch", "reporter.commands.digest")
    try:
        with local_only():
            return cli.main(argv)
    finally:
        cli.COMMAND_MODULES = saved
