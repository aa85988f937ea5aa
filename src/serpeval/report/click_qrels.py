"""Render a :class:`~serpeval.judgments.clicks.ClickQrels`: the grade summary, and the per-pair
evidence as JSON lines.

``table``, ``markdown``, ``latex``: one row per grade (pairs, share, the threshold that starts
it, the range of estimates, median impressions) and the notes (model fit, thresholds, pairs
without a grade). ``json``: :meth:`ClickQrels.to_json_dict`; ``csv``/``tsv``: the grade rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.core.strict_json import dumps
from serpeval.report.table import render

if TYPE_CHECKING:
    from serpeval.judgments.clicks import ClickQrels

__all__ = ["item_lines", "render_click_qrels"]


def render_click_qrels(result: ClickQrels, fmt: str = "table", *, digits: int = 4, width: int | None = None) -> str:
    """The summary of inferred grades in ``fmt``."""
    if fmt == "json":
        return dumps(result.to_json_dict()) + "\n"
    if fmt in ("csv", "tsv"):
        return render(result.to_dicts(), fmt)
    title = f"qrels from clicks: {result.model}, {result.method} thresholds"
    return render(result.to_dicts(), fmt, digits=digits, title=title, notes=result.notes(), width=width)


def item_lines(result: ClickQrels) -> str:
    """One JSON object per (query, document): ids, grade (null: below the impressions floor),
    estimate, fitted parameters, impressions and clicks."""
    return "".join(dumps(row, indent=None) + "\n" for row in result.item_dicts())
