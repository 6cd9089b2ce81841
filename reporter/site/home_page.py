"""The home page's model: what the site shows, why works are pending, the latest release and digest, the archive."""

from __future__ import annotations

from ..routing.artifacts import Release
from . import compute
from .links import HOME, diff_path, href, status_path
from .models import DigestSummary, HomePage, NextStep, NoveltySummary, PendingNote, PileShare, ReleaseSummary
from .page_parts import meta, release_name

PENDING_PLAIN = "not decided by routing: no rule matched, or no abstract to screen (costs nothing)"
"""The home page's meaning of the pending pile."""


def build_home(releases: tuple[Release, ...], digest: DigestSummary | None = None,
               novelty: NoveltySummary | None = None, changes: dict[str, str] | None = None,
               certification: tuple[str, str] = ("", "neutral"), next_step: NextStep | None = None) -> HomePage:
    """The home page: the latest release and digest week, then every release, newest first (and novelty checks).

    `changes` is each release's line saying what changed since the previous one (by release id); `certification`
    the latest release's hand-off certification in words, and its tone (`certified.hand_off`); `next_step` what to
    do next for it (`next_step.screen_next_step`). A site with a
    digest and no release (a digest-only workspace) shows the digest alone.
    """
    piles: list[str] = []
    for rel in reversed(releases):
        for p in rel.stats.pile_order:
            if p.name not in piles:
                piles.append(p.name)
    changes = changes or {}
    summaries = tuple(_summary(rel, piles, changes.get(rel.release_id, "")) for rel in reversed(releases))
    latest_piles: tuple[PileShare, ...] = ()
    pending = None
    if releases:
        stats = releases[-1].stats
        latest_piles = tuple(PileShare(p.name, PENDING_PLAIN if p.kind == "pending"
                                       else compute.plain_name(p.name, stats),
                                       stats.piles[p.name], compute.share(stats.piles[p.name], stats.rows))
                             for p in stats.pile_order)
        waiting = stats.pending
        total = sum(waiting.values())
        if total:
            shown = compute.share(total, stats.rows)
            pending = PendingNote(total, "under 0.1%" if shown == "0.0%" else shown, stats.rows,
                                  waiting.get("unrouted", 0), waiting.get("no_text", 0), most=2 * total > stats.rows)
    digest_only = not releases and digest is not None
    return HomePage(meta=meta(HOME, "The weekly digest" if digest_only else "Releases and digests", [], archived=False),
                    latest=summaries[0] if summaries else None, latest_piles=latest_piles, pending=pending,
                    releases=summaries, piles=tuple(piles), digest=digest, novelty=novelty, digest_only=digest_only,
                    certification=certification[0], certification_tone=certification[1], next_step=next_step)


def _summary(rel: Release, piles: list[str], changes: str) -> ReleaseSummary:
    stats = rel.stats
    name = release_name(HOME, rel)
    return ReleaseSummary(
        release_id=rel.release_id, short_id=name.short_id, given_name=name.given_name, written=name.written,
        changes=changes, href=name.href, status=href(HOME, status_path(rel.release_id)),
        diff=href(HOME, diff_path(rel.release_id)), rows=stats.rows,
        piles=tuple(stats.piles.get(p) for p in piles),
        to_screen=sum(stats.piles[p] for p in compute.paying_piles(stats)),
        engine_version=rel.manifest.engine_version,
        generated=bool(rel.manifest.generated_pool))
