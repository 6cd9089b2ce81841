"""render_site: read the releases, build every page model, render, write. Nothing re-runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..novelty.results import load_novelty_results
from ..progress import Progress
from .diff import compute_diff
from .env import render_html, render_md
from .live import DIGEST_NOTE, build_diff_page, build_home, build_status_page
from .load import load_releases
from .novelty_page import build_novelty_page, novelty_summary
from .pages import build_release_page, build_rule_pages
from .writer import SiteWriter


@dataclass(frozen=True)
class RenderReport:
    """What a render produced."""

    out: Path
    """The output folder."""
    releases: tuple[str, ...]
    """Release ids rendered, oldest first."""
    unlisted: tuple[str, ...]
    """Release folders found but not in index.json (not rendered)."""
    digests: int
    """Digest weeks rendered (0 until the digest stage exists)."""
    novelty: int | None
    """Candidates on the novelty page, or None when no novelty results were given (no page)."""
    pages: int
    """Pages rendered (each HTML page and its Markdown twin count as one)."""
    written: int
    """Files written because they were new or changed."""
    unchanged: int
    """Files already on disk with the same bytes."""
    superseded: tuple[str, ...]
    """Old archived files kept beside re-rendered ones."""
    largest_page: tuple[str, int]
    """The largest file and its size in bytes."""


def render_site(releases_dir: Path, out: Path, *, digests_dir: Path | None = None,
                rerender_archive: bool = False, progress: bool = True,
                novelty: Path | None = None) -> RenderReport:
    """Render every release under releases_dir (and, later, every digest week) into out.

    `novelty` is a results JSONL of `reporter novelty --batch`: when given, the
    novelty page (`novelty.html` and `novelty.md`) is rendered at the site root
    and the home page links to it. It is rebuilt at every build, never archived.
    """
    # First gather everything: read, compute, build page models and render them in memory.
    found = load_releases(Path(releases_dir))
    releases = found.releases
    novelty_page = None
    if novelty is not None:
        novelty_page = build_novelty_page(load_novelty_results(Path(novelty)), Path(novelty))
    writer = SiteWriter(Path(out), rerender_archive=rerender_archive)
    bar = Progress("render", total=len(releases), unit="releases", enabled=progress)
    pages = 0
    previous = None
    for rel in releases:
        archived = [build_release_page(rel), *build_rule_pages(rel)]
        diff = compute_diff(previous, rel, seed=rel.samples["seed"]) if previous is not None else None
        live = [build_status_page(rel), build_diff_page(rel, previous, diff)]
        for page, is_archived in [(p, True) for p in archived] + [(p, False) for p in live]:
            writer.add(page.meta.path + ".html", render_html(page), archived=is_archived)
            writer.add(page.meta.path + ".md", render_md(page), archived=is_archived)
            pages += 1
        previous = rel
        bar.advance(1)
    home = build_home(releases, _digest_note(digests_dir),
                      novelty_summary(novelty_page) if novelty_page is not None else None)
    for page in [home] + ([novelty_page] if novelty_page is not None else []):
        writer.add(page.meta.path + ".html", render_html(page), archived=False)
        writer.add(page.meta.path + ".md", render_md(page), archived=False)
        pages += 1
    # Then write, all or nothing.
    done = writer.commit()
    bar.close()
    return RenderReport(out=Path(out), releases=tuple(r.release_id for r in releases), unlisted=found.unlisted,
                        digests=0, novelty=len(novelty_page.candidates) if novelty_page is not None else None,
                        pages=pages, written=len(done.written), unchanged=len(done.unchanged),
                        superseded=done.superseded, largest_page=done.largest)


def _digest_note(digests_dir: Path | None) -> str:
    """Digests are not rendered yet; the home page says whether any exist."""
    if digests_dir is not None and Path(digests_dir).is_dir() and any(Path(digests_dir).iterdir()):
        return "Weekly digests exist but this version of the site does not render them yet."
    return DIGEST_NOTE
