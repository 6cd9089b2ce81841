"""The site: page models, charts, the template environments, the writer, and prepare_site.

compute (compute.py, diff.py) -> page models (release_page.py, home_page.py,
status_page.py, diff_page.py, digest_pages.py, novelty_page.py, glossary.py,
the dataclasses in models/) -> views (templates/html, templates/md via env.py)
-> one writer (writer.py).

The names below are imported on first use (PEP 562), so that a module
reading one small helper of the site (site.links) does not pay for the
templates, the digest and the charts.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "PreparedSite": "render", "RenderReport": "render", "StagePages": "render", "digest_stage": "render",
    "novelty_stage": "render", "prepare_site": "render", "screening_stage": "render",
    "SiteInputs": "render", "read_site_inputs": "render",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
