"""Report sections for per-segment (group) breakdowns: a forest plot and a sortable table.

Offline: ``data.comparison["segments"]`` (:meth:`SegmentBreakdown.to_json_dict`, present when
the comparison was made with groups). Online: ``data.online["segments"]`` and the
``segments`` of A/B and interleaving JSON written with ``--by``
(:meth:`SegmentEffects.to_json_dict`). One forest plot per (measure or metric, comparison):
the effect and its interval in each group, coloured where significant after the correction
across groups. Builders draw the numbers given; they compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from serpeval.report.formatting import count, interval, number, p_value, signed
from serpeval.report.formatting import level as confidence_level
from serpeval.report.page import (
    Panel,
    ReportData,
    Row,
    Section,
    Table,
    TableColumn,
    fragment,
    num_cell,
    text_cell,
)
from serpeval.report.svg import Interval, interval_chart, label_width_for

__all__ = ["offline_segments", "online_segments"]

Data = Mapping[str, Any]


def _kind(row: Data, effect: float, improved: bool) -> str:
    if not row.get("significant") or not effect:
        return ""
    return "better" if improved else "worse"


def _families(rows: Sequence[Data], *keys: str) -> dict[tuple[Any, ...], list[Data]]:
    out: dict[tuple[Any, ...], list[Data]] = {}
    for row in rows:
        out.setdefault(tuple(row[k] for k in keys), []).append(row)
    return out


def _forest(rows: Sequence[Interval], level: str, what: str) -> Markup:
    chart = interval_chart(rows, x_label=f"{what} with {level} CI", width=760,
                           label_width=label_width_for(r.label for r in rows))
    return fragment("figure", chart, f"{what} in each group and its {level} confidence interval; "
                                     "coloured where significant after the correction across groups "
                                     "(green: better, red: worse).")


def _panels(parts: list[Panel], name: str, label: str) -> Markup:
    if len(parts) == 1:
        return parts[0].body
    return fragment("switcher", name, label, parts)


# ----------------------------------------------------------------------------- offline
def offline_segments(data: ReportData) -> Section | None:
    """The per-group breakdown of the comparison (None without groups)."""
    s = (data.comparison or {}).get("segments")
    if not s:
        return None
    level = confidence_level(s['confidence'])
    panels = []
    for (measure, system, baseline), rows in _families(s["rows"], "measure", "system", "baseline").items():
        intervals, table = [], []
        for r in rows:
            kind = _kind(r, r["delta"] or 0.0, r["improved"])
            n = f"{r['queries']}{' (few)' if r['too_small'] else ''}"
            tip = (f"{r['group']}: {n} queries\n{system} {number(r['mean'])} vs {baseline} "
                   f"{number(r['baseline_mean'])}\nΔ {signed(r['delta'])}, {level} CI "
                   f"{interval(r['ci_low'], r['ci_high'])}\np {p_value(r['p_value'])}, corrected "
                   f"{p_value(r['p_value_corrected'])}")
            delta = r["delta"] if r["delta"] is not None else float("nan")
            intervals.append(Interval(f"{r['group']} (n={r['queries']})", delta, r["ci_low"], r["ci_high"],
                                      tip, kind))
            marker = {"better": "▲", "worse": "▼"}.get(kind, "")
            table.append(Row([
                text_cell(r["group"]), num_cell(r["queries"], n, "warning" if r["too_small"] else ""),
                num_cell(r["mean"], number(r["mean"])), num_cell(r["baseline_mean"], number(r["baseline_mean"])),
                num_cell(r["delta"], signed(r["delta"]), f"delta {kind}".strip()),
                num_cell(r["ci_low"], interval(r["ci_low"], r["ci_high"])),
                num_cell(r["p_value"], p_value(r["p_value"])),
                num_cell(r["p_value_corrected"], p_value(r["p_value_corrected"]), "sig" if r["significant"] else ""),
                text_cell(marker, kind)], kind))
        columns = [TableColumn("group", False), TableColumn("queries"), TableColumn(system),
                   TableColumn(baseline), TableColumn("Δ"), TableColumn(f"{level} CI"),
                   TableColumn("p", help="paired test on the group's queries"),
                   TableColumn(f"p ({s['correction']})", help="corrected across the groups"),
                   TableColumn("sig", False)]
        interaction = next((i for i in s["interactions"] if (i["measure"], i["system"], i["baseline"])
                            == (measure, system, baseline)), None)
        body = [_forest(intervals, level, f"Δ {measure}"), fragment("table", Table(columns, table))]
        if interaction and interaction["statistic"] is not None:
            anova = (f", ANOVA p {p_value(interaction['p_anova'])}" if interaction.get("p_anova") is not None
                     else "")
            body.append(fragment("paragraph", f"Does the effect differ between groups? F = "
                                              f"{interaction['statistic']:.3f}, permutation p "
                                              f"{p_value(interaction['p_value'])}{anova}."))
        panels.append(Panel(f"{measure}: {system} vs {baseline}", Markup("").join(body)))
    content = [_panels(panels, "segments-offline", "measure"), fragment("notes", s.get("notes", []))]
    return Section("segments", f"By group: {s['grouping']}", Markup("").join(content),
                   summary="Where did it change? Δ per group with its interval, p corrected across groups.")


# ----------------------------------------------------------------------------- online
def _online_items(data: ReportData) -> list[Data]:
    items = list(data.online.get("segments", []))
    for kind in ("ab", "interleaving"):
        items += [d["segments"] for d in data.online.get(kind, []) if isinstance(d.get("segments"), Mapping)]
    return items


def online_segments(data: ReportData) -> Section | None:
    """Per-segment A/B effects and interleaving preferences (None when not given)."""
    items = _online_items(data)
    if not items:
        return None
    panels = []
    for s in items:
        level = confidence_level(1 - float(s.get("alpha") or 0.05))
        for (metric, treatment), rows in _families(s["rows"], "metric", "treatment").items():
            intervals, table = [], []
            for r in rows:
                kind = _kind(r, r["effect"] or 0.0, r["improved"])   # improved: the treatment (B) better
                tip = (f"{r['segment']}: {count(r['units'])} units\nΔ {signed(r['effect'])}, {level} CI "
                       f"{interval(r['ci_low'], r['ci_high'])}\np {p_value(r['p_value'])}, corrected "
                       f"{p_value(r['p_value_corrected'])}")
                effect = r["effect"] if r["effect"] is not None else float("nan")
                intervals.append(Interval(f"{r['segment']}", effect, r["ci_low"], r["ci_high"], tip, kind))
                table.append(Row([
                    text_cell(r["segment"]), num_cell(r["units"], count(r["units"])),
                    num_cell(r["value_control"], number(r["value_control"])),
                    num_cell(r["value_treatment"], number(r["value_treatment"])),
                    num_cell(r["effect"], signed(r["effect"]), kind),
                    num_cell(r["ci_low"], interval(r["ci_low"], r["ci_high"])),
                    num_cell(r["p_value"], p_value(r["p_value"])),
                    num_cell(r["p_value_corrected"], p_value(r["p_value_corrected"]),
                             "sig" if r["significant"] else "")], kind))
            names = ("share A", "share B") if s["kind"] == "interleaving" else (rows[0]["control"], treatment)
            columns = [TableColumn("segment", False), TableColumn("units"), TableColumn(str(names[0])),
                       TableColumn(str(names[1])), TableColumn("Δ"), TableColumn(f"{level} CI"),
                       TableColumn("p"), TableColumn(f"p ({s['correction']})", help="corrected across segments")]
            label = f"{metric}: {treatment} vs {rows[0]['control']}" if s["kind"] == "ab" else "interleaving Δ"
            panels.append(Panel(f"{label} by {s['by']}", Markup("").join(
                [_forest(intervals, level, f"Δ {metric}"), fragment("table", Table(columns, table))])))
    notes = [n for s in items for n in s.get("notes", [])]
    warnings = [n for n in notes if n.startswith(("SIMPSON", "WARNING"))]
    content = [fragment("paragraph", w, "warning") for w in warnings]
    content += [_panels(panels, "segments-online", "effect"), fragment("notes", notes)]
    return Section("segments-online", "Online: by segment", Markup("").join(content),
                   summary="Effect per segment with its interval clustered by user, corrected across "
                           "segments; Simpson's paradox and overlapping users are called out.")
