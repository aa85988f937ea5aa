"""The pieces of a report page and the page itself.

:class:`ReportData` is what a section builder reads (the JSON-ready dicts of the results
objects); :class:`Section` is what it returns, built from :class:`Table`, :class:`Card`,
:class:`Panel` and charts through the macros of ``templates/fragments.html.j2``
(:func:`fragment`). :func:`render_page` puts the sections into ``templates/report.html.j2``
with the CSS and JavaScript inlined. Jinja2 autoescapes every value: query text and run
names are user input; the ``bdi`` filter (:func:`serpeval.report.bidi.bdi`) shows the
right-to-left text they may hold isolated.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from serpeval.core.version import __version__

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = [
    "Card",
    "Cell",
    "Panel",
    "ReportData",
    "Row",
    "Section",
    "Table",
    "TableColumn",
    "fragment",
    "num_cell",
    "render_page",
    "text_cell",
]


# ----------------------------------------------------------------------------- data


@dataclass(frozen=True)
class ReportData:
    """Everything a report shows, as JSON-ready data from the results objects.

    Attributes:
        title: the page title.
        subtitle: one line under the title (what was evaluated).
        evaluation: ``Results.to_json_dict(per_query=True)``.
        comparison: ``Comparison.to_json_dict(per_query=True)``.
        topics: ``{query_id: text}`` shown next to query ids.
        notes: facts a reader must know (skipped lines, missing queries), stated as given.
        online: ``{kind: [json dict, ...]}`` for the online sections (``ab``, ...).
        diffs: ``RunDiff.to_json_dict()`` of each pair of runs diffed (``serpeval diff``).
    """

    title: str
    subtitle: str = ""
    evaluation: Mapping[str, Any] | None = None
    comparison: Mapping[str, Any] | None = None
    topics: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    online: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    diffs: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True)
class Section:
    """One part of the page: an anchor, a heading, a one-line summary and its HTML."""

    key: str
    title: str
    body: Markup
    summary: str = ""


@dataclass(frozen=True)
class TableColumn:
    """A table column; numeric columns are right-aligned and sort by number."""

    name: str
    numeric: bool = True
    help: str = ""


@dataclass(frozen=True)
class Cell:
    """One cell: its text, the key it sorts by (default: the text), a CSS class, a tooltip."""

    text: str
    sort: float | str | None = None
    cls: str = ""
    tip: str = ""


def num_cell(value: float | None, text: str, kind: str = "", tip: str = "") -> Cell:
    """A right-aligned cell showing ``text`` that sorts by ``value``; ``kind`` adds a class."""
    from serpeval.report.formatting import sort_key

    return Cell(text, sort_key(value), f"num {kind}".strip(), tip)


def text_cell(text: str, kind: str = "", tip: str = "") -> Cell:
    """A left-aligned cell that sorts by its text; ``kind`` adds a class (``wrap``, ``better``)."""
    return Cell(text, None, f"text {kind}".strip(), tip)


@dataclass(frozen=True)
class Row:
    """A table row; ``kind`` is a CSS class (``better``, ``worse``, ``group-start``)."""

    cells: Sequence[Cell]
    kind: str = ""


@dataclass(frozen=True)
class Table:
    """A sortable table; ``scroll`` puts a long one in a box of its own."""

    columns: Sequence[TableColumn]
    rows: Sequence[Row]
    caption: str = ""
    scroll: bool = False


@dataclass(frozen=True)
class Panel:
    """One choice of a switcher (a select that shows one panel at a time)."""

    label: str
    body: Markup
    summary: str = ""


@dataclass(frozen=True)
class Card:
    """A headline number: title, value, optional marker, a few lines of context."""

    title: str
    value: str
    lines: Sequence[str] = ()
    marker: str = ""
    kind: str = ""


# ----------------------------------------------------------------------------- templates


@cache
def _environment() -> Environment:
    import jinja2

    from serpeval.report.bidi import bdi

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("serpeval.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["bdi"] = bdi
    return env


def fragment(name: str, *args: Any) -> Markup:
    """Call the macro ``name`` of ``fragments.html.j2`` (``table``, ``figure``, ``switcher``...)."""
    macro = getattr(_environment().get_template("fragments.html.j2").module, name)
    return Markup(macro(*args))


def _asset(name: str) -> str:
    from importlib.resources import files

    return (files("serpeval.report") / "templates" / name).read_text(encoding="utf-8")


def render_page(title: str, sections: Sequence[Section], subtitle: str = "") -> str:
    """The whole page: sections in order, CSS and JavaScript inlined."""

    template = _environment().get_template("report.html.j2")
    created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return template.render(title=title, subtitle=subtitle, sections=list(sections),
                           version=__version__, created=created,
                           css=Markup(_asset("report.css")), js=Markup(_asset("report.js")))
