"""The site: page models, charts, the template environments, the writer, and render_site.

compute (compute.py, diff.py) -> page models (pages.py, live.py, models.py)
-> views (templates/html, templates/md via env.py) -> one writer (writer.py).
"""

from .render import RenderReport, render_site

__all__ = ["RenderReport", "render_site"]
