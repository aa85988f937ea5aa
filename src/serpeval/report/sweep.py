"""Renderers of a parameter sweep (``SweepResult.to_json_dict()``): terminal heat map and HTML page.

They render what they are given (the summary, the in-sample table, the heat map grid and
the sentences); no statistic is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from serpeval.report.table import table_text

__all__ = ["heatmap_text", "sweep_html"]

#: Five background shades from the lowest to the highest mean (terminal; ANSI 256 greens).
_SHADES = ("grey15", "dark_green", "green4", "green3", "green1")


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _level(value: float, low: float, high: float) -> int:
    if math.isnan(value) or high <= low:
        return len(_SHADES) - 1 if not math.isnan(value) else 0
    return min(len(_SHADES) - 1, int((value - low) / (high - low) * len(_SHADES)))


def heatmap_text(heat: Mapping[str, Any], *, digits: int = 4, color: bool = False, width: int | None = None) -> str:
    """The measure over two parameters as a terminal grid: rows one parameter, columns the
    other; the selected setting marked ``*``; with ``color`` the cells shaded low -> high."""
    from rich.table import Table

    values = heat["values"]
    finite = [v for row in values for v in row if v is not None and not math.isnan(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    best_row, best_col = heat["best"]
    table = Table(title=f"{heat['measure']} heat map (* selected)", title_justify="left")
    table.add_column(f"{heat['rows']} \\ {heat['columns']}", justify="right")
    for col in heat["column_values"]:
        table.add_column(_value(col), justify="right")
    for i, row_value in enumerate(heat["row_values"]):
        cells = []
        for j, value in enumerate(values[i]):
            if value is None or math.isnan(value):
                cells.append("-")
                continue
            text = f"{value:.{digits}f}" + ("*" if (i, j) == (best_row, best_col) else " ")
            if color:
                shade = _SHADES[_level(value, low, high)]
                text = f"[black on {shade}]{text}[/]" if _level(value, low, high) >= 2 else f"[on {shade}]{text}[/]"
            cells.append(text)
        table.add_row(_value(row_value), *cells)
    return table_text(table, width=width, color=color)


def _color(value: float, low: float, high: float) -> str:
    """A light-to-dark green background for value in [low, high]."""
    share = 0.5 if high <= low else (value - low) / (high - low)
    lightness = 95 - 55 * share
    return f"hsl(140, 55%, {lightness:.0f}%)"


def sweep_html(data: Mapping[str, Any], *, title: str = "Parameter sweep", subtitle: str = "") -> str:
    """A self-contained HTML page: the decision (cards and sentences), the heat map, the table."""
    from serpeval.report.formatting import level as confidence_level
    from serpeval.report.page import Card, Row, Section, Table, TableColumn, fragment, num_cell, render_page, text_cell

    summary = data["summary"]
    measure = summary["measure"]
    low_ci, high_ci = summary["cv_ci"]
    kept = summary.get("kept")
    # the interval is 1 - alpha (cv_ci_level is that in percent: 97.5 for alpha 0.025; older
    # summaries rounded it, so alpha is read first)
    level = (confidence_level(1 - float(summary["alpha"])) if summary.get("alpha") is not None
             else f"{summary['cv_ci_level']}%")
    cards = [
        Card("selected setting", str(summary["selected"]),
             [f"{measure} {summary['selected_mean']:.4f} in-sample", f"baseline {summary['baseline']}: "
              f"{summary['baseline_mean']:.4f}"]),
        Card("cross-validated gain", f"{summary['cv_gain']:+.4f}",
             [f"{level} CI [{low_ci:+.4f}, {high_ci:+.4f}]",
              "significant" if summary["significant"] else "not significant"],
             kind="better" if summary["significant"] else ""),
        Card("winner's curse", "-" if kept is None else f"{kept:.0%} kept",
             [f"in-sample gain {summary['in_sample_gain']:+.4f}", f"over {summary['settings'] - 1} comparisons"]),
    ]
    body = fragment("cards", cards) + fragment("notes", list(data.get("sentences", [])))
    sections = [Section("decision", "Decision", Markup(body), summary="the cross-validated estimate")]
    heat = data.get("heatmap")
    if heat:
        finite = [v for row in heat["values"] for v in row if v is not None and not math.isnan(v)]
        low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
        head = "".join(f"<th>{escape(_value(c))}</th>" for c in heat["column_values"])
        rows_html = []
        for i, row_value in enumerate(heat["row_values"]):
            cells = []
            for j, value in enumerate(heat["values"][i]):
                if value is None or math.isnan(value):
                    cells.append("<td>-</td>")
                    continue
                mark = " &#9733;" if [i, j] == list(heat["best"]) else ""
                cells.append(f'<td class="num" style="background:{_color(value, low, high)}" '
                             f'title="{escape(heat["rows"])}={escape(_value(row_value))}, '
                             f'{escape(heat["columns"])}={escape(heat["column_values"][j])}">{value:.4f}{mark}</td>')
            rows_html.append(f"<tr><th>{escape(_value(row_value))}</th>{''.join(cells)}</tr>")
        grid = (f'<table class="heatmap"><caption>{escape(measure)} by {escape(heat["rows"])} (rows) and '
                f'{escape(heat["columns"])} (columns); &#9733; the selected setting</caption>'
                f"<tr><th>{escape(heat['rows'])} \\ {escape(heat['columns'])}</th>{head}</tr>"
                f"{''.join(rows_html)}</table>")
        sections.append(Section("heatmap", "Heat map", Markup(grid), summary=f"{measure} over two parameters"))
    rows: Sequence[Mapping[str, Any]] = data["table"]
    if rows:
        names = list(rows[0])
        columns = [TableColumn(n, numeric=n not in ("role",) and not isinstance(rows[0][n], str)) for n in names]
        table_rows = []
        for row in rows:
            row_cells = []
            for n in names:
                v = row[n]
                if isinstance(v, float):
                    row_cells.append(num_cell(v, f"{v:.4f}" if abs(v) >= 1e-4 or v == 0 else f"{v:.2e}"))
                elif isinstance(v, int):
                    row_cells.append(num_cell(float(v), str(v)))
                else:
                    row_cells.append(text_cell("" if v is None else str(v)))
            table_rows.append(Row(row_cells, kind="better" if row.get("role") == "selected" else ""))
        table = Table(columns, table_rows, caption="every setting, best first; p: paired test against the "
                                                   "baseline; corrected for the number of settings", scroll=True)
        sections.append(Section("settings", "In-sample table", fragment("table", table),
                                summary=f"{len(rows)} settings"))
    return render_page(title, sections, subtitle=subtitle)
