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

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..files import read_index, release_folders
from ..hashing import sha256_file
from ..naming import is_safe_segment
from .artifact_checks import (INPUT_NAMES, LABELS_KEYS, MANIFEST_KEYS, SAMPLES_KEYS, STATS_KEYS, check_ids,
                              check_published, check_stats, context_chars, read_doc)
from .artifact_records import (LabelFindings, LabelRule, LostInclude, LostIncludes, Manifest, OverlapMatrix,
                               OverlayCounts, Pile, PoolCounts, RuleRows, RuleStat, RuleStats)
from .artifact_samples import Context, Evidence, RuleSamples, SampleWork, Samples
from .published import PUBLISHED_FILE

__all__ = ["INPUT_NAMES", "Context", "Evidence", "LabelFindings", "LabelRule", "LostInclude", "LostIncludes",
           "Manifest", "OverlapMatrix", "OverlayCounts", "Pile", "PoolCounts", "Published", "Release", "ReleaseSet",
           "RuleRows", "RuleSamples", "RuleStat", "RuleStats", "SampleWork", "Samples", "check_stats",
           "load_published", "load_release", "load_releases"]


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
        """routing.parquet (read only by the release diff)."""
        return self.folder / "routing.parquet"

    def check_file(self, name: str) -> None:
        """Refuse a release file whose bytes differ from the digest release.json recorded for it.

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
    manifest = read_doc(rdir / "release.json", MANIFEST_KEYS)
    stats = read_doc(rdir / "rule_stats.json", STATS_KEYS)
    samples = read_doc(rdir / "samples.json", SAMPLES_KEYS)
    window = context_chars(samples, manifest, rdir / "samples.json")
    labels_file = rdir / "labels.json"
    labels = read_doc(labels_file, LABELS_KEYS) if labels_file.exists() else None
    check_ids(rdir, release_id, manifest, stats)
    check_stats(stats, rdir / "rule_stats.json")
    release = Release(release_id=release_id, folder=rdir, manifest=Manifest.from_doc(manifest),
                      stats=RuleStats.from_doc(stats), samples=Samples.from_doc(samples, window),
                      labels=LabelFindings.from_doc(labels) if labels is not None else None,
                      published=load_published(rdir / PUBLISHED_FILE))
    for name in ("rule_stats.json", "samples.json"):
        release.check_file(name)  # routing.parquet is checked where it is read (the diff)
    return release


def load_published(path: Path) -> Published | None:
    """Read published.json beside a release (None without one): `{"label": str|null, "first_written": "YYYY-MM-DD"}`."""
    if not path.exists():
        return None
    name, written = check_published(read_doc(path, ("first_written",)), path)
    return Published(name=name, first_written=written)

