"""Small views of a digest week that the week page, the index, the e-mail and the feed share: where a week and a
paper are (`week_path`, `paper_anchor`), a title as shown (`shown_title`), the papers listed again counted
(`folded`), what a --keyword-fallback week says of its judge (`fallback_note`), and the reader's measured quality
(`quality_view`). What a week with keys (rules `digest.4`) shows differently is decided here, so an older week's
archived pages stay as they were published.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..digest.archive import ArchivedWeek, Decision
from ..plurals import count
from .links import href, slug
from .models import Link
from .models.digest import ListedAgainFold
from .models.quality import MissedView, QualityView
from .paper_text import cut, flat, plain_math
from .titles import shorten

DIGEST = "digest"
INDEX = "digest/index"


def week_path(week: str, root: str = DIGEST) -> str:
    """A week's page (`root`: the digest's folder of the site, a topic's `digest/topics/NAME`)."""
    return f"{root}/{week}"


def index_path(root: str = DIGEST) -> str:
    """A digest's week index."""
    return f"{root}/index"


def topic_root(name: str) -> str:
    """The site folder of a named topic's pages (docs/digest.md, "Topics")."""
    return f"{DIGEST}/topics/{name}"


def week_heading(week: ArchivedWeek) -> str:
    """What a week's page, feed entry and e-mail call it: `Weekly digest 2026-W20`, and for a week of a named
    topic (`settings.topic`, docs/digest.md "Topics") `Weekly digest 2026-W20: TITLE`."""
    topic = week.head.settings.topic
    return f"Weekly digest {week.week}" + (f": {topic[1]}" if topic is not None else "")


def paper_anchor(paper_id: str) -> str:
    """The fragment id of a paper on its week page."""
    return "p-" + slug(paper_id)


def keyed(week: ArchivedWeek) -> bool:
    """The week was decided with keys (rules digest.4): what it shows may differ from an older week's pages."""
    return any(d.key for d in week.decisions.decisions)


RELEVANCE_NOTE = ("Relevance, beside each paper, orders papers of one score: how strongly the watchlist's phrases "
                  "and the In scope terms occur in its title and abstract, a term few papers of the week hold "
                  "weighing most (BM25F). It never changes a score or a decision.")
"""What a week with keys says of the relevance its papers show (`relevance 16.63` was unexplained)."""
LISTED_AGAIN_SHOWN = 20
"""A week with keys lists at most this many papers listed again one a line; more are counted per prior week."""


def folded(page: str, week: ArchivedWeek, root: str = DIGEST) -> tuple[ListedAgainFold, ...]:
    """The papers listed again, counted per prior week, when a week with keys lists more than LISTED_AGAIN_SHOWN."""
    again = week.listed_again
    if len(again) <= LISTED_AGAIN_SHOWN or not keyed(week):
        return ()
    by_week: dict[str, Counter] = {}
    for a in again:
        by_week.setdefault(a.week, Counter())[a.decision] += 1
    return tuple(ListedAgainFold(Link(w, href(page, week_path(w, root))), f"{count(sum(c.values()), 'paper')}: " + ", ".join(
        f"{d} {c[d]:,}" for d in ("KEEP", "REVIEW", "DROP") if c[d])) for w, c in sorted(by_week.items()))


def shown_title(d: Decision, most: int | None = None) -> str:
    """A paper's title as the pages, the feed and the e-mail show it: shortened, and for a week decided with keys
    (rules digest.4) its inline LaTeX read as text (`plain_math`: `$O(n^2)$` is O(n²)); an older week's pages
    stay as they were published."""
    title = plain_math(d.title) if d.key else d.title
    return shorten(title) if most is None else cut(flat(title), most)


def fallback_note(week: ArchivedWeek, judges: Sequence[Any], generation: str) -> str:
    """What the page says of a week decided with --keyword-fallback: the judges' answers were not all used (none,
    when no judge had answered). Only for a week with keys (rules digest.4): an older week keeps its page."""
    missing = max((j.missing for j in judges), default=0)
    if not missing or not keyed(week):
        return ""
    answered = max((j.answered + j.failed for j in judges), default=0)
    if not answered:
        return (f"No judge had answered when the week was decided: the keyword rule decided Axis 2 for all "
                f"{count(missing, 'paper')} (--keyword-fallback, tag judge-missing), and no judge's answer was used.")
    return (f"The keyword rule decided Axis 2 for the {count(missing, 'paper')} no judge had answered yet "
            f"(--keyword-fallback, tag judge-missing); the judges' recorded answers decided the other "
            f"{count(answered, 'paper')} (generation {generation}).")


def quality_view(q: dict, root: str = DIGEST) -> QualityView:
    """The measured quality as the index shows it."""
    interval = f"{q['interval'][0]:.0%} to {q['interval'][1]:.0%}" if q["interval"] else ""
    missed = tuple(MissedView(key=m["key"], id=m["id"], title=shorten(m["title"]),
                              href=href(index_path(root), week_path(m["week"], root), paper_anchor(m["id"])), week=m["week"],
                              decision=m["decision"], score=m["score"], missed_by=m["missed_by"])
                   for m in q["wanted_not_keep"])
    weeks = f"{q['weeks'][0]} to {q['weeks'][-1]}" if q["weeks"] else ""
    return QualityView(weeks=weeks, marked=q["keep_marked"], wanted=q["keep_wanted"],
                       precision=f"{q['precision']:.0%}" if q["precision"] is not None else "none marked",
                       interval=interval, missed=missed,
                       counts=(f"{q['keep_wanted']:,} of {q['keep_marked']:,} marked KEEPs wanted; 95% interval "
                               f"{interval}") if interval else "")
