"""Renderers: every result's ``to_dicts()`` to terminal tables, CSV, JSON, markdown, LaTeX, HTML."""

from serpeval.report.table import FORMATS, format_cell, render

__all__ = ["DEFAULT_HTML_PATH", "FORMATS", "format_cell", "render"]

#: Where ``serpeval report`` and ``serpeval demo`` write their HTML report when not told
#: (gitignored). The HTML report itself lives in :mod:`serpeval.report.html`.
DEFAULT_HTML_PATH = "serpeval-report.html"
