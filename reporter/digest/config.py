"""[digest] of reporter.toml: the week's papers, the watchlist, the criteria, the archive, the thresholds."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import InputError
from ..settings import Table
from .judge.config import JudgeSettings, parse_judge

DEFAULT_MAX_KEPT = 25
DEFAULT_KEEP = 70
DEFAULT_REVIEW = 50
DEFAULT_TOPIC = "default"
"""The topic of the [digest] table's own watchlist and criteria (its archive and pages are where they always were)."""
DEFAULT_TITLE = "Weekly digest"
"""What `also in` calls the default topic when [digest] has no title."""
TOPICS_DIR = "topics"
"""A topic's archive by default: ARCHIVE/topics/NAME/ (never read as a week: a week is ARCHIVE/YYYY-Www/)."""
TOPIC_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")
"""A topic's name: lower-case ASCII letters, digits and inner hyphens, 1 to 40 (it names folders and pages)."""


@dataclass(frozen=True)
class TopicSettings:
    """One `[digest.topics.NAME]` table: another digest of the same papers (docs/digest.md, "Topics")."""

    name: str
    title: str
    """The topic's title: the page, the feed and the e-mail Subject say it."""
    watchlist: Path
    criteria: Path
    archive: Path
    """Its own archive (default ARCHIVE/topics/NAME)."""
    max_kept: int
    """Its cap (default the [digest] table's)."""
    recipients: tuple[str, ...] = ()
    """Who gets its e-mail edition (addresses, checked as [mail] to is); () when none is given."""


@dataclass(frozen=True)
class DigestSettings:
    """The [digest] table (digest.md)."""

    papers: Path
    """A records file or a folder of them, of any dates; each paper is decided in the week it is first listed in
    (a file named `YYYY-Www.jsonl` lists its week; reporter.digest.listings)."""
    watchlist: Path
    """The watchlist: one phrase a line with an optional tab and weight, or a JSON list."""
    criteria: Path
    """The relevance-criteria Markdown document."""
    archive: Path
    """The digest archive: one folder per published ISO week."""
    max_kept: int = DEFAULT_MAX_KEPT
    """The most KEEPs a week may have; the rest are demoted to REVIEW (never DROP)."""
    keep_threshold: int = DEFAULT_KEEP
    """The lowest score that is KEEP (default 70)."""
    review_threshold: int = DEFAULT_REVIEW
    """The lowest score that is REVIEW (default 50); below it, DROP."""
    semantic: bool = True
    """Read meaning with the embedded model (docs/digest.md, "Meaning"): the order within a score and the
    close-in-meaning list; `semantic = false` turns both off (relevance alone orders, no model is loaded)."""
    judge: JudgeSettings | None = None
    """`[digest.judge]`: Axis 2 read by one or two models from their recorded answers; None: the keyword rule."""
    name: str = DEFAULT_TOPIC
    """The topic these settings decide (`topic()` sets it)."""
    title: str | None = None
    """`[digest] title`: the default topic's title (None: the pages say "Weekly digest" as they always did)."""
    topics: tuple[TopicSettings, ...] = ()
    """`[digest.topics.NAME]`, by name: more digests of the same papers, each decided on its own."""
    others: tuple[tuple[str, str, Path], ...] = ()
    """(name, title, archive) of the workspace's other topics, whose KEEPs each week's `also_in` names; ()
    without topics."""
    state: Path | None = None
    """The workspace's state folder (not a key: set by the workspace), whose feedback record's wanted papers the
    close-in-meaning list reads (docs/digest.md, "Meaning"); None outside a workspace (no feedback)."""


    def topic(self, name: str) -> DigestSettings:
        """The settings of one topic: `default` is [digest] itself; another is [digest.topics.NAME] over the same
        papers, thresholds and meaning, with its own watchlist, criteria, cap, archive and state (its marks:
        STATE/topics/NAME/). The criteria judge judges the [digest] criteria only (a topic is decided by the
        keyword rule)."""
        if name == DEFAULT_TOPIC:
            return self
        found = {t.name: t for t in self.topics}
        if name not in found:
            raise InputError(f"--topic {name!r}: no such topic; this workspace has "
                             f"{', '.join([DEFAULT_TOPIC, *sorted(found)])} (add [digest.topics.{name}] to "
                             f"reporter.toml)")
        t = found[name]
        others = ((DEFAULT_TOPIC, self.title or DEFAULT_TITLE, Path(self.archive)),
                  *((o.name, o.title, o.archive) for o in self.topics if o.name != name))
        return replace(self, watchlist=t.watchlist, criteria=t.criteria, archive=t.archive, max_kept=t.max_kept,
                       name=name, title=t.title, topics=(), judge=None, others=others,
                       state=None if self.state is None else self.state / TOPICS_DIR / name)

    def topic_names(self) -> tuple[str, ...]:
        """`default`, then each topic's name in order."""
        return (DEFAULT_TOPIC, *(t.name for t in self.topics))


def parse_digest(table: Table | None) -> DigestSettings | None:
    """Parse [digest]; None when the workspace publishes no digest."""
    if table is None:
        return None
    score = lambda v: None if 0 <= v <= 100 else f"must be a score from 0 to 100, not {v}"  # noqa: E731
    settings = DigestSettings(
        papers=table.path("papers"),
        watchlist=table.path("watchlist"),
        criteria=table.path("criteria"),
        archive=table.path("archive", "digests"),
        max_kept=table.get("max_kept", int, DEFAULT_MAX_KEPT,
                           check=lambda v: None if v >= 1 else f"must be 1 or more, not {v}"),
        keep_threshold=table.get("keep_threshold", int, DEFAULT_KEEP, check=score),
        review_threshold=table.get("review_threshold", int, DEFAULT_REVIEW, check=score),
        semantic=table.get("semantic", bool, True),
        judge=parse_judge(table.table("judge")),
        title=table.get("title", str, None, check=_title),
    )
    topics = table.table("topics")
    if topics is not None:
        settings = replace(settings, topics=tuple(_topic(topics, name, settings) for name in sorted(topics.data)))
        topics.done()
        settings = replace(settings, others=tuple((t.name, t.title, t.archive) for t in settings.topics))
        archives = [Path(t.archive) for t in settings.topics]
        if len(set(archives)) != len(archives):
            raise topics.error("archive", "is given to two topics; each topic publishes its own weeks")
    if settings.review_threshold > settings.keep_threshold:
        raise table.error("review_threshold", f"({settings.review_threshold}) must not be above "
                                              f"keep_threshold ({settings.keep_threshold})")
    return settings


def _title(value: str) -> str | None:
    return None if value.strip() and value.isprintable() and len(value) <= 200 else \
        f"must be a title of 1 to 200 printable characters, not {value!r:.80}"


def _topic(topics: Table, name: str, digest: DigestSettings) -> TopicSettings:
    """One [digest.topics.NAME] table: title, watchlist and criteria required; archive, max_kept, recipients."""
    if name == DEFAULT_TOPIC or not TOPIC_NAME.fullmatch(name):
        raise InputError(f"{topics.where}: topic name {name!r:.60} must be 1 to 40 lower-case ASCII letters, digits "
                         f"and inner hyphens, and not {DEFAULT_TOPIC!r} (the [digest] table's own topic)")
    t = topics.table(name)
    assert t is not None
    topic = TopicSettings(
        name=name, title=t.get("title", str, check=_title), watchlist=t.path("watchlist"), criteria=t.path("criteria"),
        archive=t.path("archive", str(Path(digest.archive) / TOPICS_DIR / name)),
        max_kept=t.get("max_kept", int, digest.max_kept, check=lambda v: None if v >= 1 else f"must be 1 or more, not {v}"),
        recipients=tuple(t.get("recipients", list, [], check=_strings)))
    t.done()
    if Path(topic.archive) == Path(digest.archive):
        raise t.error("archive", "must not be the [digest] table's archive (each topic publishes its own weeks)")
    return topic


def _strings(value: list) -> str | None:
    return None if all(isinstance(v, str) for v in value) else "must be a list of e-mail addresses (strings)"
