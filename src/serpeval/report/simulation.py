"""The simulator's rows for reading: what ``serpeval simulate`` prints and the HTML report shows.

:meth:`SimulationResult.to_dicts <serpeval.online.simulation.simulator.SimulationResult.to_dicts>`
keeps numbers as numbers (JSON, CSV). :func:`display_rows` turns them into the compact rows a
person reads: impressions with thousands separators and their CI in one cell, the ratio to
interleaving with its CI in one cell, the relative gap in percent. It formats (with the
simulator's own ``count_text`` and ``ratio_text``, so the table and the bottom line agree);
every number is the result's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["display_rows"]


def display_rows(rows: Sequence[Mapping[str, Any]], confidence: float = 0.95) -> list[dict[str, Any]]:
    """Compact rows of the simulator's table (``to_dicts()`` rows, a ``click model`` column
    kept when present): ``A``, ``B`` and ``effect (B-A)`` as numbers; ``impressions [CI]``
    and ``x interleaving [CI]`` as text cells (the ratio only where both methods point the
    right way); ``relative (B-A)/A`` in percent. Rows read back from JSON hold null for an
    unreachable size or CI bound: shown as ``inf``; Monte Carlo's null (not simulated, or
    beyond the simulated range) as ``-``."""
    from serpeval.online.simulation.simulator import count_text, ratio_text
    from serpeval.report.formatting import level as confidence_level

    def needed(value: float | None) -> str:   # JSON writes an unreachable size (inf) as null
        return "inf" if value is None else count_text(value)

    def bound(value: float | None) -> str:    # a ratio's CI bound: null in JSON is inf too
        return "inf" if value is None else ratio_text(value)

    level = confidence_level(confidence)
    out = []
    for row in rows:
        agrees = next((k for k in row if k.startswith("agrees with ")), None)
        shown: dict[str, Any] = {}
        if "click model" in row:
            shown["click model"] = row["click model"]
        # team draft's designs keep their suffix: "team draft (triggered)", "... (ignore shared)"
        shown["method"] = (str(row["metric"]).replace("interleaving", "team draft", 1)
                           if row["method"] == "interleaving" else f"A/B: {row['metric']}")
        shown["A"], shown["B"], shown["effect (B-A)"] = row.get("A"), row.get("B"), row.get("effect (B-A)")
        relative = row.get("relative (B-A)/A")
        shown["relative"] = "" if relative is None or relative != relative else f"{relative:+.2%}"
        if agrees:
            shown[agrees] = row[agrees]
        shown[f"impressions [{level} CI]"] = (f"{needed(row['impressions needed'])} "
                                             f"[{needed(row['needed CI low'])}, {needed(row['needed CI high'])}]")
        ratio = row.get("ratio to interleaving")
        shown[f"x interleaving [{level} CI]"] = "" if ratio is None else (
            f"{ratio_text(ratio)} [{bound(row.get('ratio CI low'))}, {bound(row.get('ratio CI high'))}]")
        monte_carlo = row.get("Monte Carlo")
        shown["Monte Carlo"] = "-" if monte_carlo is None else count_text(monte_carlo)
        out.append(shown)
    return out
