"""The report in a real browser (headless Chromium through Playwright).

Checks what a reader sees: no console errors, no network requests, every chart drawn (in
every panel of every switcher), tables that sort, tooltips that name the query, and a
Robust04 report that fits 1280 px without horizontal scrolling. Screenshots are saved in
each test's temporary folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import TREC, need

from serpeval.cli import main
from serpeval.cli.demo.collection import make_collection
from serpeval.io import write_trec_qrels, write_trec_run
from serpeval.report.html import save_html

VIEWPORT = {"width": 1280, "height": 800}

#: Per chart: how many marks it has and whether it has a size on screen (hidden panels do not).
CHARTS_JS = """() => Array.from(document.querySelectorAll('svg.chart')).map(svg => {
    const box = svg.getBoundingClientRect();
    return {marks: svg.querySelectorAll('circle, rect, line, polyline, polygon').length,
            visible: svg.checkVisibility(), width: box.width, height: box.height};
})"""


@contextmanager
def open_report(browser: Any, path: Path) -> Iterator[tuple[Any, list[str], list[str]]]:
    """The report in a fresh page; yields (page, console errors, requested URLs)."""
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    try:
        yield page, errors, requests
    finally:
        page.close()


def assert_charts_drawn(page: Any) -> int:
    """Every chart has marks; every visible one has a size. Returns how many were seen visible."""
    charts = page.evaluate(CHARTS_JS)
    assert charts, "the report has no charts"
    assert all(c["marks"] > 0 for c in charts), charts
    visible = [c for c in charts if c["visible"]]
    assert all(c["width"] > 100 and c["height"] > 50 for c in visible), visible
    return len(visible)


def column_keys(table: Any, header: str) -> list[float]:
    """The data-sort keys of one column of ``table``, top to bottom."""
    return table.evaluate("""(table, header) => {
        const heads = Array.from(table.tHead.rows[0].cells).map(th => th.textContent.trim());
        const i = heads.indexOf(header);
        return Array.from(table.tBodies[0].rows).map(r => parseFloat(r.cells[i].dataset.sort));
    }""", header)


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory, online_files: dict[str, Path]) -> Path:
    """``serpeval report`` on the generated collection (with topics) and every kind of online
    result file, as a user would run it."""
    folder = tmp_path_factory.mktemp("report")
    collection = make_collection(n_queries=60, seed=11)
    write_trec_qrels(collection.qrels, folder / "qrels.txt")
    write_trec_run(collection.runs["baseline"], folder / "bm25.run")
    write_trec_run(collection.runs["candidate"], folder / "dense.run")
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{q}\t{t} <b>&amp;</b>\n" for q, t in collection.topics.items()),
                      encoding="utf-8")
    out = folder / "report.html"
    online = [arg for kind in ("ab", "ab_monitor", "ab_plan", "interleaving", "simulation")
              for arg in (f"--{kind.replace('_', '-')}", str(online_files[kind]))]
    runs = [str(folder / "bm25.run"), str(folder / "dense.run")]
    assert main(["report", str(folder / "qrels.txt"), *runs, "-m", "nDCG@10,AP,P@10,RR,NumRet",
                 "--topics", str(topics), *online, "-o", str(out)]) == 0
    return out


def test_report_in_chromium(browser, demo_report: Path, tmp_path: Path) -> None:
    with open_report(browser, demo_report) as (page, errors, requests):
        # Offline: the only request is the file itself; nothing complained.
        assert requests == [demo_report.resolve().as_uri()]
        assert errors == []

        sections = page.locator("main > section").evaluate_all("nodes => nodes.map(n => n.id)")
        assert sections == ["overview", "metrics", "per-query", "distributions", "interleaving",
                            "ab", "ab-over-time", "ab-plan", "sensitivity", "rules"]

        # Every plot rendered, in every panel of every switcher.
        assert_charts_drawn(page)
        select = page.locator("select[data-switch]")
        options = select.locator("option").all_text_contents()
        assert len(options) == 5
        assert options[0] == "nDCG@10: dense vs bm25"
        for value in range(len(options)):
            select.select_option(str(value))
            panel = page.locator(f'[data-panel="per-query"][data-value="{value}"]')
            assert panel.is_visible()
            assert panel.locator("svg.chart").is_visible()
            # metrics CI chart, 1 panel, 5 distributions, interleaving Δ and Δ over time,
            # A/B, A/B over time
            assert assert_charts_drawn(page) == 11
        select.select_option("0")

        # Sorting: the per-query table starts best first; a click sorts by Δ ascending,
        # another descending.
        table = page.locator('[data-panel="per-query"][data-value="0"] table')
        start = column_keys(table, "Δ")
        assert start == sorted(start, reverse=True)
        assert len(start) == 60
        header = table.locator("th", has_text="Δ")
        header.click()
        assert column_keys(table, "Δ") == sorted(start)
        assert header.get_attribute("aria-sort") == "ascending"
        header.click()
        assert column_keys(table, "Δ") == sorted(start, reverse=True)
        table.locator("th", has_text="query").click()
        queries = table.locator("tbody tr td:nth-child(2)").all_text_contents()
        assert queries == sorted(queries)

        # Hover: the tooltip names the query, its text (escaped, shown literally) and the values.
        bar = page.locator('[data-panel="per-query"][data-value="0"] svg rect.bar').first
        bar.hover()
        tooltip = page.locator("#tooltip")
        assert tooltip.is_visible()
        text = tooltip.inner_text()
        assert "synthetic topic" in text
        assert "<b>&amp;</b>" in text
        assert "Δ" in text

        # The interleaving preference over time: a line, its CI band and one dot per day,
        # each dot's tooltip naming the day, N, Δ (B − A) and its CI.
        over_time = page.locator("#interleaving svg.chart").nth(1)
        assert over_time.is_visible()
        assert over_time.locator("polyline.line").count() == 1
        assert over_time.locator("polygon.band").count() == 1
        band = over_time.locator("polygon.band").evaluate("p => p.getBBox().height")
        assert band > 5
        dots = over_time.locator("circle.dot")
        assert dots.count() == 14
        dots.nth(2).hover()
        text = tooltip.inner_text()
        assert text.startswith("day 3: ")
        assert "N = " in text
        assert "95% CI [" in text

        # The metric table sorts numerically too.
        means = page.locator("#metrics table").first
        means.locator("th", has_text="AP").click()
        ap = column_keys(means, "AP")
        assert ap == sorted(ap)
        assert errors == []
        assert requests == [demo_report.resolve().as_uri()]
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000


def test_power_curves_in_chromium(browser, simulation_result, tmp_path: Path) -> None:
    """The simulator's charts (impressions needed on a log axis, power curves), as in the demo."""
    out = save_html(tmp_path / "sensitivity.html", online_results={"simulation": simulation_result})
    with open_report(browser, out) as (page, errors, requests):
        assert errors == []
        assert requests == [out.resolve().as_uri()]
        assert assert_charts_drawn(page) == 2
        curves = page.locator("#sensitivity svg.chart").nth(1)
        classic = [m for m in simulation_result.methods if m.design == "all impressions"]
        assert curves.locator("polyline.line").count() == len(classic)
        dot = curves.locator("circle.dot").first
        dot.hover()
        assert "impressions: power" in page.locator("#tooltip").inner_text()
        page.screenshot(path=str(tmp_path / "sensitivity.png"), full_page=True)


@pytest.mark.slow
def test_robust04_report_fits_1280(browser, tmp_path: Path) -> None:
    """BM25 vs BM25+RM3 on Robust04 (249 queries, title topics): readable at 1280x800."""
    folder = need(TREC / "robust04")
    out = tmp_path / "robust04.html"
    assert main(["report", str(folder / "qrels.txt.gz"), str(folder / "runs" / "bm25.run.gz"),
                 str(folder / "runs" / "bm25-rm3.run.gz"), "-m", "nDCG@10,AP,P@10,R@100,RR",
                 "--topics", str(folder / "topics.tsv"), "-o", str(out)]) == 0
    with open_report(browser, out) as (page, errors, requests):
        assert errors == []
        assert requests == [out.resolve().as_uri()]
        assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
        assert assert_charts_drawn(page) >= 7
        # The worst query for RM3 on AP, with its title, is at the bottom of the sorted table.
        select = page.locator("select[data-switch]")
        select.select_option(label="AP: bm25-rm3 vs bm25")
        rows = page.locator('[data-panel="per-query"]:visible table tbody tr')
        assert rows.count() == 249
        assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
        page.screenshot(path=str(tmp_path / "robust04-top.png"))
        page.screenshot(path=str(tmp_path / "robust04.png"), full_page=True)
    assert (tmp_path / "robust04.png").stat().st_size > 50_000


def test_long_names_wrap_instead_of_widening_the_page(browser, tmp_path: Path) -> None:
    """Run names of 190 characters with no space (file names do that): the comparison select
    and the summaries under the headings were as wide as the name, and the whole page
    scrolled sideways (scrollWidth 3529 px at a 1280 px viewport)."""
    collection = make_collection(n_queries=8, seed=2)
    long = "very_long_run_name_" * 10
    write_trec_qrels(collection.qrels, tmp_path / "qrels.txt")
    write_trec_run(collection.runs["baseline"], tmp_path / f"{long}A.run")
    write_trec_run(collection.runs["candidate"], tmp_path / f"{long}B.run")
    groups = tmp_path / f"{long}groups.tsv"                  # its path heads a section
    groups.write_text("".join(f"{q}\t{'odd' if i % 2 else 'even'}\n"
                              for i, q in enumerate(sorted(collection.topics))), encoding="utf-8")
    out = tmp_path / "long.html"
    assert main(["report", str(tmp_path / "qrels.txt"), str(tmp_path / f"{long}A.run"),
                 str(tmp_path / f"{long}B.run"), "-m", "AP,P@10", "--diff", "--groups", str(groups),
                 "--group-min-queries", "2", "-o", str(out)]) == 0
    with open_report(browser, out) as (page, errors, _):
        assert errors == []
        assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
        rights = page.locator("select[data-switch]").evaluate_all(
            "selects => selects.map(s => s.getBoundingClientRect().right)")
        assert len(rights) == 2                             # by group, per query
        assert max(rights) <= VIEWPORT["width"]
        select = page.locator('select[data-switch="per-query"]')
        assert f"{long}B vs {long}A" in select.locator("option").first.text_content()
        assert page.locator("#segments h2").text_content().startswith("By group: ")
        # A bar's tooltip names the run and the query: it wraps within its 420 px box (the
        # text ran 5,900 px out of it, white on the white page).
        page.locator('[data-panel="per-query"][data-value="0"] svg rect.bar').first.hover()
        assert long in page.locator("#tooltip").inner_text()
        width, inner = page.evaluate("[document.getElementById('tooltip').scrollWidth, "
                                     "document.getElementById('tooltip').clientWidth]")
        assert width <= inner <= 420


def test_an_infinite_value_sorts_as_the_largest(browser, tmp_path: Path) -> None:
    """data-sort="inf" read as NaN in report.js and sorted with the missing values, last in
    both directions; an unreachable sample size (inf) belongs first when sorting descending."""
    import math

    from serpeval.report.page import Row, Section, Table, TableColumn, fragment, num_cell, render_page

    values = [3.0, math.inf, 1.0, None, -math.inf]
    table = Table([TableColumn("units")], [Row([num_cell(v, str(v))]) for v in values])
    out = tmp_path / "inf.html"
    out.write_text(render_page("inf", [Section("t", "T", fragment("table", table))]),
                   encoding="utf-8")
    with open_report(browser, out) as (page, errors, _):
        header = page.locator("table th").first
        header.click()
        ascending = page.locator("table tbody td").all_text_contents()
        header.click()
        descending = page.locator("table tbody td").all_text_contents()
        assert errors == []
    assert ascending == ["-inf", "1.0", "3.0", "inf", "None"]      # missing last, both ways
    assert descending == ["inf", "3.0", "1.0", "-inf", "None"]


def test_query_ids_sort_by_their_numbers(browser, tmp_path: Path) -> None:
    """MS MARCO / TREC DL query ids have different lengths: sorting the per-query table by
    query put 1000 before 99 and 1037496 before 87181 (a plain string comparison)."""
    import serpeval
    from serpeval.comparison.compare import compare_results

    ids = ["87181", "1037496", "99", "1000", "5"]
    qrels = {q: {"d1": 1, "d2": 0} for q in ids}
    a = {q: {"d1": 2.0, "d2": 1.0} for q in ids}
    b = {q: ({"d1": 1.0, "d2": 2.0} if i % 2 else {"d1": 2.0, "d2": 1.0}) for i, q in enumerate(ids)}
    res = serpeval.evaluate(qrels, {"a": a, "b": b}, ["P@1"])
    out = save_html(tmp_path / "ids.html", res, compare_results(res, test="t"))
    with open_report(browser, out) as (page, errors, _):
        table = page.locator('[data-panel="per-query"][data-value="0"] table')
        table.locator("th", has_text="query").click()
        ascending = table.locator("tbody tr td:nth-child(2)").all_text_contents()
        table.locator("th", has_text="query").click()
        descending = table.locator("tbody tr td:nth-child(2)").all_text_contents()
        assert errors == []
    assert ascending == ["5", "99", "1000", "87181", "1037496"]
    assert descending == ascending[::-1]


def test_every_panel_is_readable_without_javascript(browser, demo_report: Path) -> None:
    """The per-query section has one panel per comparison behind a select; with JavaScript off
    (a mail client's preview, a locked-down viewer) the select did nothing and every panel but
    the first stayed hidden. Now each is shown under its label; with JavaScript, one at a time."""
    context = browser.new_context(java_script_enabled=False, viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(demo_report.resolve().as_uri())
        page.wait_for_load_state("load")
        panels = page.locator('[data-panel="per-query"]')
        assert panels.count() == 5                                   # 5 measures, 1 comparison
        assert all(panels.nth(i).is_visible() for i in range(5))
        labels = page.locator('[data-panel="per-query"] .panel-label').all_inner_texts()
        assert labels[0] == "nDCG@10: dense vs bm25"
        assert len(labels) == 5
        assert all(panels.nth(i).locator("svg.chart").is_visible() for i in range(5))
        assert not page.locator('select[data-switch="per-query"]').is_visible()
    finally:
        context.close()
    with open_report(browser, demo_report) as (page, errors, _):
        visible = [page.locator('[data-panel="per-query"]').nth(i).is_visible() for i in range(5)]
        assert visible == [True, False, False, False, False]
        assert not page.locator('[data-panel="per-query"] .panel-label').first.is_visible()
        assert errors == []
