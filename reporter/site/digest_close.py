"""The page model of a week's "Close in meaning, missed by the watchlist" (docs/digest.md, "Meaning").

From the week's `close_in_meaning` only: None for a week decided without
meaning (`[digest] semantic = false`, or rules before `digest.4`), so the
pages of those weeks are as they were.
"""

from __future__ import annotations

from ..digest.archive import ArchivedWeek
from .links import href, paper_href
from .models.close import CloseRow, CloseView
from .models.common import Link
from .titles import shorten

NOTE = ("Papers the seed's rules did not keep whose meaning is close to the In scope concepts (similarity of "
        "title and abstract with the embedded model, from the week's KEEP median up, at most five), each with the "
        "concept it is nearest to and a phrase the watchlist could add. Surfaced, never applied: no score, "
        "decision or threshold reads it.")


def close_view(page: str, week: ArchivedWeek, anchor: dict[str, str]) -> CloseView | None:
    """The section for the week page `page`; `anchor`: each REVIEW's fragment id on it."""
    if week.close is None:
        return None
    by_id = {d.id: d for d in week.decisions.decisions}
    rows = []
    for e in week.close:
        d = by_id[e.id]
        link = href(page, page, anchor[e.id]) if e.id in anchor else paper_href((d.id, *d.merged_ids))
        rows.append(CloseRow(paper=Link(shorten(d.title), link), id=d.id, decision=d.decision,
                             similarity=f"{e.similarity:.4f}", concept=e.concept or e.nearest_concept,
                             phrase=e.suggested_phrase or "",
                             wanted="" if e.nearest_wanted is None else
                             f"{e.nearest_wanted} ({e.wanted_similarity:.4f})"))
    return CloseView(NOTE, tuple(rows))
