"""Renderers: every result's ``to_dicts()`` to terminal tables, CSV, JSON, markdown, LaTeX, HTML.

The report layer formats what it is given and never recomputes a statistic: compare runs
with :func:`serpeval.compare` (or :func:`~serpeval.comparison.compare.compare_results`)
and pass the comparison in.

Examples:
    >>> import serpeval
    >>> from serpeval.report import html_report, render_comparison, save_html
    >>> res = serpeval.evaluate("qrels.txt", ["bm25.run", "rm3.run"])       # doctest: +SKIP
    >>> from serpeval.comparison.compare import compare_results              # doctest: +SKIP
    >>> cmp = compare_results(res, rng=0)                                    # doctest: +SKIP
    >>> print(render_comparison(cmp, "markdown"))                            # doctest: +SKIP
    >>> save_html("report.html", res, cmp, topics={"301": "..."})            # doctest: +SKIP

Layer: report. Formats what it is given and never recomputes a statistic. May import
everything but cli.
"""

from __future__ import annotations

from serpeval.core.lazy import lazy_index
from serpeval.report.table import FORMATS, format_cell, render

__all__ = ["DEFAULT_HTML_PATH", "FORMATS", "explain_gate", "format_cell", "html_report", "render",
           "render_comparison", "save_html"]

#: Where ``serpeval report`` and ``serpeval demo`` write their HTML report when not told
#: (gitignored). The HTML report itself lives in :mod:`serpeval.report.html`.
DEFAULT_HTML_PATH = "serpeval-report.html"

_LAZY = {
    "explain_gate": "serpeval.report.gate",
    "html_report": "serpeval.report.html",
    "render_comparison": "serpeval.report.comparison",
    "save_html": "serpeval.report.html",
}


__getattr__, __dir__ = lazy_index(__name__, _LAZY)
