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

__all__ = ["DEFAULT_WIDTH", "FORMATS", "FRAMES", "column_widths", "fit_text", "fitted_widths", "format_cell",
           "header_pieces", "markdown_cell", "record_layout", "render", "rich_table", "table_of", "table_text",
           "wrap_header"]

FORMATS = ("table", "csv", "tsv", "json", "markdown", "latex")

#: Width of terminal tables when the caller gives none (pipes and files): today's fixed layout.
DEFAULT_WIDTH = 200


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


# (``|``, ``<`` and ``>`` too: in LaTeX's default OT1 font encoding they print as an em dash,
# an inverted exclamation mark and an inverted question mark)
_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}"}


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
               styles: dict[tuple[int, str], str] | None = None, width: int | None = None) -> Any:
    """A :class:`rich.table.Table` of ``rows`` (numbers right-aligned), to print on a console.

    With ``width``, the columns are sized by :func:`fitted_widths` to fit it (cells wrap at
    spaces only, so a number is never split; boxed, else compact); a table that cannot fit
    keeps its natural widths.
    """
    cols = _columns(rows, columns)
    grid = [[format_cell(r.get(c), digits) for c in cols] for r in rows]
    right = [i > 0 and any(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)
                           for r in rows) for i, c in enumerate(cols)]
    fit = fitted_widths(cols, grid, width) if width else None
    return table_of(cols, grid, right, styles=styles, title=title,
                    widths=fit[0] if fit else None, compact=bool(fit and fit[1]))


def table_of(headers: Sequence[str], grid: Sequence[Sequence[str]], right: Sequence[bool], *,
             styles: dict[tuple[int, str], str] | None = None, title: str | None = None,
             widths: Sequence[int] | None = None, sections: Sequence[int] = (),
             compact: bool = False) -> Any:
    """A rich table of preformatted ``grid`` cells; ``right[i]`` right-aligns column ``i``;
    ``widths`` fixes the column widths (cells then wrap at spaces, headers also at the breaks
    of :func:`header_pieces`); a rule precedes each row index in ``sections``. ``compact``:
    no frame, a rule under the header, columns two spaces apart (:data:`FRAMES`)."""
    from rich import box
    from rich.table import Table

    styles = styles or {}
    frame: dict[str, Any] = ({"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False,
                              "collapse_padding": True} if compact else {})
    table = Table(title=title, title_justify="left", header_style="bold", **frame)
    # Without fixed widths (a table too wide for any fit), rich shrinks the columns, never
    # below their longest word (a header's whole words too: rich would fold one anywhere).
    narrowest = [_cell_range([h, *(row[i] for row in grid)], header_breaks=False)[0] for i, h in enumerate(headers)]
    for i, header in enumerate(headers):
        table.add_column(wrap_header(header, widths[i]) if widths else header,
                         justify="right" if right[i] else "left",
                         width=widths[i] if widths else None,
                         min_width=None if widths else narrowest[i], overflow="fold")
    for index, cells in enumerate(grid):
        if index in sections:
            table.add_section()
        marked = []
        for header, text in zip(headers, cells, strict=True):
            style = styles.get((index, header))
            escaped = _escape_markup(text)
            marked.append(f"[{style}]{escaped}[/{style}]" if style else escaped)
        table.add_row(*marked)
    return table


#: The two frames a terminal table may take, roomiest first: ``(compact, characters a table of
#: n columns spends outside its cells)``. Boxed: rich's heavy-head box, 3 a column plus 1;
#: compact: no frame, two spaces between columns.
FRAMES: tuple[tuple[bool, Any], ...] = ((False, lambda n: 3 * n + 1), (True, lambda n: 2 * max(n - 1, 0)))


def header_pieces(header: str) -> list[str]:
    """The pieces a header may wrap between: its words, each also broken before ``@`` and
    after ``(`` or ``,`` (``nDCG(gain=exp)@10`` -> ``nDCG(``, ``gain=exp)``, ``@10``), so that a
    measure name can take two lines where the cells are narrower; a piece keeps its digits.

    >>> header_pieces("nDCG(gain=exp)@10")
    ['nDCG(', 'gain=exp)', '@10']
    >>> header_pieces("p (Holm)")
    ['p', '(Holm)']
    """
    import re

    # before an ``@`` or after a ``(`` or ``,``, never at the start of a word: ``(Holm)`` stays whole
    return [piece for word in header.split() for piece in re.split(r"(?<=.)(?=@)|(?<=.[(,])", word) if piece]


def wrap_header(header: str, width: int) -> str:
    """``header`` on as few lines of at most ``width`` characters as its pieces allow (a piece
    longer than ``width`` has a line of its own; rich folds it).

    >>> wrap_header("nDCG(gain=exp)@10", 14)
    'nDCG(gain=exp)\\n@10'
    """
    from rich.cells import cell_len

    lines = [""]
    for w, word in enumerate(header.split()):
        for p, piece in enumerate(header_pieces(word)):
            glue = " " if w and not p else ""
            if lines[-1] and cell_len(lines[-1]) + len(glue) + cell_len(piece) > width:
                lines.append(piece)
            else:
                lines[-1] += (glue if lines[-1] else "") + piece
    return "\n".join(lines)


def _cell_range(texts: Sequence[str], *, header_breaks: bool = True) -> tuple[int, int]:
    """(narrowest, natural) width of a column whose header is ``texts[0]`` and cells the
    rest: its longest word (with ``header_breaks``, a header's longest piece,
    :func:`header_pieces`) and its longest line."""
    from rich.cells import cell_len

    header, cells = (texts[0], texts[1:]) if texts else ("", [])
    pieces = header_pieces(header) if header_breaks else header.split()
    words = [cell_len(w) for t in cells for w in t.split()] + [cell_len(p) for p in pieces]
    lines = [cell_len(line) for t in texts for line in t.splitlines()]
    return max(words, default=1), max(lines, default=1)


def column_widths(headers: Sequence[str], grid: Sequence[Sequence[str]], width: int, *,
                  compact: bool = False) -> list[int] | None:
    """Widths of the columns so that the table fits in ``width`` with its frame (:data:`FRAMES`:
    rich's heavy-head box, or with ``compact`` none), or ``None`` when even the narrowest
    layout does not fit.

    Each column starts at its natural width (longest line of header and cells) and may shrink
    down to its longest word, never below: words (numbers among them) are never split; a
    header may also break at its :func:`header_pieces`. Prose columns (no digit in any cell)
    shrink first, then the others; within each, the column with the most room to spare, one
    character at a time.
    """
    ranges = [_cell_range([h, *(row[i] for row in grid)]) for i, h in enumerate(headers)]
    widths = [natural for _, natural in ranges]
    frame = dict(FRAMES)[compact]
    excess = sum(widths) + frame(len(headers)) - width
    if excess <= 0:
        return widths
    spare = [natural - narrow for narrow, natural in ranges]
    if sum(spare) < excess:
        return None
    prose = [not any(ch.isdigit() for row in grid for ch in row[i]) for i in range(len(headers))]
    while excess > 0:
        i = max(range(len(widths)), key=lambda j: (spare[j] > 0 and prose[j], spare[j], j))
        widths[i] -= 1
        spare[i] -= 1
        excess -= 1
    return widths


def fitted_widths(headers: Sequence[str], grid: Sequence[Sequence[str]],
                  width: int) -> tuple[list[int], bool] | None:
    """The column widths of the roomiest frame in which the table fits ``width`` and whether
    that frame is the compact one; ``None`` when it fits in neither (the record layout then)."""
    for compact, _ in FRAMES:
        widths = column_widths(headers, grid, width, compact=compact)
        if widths is not None:
            return widths, compact
    return None


def fit_text(lines: Sequence[str], width: int | None) -> str:
    """``lines`` (titles, notes) each ending in a newline; with ``width``, wrapped at spaces to
    it (never at a hyphen, so ``8.0e-14`` stays whole; only a word longer than the line is
    broken)."""
    import textwrap

    out = []
    for line in lines:
        if width is None or len(line) <= width:
            out.append(line)
            continue
        out += textwrap.wrap(line, width, break_on_hyphens=False) or [""]
    return "".join(f"{line}\n" for line in out)


def record_layout(headers: Sequence[str], grid: Sequence[Sequence[str]], width: int,
                  title: str | None = None) -> str:
    """The table for a terminal too narrow for it: one block per row, one ``column  value``
    line per non-empty cell (values wrapped at spaces under their column), blocks separated by
    a blank line. Keys longer than half the width put their value on the next line, indented."""
    import textwrap

    from rich.cells import cell_len

    key_width = max((cell_len(h) for h in headers), default=0)
    inline = key_width + 2 <= width // 2
    indent = key_width + 2 if inline else 2
    out = fit_text([title], width).splitlines() if title else []
    for cells in grid:
        if out:
            out.append("")
        for header, text in zip(headers, cells, strict=True):
            if not text.strip():
                continue
            values = textwrap.wrap(text, width - indent, break_on_hyphens=False) or [""]
            if inline:
                out.append(f"{header}{' ' * (indent - cell_len(header))}{values[0]}".rstrip())
                out += [" " * indent + v for v in values[1:]]
            else:
                out += fit_text([header], width).splitlines()
                out += [" " * indent + v for v in values]
    return "\n".join(out) + "\n"


def table_text(table: Any, *, width: int | None, color: bool = False) -> str:
    """A rich table printed at ``width`` (``None``: :data:`DEFAULT_WIDTH`), trailing spaces
    removed; ANSI colours only when ``color``."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or DEFAULT_WIDTH,
                      color_system="standard" if color else None, force_terminal=color,
                      highlight=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _rich_table(rows: Sequence[dict[str, Any]], cols: list[str], digits: int, title: str | None,
                notes: Sequence[str], width: int | None,
                styles: dict[tuple[int, str], str], color: bool = False) -> str:
    """The terminal table at ``width``: fitted columns, or the record layout when they cannot
    fit; ``None`` is the fixed :data:`DEFAULT_WIDTH` layout of pipes and files."""
    grid = [[format_cell(r.get(c), digits) for c in cols] for r in rows]
    if width is not None and fitted_widths(cols, grid, width) is None:
        return record_layout(cols, grid, width, title) + fit_text(notes, width)
    table = rich_table(rows, cols, digits=digits, title=title, styles=styles,
                       width=width or DEFAULT_WIDTH)
    return table_text(table, width=width, color=color) + fit_text(notes, width)


def _escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
