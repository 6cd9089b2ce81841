"""A build's named digest topics (docs/digest.md, "Topics"): each `[digest.topics.NAME]` decided, published and
rendered beside the default digest.

The default digest (the `[digest]` table's own) goes through `build_steps` as
it always did; this module adds, per named topic: its pending weeks decided
in memory (`decide_topics`, with the build's as-of day, as `gather_digest`
does for the default one; its KEEPs checked against the workspace's citation
graph when it names one, `build_steps.graph_evidence`), decided again under its archive's lock when another run published a
week meanwhile (`still_current`), its site stage (`topic_stages`: pages,
index, feed and e-mail editions under `digest/topics/NAME/`) and, once the
writer's checks have passed, its weeks published through the one
`weeks.publish_week` (`publish_topics`). A workspace without topics gets
nothing from here.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .build_steps import Checked, ResultLine, graph_evidence
from .config import Workspace

from .digest.also_in import also_in, kept_ids
from .digest.archive import DECISIONS_FILE
from .digest.config import DigestSettings
from .digest.feedback import measure, read_marks
from .digest.publish import DigestRun, archive_snapshot, gather_digest
from .digest import weeks
from .digest.weeks import WeekResult, published_keeps
from .locks import locked
from .runs import RunStart
from .site.digest_pages import digest_week, load_digest_weeks
from .site.digest_views import topic_root
from .site.models.common import Link
from .site.links import HOME, href
from .site.render import StagePages, digest_stage


@dataclass(frozen=True)
class TopicRun:
    """One named topic in a build: its settings, and its weeks decided in memory (None: a render decides none)."""

    settings: DigestSettings
    run: DigestRun | None = None
    evidence: tuple[tuple[ResultLine, ...] | None, ...] = ()
    """Per decided week: its KEEPs' graph verdicts, or None without a graph."""


def topics_of(ws: Workspace | None) -> tuple[DigestSettings, ...]:
    """The named topics' settings (`DigestSettings.topic`), in order; () without [digest] or topics."""
    if ws is None or ws.digest is None:
        return ()
    return tuple(ws.digest.topic(t.name) for t in ws.digest.topics)


def decide_topics(ws: Workspace | None, as_of: date | None, decide: bool, checked: Checked,
                  environ: Mapping[str, str]) -> tuple[TopicRun, ...]:
    """Each named topic, with its pending weeks that have ended decided in memory when `decide` (a build)."""
    return tuple(_decided(s, ws, as_of, checked, environ) if decide and as_of is not None and ws is not None
                 else TopicRun(s) for s in topics_of(ws))


def _decided(settings: DigestSettings, ws: Workspace, as_of: date, checked: Checked,
             environ: Mapping[str, str]) -> TopicRun:
    run = gather_digest(settings, as_of)
    return TopicRun(settings, run, graph_evidence(checked, ws, run, environ))


@contextlib.contextmanager
def locked_topics(topics: Sequence[TopicRun]) -> Iterator[None]:
    """The archive lock of each topic a build publishes into, in name order (after the default digest's)."""
    with contextlib.ExitStack() as stack:
        for t in topics:
            if t.run is not None:
                stack.enter_context(locked(t.settings.archive))
        yield


def topics_current(topics: Sequence[TopicRun], ws: Workspace | None, as_of: date | None, checked: Checked,
                   environ: Mapping[str, str]) -> tuple[TopicRun, ...]:
    """Each topic whose archive another run changed since its weeks were decided, decided again (under the lock)."""
    return tuple(t if t.run is None or as_of is None or ws is None
                 or t.run.published == archive_snapshot(t.settings.archive)
                 else _decided(t.settings, ws, as_of, checked, environ) for t in topics)


def topic_links(topics: Sequence[TopicRun]) -> tuple[Link, ...]:
    """Each topic's title, linked from the home page to its week index."""
    return tuple(Link(t.settings.title or t.settings.name, href(HOME, f"{topic_root(t.settings.name)}/index"))
                 for t in topics)


def topic_stages(topics: Sequence[TopicRun], base_url: str | None) -> list[StagePages]:
    """Each topic's site stage: its published weeks and those decided in memory, under `digest/topics/NAME/`."""
    stages = []
    for t in topics:
        s, root = t.settings, topic_root(t.settings.name)
        pending = () if t.run is None else tuple(
            digest_week(r.data, str(Path(s.archive) / r.week / DECISIONS_FILE), rows, root)
            for r, rows in zip(t.run.results, t.evidence or (None,) * len(t.run.results)))
        marks = read_marks(s.state) if s.state is not None else []
        stages.append(digest_stage(s.archive, published=load_digest_weeks(s.archive, root), pending=pending,
                                   base_url=base_url, quality=(lambda w, m=marks: measure(w, m)) if marks else None,
                                   topic=(s.name, s.title or s.name)))
    return stages


def publish_topics(topics: Sequence[TopicRun], record: RunStart | None = None) -> tuple[tuple[str, WeekResult], ...]:
    """Each topic's decided weeks into its archive, in order: (topic name, week published)."""
    out = []
    for t in topics:
        if t.run is None or not t.run.results:
            continue
        weeks.sweep_archive(t.settings.archive)
        out += [(t.settings.name, weeks.publish_week(t.settings, r, evidence=rows, record=record))
                for r, rows in zip(t.run.results, t.evidence or (None,) * len(t.run.results))]
    return tuple(out)


def cross_topics(default: DigestSettings | None, run: DigestRun | None,
                 topics: Sequence[TopicRun]) -> tuple[DigestRun | None, tuple[TopicRun, ...]]:
    """Each week this build decided, with its `also_in` counting the other topics' weeks decided with it (as well
    as those published before, which `prepare_weeks` counted): the same week of two topics names each other."""
    if default is None or not default.topics:
        return run, tuple(topics)
    runs = [(default, run), *((t.settings, t.run) for t in topics)]
    decided = {s.name: {r.week: r for r in (rn.results if rn is not None else ()) if not r.unchanged}
               for s, rn in runs}

    def again(s: DigestSettings, r: WeekResult) -> WeekResult:
        if r.unchanged:
            return r
        others = [(n, title, kept_ids(decided[n][r.week].document) if r.week in decided.get(n, {})
                   else published_keeps(archive, r.week)) for n, title, archive in s.others]
        document = {**r.document, "also_in": also_in((d.id for d in r.outcome.decisions), others)}
        return dataclasses.replace(r, document=document, encoded=weeks.encode_document(document))

    out = [None if rn is None else dataclasses.replace(rn, results=tuple(again(s, r) for r in rn.results))
           for s, rn in runs]
    return out[0], tuple(TopicRun(t.settings, rn, t.evidence) for t, rn in zip(topics, out[1:]))
