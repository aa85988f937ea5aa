"""Render per-group (segment) breakdowns: offline (:class:`SegmentBreakdown`, :class:`GroupMeans`,
:class:`GroupGate`) and online (:class:`~serpeval.online.experiments.segments.SegmentEffects`).

One row per group: n, means, Δ with sign, the interval, p, the p corrected across groups, and
a marker (▲ significantly better, ▼ worse, after the correction); ``!`` marks a group too
small for the test. Nothing here recomputes a statistic.
"""

from __future__ import annotations

import math
from typing import Any

from serpeval.core.strict_json import dumps
from serpeval.report.comparison import _markdown, format_p, text_table
from serpeval.report.formatting import level as confidence_level
from serpeval.report.table import fit_text, render

__all__ = ["render_group_gate", "render_group_means", "render_online_segments", "render_segments"]


def _signed(value: float, digits: int) -> str:
    return "nan" if value is None or math.isnan(value) else f"{value:+.{digits}f}"


def _interval(low: float, high: float, digits: int) -> str:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return f"[{_signed(low, digits)}, {_signed(high, digits)}]"


def _p(value: float, digits: int) -> str:
    return "" if value is None or math.isnan(value) else format_p(value, digits)


def _finish(rows: list[dict[str, Any]], cols: list[str], styles: dict[tuple[int, str], str], fmt: str,
            title: str, notes: list[str], color: bool, width: int | None) -> str:
    if fmt == "markdown":
        return _markdown(rows, cols, title=title, notes=notes)
    return fit_text([title], width) + text_table(rows, cols, styles, notes=notes, color=color, width=width)


def render_segments(s: Any, fmt: str = "table", *, digits: int = 4, color: bool = False,
                    width: int | None = None) -> str:
    """A :class:`~serpeval.comparison.segments.SegmentBreakdown` in ``fmt``."""
    if fmt == "json":
        return dumps(s.to_json_dict()) + "\n"
    if fmt in ("csv", "tsv"):
        return render(s.to_dicts(), fmt)
    ci = f"{confidence_level(s.confidence)} CI"
    corr = "p (uncorr.)" if s.correction == "none" else f"p ({s.correction})"
    several = len({r.system for r in s.rows}) > 1 or len({r.baseline for r in s.rows}) > 1
    cols = ["measure", *(["system"] if several else []), "group", "n", "mean", "base", "Δ", ci, "p", corr,
            "sig"]
    rows: list[dict[str, Any]] = []
    styles: dict[tuple[int, str], str] = {}
    for r in s.rows:
        marker = ("▲" if r.improved else "▼") if r.significant and r.delta != 0 else ""
        rows.append({"measure": r.measure, "system": r.system, "group": r.group,
                     "n": f"{r.queries}{'!' if r.too_small else ''}", "mean": f"{r.mean:.{digits}f}",
                     "base": f"{r.baseline_mean:.{digits}f}", "Δ": _signed(r.delta, digits),
                     ci: _interval(r.ci_low, r.ci_high, digits), "p": _p(r.p_value, digits),
                     corr: _p(r.p_value_corrected, digits), "sig": marker})
        if marker:
            style = "bold green" if r.improved else "bold red"
            for col in ("Δ", "sig", corr):
                styles[(len(rows) - 1, col)] = style
    notes = [*s.notes(), f"sig: ▲ better / ▼ worse than the baseline in the group (corrected p <= {s.alpha:g}); "
             f"n!: fewer than {s.min_queries} queries"]
    pair = "" if several or not s.rows else f": {s.rows[0].system} vs {s.rows[0].baseline}"
    return _finish(rows, cols, styles, fmt, f"per-group breakdown by {s.grouping}{pair}", notes, color, width)


def render_group_means(g: Any, fmt: str = "table", *, digits: int = 4, color: bool = False,
                       width: int | None = None) -> str:
    """A :class:`~serpeval.comparison.segments.GroupMeans` in ``fmt``."""
    if fmt == "json":
        return dumps({"grouping": g.grouping, "rows": g.to_dicts(), "notes": g.notes()}) + "\n"
    if fmt in ("csv", "tsv"):
        return render(g.to_dicts(), fmt)
    cols = ["group", "run", "n", *g.measures]
    rows = [{"group": r["group"], "run": r["run"], "n": str(r["queries"]),
             **{m: "" if math.isnan(r[m]) else f"{r[m]:.{digits}f}" for m in g.measures}} for r in g.rows]
    return _finish(rows, cols, {}, fmt, f"means by {g.grouping}", g.notes(), color, width)


def render_group_gate(g: Any, *, digits: int = 4, width: int | None = None) -> str:
    """A :class:`~serpeval.comparison.segment_gate.GroupGate` as a table with its decision."""
    # Without a correction the corrected p is the p (non-inferiority's default): one column.
    cols = ["group", "measure", "n", "base", "cand", "Δ", "margin", "p",
            *([] if g.correction == "none" else ["p (corr.)"]), "result"]
    rows = []
    for c in sorted(g.checks, key=lambda c: c.measure):   # measure-major: one section per measure
        rows.append({"group": c.group, "measure": c.measure, "n": str(c.queries),
                     "base": f"{c.baseline_mean:.{digits}f}", "cand": f"{c.candidate_mean:.{digits}f}",
                     "Δ": _signed(c.delta, digits), "margin": f"{c.margin:.{digits}f}",
                     "p": _p(c.p_value, digits), "p (corr.)": _p(c.p_value_corrected, digits),
                     "result": ("pass" if c.passed else "FAIL") if c.gated else "not gated"})
    title = f"groups: {'PASS' if g.passed else 'FAIL'} ({g.rule} in every group with >= {g.min_queries} queries)"
    return _finish(rows, cols, {}, "table", title, g.notes(), False, width)


def render_online_segments(s: Any, fmt: str = "table", *, digits: int = 4, color: bool = False,
                           width: int | None = None) -> str:
    """An online per-segment analysis (:class:`~serpeval.online.experiments.segments.SegmentEffects`)."""
    if fmt == "json":
        return dumps(s.to_json_dict()) + "\n"
    if fmt in ("csv", "tsv"):
        return render(s.to_dicts(), fmt)
    ci = f"{confidence_level(1 - s.alpha)} CI"
    corr = "p (uncorr.)" if s.correction == "none" else f"p ({s.correction})"
    interleaving = s.kind == "interleaving"
    # several treatments (A/B): each row names its treatment, as the main ab table does (and
    # its value columns are "control value", "treatment value" there too)
    several = not interleaving and len({r.treatment for r in s.rows}) > 1
    a, b = ("share A", "share B") if interleaving else \
        ("control value", "treatment value") if several else ("control", "treatment")
    cols = [*([] if interleaving else ["metric"]), *(["treatment"] if several else []), "segment", "units", a, b,
            "Δ", ci, "p", corr, "prefers" if interleaving else "sig"]
    rows: list[dict[str, Any]] = []
    styles: dict[tuple[int, str], str] = {}
    for r in s.rows:
        if interleaving:   # who is preferred, whatever the sign convention of Δ
            marker = ("A" if r.value_control > 0.5 else "B") if r.significant and r.effect != 0 else ""
        else:
            marker = ("▲" if r.improved else "▼") if r.significant and r.effect != 0 else ""
        rows.append({"metric": r.metric, "treatment": r.treatment, "segment": r.segment, "units": f"{r.units:,}",
                     a: f"{r.value_control:.{digits}f}", b: f"{r.value_treatment:.{digits}f}",
                     "Δ": _signed(r.effect, digits), ci: _interval(r.ci_low, r.ci_high, digits),
                     "p": _p(r.p_value, digits), corr: _p(r.p_value_corrected, digits),
                     cols[-1]: marker})
        if marker and not interleaving:
            style = "bold green" if r.improved else "bold red"
            for col in ("Δ", "sig", corr):
                styles[(len(rows) - 1, col)] = style
    return _finish(rows, cols, styles, fmt, s.title(), s.notes(), color, width)
