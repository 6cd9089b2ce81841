"""The site's manifest, read: the one reader of `SITE/manifest.json` (the writer, writer.py, writes it last).

The manifest lists every file of the built site with its sha256, size,
whether it is archived and the site version that wrote it. The site's
writer reads it to know which archived pages an earlier version published;
`reporter mail` reads it to send only an e-mail edition the site vouches for.
Both read it here, under MANIFEST_CAP (a larger file, a folder or a FIFO is
refused before it is read). A manifest that is missing, not JSON or not an
object vouches for nothing (`problem` says why); an entry whose fields are not
of the types the writer writes is not listed (a hostile manifest can make a
page unknown, never known under a wrong version).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError
from ..files import MiB, parse_json, read_capped

MANIFEST = "manifest.json"
"""The manifest's name, at the site's root."""
MANIFEST_CAP = 128 * MiB
"""The largest manifest.json read: an entry is about 200 bytes, so over 600,000 files (a year of weekly releases
of 2,000 rules each is about 210,000 pages); docs/limits.md."""


@dataclass(frozen=True)
class SiteFile:
    """One file of the site as the manifest records it."""

    sha256: str
    """The hex sha256 of its bytes as written."""
    bytes: int | None
    """Its size (None when the entry does not say)."""
    archived: bool
    """Archived: a published page never rewritten within its site version."""
    site_version: int
    """The site version that wrote it (1 for manifests from before site versions were recorded)."""


@dataclass(frozen=True)
class SiteManifest:
    """The manifest of a built site, read."""

    path: Path
    """The manifest file."""
    files: Mapping[str, SiteFile]
    """Path (relative to the site) -> its entry; empty when the manifest vouches for nothing."""
    problem: str | None = None
    """Why the manifest vouches for nothing (`missing`, `not valid JSON (...)`, ...), else None."""

    def sha256(self, relative: str) -> str | None:
        """The sha256 the manifest records for a file of the site, or None when it records none."""
        entry = self.files.get(relative)
        return entry.sha256 if entry is not None else None


def manifest_path(site: Path) -> Path:
    """Where a site keeps its manifest."""
    return Path(site) / MANIFEST


def read_manifest(site: Path) -> SiteManifest:
    """The manifest of the site at `site`. InputError (naming the file) when it is larger than MANIFEST_CAP or
    not a regular file; a missing one, or one that is not a JSON object, reads as vouching for nothing."""
    path = manifest_path(site)
    try:
        data = read_capped(path, MANIFEST_CAP, "site manifest")
    except FileNotFoundError:
        return SiteManifest(path, MappingProxyType({}), "missing")
    try:
        doc = parse_json(data, str(path))
    except InputError as exc:
        return SiteManifest(path, MappingProxyType({}), str(exc).removeprefix(f"{path}: "))
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        return SiteManifest(path, MappingProxyType({}), "not a site manifest (a JSON object with its files)")
    found = {p: f for p, f in ((p, _entry(e)) for p, e in files.items()) if f is not None}
    return SiteManifest(path, MappingProxyType(found))


def _entry(entry: Any) -> SiteFile | None:
    """An entry as the writer writes it, or None when a field is missing or of another type."""
    if not isinstance(entry, dict):
        return None
    sha, size = entry.get("sha256"), entry.get("bytes")
    archived, version = entry.get("archived", False), entry.get("site_version", 1)
    if (not isinstance(sha, str) or not isinstance(archived, bool) or isinstance(version, bool)
            or not isinstance(version, int) or (size is not None and (isinstance(size, bool)
                                                                    or not isinstance(size, int)))):
        return None
    return SiteFile(sha, size, archived, version)
