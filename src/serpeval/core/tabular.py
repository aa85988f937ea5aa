"""Result objects as tables in notebooks and data frames: one helper, one mixin.

Every result object of serpeval has ``to_dicts()`` (one dict per row). :class:`Tabular` adds,
on top of that one method,

- ``_repr_html_()``: the rows as an HTML ``<table>``, which Jupyter shows instead of the repr;
- ``to_pandas()`` / ``to_polars()``: the rows as a data frame (pandas / polars imported only
  when called; :class:`~serpeval.core.errors.MissingExtraError` names the package to install).

The result classes live in computation layers that may not import ``serpeval.report``, so the
HTML here is deliberately small: :func:`html_table` escapes every header, cell and caption
(``html.escape`` with quotes) and formats numbers plainly (:func:`format_cell`). The full HTML
report is ``serpeval.report``'s job.

Standard library only; importing this module loads nothing else.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Tabular", "columns_of", "format_cell", "html_table"]


def format_cell(value: Any) -> str:
    """One cell as text: ``None`` is empty, booleans ``True``/``False``, integers in full,
    other real numbers with 6 significant digits (``nan``, ``inf``, ``-inf`` as such), anything
    else ``str(value)``. The text is not yet escaped."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return "nan"
        return f"{number:.6g}"
    return str(value)


def columns_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys of all rows, in the order they first appear."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def html_table(rows: list[dict[str, Any]], caption: str | None = None,
               columns: Iterable[str] = ()) -> str:
    """``rows`` as an HTML table: one header cell per column (:func:`columns_of`; without rows,
    the ``columns`` given, so that an empty result still shows what it would hold), one ``<tr>``
    per row, a cell left empty where a row lacks a column. Every header, cell and the caption
    is escaped with ``html.escape(..., quote=True)``, so ids such as ``<b>&"x'`` show as text."""
    columns = columns_of(rows) or list(columns)
    out = ['<table class="serpeval">']
    if caption is not None:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in columns) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = "".join(f"<td>{html.escape(format_cell(row.get(c)))}</td>" for c in columns)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


class Tabular:
    """Mixin for result objects: notebook display and data frames built on ``to_dicts()``.

    A subclass implements ``to_dicts()``; it may override :meth:`_html_caption`. Arguments of
    :meth:`to_pandas` and :meth:`to_polars` are passed on to ``to_dicts()`` (for instance
    ``per_query=True``). The mixin has no fields, so a dataclass may inherit it.
    """

    def to_dicts(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """The rows; each result class implements it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement to_dicts()")

    def _columns(self) -> tuple[str, ...]:
        """The columns of an empty result (no row to read them from); default none."""
        return ()

    def _html_caption(self) -> str | None:
        """The caption of the notebook table (default: the class name)."""
        return type(self).__name__

    def _repr_html_(self) -> str:
        """The rows of ``to_dicts()`` as an HTML table (Jupyter calls this to display the object);
        an empty result shows the header of :meth:`_columns`, as ``to_pandas()`` has it."""
        return html_table(self.to_dicts(), caption=self._html_caption(), columns=self._columns())

    def to_pandas(self, *args: Any, **kwargs: Any) -> Any:
        """A pandas DataFrame with one row per ``to_dicts()`` row (needs ``pandas``)."""
        from serpeval.core.errors import require

        pd: Any = require("pandas", "pandas")
        rows = self.to_dicts(*args, **kwargs)
        return pd.DataFrame(rows, columns=columns_of(rows) or list(self._columns()))

    def to_polars(self, *args: Any, **kwargs: Any) -> Any:
        """A polars DataFrame with one row per ``to_dicts()`` row (needs ``polars``); the
        column types are inferred from all rows."""
        from serpeval.core.errors import require

        pl: Any = require("polars", "polars")
        rows = self.to_dicts(*args, **kwargs)
        columns = columns_of(rows) or list(self._columns())
        if not rows:
            return pl.DataFrame(schema=columns)
        return pl.DataFrame([{c: row.get(c) for c in columns} for row in rows], infer_schema_length=None)
