"""The SVG charts: axis ticks, escaping, and what happens with odd values."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serpeval.report.svg import (
    Bar,
    Interval,
    LinePoint,
    Series,
    StripPoint,
    StripRow,
    bar_chart,
    interval_chart,
    line_chart,
    log_ticks,
    nice_ticks,
    strip_chart,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(finite, finite)
def test_nice_ticks_cover_the_range_with_round_equal_steps(a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    ticks = nice_ticks(low, high)
    slack = 1e-8 * (ticks[-1] - ticks[0])   # values within rounding of a tick count as covered
    assert ticks[0] <= low + slack
    assert ticks[-1] >= high - slack
    assert 2 <= len(ticks) <= 12
    steps = [y - x for x, y in itertools.pairwise(ticks)]
    step = steps[0]
    assert step > 0
    assert all(math.isclose(s, step, rel_tol=1e-6) for s in steps)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))


def test_nice_ticks_of_a_point_and_of_unit_interval() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(3.0, 3.0)[0] < 3.0 < nice_ticks(3.0, 3.0)[-1]
    assert nice_ticks(float("nan"), 1.0) == [0.0, 1.0]


def test_log_ticks() -> None:
    assert log_ticks(149, 11_729) == [100, 1000, 10_000, 100_000]
    assert log_ticks(30, 400) == [20, 50, 100, 200, 500]


def test_text_is_escaped_and_tooltips_kept() -> None:
    row = StripRow("<run>", [StripPoint(0.5, 'q "1" & <b>')], 0.5, "mean")
    chart = strip_chart([row], x_label="AP")
    assert "<run>" not in chart
    assert "&lt;run&gt;" in chart
    assert "<title>q &#34;1&#34; &amp; &lt;b&gt;</title>" in chart


def test_non_finite_values_are_left_out() -> None:
    bars = bar_chart([Bar(0.1, "a", "better"), Bar(float("nan"), "b"), Bar(-0.2, "c", "worse")],
                     y_label="Δ", x_label="queries")
    assert bars.count("<rect") == 2
    intervals = interval_chart([Interval("x", 0.1, None, None, "no ci"),
                                Interval("y", float("nan"), 0, 1, "t")], x_label="Δ")
    assert intervals.count("<circle") == 1
    assert intervals.count('class="ci"') == 1
    series = Series("s", [LinePoint(1, 0.5, "a", 0.4, 0.6), LinePoint(2, float("inf"), "b")])
    lines = line_chart([series], x_label="x", y_label="y")
    assert lines.count("<circle") == 1


@pytest.mark.parametrize("log", [False, True])
def test_interval_chart_on_both_axes(log: bool) -> None:
    rows = [Interval("a", 300, 150, 700, "a"), Interval("b", 3000, 1200, 8000, "b")]
    chart = interval_chart(rows, x_label="impressions", log=log)
    assert chart.count("<circle") == 2
    assert (">1k<" in chart) == log
    assert ('class="zero"' in chart) == (not log)
