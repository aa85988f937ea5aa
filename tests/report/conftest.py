"""Fixtures of the report tests: the report read back (stdlib HTML parser), files, a browser."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

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


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    """Debian's Chromium (``apt-get install -y chromium``), or ``$SERPEVAL_CHROMIUM``."""
    import os
    import shutil

    return (os.environ.get("SERPEVAL_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a test module, driven by Playwright (never a downloaded browser).

    Module scope, not session: while Playwright's synchronous API is open, its event loop counts
    as running in the main thread, so a later test in the same worker that calls asyncio.run()
    (serpeval serve and its tests) would fail with "cannot be called from a running event loop"."""
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install '.[test]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no chromium binary on PATH: install Debian's package (apt-get install -y "
                    "chromium; scripts/test.sh does this when run as root)")
    with sync_api.sync_playwright() as playwright:
        # Playwright adds its own profile directory: a new, empty user-data-dir per launch.
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def online_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Online results as the commands write them (-f json), from generated logs:
    ``ab``, ``ab_srm`` (a planned 80/20 split the 50/50 log contradicts), ``ab_monitor``,
    ``ab_plan``, ``interleaving`` and ``simulation``."""
    pytest.importorskip("ibis", reason="the A/B analysis needs ibis (pip install '.[test]')")
    pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB (pip install '.[test]')")
    from serpeval.cli import main
    from serpeval.cli.demo.collection import make_collection
    from serpeval.io import write_trec_qrels, write_trec_run

    folder = tmp_path_factory.mktemp("online")
    ab_logs, il_logs = folder / "ab-logs", folder / "il-logs"
    assert main(["generate-logs", str(ab_logs), "--users", "2000", "--effect", "0.5",
                 "--pre-days", "7", "--days", "7", "--seed", "5"]) == 0
    assert main(["generate-logs", str(il_logs), "--users", "1000", "--interleaving",
                 "--seed", "6"]) == 0
    out = {kind: folder / f"{kind}.json" for kind in
           ("ab", "ab_srm", "ab_monitor", "ab_plan", "interleaving", "simulation")}
    impressions = str(ab_logs / "impressions.parquet")
    commands = {
        "ab": ["ab", impressions, "--pre", str(ab_logs / "pre.parquet")],
        "ab_srm": ["ab", impressions, "--split", "control=0.8,treatment=0.2"],
        "ab_monitor": ["ab", impressions, "--monitor"],
        "ab_plan": ["ab", impressions, "--plan"],
        "interleaving": ["interleaving-report", str(il_logs / "impressions.parquet"),
                         "--resamples", "1000"],
    }
    for kind, command in commands.items():
        assert main([*command, "-f", "json", "-o", str(out[kind])]) == 0
    collection = make_collection(n_queries=30, seed=4)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    write_trec_run(collection.runs["candidate"], folder / "a.run")
    write_trec_run(collection.runs["baseline"], folder / "b.run")
    assert main(["simulate", str(folder / "qrels.txt"), "--run-a", str(folder / "a.run"), "--run-b",
                 str(folder / "b.run"), "--mc-impressions", "0", "--bootstrap", "100", "-f", "json",
                 "-o", str(out["simulation"])]) == 0
    return out


@pytest.fixture(scope="session")
def simulation_result():
    """A real :class:`SimulationResult` (with Monte Carlo power curves) on a small collection."""
    from serpeval.cli.demo.collection import make_collection
    from serpeval.online.simulation.simulator import simulate

    collection = make_collection(n_queries=40, seed=3)
    return simulate(collection.qrels, collection.runs["candidate"], collection.runs["baseline"],
                    click_model="navigational", mc_impressions=200_000, replicates=40,
                    bootstrap=100, rng=0)
