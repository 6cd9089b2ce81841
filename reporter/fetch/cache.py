"""The raw-answer cache: every answered page on disk, by request, written before it is parsed.

One file per request, `CACHE/<source>/<key[:2]>/<key>.page`, where the key is
the sha256 of the request's URL without the etiquette parameters (`tool`,
`email`, `mailto`) and without any key (`api_key`): the same question asked
by another user, or with another key, is the same page. A file holds one
line of JSON (the URL as shown, the status, the content type, and `final`:
whether the days the answer covers had settled when it was asked, by the
real clock), then the answer's bytes exactly as they came. An answer that is
not final serves only a request for an open window (keyed by the day it was
asked), never the same window asked once it has ended. Writes go through reporter/files.py
(temporary name, then rename), so a fetch killed at any point (`kill -9`
included) leaves whole pages or none; the next run removes the killed
run's temporaries and asks only the pages that are missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..files import read_capped, write_bytes
from ..hashing import sha256_text
from ..locks import remove_debris
from .config import DEFAULT_MAX_PAGE_BYTES

SUFFIX = ".page"
HEAD_BYTES = 64 * 1024
"""Room for a page's head line (URL, status, content type, final) beside its body of at most `max_page_bytes`."""


@dataclass(frozen=True)
class RawCache:
    """The cache folder of one workspace ([fetch] cache_dir)."""

    root: Path
    """The folder; made on first write."""
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    """[fetch] max_page_bytes: a stored body larger than this is no answer (and its file is never read whole)."""

    def sweep(self) -> list[Path]:
        """Remove the temporaries of killed runs (never a live run's: reporter.locks.remove_debris)."""
        return remove_debris(self.root)

    def path(self, source: str, key: str) -> Path:
        """Where the answer to a request with this key is stored."""
        return self.root / source / key[:2] / f"{key}{SUFFIX}"

    def get(self, source: str, key: str, *, final_only: bool = False) -> bytes | None:
        """The stored answer's bytes, or None when the request was never answered (or the file is unreadable).

        `final_only`: None for an answer not marked final (asked before its days had settled, or written
        before the cache marked answers so): it is asked again. So is a file larger than a page may be (read
        with files.read_capped: a link to a huge file is never read whole) or not a regular file (a FIFO never
        blocks the fetch).
        """
        try:
            data = read_capped(self.path(source, key), self.max_page_bytes + HEAD_BYTES, "fetch cache page")
        except (OSError, InputError):
            return None
        head, sep, body = data.partition(b"\n")
        try:
            meta = json.loads(head)
        except (ValueError, RecursionError):
            return None  # not a page this cache wrote: asked again
        if (not sep or not isinstance(meta, dict) or (final_only and meta.get("final") is not True)
                or len(body) > self.max_page_bytes):
            return None
        return body

    def put(self, source: str, key: str, url: str, content_type: str | None, body: bytes, *,
            final: bool = True) -> None:
        """Store an answer atomically: one JSON line (url, status, content type, final), then the bytes."""
        head = json.dumps({"url": url, "status": 200, "content_type": content_type, "final": final},
                          sort_keys=True)
        path = self.path(source, key)
        try:
            write_bytes(path, head.encode("utf-8") + b"\n" + body)
        except IsADirectoryError:
            raise InputError(f"{path}: a folder stands where the fetch cache ([fetch] cache_dir) keeps this page; "
                             f"remove it (the cache is only pages this tool wrote)") from None

    def evict(self, source: str, key: str) -> None:
        """Forget a stored answer that turned out not to be a whole page (it is asked again)."""
        self.path(source, key).unlink(missing_ok=True)


def request_key(text: str) -> str:
    """The cache key of a request: the sha256 of its keyed text (Request.key_text)."""
    return sha256_text(text)
