"""The interleaving preference over time: cumulative Δ per period with a clustered CI.

Δ is oriented towards B (the candidate), as everywhere in serpeval: positive when users
prefer B. At the end of each period k (a UTC day by default) every unit u seen so far has
its cumulative impressions ``N_u`` and B's credit ``S_u = wins_B,u + ties_u / 2``. Over the
``m`` units seen so far:

    Δ_k = Σ_u S_u / Σ_u N_u - 1/2                       (the log's Δ at the last period)
    SE(Δ_k)² = m / (m - 1) · Σ_u (S_u - R N_u)² / (Σ_u N_u)²,   R = Σ S_u / Σ N_u
    CI: Δ_k ± z_{1-α/2} · SE(Δ_k)

This is the delta-method variance of a ratio of per-unit means (Deng et al. 2018, the same
:meth:`~serpeval.online.logs.moments.Moments.ratio_var` the A/B metrics use): a unit's
impressions are never treated as independent. It equals the cluster-robust (CR1) standard
error of the mean impression credit clustered by unit, and with many units it agrees with
the bootstrap over units of :func:`~serpeval.online.interleaving.analysis.analyze_outcomes`. It needs two
units (before that the CI is ``None``). Like any fixed-horizon CI, one read at every
period is not a sequential test: it shows how the preference settled, not when to stop.

In the engine (one query, one row per period comes back): per (unit, period) the sums
``a = 2 S`` (an integer: 2 wins_B + ties) and ``n``; a cumulative window per unit gives the
unit's totals before the period, ``A`` and ``N``; per period the increments
``Σ (2 A a + a²)``, ``Σ (A n + N a + a n)``, ``Σ (2 N n + n²)`` of ``Σ A²``, ``Σ A N``,
``Σ N²`` and the units seen for the first time. Cumulative sums over periods (NumPy) give
the moments at each period's end: integer arithmetic, so DuckDB and Spark agree exactly.

Periods are fixed lengths counted from midnight UTC of the first impression's day: ``day``
(calendar days, UTC), ``hour``, ``week`` (7 days from the first day) or ``6h``, ``30m``,
``2d``... A timestamp with a time zone is placed by its UTC instant, one without is read
as UTC (the engines' epoch seconds in a UTC session: ibis runs DuckDB in UTC, and
serpeval's Spark sessions set ``spark.sql.session.timeZone=UTC``; a Spark session of your
own should too). Impressions without a timestamp are left out of this series (and counted).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.errors import OptionError
from serpeval.online.logs.sources import collect_sorted, count, first_row
from serpeval.stats.validation import confidence_label

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["PERIODS", "PreferenceOverTime", "delta_ci", "period_seconds", "preference_over_time"]

#: Named periods and their length in seconds.
PERIODS: dict[str, int] = {"hour": 3600, "day": 86400, "week": 7 * 86400}

#: The most periods one series may have (a CI per period; more is a period too short).
MAX_PERIODS = 10_000

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DAY = 86400


def period_seconds(period: str | dt.timedelta) -> tuple[str, int]:
    """``(name, seconds)`` of a period: ``day``, ``hour``, ``week``, ``<n><s|m|h|d|w>`` or a
    :class:`datetime.timedelta` of whole seconds.

    Examples:
        >>> period_seconds("day"), period_seconds("6h"), period_seconds(dt.timedelta(days=2))
        (('day', 86400), ('6h', 21600), ('2d', 172800))
    """
    if isinstance(period, dt.timedelta):
        seconds = period.total_seconds()
        if seconds < 1 or seconds != int(seconds):
            raise OptionError(
                f"period must be a whole number of seconds, at least 1; got {period}."
            )
        seconds = int(seconds)
        unit = next(u for u in "wdhms" if seconds % _UNITS[u] == 0)
        return f"{seconds // _UNITS[unit]}{unit}", seconds
    if isinstance(period, str):
        text = period.strip().lower()
        if text in PERIODS:
            return text, PERIODS[text]
        match = re.fullmatch(r"(\d+)\s*([smhdw])", text)
        if match and int(match.group(1)) > 0:
            return text.replace(" ", ""), int(match.group(1)) * _UNITS[match.group(2)]
    raise OptionError(
        f"period must be day, hour, week or a length such as 6h, 30m or 2d; got {period!r}."
    )


@dataclass(frozen=True)
class PreferenceOverTime:
    """Δ over time (positive: B preferred): per period its own counts and the cumulative Δ
    with its CI.

    Attributes:
        period, seconds: the period's name and length.
        unit: what the CI clusters on (user, query, user_query, impression).
        confidence: the CI's level.
        rows: one dict per period, first to last (periods without impressions included),
            see :meth:`to_dicts`.
        without_timestamp: impressions left out because their timestamp is missing.
    """

    period: str
    seconds: int
    unit: str
    confidence: float
    rows: tuple[dict[str, Any], ...]
    without_timestamp: int = 0

    def to_dicts(self) -> list[dict[str, Any]]:
        """One row per period.

        ``period`` (1 = the first), ``start`` and ``end`` (ISO 8601, UTC); the period's own
        ``impressions``, ``wins_a``, ``wins_b``, ``ties``, ``units`` (active in it),
        ``new_units`` (seen for the first time) and ``delta_period`` (its own Δ, None
        without impressions); then, cumulative to the period's end, ``cum_impressions``,
        ``cum_units``, ``cum_wins_a``, ``cum_wins_b``, ``cum_ties``, ``delta``, ``se``,
        ``ci_low``, ``ci_high`` (None with fewer than two units). Every Δ is
        ``(wins_B + ties/2)/N - 1/2``: positive when B (the candidate) is preferred.
        """
        return [dict(r) for r in self.rows]

    def final(self) -> dict[str, Any] | None:
        """The last period's row (the whole timed log), or None without periods."""
        return dict(self.rows[-1]) if self.rows else None

    def method(self) -> str:
        """The CI's method, one sentence for notes and reports."""
        return (
            f"cumulative Δ (B-A, positive: B preferred) per {self.period} (UTC) with a "
            f"{confidence_label(self.confidence)} CI from the "
            f"delta method on per-{self.unit} sums (clustered by {self.unit})"
        )

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return {
            "period": self.period,
            "seconds": self.seconds,
            "unit": self.unit,
            "confidence": self.confidence,
            "method": self.method(),
            "without_timestamp": self.without_timestamp,
            "rows": self.to_dicts(),
        }


def delta_ci(
    score: Any,
    impressions: Any,
    score_sq: Any,
    score_imp: Any,
    imp_sq: Any,
    units: Any,
    confidence: float = 0.95,
) -> tuple[NDArray[np.float64], ...]:
    """Δ, its standard error and CI from per-unit sums (vectorized, e.g. over periods).

    Args:
        score: Σ_u a_u with a_u = 2 wins_B,u + ties_u (twice B's credit of the unit; Δ is
            then positive when B is preferred).
        impressions: Σ_u n_u.
        score_sq, score_imp, imp_sq: Σ a_u², Σ a_u n_u, Σ n_u².
        units: m, the number of units.
        confidence: the CI's level.

    Returns ``(delta, se, low, high)``; ``se``, ``low`` and ``high`` are NaN where m < 2.
    The formula is in the module docstring; the variance is
    :meth:`Moments.ratio_var <serpeval.online.logs.moments.Moments.ratio_var>` of a / n.
    """
    from scipy.stats import norm

    from serpeval.online.logs.moments import Moments

    a, n, aa, an, nn, m = (
        np.asarray(v, dtype=np.float64)
        for v in (score, impressions, score_sq, score_imp, imp_sq, units)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        moments = Moments(
            m,
            {"a": a / m, "n": n / m},
            {
                ("a", "a"): (aa - a * a / m) / (m - 1),
                ("a", "n"): (an - a * n / m) / (m - 1),
                ("n", "n"): (nn - n * n / m) / (m - 1),
            },
        )
        delta = (a / 2) / n - 0.5  # exactly the (wins_B + ties / 2) / N - 1/2 of the log
        se = np.sqrt(np.maximum(moments.ratio_var("a", "n"), 0.0) / m) / 2
    se = np.where(m >= 2, se, np.nan)
    z = norm.ppf(0.5 + confidence / 2)
    return delta, se, delta - z * se, delta + z * se


def _epoch(ts: Any) -> Any:
    return ts.epoch_seconds().cast("float64")


#: prepare's ``kept_aggregates`` giving :func:`preference_over_time` its ``span``
SPAN = {
    "first": lambda rows, keep: _epoch(rows.ts).min(where=keep),
    "last": lambda rows, keep: _epoch(rows.ts).max(where=keep),
    "missing": lambda rows, keep: count(rows.ts.isnull(), where=keep),
}


def preference_over_time(
    features: Any, keys: list[str], *, period: str | dt.timedelta, confidence: float, unit: str,
    span: dict[str, Any] | None = None,
) -> PreferenceOverTime | None:
    """The series from per-impression features (``ts``, ``win``, ``loss`` and the unit
    ``keys``), computed in the engine (see the module docstring); None when every
    timestamp is missing.

    ``span``: the first and last timestamps (epoch seconds) and the number missing, when
    already counted (:data:`SPAN`, in prepare's counting pass); else one query here.
    """
    import ibis

    name, seconds = period_seconds(period)
    epoch = _epoch(features.ts)
    if span is None:
        span = first_row(
            features.aggregate(first=epoch.min(), last=epoch.max(), missing=count(features.ts.isnull()))
        )
    if span.get("first") is None:
        return None
    origin = math.floor(span["first"] / _DAY) * _DAY
    n_periods = int((span["last"] - origin) // seconds) + 1
    if n_periods > MAX_PERIODS:
        raise OptionError(
            f"period {name!r} splits the log into {n_periods:,} periods (at most "
            f"{MAX_PERIODS:,}); choose a longer period."
        )
    timed = features.mutate(period=((epoch - origin) / seconds).floor().cast("int64"))
    timed = timed.filter(timed.period.notnull())
    cells = timed.group_by([*keys, "period"]).aggregate(
        w=timed.win.sum(), l=timed.loss.sum(), n=timed.count()
    )
    cells = cells.mutate(a=cells.n + cells.l - cells.w)  # 2 wins_B + ties (w: A's wins, l: B's)
    before = ibis.cumulative_window(group_by=keys, order_by="period")
    cells = cells.mutate(
        a_before=cells.a.sum().over(before) - cells.a, n_before=cells.n.sum().over(before) - cells.n
    )
    a, n, a0, n0 = cells.a, cells.n, cells.a_before, cells.n_before
    per_period = (
        cells.group_by("period")
        .aggregate(
            impressions=n.sum(),
            wins_a=cells.w.sum(),
            wins_b=cells.l.sum(),
            units=cells.count(),
            new_units=count(n0 == 0),
            score=a.sum(),
            d_aa=(2 * a0 * a + a * a).sum(),
            d_an=(a0 * n + n0 * a + a * n).sum(),
            d_nn=(2 * n0 * n + n * n).sum(),
        )
    )
    table = collect_sorted(per_period, ["period"])
    rows = _rows(table, n_periods, origin, seconds, confidence)
    return PreferenceOverTime(
        name, seconds, unit, confidence, tuple(rows), int(span.get("missing") or 0)
    )


_COLUMNS = (
    "impressions",
    "wins_a",
    "wins_b",
    "units",
    "new_units",
    "score",
    "d_aa",
    "d_an",
    "d_nn",
)


def _rows(
    table: Any, n_periods: int, origin: float, seconds: int, confidence: float
) -> list[dict[str, Any]]:
    """Per-period rows from the engine's per-period sums (every period, empty ones as 0)."""
    index = np.asarray(table.column("period").to_numpy(zero_copy_only=False), dtype=np.int64)
    per: dict[str, NDArray[np.int64]] = {}
    for column in _COLUMNS:
        values = np.zeros(n_periods, dtype=np.int64)
        values[index] = np.asarray(
            table.column(column).to_numpy(zero_copy_only=False), dtype=np.int64
        )
        per[column] = values
    cum = {column: np.cumsum(values) for column, values in per.items()}
    delta, se, low, high = delta_ci(
        cum["score"],
        cum["impressions"],
        cum["d_aa"],
        cum["d_an"],
        cum["d_nn"],
        cum["new_units"],
        confidence,
    )
    ties = per["impressions"] - per["wins_a"] - per["wins_b"]
    cum_ties = cum["impressions"] - cum["wins_a"] - cum["wins_b"]
    start = dt.datetime.fromtimestamp(origin, dt.UTC)
    rows = []
    for k in range(n_periods):
        shown = int(per["impressions"][k])
        finite = bool(np.isfinite(se[k]))
        rows.append(
            {
                "period": k + 1,
                "start": _iso(start + dt.timedelta(seconds=k * seconds)),
                "end": _iso(start + dt.timedelta(seconds=(k + 1) * seconds)),
                "impressions": shown,
                "wins_a": int(per["wins_a"][k]),
                "wins_b": int(per["wins_b"][k]),
                "ties": int(ties[k]),
                "units": int(per["units"][k]),
                "new_units": int(per["new_units"][k]),
                "delta_period": float(per["score"][k] / (2 * shown) - 0.5) if shown else None,
                "cum_impressions": int(cum["impressions"][k]),
                "cum_units": int(cum["new_units"][k]),
                "cum_wins_a": int(cum["wins_a"][k]),
                "cum_wins_b": int(cum["wins_b"][k]),
                "cum_ties": int(cum_ties[k]),
                "delta": float(delta[k]),
                "se": float(se[k]) if finite else None,
                "ci_low": float(low[k]) if finite else None,
                "ci_high": float(high[k]) if finite else None,
            }
        )
    return rows


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
