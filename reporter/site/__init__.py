"""The site: page models, charts, the template environments, the writer, and render_site.

compute (compute.py, diff.py) -> page models (pages.py, live.py, models.py)
-> views (templates/html, templates/md via env.py) -> one writer (writer.py).
"""

from .load import ReleaseSet, load_release, load_releases
from .render import PreparedSite, RenderReport, StagePages, digest_stage, novelty_stage, prepare_site, render_site

__all__ = ["PreparedSite", "ReleaseSet", "RenderReport", "StagePages", "digest_stage", "load_release",
           "load_releases", "novelty_stage", "prepare_site", "render_site"]
