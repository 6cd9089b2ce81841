"""The typed reader of a releases folder as `reporter route --out` wrote it (docs/release-format.md).

Routing writes release.json (release.py), rule_stats.json (stats.py),
samples.json (samples.py), labels.json (labels.py) and published.json
(published.py); this module reads them back into frozen records, so the
release schema is known here, beside its writers, and nowhere else. The
site reads a release only through these records and never re-runs routing.
Everything is checked on the way in (artifact_checks.py), so a bad folder
is one clear error naming the file and the field, before any page is built.
The records are those of artifact_records.py and artifact_samples.py, all
imported from here.

The records hold tuples and read-only mappings. Three fields keep JSON as
routing wrote it, because the pages print it as JSON: a rule's `spec` and
`domain`, and the manifest's `normalisation` settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..errors import InputError, InternalError
from ..hashing import sha256_file
from ..naming import is_safe_segment
from .artifact_checks import (INPUT_NAMES, LABELS_KEYS, MANIFEST_KEYS, SAMPLES_KEYS, STATS_KEYS, check_ids,
                              check_published, check_stats, context_chars, read_doc)
from .artifact_records import (LabelFindings, LabelRule, LostInclude, LostIncludes, Manifest, OverlapMatrix,
                               OverlayCounts, Pile, PoolCounts, RuleRows, RuleStat, RuleStats)
from .artifact_samples import Context, Evidence, RuleSamples, SampleWork, Samples
from .index import MANIFEST_FILE, read_index, release_folders
from .published import PUBLISHED_FILE
from .routing_table import ROUTING_FILE, read_routing, routing_file

from .folder import RELEASE_FILES, SAMPLES_FILE, STATS_FILE
"""Every count of the release (RuleStats)."""
"""The seeded samples (Samples)."""

__all__ = ["INPUT_NAMES", "Context", "Evidence", "LabelFindings", "LabelRule", "LostInclude", "LostIncludes",
           "Manifest", "OverlapMatrix", "OverlayCounts", "Pile", "PoolCounts", "Published", "Release", "ReleaseSet",
           "RuleRows", "RuleSamples", "RuleStat", "RuleStats", "SampleWork", "Samples", "check_stats",
           "load_published", "load_release", "load_releases", "read_manifest", "read_stats"]


@dataclass(frozen=True)
class Published:
    """published.json: how people name a release, and when it was first written (not part of its id)."""

    name: str | None
    """The release's name given when it was routed (`--label 2026-W27`; the file's `label`), or None."""
    first_written: str
    """The date the release folder was first written, ISO `YYYY-MM-DD`."""


@dataclass(frozen=True)
class Release:
    """One release folder, read and checked."""

    release_id: str
    """The 64-hex id (the folder's name)."""
    folder: Path
    """The release folder."""
    manifest: Manifest
    """release.json: the six input digests, engine version, rows, the digest of every other file."""
    stats: RuleStats
    """rule_stats.json: every count the release page shows."""
    samples: Samples
    """samples.json: seeded samples per pile and per rule."""
    labels: LabelFindings | None
    """labels.json (what the review labels say of each rule) when labels were given, else None."""
    published: Published | None = None
    """published.json (name and first-written date) when the routing side wrote one, else None."""

    @property
    def routing(self) -> Path:
        """The routing table's path (for messages; read it with `read_routing`)."""
        return routing_file(self.folder)

    def read_routing(self, columns: Sequence[str], *, dictionary: Sequence[str] = ()) -> pa.Table:
        """Columns of the release's routing table (`routing_table.read_routing`), its bytes first checked against
        the digest the manifest records (a table edited since it was published is refused, not read)."""
        if self.routing.is_file():
            self.check_file(ROUTING_FILE)
        return read_routing(self.folder, columns, dictionary=dictionary)

    def check_file(self, name: str) -> None:
        """Refuse a release file whose bytes differ from the digest the manifest recorded for it.

        Releases of engines before routing.3 recorded no file digests; theirs are not checked.
        """
        recorded = self.manifest.files.get(name)
        if recorded is not None and sha256_file(self.folder / name) != recorded:
            raise InputError(f"{self.folder / name}: its bytes differ from the sha256 release.json records; "
                             f"a published release is never edited. Restore the file (or route again into a "
                             f"fresh releases folder)")


@dataclass(frozen=True)
class ReleaseSet:
    """Every release of a releases folder, oldest first (index.json order)."""

    folder: Path | None
    """The releases folder (None: a digest-only workspace has none, and so no release)."""
    releases: tuple[Release, ...]
    """Releases in first-written order; the last is the latest."""
    unlisted: tuple[str, ...]
    """Sub-folders holding a release.json that index.json does not list (not rendered)."""


def load_releases(folder: Path, staged: Release | None = None) -> ReleaseSet:
    """Read index.json and every release it lists; an absent or empty folder has none.

    `staged` is a release as `reporter build` staged it, with the label findings
    of this build (it renders before it publishes): it stands in for the listed
    release of the same id, or is added as the newest.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: not a folder; --releases names the folder `reporter route --out` wrote")
    ids = read_index(folder)  # refuses release folders without their index.json, saying how to restore it
    # Hidden folders are a run's temporary folders (a staged or interrupted release), never releases.
    found_ids = release_folders(folder)
    releases = tuple(staged if staged is not None and rid == staged.release_id else load_release(folder, rid)
                     for rid in ids)
    unlisted = tuple(rid for rid in found_ids if rid not in set(ids))
    if staged is not None and staged.release_id not in ids:
        releases += (staged,)
        unlisted = tuple(rid for rid in unlisted if rid != staged.release_id)
    return ReleaseSet(folder=folder, releases=releases, unlisted=unlisted)


def load_release(folder: Path, release_id: str, rdir: Path | None = None) -> Release:
    """Read and check one release folder named in index.json (or staged in rdir, not yet published)."""
    if not is_safe_segment(release_id):
        raise InputError(f"{folder / 'index.json'}: release id {release_id!r} is not a plain folder name")
    rdir = folder / release_id if rdir is None else rdir
    if not rdir.is_dir():
        raise InputError(f"{rdir}: index.json lists release {release_id} but its folder is missing")
    manifest = read_doc(rdir / MANIFEST_FILE, MANIFEST_KEYS)
    stats = read_doc(rdir / STATS_FILE, STATS_KEYS)
    samples = read_doc(rdir / SAMPLES_FILE, SAMPLES_KEYS)
    window = context_chars(samples, manifest, rdir / SAMPLES_FILE)
    labels_file = rdir / "labels.json"
    labels = read_doc(labels_file, LABELS_KEYS) if labels_file.exists() else None
    check_ids(rdir, release_id, manifest, stats)
    check_stats(stats, rdir / STATS_FILE)
    release = Release(release_id=release_id, folder=rdir, manifest=Manifest.from_doc(manifest),
                      stats=RuleStats.from_doc(stats), samples=Samples.from_doc(samples, window),
                      labels=LabelFindings.from_doc(labels) if labels is not None else None,
                      published=load_published(rdir / PUBLISHED_FILE))
    for name in (STATS_FILE, SAMPLES_FILE):
        release.check_file(name)  # the routing table is checked where it is read (the diff)
    return release


def read_manifest(release_dir: Path) -> Manifest:
    """One release folder's release.json, checked and typed: what the stages that work on one release (screening's
    scope, certify's strata) read of its inputs, without the samples and pages `load_release` reads."""
    path = Path(release_dir) / MANIFEST_FILE
    doc = read_doc(path, MANIFEST_KEYS)
    if not isinstance(doc["release_id"], str) or not doc["release_id"] or not isinstance(doc["inputs"], dict):
        raise InputError(f"{path}: release_id must be the release's id and inputs an object (see "
                         f"docs/release-format.md); is {release_dir} a release folder written by `reporter route` "
                         f"or `reporter build`?")
    for name in INPUT_NAMES:
        if name not in doc["inputs"]:
            raise InputError(f"{path}: inputs.{name} is missing; the six inputs are " + ", ".join(INPUT_NAMES))
    return Manifest.from_doc(doc)


def read_stats(release_dir: Path) -> RuleStats:
    """One release folder's rule_stats.json, checked (artifact_checks.check_stats) and typed: its piles in
    piles.json order with their kind and tier, its rules, every count."""
    path = Path(release_dir) / STATS_FILE
    doc = read_doc(path, STATS_KEYS)
    check_stats(doc, path)
    return RuleStats.from_doc(doc)


def published_stats(final: Path, inputs: Mapping[str, str]) -> RuleStats | None:
    """The statistics of the release already published at `final` for these input digests, its files checked
    against the digests its release.json records: `reporter route` and `reporter build` then route nothing.
    None when there is none (or it records no digests: the run routes and compares bytes). A folder whose
    files differ is refused, as a re-route would refuse it."""
    if not (final / MANIFEST_FILE).is_file():
        return None
    manifest = read_manifest(final)
    if dict(manifest.inputs) != dict(inputs) or not manifest.files:
        return None
    for name in RELEASE_FILES[1:]:
        if not (final / name).is_file() or sha256_file(final / name) != manifest.files.get(name):
            raise InternalError(f"{final}: a release with this id exists but its {name} differs from the digest its "
                                f"release.json records; releases are immutable and routing is deterministic, so the "
                                f"folder was edited. Move the folder aside to rebuild it.")
    return read_stats(final)


def load_published(path: Path) -> Published | None:
    """Read published.json beside a release (None without one): `{"label": str|null, "first_written": "YYYY-MM-DD"}`."""
    if not path.exists():
        return None
    name, written = check_published(read_doc(path, ("first_written",)), path)
    return Published(name=name, first_written=written)

