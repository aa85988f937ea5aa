"""The simulator's rows for reading: what ``serpeval simulate`` prints and the HTML report shows.

:meth:`SimulationResult.to_dicts <serpeval.online.clicks.simulate.SimulationResult.to_dicts>`
keeps numbers as numbers (JSON, CSV). :func:`display_rows` turns them into the compact rows a
person reads: impressions with thousands separators and their CI in one cell, the ratio to
interleaving with its CI in one cell, the relative gap in percent. It formats; every number
is the result's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from serpeval.report.formatting import count

__all__ = ["display_rows", "ratio_text"]


def ratio_text(value: float | None) -> str:
    """A ratio with 3 significant digits (``60.2``, ``0.027``), thousands separated from 1,000."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def _count(value: float | None) -> str:
    return "-" if value is None else count(value)


def display_rows(rows: Sequence[Mapping[str, Any]], confidence: float = 0.95) -> list[dict[str, Any]]:
    """Compact rows of the simulator's table (``to_dicts()`` rows, a ``click model`` column
    kept when present): ``A``, ``B`` and ``effect (B-A)`` as numbers; ``impressions [CI]``
    and ``x interleaving [CI]`` as text cells (the ratio only where both methods point the
    right way); ``relative (B-A)/A`` in percent."""
    level = f"{confidence:.0%}"
    out = []
    for row in rows:
        agrees = next((k for k in row if k.startswith("agrees with ")), None)
        shown: dict[str, Any] = {}
        if "click model" in row:
            shown["click model"] = row["click model"]
        shown["method"] = "team draft" if row["method"] == "interleaving" else f"A/B: {row['metric']}"
        shown["A"], shown["B"], shown["effect (B-A)"] = row.get("A"), row.get("B"), row.get("effect (B-A)")
        relative = row.get("relative (B-A)/A")
        shown["relative"] = "" if relative is None or relative != relative else f"{relative:+.2%}"
        if agrees:
            shown[agrees] = row[agrees]
        shown[f"impressions [{level} CI]"] = (f"{_count(row['impressions needed'])} "
                                             f"[{_count(row['needed CI low'])}, {_count(row['needed CI high'])}]")
        ratio = row.get("ratio to interleaving")
        shown[f"x interleaving [{level} CI]"] = "" if ratio is None else (
            f"{ratio_text(ratio)} [{ratio_text(row.get('ratio CI low'))}, {ratio_text(row.get('ratio CI high'))}]")
        shown["Monte Carlo"] = _count(row.get("Monte Carlo"))
        out.append(shown)
    return out
