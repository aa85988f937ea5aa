"""Render rows (``list[dict]``, from any result's ``to_dicts()``) as text.

Formats: ``table`` (rich, for terminals), ``csv``, ``tsv``, ``json``, ``markdown``,
``latex`` (booktabs). Floats are printed with ``digits`` decimals, integers as integers.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

from serpeval.core.strict_json import dumps

__all__ = ["FORMATS", "format_cell", "render", "rich_table"]
__all__ = ["FORMATS", "format_cell", "markdown_cell", "render", "rich_table"]

FORMATS = ("table", "csv", "tsv", "json", "markdown", "latex")


def format_cell(value: Any, digits: int = 4) -> str:
    """Text of one cell: floats with ``digits`` decimals, integral counts without."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}f}"
    if value is None:
        return ""
    return str(value)


def _columns(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None) -> list[str]:
    if columns is not None:
        return list(columns)
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def render(
    rows: Sequence[dict[str, Any]],
    fmt: str = "table",
    *,
    columns: Sequence[str] | None = None,
    digits: int = 4,
    title: str | None = None,
    notes: Sequence[str] = (),
    width: int | None = None,
    styles: dict[tuple[int, str], str] | None = None,
    color: bool = False,
) -> str:
    """Render ``rows`` in ``fmt``; ``notes`` become a caption/footer where the format allows.

    ``styles`` maps ``(row index, column)`` to a rich style (terminal table only), used to
    mark the best value or a significant difference.
    """
    cols = _columns(rows, columns)
    if fmt == "json":
        payload: Any = list(rows)
        if title or notes:
            payload = {"title": title, "rows": list(rows), "notes": list(notes)}
        return dumps(payload) + "\n"
    if fmt in ("csv", "tsv"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        writer.writerow(cols)
        for row in rows:
            writer.writerow([_raw(row.get(c)) for c in cols])
        return buffer.getvalue()
    if fmt == "markdown":
        return _markdown(rows, cols, digits, title, notes)
    if fmt == "latex":
        return _latex(rows, cols, digits, title, notes)
    if fmt == "table":
        return _rich_table(rows, cols, digits, title, notes, width, styles or {}, color)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _raw(value: Any) -> str:
    """Full-precision text for machine-readable formats."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def markdown_cell(text: Any) -> str:
    """``text`` safe in a GitHub-flavoured markdown table cell: ``|`` escaped (and the
    backslashes, so ``a\\|b`` keeps both characters), line breaks as spaces.

    >>> markdown_cell("bm25|rm3")
    'bm25\\\\|rm3'
    """
    flat = " ".join(str(text).splitlines())
    return flat.replace("\\", "\\\\").replace("|", "\\|")


def _markdown(rows: Sequence[dict[str, Any]], cols: list[str], digits: int,
              title: str | None, notes: Sequence[str]) -> str:
    lines = []
    if title:
        lines += [f"**{' '.join(title.splitlines())}**", ""]
    lines.append("| " + " | ".join(map(markdown_cell, cols)) + " |")
    lines.append("|" + "|".join(":---" if i == 0 else "---:" for i in range(len(cols))) + "|")
    for row in rows:
        lines.append("| " + " | ".join(markdown_cell(format_cell(row.get(c), digits))
                                       for c in cols) + " |")
    if notes:
        lines.append("")
        lines += [f"_{note}_  " for note in notes]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex(rows: Sequence[dict[str, Any]], cols: list[str], digits: int,
           title: str | None, notes: Sequence[str]) -> str:
    align = "l" + "r" * (len(cols) - 1)
    out = ["\\begin{table}[t]", "\\centering"]
    if title:
        out.append(f"\\caption{{{latex_escape(title)}}}")
    out += [f"\\begin{{tabular}}{{{align}}}", "\\toprule",
            " & ".join(latex_escape(c) for c in cols) + " \\\\", "\\midrule"]
    for row in rows:
        cells = []
        for c in cols:
            value = row.get(c)
            text = format_cell(value, digits)
            cells.append(text if isinstance(value, str) and value.startswith("$") else latex_escape(text))
        out.append(" & ".join(cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    for note in notes:
        out.append(f"\\par\\footnotesize {latex_escape(note)}")
    out.append("\\end{table}")
    return "\n".join(out) + "\n"


def rich_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None, *,
               digits: int = 4, title: str | None = None,
               styles: dict[tuple[int, str], str] | None = None) -> Any:
    """A :class:`rich.table.Table` of ``rows`` (numbers right-aligned), to print on a console."""
    from rich.table import Table

    cols = _columns(rows, columns)
    styles = styles or {}
    table = Table(title=title, title_justify="left", header_style="bold")
    for i, c in enumerate(cols):
        numeric = any(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool) for r in rows)
        widest = max((len(format_cell(r.get(c), digits)) for r in rows), default=1)
        # Values never wrap or truncate; long headers wrap instead.
        table.add_column(c, justify="right" if numeric and i > 0 else "left",
                         min_width=widest if numeric or i == 0 else None, no_wrap=i == 0)
    for index, row in enumerate(rows):
        cells = []
        for c in cols:
            text = _escape_markup(format_cell(row.get(c), digits))
            style = styles.get((index, c))
            cells.append(f"[{style}]{text}[/{style}]" if style else text)
        table.add_row(*cells)
    return table


def _rich_table(rows: Sequence[dict[str, Any]], cols: list[str], digits: int, title: str | None,
                notes: Sequence[str], width: int | None,
                styles: dict[tuple[int, str], str], color: bool = False) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or 200, color_system="standard" if color else None,
                      force_terminal=color, highlight=False)
    console.print(rich_table(rows, cols, digits=digits, title=title, styles=styles))
    text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"
    return text + "".join(f"{note}\n" for note in notes)


def _escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
