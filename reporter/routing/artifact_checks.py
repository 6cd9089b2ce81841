"""The checks a release folder's files pass before they are read into records (artifacts.py).

Each check reads a file's JSON as written and refuses it with one message
naming the file and the field: a page must never show a broken count, and a
bad folder is refused before any page is built. The fields are those of
docs/release-format.md, which routing writes (release.py, stats.py,
samples.py, labels.py, published.py).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_capped
from .published import NAME_CHARS, RELEASE_JSON_CAP

STATS_KEYS = ("release_id", "rows", "identity_holds", "piles", "pile_order", "pending",
              "title_only", "pool", "overlay", "rules", "overlap")
"""The fields rule_stats.json must have."""
RULE_KEYS = ("id", "pile", "precedence", "shadow", "matched", "won", "no_text", "outranked",
             "would_win", "would_move", "domain", "domain_rows", "domain_matched",
             "domain_miss", "domain_miss_winners", "outranked_by", "spec")
"""The fields each rule of rule_stats.json must have."""
MANIFEST_KEYS = ("release_id", "inputs", "engine_version", "rows")
"""The fields release.json must have."""
SAMPLES_KEYS = ("seed", "k", "piles", "rules")
"""The fields samples.json must have (and `context_chars`, from engine routing.2)."""
LABELS_KEYS = ("rules", "lost_includes")
"""The fields labels.json must have."""
INPUT_NAMES = ("pool", "overlay", "specs", "piles", "normalisation", "engine")
"""The six inputs release.json digests, whose digest is the release id (in the pages' order)."""


SCHEMA_VERSION = 1
"""The one schema version of the release files this code reads (a file without the field is version 1)."""


def read_doc(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """A release file's JSON object, refused when it is missing, not JSON or lacks one of `keys`."""
    if not path.exists():
        raise InputError(f"{path}: missing; a release folder holds release.json, routing.parquet, "
                         f"rule_stats.json and samples.json")
    doc = read_release_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: must be a JSON object")
    for key in keys:
        if key not in doc:
            raise InputError(f"{path}: lacks the field {key!r} (see docs/release-format.md)")
    version = doc.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or version != SCHEMA_VERSION:
        raise InputError(f"{path}: schema_version {version!r} is not one this reporter reads (it knows "
                         f"{SCHEMA_VERSION}); route the release again with this version, or upgrade reporter")
    return doc


def check_ids(rdir: Path, release_id: str, manifest: Mapping[str, Any], stats: Mapping[str, Any]) -> None:
    """Refuse a release.json or rule_stats.json of another release, or a release.json lacking an input."""
    for name, doc in (("release.json", manifest), ("rule_stats.json", stats)):
        if doc["release_id"] != release_id:
            raise InputError(f"{rdir / name}: release_id {doc['release_id']!r} differs from its folder name")
    for name in INPUT_NAMES:
        if name not in manifest["inputs"]:
            raise InputError(f"{rdir / 'release.json'}: inputs.{name} is missing; the six inputs are "
                             + ", ".join(INPUT_NAMES))


def context_chars(samples: Mapping[str, Any], manifest: Mapping[str, Any], path: Path) -> int:
    """samples.json's `context_chars`: 80 for a routing.1 release (which did not say so), else required."""
    if "context_chars" in samples:
        return samples["context_chars"]
    if not str(manifest.get("engine_version", "")).endswith("+routing.1"):
        raise InputError(f"{path}: lacks the field 'context_chars' (see docs/release-format.md)")
    # Releases of engine routing.1 cut their samples with 80 characters either side but did not say so.
    return 80


def check_published(doc: Mapping[str, Any], path: Path) -> tuple[str | None, str]:
    """published.json's release name (stripped; None) and first-written date, refused unless well formed."""
    name, written = doc.get("label"), doc["first_written"]
    if name is not None and not (isinstance(name, str) and name.strip() and len(name) <= NAME_CHARS
                                 and name.isprintable()):
        raise InputError(f"{path}: label must be null or one line of printable text of at most {NAME_CHARS} "
                         f"characters, not {name!r}")
    try:
        day = dt.date.fromisoformat(written) if isinstance(written, str) and len(written) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise InputError(f"{path}: first_written must be an ISO date (YYYY-MM-DD), not {written!r}")
    return (name.strip() if name is not None else None), day.isoformat()


def check_stats(stats: Mapping[str, Any], file: Path | str) -> None:
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


def read_release_json(path: Path) -> Any:
    """A release folder's JSON file (release.json, rule_stats.json, samples.json, labels.json, published.json),
    refused before it is read when it is larger than RELEASE_JSON_CAP, a folder or a FIFO (files.read_capped)."""
    data = read_capped(path, RELEASE_JSON_CAP, "release file")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read; a release file nests a few levels") from None
