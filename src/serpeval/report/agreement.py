"""Render an :class:`~serpeval.judgments.agreement.Agreement` (and its ranking stability).

``table``, ``markdown`` and ``latex`` show, one after the other: the agreement statistics per
pair of label sets (value and bootstrap interval), what each pair compared and left out, the
confusion matrix of every pair and, when runs were given, the ranking stability and the
systems' means and ranks under each set. ``json`` is :meth:`Agreement.to_json_dict`; ``csv``
and ``tsv`` carry the statistics rows of :meth:`Agreement.to_dicts` at full precision.
Nothing here recomputes a statistic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from serpeval.core.strict_json import dumps
from serpeval.report.formatting import level as confidence_level
from serpeval.report.table import render

if TYPE_CHECKING:
    from serpeval.judgments.agreement import Agreement, RankingStability

__all__ = ["render_agreement"]


def _interval(low: float, high: float, digits: int) -> str:
    if low != low or high != high:  # NaN: no defined replicate
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _stability_rows(st: RankingStability) -> list[dict[str, Any]]:
    return [{"measure": r.measure, "a": r.a, "b": r.b, "tau": r.tau, "tau_AP": r.tau_ap, "pairs": r.decisions,
             "sig. a": r.significant_a, "sig. b": r.significant_b, "flips": r.flips, "reversed": r.reversals}
            for r in st.rows]


def _statistic_rows(result: Agreement, digits: int) -> list[dict[str, Any]]:
    ci = f"{confidence_level(result.confidence)} CI"
    return [{"sets": r["sets"], "statistic": r["statistic"], "value": r["value"],
             ci: _interval(r["ci_low"], r["ci_high"], digits), "docs": r["documents"]}
            for r in result.to_dicts()]


def render_agreement(result: Agreement, fmt: str = "table", *, digits: int = 4, width: int | None = None) -> str:
    """The agreement report in ``fmt`` (see the module docstring)."""
    if fmt == "json":
        return dumps(result.to_json_dict()) + "\n"
    if fmt in ("csv", "tsv"):
        return render(result.to_dicts(), fmt)
    title = "assessor agreement: " + ", ".join(s.name for s in result.sets)
    parts = [render(_statistic_rows(result, digits), fmt, digits=digits, title=title, notes=result.notes(),
                    width=width),
             render(result.coverage_dicts(), fmt, title="documents compared (both) and not compared (one set only)",
                    width=width)]
    for i, p in enumerate(result.pairs):
        parts.append(render(result.confusion_dicts(i), fmt, title=f"confusion: {p.a} (rows) vs {p.b} (columns)",
                            width=width))
    st = result.stability
    if st is not None:
        parts.append(render(_stability_rows(st), fmt, digits=digits, title="system-ranking stability",
                            notes=st.notes(), width=width))
        parts.append(render(st.means_dicts(), fmt, digits=digits, title="system means and ranks per label set",
                            width=width))
    return "\n".join(parts)
