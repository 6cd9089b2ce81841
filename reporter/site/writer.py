"""The one writer of the output folder.

It gathers every file first, then checks the archive, then writes: each
path once, never outside the root, an archived page never changed (unless
`--rerender-archive`, which keeps the old file beside the new one), and a
manifest of content hashes at the end.

Archived pages carry the site version that wrote them (`SITE_VERSION`, in
the manifest). A page an earlier site version archived, still byte-for-byte
as the manifest records it, is kept as it is when this version would render
it differently: a new layout applies to releases published from now on,
and the pages already published stay as they were. Within one site version a
change to an archived page is refused, as is a page edited on disk. Nothing is written when a check fails,
and nothing is changed when a write fails (a full disk): every changed file
is written under a temporary name first and renamed into place only once all
are written. Runs committing into one site take turns (a lock on the folder).
"""

from __future__ import annotations

import contextlib
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, InternalError
from ..files import read_capped, replace_files, resource_error
from ..hashing import dump_json, sha256_bytes
from ..locks import locked, remove_debris
from ..plurals import count
from .manifest import MANIFEST, SiteFile, read_manifest

SITE_VERSION = 8
"""The layout of archived pages. Bump it with every change to what an archived page (a release, rule or
digest week page, or a file beside one) looks like: pages archived by an earlier version are then kept as
they were instead of refused, and only `--rerender-archive` rewrites them. 1: the layout until issue 12
(manifests without `site_version`); 2: the summary-first release page, paper links, CSV files, print styles;
3: the top-to-bottom flow diagram, the glossary link, counts with their noun, phone and print tables (issue 26);
4: the digest week page with each paper's authors and abstract, REVIEW by why and DROP by rationale (issue 23);
5: the week page's "Listed again" section and the criteria judge's week (issue 23 item 6, issue 24 item 7; bumped
in issue 30, item 11, after a site of version 4 stopped the build); 6: the judge's tables in a scrolling table box with
right-aligned numbers, and a contents entry for the judge's section and for the diff's "Rules whose wins changed
most" (issue 31, item 7); 7: the release page's generated-pool banner in the page's words, from the marker's seed
and rows (issue 37, item 10); 8: the flow diagram's stacked phone layout, hold and pending drawn as waiting, long
tables folded, the next step's style, each section's sentence in both twins, the rule page's counts before its spec
and its release by label (issue 37, items 5, 6, 11). tests/golden/archived-pages.json holds each
archived golden page's sha256 for this version: a test fails when one changes and this number does not."""


@dataclass(frozen=True)
class WriteReport:
    """What a build did to the output folder."""

    written: tuple[str, ...]
    """Paths whose bytes were new or changed."""
    unchanged: tuple[str, ...]
    """Paths already on disk with the same bytes (not touched)."""
    superseded: tuple[str, ...]
    """Old archived files kept beside their re-rendered versions (--rerender-archive)."""
    kept: tuple[str, ...]
    """Archived files of an earlier site version left as they were, though this version renders them otherwise."""
    largest: tuple[str, int]
    """The largest file of the build and its size in bytes."""


class SiteWriter:
    """Collects the files of one build, then writes them all or none."""

    def __init__(self, root: Path, *, rerender_archive: bool = False):
        self.root = Path(root)
        self.rerender_archive = rerender_archive
        self.files: dict[str, tuple[bytes, bool]] = {}

    def add(self, path: str, content: str | bytes, *, archived: bool) -> None:
        """Queue one file; a second file at the same path is a bug."""
        _check_path(path)
        if path == MANIFEST:
            raise InternalError(f"{path}: reserved for the manifest")
        if path in self.files:
            raise InternalError(f"{path}: written twice in one build")
        data = content.encode("utf-8") if isinstance(content, str) else content
        self.files[path] = (data, archived)

    def check(self) -> None:
        """Refuse the build (InputError, nothing written) if it would change an archived page or a folder is in the way."""
        self._plan()

    def _plan(self) -> tuple[Path, dict[str, Path], list[str], list[str], list[str], dict[str, SiteFile]]:
        root = self.root.resolve()
        targets = {path: _inside(root, path) for path in sorted(self.files)}
        published = read_manifest(root).files  # none when it is missing or unreadable: nothing is kept then
        changed, unchanged, conflicts, kept = [], [], [], {}
        for path, target in targets.items():
            data, archived = self.files[path]
            on_disk = target.read_bytes() if target.is_file() else None
            if on_disk == data:
                unchanged.append(path)
                continue
            if target.exists() and not target.is_file():
                raise InputError(f"{target}: a folder stands where the site writes a file")
            if archived and on_disk is not None:
                entry = published.get(path)
                if (not self.rerender_archive and entry is not None and entry.archived
                        and entry.site_version < SITE_VERSION
                        and entry.sha256 == sha256_bytes(on_disk)):
                    kept[path] = entry  # an earlier version's page, as published: it stays
                    continue
                conflicts.append(path)
            changed.append(path)
        if conflicts and not self.rerender_archive:
            shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
            raise InputError(
                f"{root}: {count(len(conflicts), 'archived page')} would change: {shown}. A published release page "
                f"is never rewritten; a changed template is a new site version (reporter.site.writer.SITE_VERSION). "
                f"Render into a new --out folder, or pass --rerender-archive to re-render them and keep each old "
                f"file beside the new one")
        return root, targets, changed, unchanged, conflicts, kept

    def commit(self) -> WriteReport:
        """Check the archive again and write every changed file, then the manifest: all or nothing.

        Under the site folder's lock, so two runs committing into one site take
        turns. Temporary files that killed runs left in the site are removed
        first. A write that fails (no space left, a read-only file system)
        leaves the site as it was and is reported as an InputError naming the
        folder and the cause.
        """
        existed = self.root.exists()
        with locked(self.root):
            remove_debris(self.root)
            root, targets, changed, unchanged, conflicts, kept = self._plan()
            writes: dict = {}
            superseded = []
            for path in conflicts:
                old = targets[path].read_bytes()
                stem, ext = posixpath.splitext(path)
                keep = f"{stem}.superseded-{sha256_bytes(old)[:12]}{ext}"
                writes[_inside(root, keep)] = old
                superseded.append(keep)
            # Deepest first, so a page is in place before the pages that link to it (home last).
            for path in sorted(changed, key=lambda p: (-p.count("/"), p)):
                writes[targets[path]] = self.files[path][0]
            files = {path: {"sha256": sha256_bytes(data), "bytes": len(data),
                            "archived": archived, "site_version": SITE_VERSION}
                     for path, (data, archived) in sorted(self.files.items())}
            for path, entry in kept.items():
                files[path] = {"sha256": entry.sha256,
                               "bytes": entry.bytes if entry.bytes is not None else targets[path].stat().st_size,
                               "archived": True, "site_version": entry.site_version}
            manifest = {"schema_version": 1, "site_version": SITE_VERSION, "files": files,
                        "superseded": sorted(superseded)}
            manifest_file = _inside(root, MANIFEST)
            manifest_bytes = dump_json(manifest).encode("utf-8")
            if writes or not _holds(manifest_file, manifest_bytes):
                writes[manifest_file] = manifest_bytes  # last: a site with its manifest is complete
            try:
                if writes:
                    replace_files(writes, root)
            except OSError as exc:
                cause = resource_error(exc)
                if not existed:
                    with contextlib.suppress(OSError):
                        self.root.rmdir()  # made by this run, and empty again
                if cause is None:
                    raise
                raise InputError(f"{root}: could not write the site: {cause}. Nothing was changed: "
                                 f"the site is as it was before this run") from None
        largest = max(((p, len(d)) for p, (d, _a) in self.files.items()), key=lambda x: (x[1], x[0]),
                      default=("", 0))
        return WriteReport(tuple(changed), tuple(unchanged), tuple(superseded), tuple(sorted(kept)), largest)


def _holds(path: Path, data: bytes) -> bool:
    """Whether a regular file at `path` holds exactly `data` (read only when its size is that of `data`)."""
    try:
        return path.stat().st_size == len(data) and read_capped(path, len(data), "site page") == data
    except (FileNotFoundError, InputError):
        return False


def _check_path(path: str) -> None:
    parts = path.split("/")
    if (not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts)
            or ":" in path):
        raise InternalError(f"{path!r}: not a plain relative path inside the site")


def _inside(root: Path, path: str) -> Path:
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise InputError(f"{root / path}: resolves outside the output folder {root} (a symlink?)")
    return target


