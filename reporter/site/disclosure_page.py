"""The methods disclosure's page: each kept at a hand-off is archived at `releases/<id>/disclosure/<disclosure id>`.

`reporter export` keeps the release's disclosure as it stood at the hand-off
(reporter/disclose/snapshot.py): its id is the sha256 of its JSON and its
file is never rewritten, so its page, built from that file alone, never
changes. The status page (rebuilt) lists every one kept. `reporter disclose`
renders a draft made now through the same page model (`build_disclosure_page`),
so the disclosure's HTML and Markdown have one writer: the site's templates.

The site does not import reporter.disclose (tests/import_rules.toml): it
reads the kept files, checking every field a template shows, and recomputes
the id from the content, so a file changed after it was kept is refused, not
published.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import parse_json, read_capped
from ..hashing import canonical_json, sha256_text
from ..naming import disclosure_page_path, disclosure_snapshot_path
from ..runs import state_of
from ..routing.artifacts import Release
from .links import Href, href, release_path, status_path
from .models import DisclosureBlock, DisclosureBox, DisclosureItem, DisclosurePage, DisclosureSource, PageMeta
from .page_parts import meta, short_id

MARK = {"filled": "filled from the records", "partial": "partly filled: the author completes it",
        "author": "the author's to write"}
"""Each item's status in words."""

TONES = {"filled": "ok", "partial": "neutral", "author": "bad"}
"""The class that colours each status."""

DECIDERS = ("rule", "model", "person")
"""Who can decide a step of the flow."""

MAX_KEPT_BYTES = 64 * 1024 * 1024
"""A kept disclosure larger than this is refused (its prompts would have to be megabytes)."""


@dataclass(frozen=True)
class KeptDisclosure:
    """A disclosure kept at a hand-off, read and checked."""

    id: str
    taken_at: str
    handoff: Mapping[str, Any]
    doc: Mapping[str, Any]
    path: Path

    def counts(self) -> str:
        return item_counts(self.doc)


def item_counts(doc: Mapping[str, Any]) -> str:
    """`8 items filled from the records, 3 partly, 0 the author's`."""
    n = {s: sum(i["status"] == s for i in doc["items"]) for s in MARK}
    return f"{n['filled']} items filled from the records, {n['partial']} partly, {n['author']} the author's"


def read_disclosures(root: Path, releases: Sequence[Release]) -> dict[str, tuple[KeptDisclosure, ...]]:
    """Every disclosure kept for each shown release in the workspace at `root`, oldest first."""
    state = state_of(root)
    out: dict[str, tuple[KeptDisclosure, ...]] = {}
    for rel in releases:
        folder = disclosure_snapshot_path(state, rel.release_id, "x").parent
        if not folder.is_dir():
            continue
        kept = [_read(path, rel.release_id) for path in sorted(folder.glob("*.json"))]
        if kept:
            out[rel.release_id] = tuple(sorted(kept, key=lambda k: (k.taken_at, k.id)))
    return out


def _read(path: Path, release_id: str) -> KeptDisclosure:
    data = parse_json(read_capped(path, MAX_KEPT_BYTES, "a kept disclosure"), str(path))

    def bad(what: str) -> InputError:
        return InputError(f"{path}: {what}. reporter export wrote it when it wrote a hand-off and never rewrites "
                          f"it: restore it from a backup, or move it away (its archived page stays in the site)")
    if not isinstance(data, dict) or data.get("snapshot_version") != 1:
        raise bad("not a kept disclosure (snapshot_version 1)")
    doc, handoff = data.get("disclosure"), data.get("handoff")
    if not isinstance(doc, dict) or not isinstance(handoff, dict) or not isinstance(data.get("taken_at"), str):
        raise bad("a kept disclosure needs `disclosure`, `handoff` and `taken_at`")
    if data.get("id") != path.stem or sha256_text(canonical_json(doc)) != path.stem:
        raise bad("its content no longer has the sha256 its name says: it changed after it was kept")
    if doc.get("release_id") != release_id:
        raise bad(f"it is of release {str(doc.get('release_id'))[:12]}, not of the release its folder names")
    _check(doc, bad)
    return KeptDisclosure(path.stem, data["taken_at"], handoff, doc, path)


def _check(doc: Mapping[str, Any], bad: Callable[[str], InputError]) -> None:
    """Every field a page shows has the type it needs (the file is checked like any input)."""
    def text(value: Any, where: str) -> None:
        if not isinstance(value, str):
            raise bad(f"{where} must be text")

    def texts(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise bad(f"{where} must be a list")
        for v in value:
            text(v, where)
    text(doc.get("release"), "`release`")
    text(doc.get("release_source"), "`release_source`")
    if not isinstance(doc.get("items"), list) or not isinstance(doc.get("flow"), list):
        raise bad("`items` and `flow` must be lists")
    for i, item in enumerate(doc["items"]):
        where = f"items[{i}]"
        if not isinstance(item, dict) or item.get("status") not in MARK:
            raise bad(f"{where} must have a status of {', '.join(MARK)}")
        for key in ("id", "title", "text"):
            text(item.get(key), f"{where}.{key}")
        for key in ("warnings", "missing", "sources"):
            texts(item.get(key), f"{where}.{key}")
        if not isinstance(item.get("blocks"), list):
            raise bad(f"{where}.blocks must be a list")
        for b in item["blocks"]:
            if not isinstance(b, dict):
                raise bad(f"{where}.blocks must hold captions and texts")
            text(b.get("caption"), f"{where}.blocks caption")
            text(b.get("text"), f"{where}.blocks text")
    for i, box in enumerate(doc["flow"]):
        if not isinstance(box, dict) or box.get("decided_by") not in DECIDERS:
            raise bad(f"flow[{i}] must be decided by one of {', '.join(DECIDERS)}")
        if type(box.get("count")) is not int:
            raise bad(f"flow[{i}].count must be a whole number")
        text(box.get("label"), f"flow[{i}].label")
        text(box.get("detail"), f"flow[{i}].detail")


def build_disclosure_page(doc: Mapping[str, Any], page_meta: PageMeta, *, kept: str = "",
                          release_href: Href | None = None,
                          source_href: Callable[[str], Href | None] = lambda _: None) -> DisclosurePage:
    """The disclosure `doc` (the JSON `reporter disclose` drafts) as a page; `source_href` links a record."""
    items = tuple(DisclosureItem(
        id=i["id"], title=i["title"], status=i["status"], mark=MARK[i["status"]], tone=TONES[i["status"]],
        text=i["text"], warnings=tuple(i["warnings"]),
        blocks=tuple(DisclosureBlock(b["caption"], b["text"]) for b in i["blocks"]),
        missing=tuple(i["missing"]), sources=tuple(DisclosureSource(s, source_href(s)) for s in i["sources"]))
        for i in doc["items"])
    flow = tuple(DisclosureBox(b["label"], b["decided_by"], f"{b['count']:,}", b["detail"]) for b in doc["flow"])
    intro = (f"Drafted by reporter disclose from the run records of release {doc['release_id']}: every sentence "
             f"names the records it comes from, and what no record says is marked as the author's. The text can be "
             f"pasted into a methods section (PRISMA-trAIce, RAISE).")
    return DisclosurePage(meta=page_meta, release=doc["release"], release_id=doc["release_id"],
                          release_href=release_href, kept=kept, intro=intro, counts=item_counts(doc) + ".",
                          items=items, flow=flow)


def kept_words(k: KeptDisclosure) -> str:
    """When and with which hand-off a disclosure was kept."""
    h = k.handoff
    rows = h.get("rows")
    what = f"the hand-off {h.get('file')}" if isinstance(h.get("file"), str) else "a hand-off"
    if type(rows) is int:
        what += f" ({rows:,} rows"
        what += f", sha256 {h['sha256']})" if isinstance(h.get("sha256"), str) else ")"
    return f"Kept on {k.taken_at} when reporter export wrote {what}: the disclosure as the records stood then."


def build_kept_page(rel: Release, k: KeptDisclosure) -> DisclosurePage:
    """The archived page of one disclosure kept at a hand-off of the release."""
    page = disclosure_page_path(rel.release_id, k.id)
    release_href = href(page, release_path(rel.release_id))
    title = f"Methods disclosure {short_id(k.id)} of release {k.doc['release']}"
    page_meta = meta(page, title, [("Home", "index"), (f"Release {short_id(rel.release_id)}",
                                                      status_path(rel.release_id))], archived=True)
    return build_disclosure_page(
        k.doc, page_meta, kept=kept_words(k), release_href=release_href,
        source_href=lambda s: release_href if s == k.doc["release_source"] else None)
