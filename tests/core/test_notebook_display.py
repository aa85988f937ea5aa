"""Notebook display and data frames of every result object (core/tabular.py).

For each result class, built small and real: ``_repr_html_()`` is one ``<table>`` whose header
is the keys of ``to_dicts()`` and whose cells are those values (numbers read back and compared,
text compared exactly); an id such as ``<b>&"x'`` comes out escaped and never raw; and
``to_pandas()`` / ``to_polars()`` have one row per ``to_dicts()`` row with the same columns.
"""

from __future__ import annotations

import math
import numbers
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest

from serpeval.core.tabular import Tabular, format_cell, html_table

NASTY = "<b>&\"x'"
ESCAPED = "&lt;b&gt;&amp;&quot;x&#x27;"


class _TableParser(HTMLParser):
    """Reads tables back: tag counts, caption, header cells, body rows (entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, int] = {}
        self.caption: str | None = None
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._where = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag in ("thead", "tbody", "caption"):
            self._where = tag
            if tag == "caption":
                self._cell = []
        elif tag == "tr" and self._where == "tbody":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._cell is None:
            return
        text = "".join(self._cell)
        if tag == "caption":
            self.caption, self._cell = text, None
        elif tag == "th":
            self.header.append(text)
            self._cell = None
        elif tag == "td":
            self.rows[-1].append(text)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(markup: str) -> _TableParser:
    parser = _TableParser()
    parser.feed(markup)
    parser.close()
    return parser


def _same_cell(text: str, value: Any) -> bool:
    """The cell shows ``value``: numbers read back within the 6 digits shown, the rest exactly."""
    if value is None:
        return text == ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return text == str(value)
    if isinstance(value, numbers.Integral):
        return int(text) == int(value)
    number = float(value)
    if math.isnan(number):
        return text == "nan"
    return math.isclose(float(text), number, rel_tol=1e-5, abs_tol=0.0)


def _plain(value: Any) -> Any:
    """pandas shows a missing value of a column of objects or numbers as None or NaN."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def check_display(result: Tabular, ids: tuple[str, ...] = ()) -> None:
    """The checks shared by every result class (see the module docstring)."""
    rows = result.to_dicts()
    assert rows, f"{type(result).__name__} has no rows to display"
    markup = result._repr_html_()
    table = parse(markup)
    assert table.tags.get("table") == 1
    assert table.tags.get("thead") == 1
    assert table.tags.get("tbody") == 1
    columns = list(rows[0])
    assert table.header == columns
    assert len(table.rows) == len(rows)
    for shown, row in zip(table.rows, rows, strict=True):
        assert len(shown) == len(columns)
        for column, text in zip(columns, shown, strict=True):
            assert _same_cell(text, row[column]), (column, text, row[column])
    for text in ids:
        assert NASTY in text
        assert ESCAPED in markup
        assert "<b>" not in markup
        assert "\"x'" not in markup

    pandas = pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == columns
    assert len(frame) == len(rows)
    for column in columns:
        assert [_same_cell(format_cell(_plain(v)), r[column]) for v, r in
                zip(frame[column].tolist(), rows, strict=True)] == [True] * len(rows), column
    polars = pytest.importorskip("polars")
    frame = result.to_polars()
    assert isinstance(frame, polars.DataFrame)
    assert frame.columns == columns
    assert frame.height == len(rows)
    for column in columns:
        assert [_same_cell(format_cell(v), r[column]) for v, r in
                zip(frame[column].to_list(), rows, strict=True)] == [True] * len(rows), column


# ---------------------------------------------------------------------------- the helper


def test_html_table_escapes_headers_cells_and_caption() -> None:
    rows = [{"run": NASTY, "n": 3, "x": 0.123456789, NASTY: None}, {"run": "b", "y": float("nan"), "ok": True}]
    markup = html_table(rows, caption=f"caption {NASTY}")
    assert "<b>" not in markup
    assert markup.count(ESCAPED) == 3
    table = parse(markup)
    assert table.caption == f"caption {NASTY}"
    # Columns are the union of keys in order of first appearance; a missing key is an empty cell.
    assert table.header == ["run", "n", "x", NASTY, "y", "ok"]
    assert table.rows == [[NASTY, "3", "0.123457", "", "", ""], ["b", "", "", "", "nan", "True"]]


def test_format_cell_numbers() -> None:
    assert [format_cell(v) for v in (None, True, 12345678901, np.int64(7), 1e-7, np.float64(2.5),
                                     float("inf"), -float("inf"), "a b")] == \
        ["", "True", "12345678901", "7", "1e-07", "2.5", "inf", "-inf", "a b"]


def test_missing_to_dicts_is_a_clear_error() -> None:
    with pytest.raises(NotImplementedError, match="Tabular does not implement to_dicts"):
        Tabular()._repr_html_()


def test_empty_rows_give_an_empty_table_and_frames() -> None:
    class Empty(Tabular):
        def to_dicts(self) -> list[dict[str, Any]]:
            return []

    assert parse(Empty()._repr_html_()).rows == []
    assert len(pytest.importorskip("pandas").DataFrame(Empty().to_pandas())) == 0
    pytest.importorskip("polars")
    assert Empty().to_polars().height == 0


def test_an_empty_result_shows_its_columns_as_its_frames_do() -> None:
    """A pool of documents still to judge is empty when the qrels judge every pooled one: its
    data frames had the six columns of ``_columns()`` but the notebook table an empty header
    (``<thead><tr></tr></thead>``), nothing saying what the result would hold."""
    from serpeval.io import as_qrels, as_run
    from serpeval.judgments.pool import pool

    done = pool([as_run({"q1": {"d1": 2.0, "d2": 1.0}})], depth=10,
                qrels=as_qrels({"q1": {"d1": 1, "d2": 0}}))
    assert done.to_dicts() == []
    table = parse(done._repr_html_())
    assert table.header == list(done._columns()) == list(done.to_pandas().columns)
    assert table.header == ["query_id", "doc_id", "order", "best_rank", "runs", "weight"]
    assert table.rows == []
    assert parse(html_table([], columns=["a", NASTY])).header == ["a", NASTY]   # escaped too
    assert ESCAPED in html_table([], columns=[NASTY])


# ---------------------------------------------------------------------------- offline results

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1},
    "q2": {"d1": 1, "d4": 1},
    NASTY: {"d2": 1, "d5": 2},
    "q4": {"d1": 0, "d3": 3},
}
BASE = {q: {d: float(10 - i) for i, d in enumerate(["d1", "d2", "d3", "d4", "d5"])} for q in QRELS}
CAND = {q: {d: float(i) for i, d in enumerate(["d1", "d2", "d3", "d4", "d5"])} for q in QRELS}


@pytest.fixture(scope="module")
def results() -> Any:
    import serpeval

    return serpeval.evaluate(QRELS, {"base": BASE, NASTY: CAND}, ["nDCG@10", "AP", "P@5"])


def test_results(results: Any) -> None:
    check_display(results, ids=(NASTY,))
    # The per-query rows go to the frames too, with the query id unescaped there.
    per_query = results.to_dicts(per_query=True)
    pytest.importorskip("polars")
    frame = results.to_polars(per_query=True)
    assert frame.height == len(per_query) == 8
    assert NASTY in frame["query_id"].to_list()
    assert results.to_pandas(per_query=True).shape == (8, 5)


def test_comparison(results: Any) -> None:
    from serpeval.comparison.compare import compare_results

    comparison = compare_results(results, rng=0)
    check_display(comparison, ids=(NASTY,))
    per_query = comparison.to_dicts(per_query=True)
    pytest.importorskip("pandas")
    assert len(comparison.to_pandas(per_query=True)) == len(per_query) == 3 * 4


def test_gate_result(results: Any) -> None:
    from serpeval.comparison.gate import gate_results

    gate = gate_results(results, rng=0)
    rows = gate.to_dicts()
    assert [r["measure"] for r in rows] == [c.measure for c in gate.checks]
    assert [r["regressions"] for r in rows] == [len(c.regressions) for c in gate.checks]
    check_display(gate)
    caption = parse(gate._repr_html_()).caption
    assert caption is not None
    assert caption.startswith("gate fail")
    assert NASTY in caption
    assert ESCAPED in gate._repr_html_()
    assert "<b>" not in gate._repr_html_()


# ---------------------------------------------------------------------------- online results


def test_interleaving_analysis_and_multileave() -> None:
    from serpeval.online.interleaving.analysis import analyze_outcomes, preference_matrix

    analysis = analyze_outcomes([1, 1, -1, 0, 1, 1, -1, 1] * 10, np.arange(80) // 4, unit=NASTY, n_resamples=200, rng=0)
    check_display(analysis, ids=(NASTY,))
    credits = np.array([[1, 0, 2], [0, 1, 1], [2, 2, 0], [1, 0, 0]] * 5)
    check_display(preference_matrix(credits, names=["a", NASTY, "c"]), ids=(NASTY,))


@pytest.fixture(scope="module")
def ab_logs() -> Any:
    pytest.importorskip("ibis", reason="the A/B analysis needs the ab extra")
    pytest.importorskip("duckdb", reason="the A/B analysis needs DuckDB")
    from serpeval.online.simulation import LogGenerator

    return LogGenerator(300, experiments=(NASTY,), variants=("control", NASTY), n_queries=50).generate(rng=3)


def test_ab_results(ab_logs: Any) -> None:
    from serpeval.online.experiments import analyze_ab

    check_display(analyze_ab(ab_logs.impressions, metrics=["ctr", "mrr", "clicks_per_user"]), ids=(NASTY,))


def test_sequential_results_and_power_plan(ab_logs: Any) -> None:
    from serpeval.online.experiments import monitor_ab, plan_ab

    check_display(monitor_ab(ab_logs.impressions, metric="ctr", looks=3), ids=(NASTY,))
    check_display(plan_ab(ab_logs.impressions, metrics=["ctr"]))


def test_interleaving_log_report() -> None:
    pytest.importorskip("ibis", reason="the interleaving log analysis needs the ab extra")
    pytest.importorskip("duckdb", reason="the interleaving log analysis needs DuckDB")
    from serpeval.online.experiments import analyze_interleaving_logs
    from serpeval.online.simulation import LogGenerator

    logs = LogGenerator(200, experiments=(NASTY,), interleaving=True, n_queries=50).generate(rng=6)
    check_display(analyze_interleaving_logs(logs.impressions, n_resamples=200, rng=0), ids=(NASTY,))


def test_simulation_result() -> None:
    from serpeval.online.simulation.simulator import simulate

    qrels = {f"q{i}": {f"d{i}_{j}": (2 if j < 3 else 0) for j in range(10)} for i in range(10)}
    good = {q: {d: -j for j, d in enumerate(docs)} for q, docs in qrels.items()}
    bad = {q: {d: j for j, d in enumerate(docs)} for q, docs in qrels.items()}
    check_display(simulate(qrels, good, bad, click_model="navigational", mc_impressions=0, rng=0, bootstrap=50))


def test_every_listed_result_class_is_tabular() -> None:
    from serpeval.comparison.gate import GateResult
    from serpeval.comparison.results import Comparison
    from serpeval.evaluation.results import Results
    from serpeval.online.experiments.interleaving_analysis import InterleavingLogReport
    from serpeval.online.experiments.results import ABResults, PowerPlan, SequentialResults
    from serpeval.online.interleaving.analysis import InterleavingAnalysis, MultileaveAnalysis
    from serpeval.online.simulation.simulator import SimulationResult

    for cls in (Results, Comparison, GateResult, ABResults, SequentialResults, PowerPlan,
                InterleavingAnalysis, MultileaveAnalysis, InterleavingLogReport, SimulationResult):
        assert issubclass(cls, Tabular), cls
