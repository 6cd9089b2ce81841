"""Read a releases folder as `reporter route --out` wrote it (docs/release-format.md).

The site reads only these files and never re-runs routing. Everything is
checked on the way in, so a bad folder is one clear error naming the file
and the field, before any page is built.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_index, release_folders
from ..hashing import sha256_file
from ..routing.published import LABEL_CHARS, PUBLISHED_FILE
from .links import is_safe_segment

STATS_KEYS = ("release_id", "rows", "identity_holds", "piles", "pile_order", "pending",
              "title_only", "pool", "overlay", "rules", "overlap")
RULE_KEYS = ("id", "pile", "precedence", "shadow", "matched", "won", "no_text", "outranked",
             "would_win", "would_move", "domain", "domain_rows", "domain_matched",
             "domain_miss", "domain_miss_winners", "outranked_by", "spec")
MANIFEST_KEYS = ("release_id", "inputs", "engine_version", "rows")
INPUT_NAMES = ("pool", "overlay", "specs", "piles", "normalisation", "engine")


@dataclass(frozen=True)
class Published:
    """published.json: how people name a release, and when it was first written (not part of its id)."""

    label: str | None
    """The label given when it was routed (`2026-W27`), or None."""
    first_written: str
    """The date the release folder was first written, ISO `YYYY-MM-DD`."""


@dataclass(frozen=True)
class Release:
    """One release folder, read and checked; the compute layer's view of it."""

    release_id: str
    """The 64-hex id (the folder's name)."""
    folder: Path
    """The release folder."""
    manifest: dict[str, Any]
    """release.json: the six input digests, engine version, rows."""
    stats: dict[str, Any]
    """rule_stats.json: every count the release page shows."""
    samples: dict[str, Any]
    """samples.json: seeded samples per pile and per rule."""
    labels: dict[str, Any] | None
    """labels.json when labels were given (status page only), else None."""
    published: Published | None = None
    """published.json (label and first-written date) when the routing side wrote one, else None."""

    @property
    def routing(self) -> Path:
        """routing.parquet (read only by the release diff)."""
        return self.folder / "routing.parquet"

    def check_file(self, name: str) -> None:
        """Refuse a release file whose bytes differ from the digest release.json recorded for it.

        Releases of engines before routing.3 recorded no file digests; theirs are not checked.
        """
        recorded = self.manifest.get("files", {}).get(name)
        if recorded is not None and sha256_file(self.folder / name) != recorded:
            raise InputError(f"{self.folder / name}: its bytes differ from the sha256 release.json records; "
                             f"a published release is never edited. Restore the file (or route again into a "
                             f"fresh releases folder)")


@dataclass(frozen=True)
class ReleaseSet:
    """Every release of a releases folder, oldest first (index.json order)."""

    folder: Path
    """The releases folder."""
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
    manifest = _read_doc(rdir / "release.json", MANIFEST_KEYS)
    stats = _read_doc(rdir / "rule_stats.json", STATS_KEYS)
    samples = _read_doc(rdir / "samples.json", ("seed", "k", "piles", "rules"))
    if "context_chars" not in samples:
        if not str(manifest.get("engine_version", "")).endswith("+routing.1"):
            raise InputError(f"{rdir / 'samples.json'}: lacks the field 'context_chars' (see docs/release-format.md)")
        # Releases of engine routing.1 cut their samples with 80 characters either side but did not say so.
        samples = {**samples, "context_chars": 80}
    labels_file = rdir / "labels.json"
    labels = _read_doc(labels_file, ("rules", "lost_includes")) if labels_file.exists() else None
    for name, doc in (("release.json", manifest), ("rule_stats.json", stats)):
        if doc["release_id"] != release_id:
            raise InputError(f"{rdir / name}: release_id {doc['release_id']!r} differs from its folder name")
    for name in INPUT_NAMES:
        if name not in manifest["inputs"]:
            raise InputError(f"{rdir / 'release.json'}: inputs.{name} is missing; the six inputs are "
                             + ", ".join(INPUT_NAMES))
    check_stats(stats, rdir / "rule_stats.json")
    release = Release(release_id=release_id, folder=rdir, manifest=manifest, stats=stats,
                      samples=samples, labels=labels, published=load_published(rdir / PUBLISHED_FILE))
    for name in ("rule_stats.json", "samples.json"):
        release.check_file(name)  # routing.parquet is checked where it is read (the diff)
    return release


def load_published(path: Path) -> Published | None:
    """Read published.json beside a release (None without one): `{"label": str|null, "first_written": "YYYY-MM-DD"}`."""
    if not path.exists():
        return None
    doc = _read_doc(path, ("first_written",))
    label, written = doc.get("label"), doc["first_written"]
    if label is not None and not (isinstance(label, str) and label.strip() and len(label) <= LABEL_CHARS
                                  and label.isprintable()):
        raise InputError(f"{path}: label must be null or one line of printable text of at most {LABEL_CHARS} "
                         f"characters, not {label!r}")
    try:
        day = dt.date.fromisoformat(written) if isinstance(written, str) and len(written) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise InputError(f"{path}: first_written must be an ISO date (YYYY-MM-DD), not {written!r}")
    return Published(label=label.strip() if label is not None else None, first_written=day.isoformat())


def check_stats(stats: dict[str, Any], file: Path) -> None:
    """Refuse statistics whose identities do not hold: the page must never show a broken count."""
    for i, rule in enumerate(stats["rules"]):
        for key in RULE_KEYS:
            if key not in rule:
                raise InputError(f"{file}: rules[{i}] ({rule.get('id', '?')}) lacks {key!r}")
        if rule["shadow"]:
            if rule["won"] or rule["no_text"] or rule["outranked"]:
                raise InputError(f"{file}: shadow rule {rule['id']} has won, no_text or outranked counts; "
                                 f"a shadow rule never wins")
            continue
        total = rule["won"] + rule["no_text"] + rule["outranked"]
        if rule["matched"] != total:
            raise InputError(f"{file}: rule {rule['id']}: matched {rule['matched']} != won + no_text + "
                             f"outranked {total}; the identity must hold (re-route this release)")
    if not stats["identity_holds"]:
        raise InputError(f"{file}: identity_holds is false; the release cannot be published")
    names = [p["name"] for p in stats["pile_order"]]
    if sorted(names) != sorted(stats["piles"]):
        raise InputError(f"{file}: pile_order names {names} but piles has {sorted(stats['piles'])}")
    if sum(stats["piles"].values()) != stats["rows"]:
        raise InputError(f"{file}: the piles hold {sum(stats['piles'].values())} rows, not rows={stats['rows']}")
    pending = [p["name"] for p in stats["pile_order"] if p.get("kind") == "pending"]
    if len(pending) != 1:
        raise InputError(f"{file}: pile_order must list exactly one pile of kind 'pending', not {len(pending)}")
    if sum(stats["pending"].values()) != stats["piles"][pending[0]]:
        raise InputError(f"{file}: pending reasons sum to {sum(stats['pending'].values())}, "
                         f"not piles.{pending[0]}={stats['piles'][pending[0]]}")
    live = [r for r in stats["rules"] if not r["shadow"]]
    for pile in stats["pile_order"]:
        if pile["kind"] == "pending":  # the engine-owned pile, whatever piles.json names it
            continue
        won = sum(r["won"] for r in live if r["pile"] == pile["name"])
        if won != stats["piles"][pile["name"]]:
            raise InputError(f"{file}: rules of pile {pile['name']} won {won} rows, "
                             f"not piles.{pile['name']}={stats['piles'][pile['name']]}")
    no_text = sum(r["no_text"] for r in live)
    if no_text != stats["pending"].get("no_text", 0):
        raise InputError(f"{file}: no_text over all rules is {no_text}, "
                         f"not pending.no_text={stats['pending'].get('no_text', 0)}")
    sources = stats.get("sources")
    if sources is not None:  # per-source counts, from the engine that writes them (optional before it)
        if not (isinstance(sources, dict) and all(isinstance(n, int) and n >= 0 for n in sources.values())):
            raise InputError(f"{file}: sources must map each source to its number of works")
        if sum(sources.values()) != stats["rows"]:
            raise InputError(f"{file}: the sources hold {sum(sources.values())} rows, not rows={stats['rows']}")
    routed = sum(r["won"] + r["no_text"] for r in live)
    if routed + stats["pending"].get("unrouted", 0) != stats["rows"]:
        raise InputError(f"{file}: won + no_text over all rules plus unrouted is {routed + stats['pending'].get('unrouted', 0)}, "
                         f"not rows={stats['rows']}")


def _read_doc(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    if not path.exists():
        raise InputError(f"{path}: missing; a release folder holds release.json, routing.parquet, "
                         f"rule_stats.json and samples.json")
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: must be a JSON object")
    for key in keys:
        if key not in doc:
            raise InputError(f"{path}: lacks the field {key!r} (see docs/release-format.md)")
    return doc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid UTF-8 JSON: {exc}") from None
