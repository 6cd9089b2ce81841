"""Names safe for files and fragments: the one `slug`, which the site's page names and the rule book's checks share.

A leaf module: routing refuses two rule ids whose pages would share a name
(`routing/specs.py`) with the same function the site names the pages with,
without importing the site. Likewise `reporter mail` finds a week's message
in the built site by `email_edition_paths`, the names the site writes it under, and the disclosure kept at
a hand-off is found by `disclosure_snapshot_path` (reporter.disclose writes it, the site reads it).
`is_safe_segment` is the check a release id read from index.json passes
before it names a folder (`routing/artifacts.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .hashing import sha256_text

_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def slug(text: str) -> str:
    """A file- and fragment-safe name for any string, unique per string.

    Lower-case ids that are already safe stay as they are; anything else
    (upper case, `/`, `:`, spaces, non-ASCII) gets a readable part plus 8
    hex of its sha256, so `doi:10.1/x` and `doi:10.1-x` never collide and
    case-insensitive file systems see distinct names.
    """
    if _PLAIN.fullmatch(text) and ".." not in text:
        return text
    base = _UNSAFE.sub("-", text).strip("-.")[:48].lower() or "x"
    return f"{base}-{sha256_text(text)[:8]}"


RELATIVE_LINKS_DOMAIN = "reporter.invalid"
"""The Message-ID's domain of an e-mail edition built without `[site] base_url` (RFC 2606: a name that is never
anyone's): its links are then relative, which work in the site but not in a mailbox, so `reporter mail` refuses
to send it."""


def email_edition_paths(week: str, root: str = "digest") -> tuple[str, str, str]:
    """A digest week's e-mail edition in the site: `digest/YYYY-Www.email.html`, `.email.txt` and `.eml` (a
    topic's under its folder, `digest/topics/NAME/`)."""
    return f"{root}/{week}.email.html", f"{root}/{week}.email.txt", f"{root}/{week}.eml"


DISCLOSURE_DIR = "disclosure"
"""The workspace state's folder of methods disclosures: `state/disclosure/<release id>/`."""


def disclosure_snapshot_path(state_dir: Path, release_id: str, snapshot_id: str) -> Path:
    """Where `reporter export` keeps the disclosure as it stood at a hand-off (written by reporter.disclose, read
    by the site): `state/disclosure/<release id>/handoffs/<snapshot id>.json`."""
    return Path(state_dir) / DISCLOSURE_DIR / release_id / "handoffs" / f"{snapshot_id}.json"


def disclosure_page_path(release_id: str, snapshot_id: str) -> str:
    """The site's archived page of a kept disclosure (no extension): `releases/<id>/disclosure/<snapshot id>`;
    the export's provenance sidecar names it without importing the site."""
    return f"releases/{release_id}/disclosure/{snapshot_id}"


def is_safe_segment(name: str) -> bool:
    """Whether a name (a release id) can be used as a folder name as it is."""
    return bool(_SEGMENT.fullmatch(name)) and ".." not in name
