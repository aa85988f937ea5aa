"""Fixtures of the report tests: the report read back (stdlib HTML parser), files, a browser."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest


@dataclass
class ParsedTable:
    """One ``<table>``: header texts and, per body row, its cells' texts and data-sort keys."""

    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    sort_keys: list[list[str | None]] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)

    def column(self, name: str) -> list[str]:
        i = self.header.index(name)
        return [row[i] for row in self.rows]


@dataclass
class ParsedSection:
    key: str
    title: str = ""
    tables: list[ParsedTable] = field(default_factory=list)
    svgs: int = 0
    marks: dict[str, int] = field(default_factory=dict)
    tips: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: dict[str, ParsedSection] = {}
        self.section: ParsedSection | None = None
        self.table: ParsedTable | None = None
        self.cell: list[str] | None = None
        self.in_head = False
        self.in_h2 = False
        self.in_title = False
        self.tip: list[str] = []
        self.item: list[str] | None = None
        self.scripts: list[dict[str, str | None]] = []
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self.scripts.append(a)
        if tag in ("link", "img", "iframe", "object", "embed"):
            self.links.append(a)
        if tag == "section":
            self.section = self.sections.setdefault(str(a["id"]), ParsedSection(str(a["id"])))
        elif self.section is None:
            return
        if tag == "h2":
            self.in_h2 = True
        elif tag == "table":
            self.table = ParsedTable()
            self.section.tables.append(self.table)
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr" and self.table is not None and not self.in_head:
            self.table.rows.append([])
            self.table.sort_keys.append([])
            self.table.row_classes.append(a.get("class") or "")
        elif tag in ("td", "th") and self.table is not None:
            self.cell = []
            if tag == "td":
                self.table.sort_keys[-1].append(a.get("data-sort"))
        elif tag == "svg":
            self.section.svgs += 1
        elif tag in ("circle", "rect", "line", "polyline", "polygon"):
            self.section.marks[tag] = self.section.marks.get(tag, 0) + 1
        elif tag == "title":
            self.in_title, self.tip = True, []
        elif tag == "li":
            self.item = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None
        elif tag == "h2":
            self.in_h2 = False
        elif tag == "thead":
            self.in_head = False
        elif tag in ("td", "th") and self.table is not None and self.cell is not None:
            text = " ".join("".join(self.cell).split())
            if self.in_head:
                self.table.header.append(text.rstrip(" ↕"))
            else:
                self.table.rows[-1].append(text)
            self.cell = None
        elif tag == "table":
            self.table = None
        elif tag == "li" and self.item is not None and self.section is not None:
            self.section.items.append("".join(self.item))
            self.item = None
        elif tag == "title" and self.in_title:
            self.in_title = False
            if self.section is not None:
                self.section.tips.append("".join(self.tip))

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.tip.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.item is not None:
            self.item.append(data)
        if self.in_h2 and self.section is not None:
            self.section.title += data


@dataclass
class ParsedReport:
    sections: dict[str, ParsedSection]
    scripts: list[dict[str, str | None]]
    links: list[dict[str, str | None]]


def parse_report(html: str) -> ParsedReport:
    """Sections by id (tables, SVG count, marks, tooltips), script tags and external links."""
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return ParsedReport(parser.sections, parser.scripts, parser.links)


@pytest.fixture
def parse() -> Callable[[str], ParsedReport]:
    """:func:`parse_report`: a report's sections, tables, marks, scripts and links."""
    return parse_report
