"""Small interactive charts as inline SVG, for the HTML report.

Why hand-made SVG rather than a plotting library: a report must be one file that opens
offline, loads fast and can be attached to a review. Plotly inlines ~3.5 MB of JavaScript
per report and Vega-Lite ~0.8 MB (and needs a JavaScript runtime to draw anything); the
charts a search team reads here are four simple kinds (dots per query, sorted bars,
intervals, lines), which SVG draws directly. The result is a few hundred KB for a 250-query
comparison, visible with JavaScript disabled, printable, and every mark carries a
``<title>`` (the browser's own tooltip; ``report.js`` turns it into an instant styled one)
naming the query and its values.

Every chart takes the values to draw and the tooltip text of each mark; it draws, it never
computes a statistic. All text is escaped (``markupsafe``): query text and run names are
user input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from serpeval.report.bidi import shorten, visible_length

__all__ = ["Bar", "Interval", "LinePoint", "Series", "StripPoint", "StripRow", "bar_chart",
           "interval_chart", "label_width_for", "line_chart", "log_ticks", "nice_ticks",
           "strip_chart"]

MARGIN_LEFT = 64
MARGIN_RIGHT = 16
MARGIN_TOP = 12
MARGIN_BOTTOM = 40


# ----------------------------------------------------------------------------- marks


@dataclass(frozen=True)
class StripPoint:
    """One query's value in a strip of dots."""

    value: float | None
    tip: str


@dataclass(frozen=True)
class StripRow:
    """One system's dots, and its aggregate drawn as a vertical tick."""

    label: str
    points: Sequence[StripPoint]
    mean: float | None = None
    mean_tip: str = ""


@dataclass(frozen=True)
class Bar:
    """One bar of a sorted bar chart; ``kind`` is a CSS class (``better``, ``worse``, ``tie``)."""

    value: float | None
    tip: str
    kind: str = ""


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval, one row of an interval chart."""

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    tip: str
    kind: str = ""


@dataclass(frozen=True)
class LinePoint:
    """One point of a line, with an optional interval drawn as a band."""

    x: float
    y: float | None
    tip: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Series:
    """A named series; ``index`` picks its colour from the palette in ``report.css``.

    ``style="line"`` draws a line through the points with its interval as a band;
    ``style="points"`` draws dots with their intervals as whiskers. ``legend=False`` keeps
    it out of the legend (e.g. simulated points sharing their line's colour).
    """

    name: str
    points: Sequence[LinePoint]
    index: int = 0
    style: str = "line"
    legend: bool = True


# ----------------------------------------------------------------------------- scales


def _finite(value: float | None) -> bool:
    """A number to draw: not None (JSON's null, an undefined value), not NaN, not infinite."""
    return value is not None and math.isfinite(value)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]`` (steps of 1, 2, 2.5 or 5 times a power of 10)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high < low:
        low, high = high, low
    if high - low <= 1e-9 * max(abs(low), abs(high), 1e-300):  # a point (up to rounding)
        pad = abs(low) * 0.1 or 0.5
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step + 1e-9) * step
    last = math.ceil(high / step - 1e-9) * step
    n = round((last - first) / step)
    return [float(f"{first + i * step:.12g}") for i in range(n + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Ticks of a log axis covering ``[low, high]`` (both > 0): powers of 10, plus 2 and 5
    times them when the range spans fewer than three decades."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    if last == first:
        last += 1
    steps = (1, 2, 5) if last - first < 3 else (1,)
    ticks = [m * 10.0 ** e for e in range(first, last + 1) for m in steps]
    lower = max(t for t in ticks if t <= low)
    upper = min(t for t in ticks if t >= high)
    return [t for t in ticks if lower <= t <= upper]


class _Scale:
    """Maps a domain (linear, or log10 when ``log``) onto pixels."""

    def __init__(self, domain: tuple[float, float], pixels: tuple[float, float],
                 log: bool = False) -> None:
        self.log = log
        self.d0, self.d1 = (math.log10(d) for d in domain) if log else domain
        self.p0, self.p1 = pixels

    def __call__(self, value: float | None) -> float:
        """The pixel of ``value`` (callers draw finite values only: see :func:`_finite`)."""
        if value is None:
            return math.nan
        if self.log:
            value = math.log10(max(value, 1e-300))
        if self.d1 == self.d0:
            return (self.p0 + self.p1) / 2
        return self.p0 + (value - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0)


def _domain(values: Sequence[float | None], include: Sequence[float] = (),
            log: bool = False) -> list[float]:
    """Ticks covering the finite values (positive ones on a log axis)."""
    finite = [v for v in [*values, *include] if v is not None and math.isfinite(v)
              and (v > 0 or not log)]
    if not finite:
        return [1.0, 10.0] if log else [0.0, 1.0]
    return log_ticks(min(finite), max(finite)) if log else nice_ticks(min(finite), max(finite))


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _tick_label(value: float) -> str:
    """``0.25``, ``1.5k``, ``20k``, ``3M``: short labels for axis ticks."""
    if value == 0:
        return "0"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.4g}{suffix}"
    return f"{value:.4g}"


# ----------------------------------------------------------------------------- frame


def _svg(width: int, height: int, label: str, body: list[str]) -> Markup:
    head = Markup('<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
                  'aria-label="{label}" xmlns="http://www.w3.org/2000/svg">').format(
        w=width, h=height, label=label)
    return head + Markup("".join(body)) + Markup("</svg>")


def _title(tip: str) -> str:
    return f"<title>{escape(tip)}</title>" if tip else ""


def _x_axis(scale: _Scale, ticks: list[float], top: float, bottom: float, label: str,
            grid: bool = True) -> list[str]:
    out = []
    for t in ticks:
        x = _fmt(scale(t))
        if grid:
            out.append(f'<line class="grid" x1="{x}" x2="{x}" y1="{_fmt(top)}" '
                       f'y2="{_fmt(bottom)}"/>')
        out.append(f'<text class="tick" x="{x}" y="{_fmt(bottom + 15)}" '
                   f'text-anchor="middle">{escape(_tick_label(t))}</text>')
    mid = _fmt((scale.p0 + scale.p1) / 2)
    out.append(f'<text class="axis-label" x="{mid}" y="{_fmt(bottom + 32)}" '
               f'text-anchor="middle">{escape(label)}</text>')
    return out


def _y_axis(scale: _Scale, ticks: list[float], left: float, right: float, label: str,
            height: float) -> list[str]:
    out = []
    for t in ticks:
        y = _fmt(scale(t))
        out.append(f'<line class="grid" x1="{_fmt(left)}" x2="{_fmt(right)}" y1="{y}" y2="{y}"/>')
        out.append(f'<text class="tick" x="{_fmt(left - 6)}" y="{y}" text-anchor="end" '
                   f'dominant-baseline="middle">{escape(_tick_label(t))}</text>')
    mid = _fmt(height / 2)
    out.append(f'<text class="axis-label" transform="translate(14 {mid}) rotate(-90)" '
               f'text-anchor="middle">{escape(label)}</text>')
    return out


def _zero_line_x(scale: _Scale, ticks: list[float], top: float, bottom: float) -> list[str]:
    if ticks[0] <= 0 <= ticks[-1]:
        x = _fmt(scale(0.0))
        return [f'<line class="zero" x1="{x}" x2="{x}" y1="{_fmt(top)}" y2="{_fmt(bottom)}"/>']
    return []


# ----------------------------------------------------------------------------- charts


def strip_chart(rows: Sequence[StripRow], *, x_label: str, width: int = 560,
                row_height: int = 44, label_width: int = 120,
                domain: tuple[float, float] | None = None) -> Markup:
    """Dots of per-query values, one strip per system, with the aggregate as a tick.

    Dots are spread vertically in a fixed, value-independent pattern so that equal values
    stay visible; hovering a dot shows its query and value.
    """
    values = [p.value for row in rows for p in row.points]
    ticks = nice_ticks(*domain) if domain else _domain(values)
    top, left = MARGIN_TOP, label_width
    bottom = top + row_height * len(rows)
    height = bottom + MARGIN_BOTTOM
    scale = _Scale((ticks[0], ticks[-1]), (left, width - MARGIN_RIGHT))
    body = _x_axis(scale, ticks, top, bottom, x_label)
    for i, row in enumerate(rows):
        y0 = top + i * row_height
        mid = y0 + row_height / 2
        body.append(f'<text class="row-label" x="{_fmt(left - 8)}" y="{_fmt(mid)}" '
                    f'text-anchor="end" dominant-baseline="middle">'
                    f'{escape(shorten(row.label, 18))}{_title(row.label)}</text>')
        for j, p in enumerate(row.points):
            if not _finite(p.value):
                continue
            offset = ((j * 0.618034) % 1.0 - 0.5) * (row_height - 14)
            body.append(f'<circle class="dot s{i % 8}" cx="{_fmt(scale(p.value))}" '
                        f'cy="{_fmt(mid + offset)}" r="3">{_title(p.tip)}</circle>')
        if _finite(row.mean):
            x = _fmt(scale(row.mean))
            body.append(f'<line class="mean" x1="{x}" x2="{x}" y1="{_fmt(y0 + 3)}" '
                        f'y2="{_fmt(y0 + row_height - 3)}">{_title(row.mean_tip)}</line>')
    return _svg(width, int(height), f"distribution of {x_label}", body)


def bar_chart(bars: Sequence[Bar], *, y_label: str, x_label: str, width: int = 1080,
              height: int = 240) -> Markup:
    """Bars in the order given (e.g. per-query deltas sorted), around a zero line."""
    ticks = _domain([b.value for b in bars], include=[0.0])
    left, right = MARGIN_LEFT, width - MARGIN_RIGHT
    top, bottom = MARGIN_TOP, height - MARGIN_BOTTOM
    y = _Scale((ticks[0], ticks[-1]), (bottom, top))
    body = _y_axis(y, ticks, left, right, y_label, bottom + MARGIN_TOP)
    slot = (right - left) / max(len(bars), 1)
    gap = min(1.0, slot * 0.15)
    zero = y(0.0)
    for i, bar in enumerate(bars):
        if not _finite(bar.value):
            continue
        y1 = y(bar.value)
        top_y, h = min(y1, zero), max(abs(zero - y1), 0.8)
        body.append(f'<rect class="bar {escape(bar.kind)}" x="{_fmt(left + i * slot + gap / 2)}" '
                    f'y="{_fmt(top_y)}" width="{_fmt(max(slot - gap, 0.6))}" height="{_fmt(h)}">'
                    f'{_title(bar.tip)}</rect>')
    body.append(f'<line class="zero" x1="{left}" x2="{right}" y1="{_fmt(zero)}" '
                f'y2="{_fmt(zero)}"/>')
    body.append(f'<text class="axis-label" x="{_fmt((left + right) / 2)}" y="{height - 8}" '
                f'text-anchor="middle">{escape(x_label)}</text>')
    return _svg(width, height, y_label, body)


def interval_chart(rows: Sequence[Interval], *, x_label: str, width: int = 560,
                   row_height: int = 26, label_width: int = 200, log: bool = False) -> Markup:
    """Estimates with confidence intervals (a forest plot) against a zero line, or on a log
    axis (``log``, for sizes such as impressions needed)."""
    values = [v for r in rows for v in (r.estimate, r.low, r.high) if v is not None]
    ticks = _domain(values, include=[] if log else [0.0], log=log)
    top, left = MARGIN_TOP, label_width
    bottom = top + row_height * len(rows)
    scale = _Scale((ticks[0], ticks[-1]), (left, width - MARGIN_RIGHT), log)
    body = _x_axis(scale, ticks, top, bottom, x_label)
    if not log:
        body += _zero_line_x(scale, ticks, top, bottom)
    for i, row in enumerate(rows):
        mid = _fmt(top + (i + 0.5) * row_height)
        body.append(f'<text class="row-label" x="{_fmt(left - 8)}" y="{mid}" text-anchor="end" '
                    f'dominant-baseline="middle">{escape(shorten(row.label, 30))}'
                    f'{_title(row.label)}</text>')
        group = [f'<g class="interval {escape(row.kind)}">{_title(row.tip)}']
        if _finite(row.low) and _finite(row.high):
            group.append(f'<line class="ci" x1="{_fmt(scale(row.low))}" '
                         f'x2="{_fmt(scale(row.high))}" y1="{mid}" y2="{mid}"/>')
        if _finite(row.estimate):
            group.append(f'<circle class="estimate" cx="{_fmt(scale(row.estimate))}" '
                         f'cy="{mid}" r="4.5"/>')
        body.append("".join(group) + "</g>")
    return _svg(width, int(bottom + MARGIN_BOTTOM), x_label, body)


def line_chart(series: Sequence[Series], *, x_label: str, y_label: str, width: int = 560,
               height: int = 260, reference: float | None = None,
               y_domain: tuple[float, float] | None = None, x_log: bool = False) -> Markup:
    """Lines and points with their intervals, a legend, and an optional horizontal
    reference (a target power, a zero effect); ``x_log`` for sizes."""
    xs = [p.x for s in series for p in s.points]
    ys = [v for s in series for p in s.points for v in (p.y, p.low, p.high) if v is not None]
    x_ticks = _domain(xs, log=x_log)
    y_ticks = nice_ticks(*y_domain) if y_domain else _domain(
        ys, include=[reference] if reference is not None else [])
    left, right = MARGIN_LEFT, width - MARGIN_RIGHT
    legend, legend_height = _legend([s for s in series if s.legend], left, right)
    top, bottom = MARGIN_TOP + legend_height, height - MARGIN_BOTTOM
    x = _Scale((x_ticks[0], x_ticks[-1]), (left, right), x_log)
    y = _Scale((y_ticks[0], y_ticks[-1]), (bottom, top))
    body = _y_axis(y, y_ticks, left, right, y_label, bottom + top)
    body += _x_axis(x, x_ticks, top, bottom, x_label, grid=False)
    if reference is not None and y_ticks[0] <= reference <= y_ticks[-1]:
        ry = _fmt(y(reference))
        body.append(f'<line class="zero" x1="{left}" x2="{right}" y1="{ry}" y2="{ry}"/>')
    for s in series:
        cls = f"s{s.index % 8}"
        shown = [p for p in s.points if _finite(p.y)]          # null in JSON: an undefined value
        banded = [p for p in shown if _finite(p.low) and _finite(p.high)]
        if s.style == "line":
            if len(banded) > 1:
                upper = " ".join(f"{_fmt(x(p.x))},{_fmt(y(p.high))}" for p in banded)
                lower = " ".join(f"{_fmt(x(p.x))},{_fmt(y(p.low))}" for p in reversed(banded))
                body.append(f'<polygon class="band {cls}" points="{upper} {lower}"/>')
            path = " ".join(f"{_fmt(x(p.x))},{_fmt(y(p.y))}" for p in shown)
            body.append(f'<polyline class="line {cls}" points="{path}"/>')
        else:
            body += [f'<line class="whisker {cls}" x1="{_fmt(x(p.x))}" x2="{_fmt(x(p.x))}" '
                     f'y1="{_fmt(y(p.low))}" y2="{_fmt(y(p.high))}"/>' for p in banded]
        radius = 2.5 if s.style == "line" else 3.5
        body += [f'<circle class="dot {cls}" cx="{_fmt(x(p.x))}" cy="{_fmt(y(p.y))}" '
                 f'r="{radius}">{_title(p.tip)}</circle>' for p in shown]
    return _svg(width, height, y_label, body + legend)


def _legend(series: Sequence[Series], left: float, right: float) -> tuple[list[str], int]:
    """Swatches and names, wrapping onto more rows when they do not fit; and their height."""
    if len(series) < 2:
        return [], 0
    out, x, row = [], float(left), 0
    for s in series:
        needed = 24 + 6.5 * len(s.name)
        if x + needed > right and x > left:
            x, row = float(left), row + 1
        y = MARGIN_TOP + row * 16
        out.append(f'<rect class="swatch s{s.index % 8}" x="{_fmt(x)}" y="{y - 2}" width="10" '
                   f'height="10"/><text class="tick" x="{_fmt(x + 14)}" y="{y + 7}">'
                   f'{escape(s.name)}</text>')
        x += needed
    return out, 16 * (row + 1) + 4


def label_width_for(labels: Iterable[str]) -> int:
    """Room for the row labels of an interval chart (7 px a character, within limits)."""
    return min(320, 60 + 7 * max((visible_length(label) for label in labels), default=10))

