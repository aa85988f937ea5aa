"""The interleaving preference over time: per-period counts, cumulative Δ and its CI.

Checked against a hand-worked log, a direct NumPy computation from the raw lists, the
cluster-robust standard error of statsmodels, and the whole-log analysis.
"""

from __future__ import annotations

import datetime as dt
import doctest
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import serpeval.online.experiments.interleaving_over_time
from serpeval.cli import main
from serpeval.core.errors import OptionError
from serpeval.online.experiments import analyze_interleaving_logs
from serpeval.online.experiments.interleaving_over_time import delta_ci, period_seconds

UTC = dt.UTC


def test_docstring_examples() -> None:
    result = doctest.testmod(serpeval.online.experiments.interleaving_over_time)
    assert result.failed == 0
    assert result.attempted > 0


def hand_log() -> pa.Table:
    """Three users over four UTC days (day 3 empty), one impression without a timestamp.

    Day 1: u1 A wins, u1 tie, u2 B wins (the u2 row is 00:30 in Paris: 23:30 UTC, day 1).
    Day 2: u1 A wins, u3 tie, u3 tie.  Day 4: u2 A wins.  No timestamp: u3 A wins.
    """
    paris = dt.timezone(dt.timedelta(hours=1))
    times = [
        dt.datetime(2024, 3, 1, 8, 0, tzinfo=UTC),
        dt.datetime(2024, 3, 1, 9, 0, tzinfo=UTC),
        dt.datetime(2024, 3, 2, 0, 30, tzinfo=paris),  # 2024-03-01 23:30 UTC
        dt.datetime(2024, 3, 2, 0, 0, tzinfo=UTC),  # midnight: day 2
        dt.datetime(2024, 3, 2, 12, 0, tzinfo=UTC),
        dt.datetime(2024, 3, 2, 23, 59, 59, 999_999, tzinfo=UTC),
        dt.datetime(2024, 3, 4, 1, 0, tzinfo=UTC),
        None,
    ]
    clicks = [[1], [], [2], [1], [], [1, 2], [1], [1]]
    return pa.table(
        {
            "impression_id": np.arange(8),
            "user_id": [1, 1, 2, 1, 3, 3, 2, 3],
            "timestamp": pa.array(times, pa.timestamp("us", tz="Europe/Paris")),
            "n_shown": [2] * 8,
            "teams": [["A", "B"]] * 8,
            "clicks": clicks,
        }
    )


def test_hand_worked_log() -> None:
    report = analyze_interleaving_logs(hand_log(), n_resamples=200, rng=0)
    over = report.over_time
    assert (over.period, over.seconds, over.unit, over.without_timestamp) == (
        "day",
        86400,
        "user",
        1,
    )
    rows = over.to_dicts()
    assert [r["start"] for r in rows] == [f"2024-03-0{d}T00:00:00Z" for d in (1, 2, 3, 4)]
    assert [(r["impressions"], r["wins_a"], r["wins_b"], r["ties"]) for r in rows] == [
        (3, 1, 1, 1),
        (3, 1, 0, 2),
        (0, 0, 0, 0),
        (1, 1, 0, 0),
    ]
    assert [(r["units"], r["new_units"], r["cum_units"]) for r in rows] == [
        (2, 2, 2),
        (2, 1, 3),
        (0, 0, 3),
        (1, 0, 3),
    ]
    # Δ is oriented towards B (the candidate): S_u = B's wins + ties / 2 of user u.
    # day 1: S = (0.5, 1), N = (2, 1); R = 1/2; residuals (-0.5, 0.5); SE^2 = 2/1 * 0.5 / 3^2
    assert rows[0]["delta"] == 0.0
    assert rows[0]["se"] == pytest.approx(1 / 3, rel=1e-12)
    # day 2: S = (0.5, 1, 1), N = (3, 1, 2); Δ = 2.5/6 - 1/2 (A won more: negative);
    # R = 5/12, residuals (-0.75, 7/12, 1/6): Σ e^2 = 134/144; SE^2 = 3/2 Σe^2 / 36
    assert rows[1]["delta"] == pytest.approx(2.5 / 6 - 0.5, abs=1e-15)
    assert rows[1]["se"] == pytest.approx(np.sqrt(201) / 72, rel=1e-12)
    assert rows[1]["ci_low"] == pytest.approx(rows[1]["delta"] - 1.959963985 * rows[1]["se"])
    assert rows[2]["delta"] == rows[1]["delta"]
    assert rows[2]["se"] == rows[1]["se"]
    assert rows[1]["delta_period"] == pytest.approx(1 / 3 - 0.5)   # (0 B wins + 2 ties / 2) / 3
    assert rows[2]["delta_period"] is None
    assert rows[3]["cum_impressions"] == 7  # the impression without a timestamp is left out
    assert report.analysis.impressions == 8
    assert "1 impression(s) without a timestamp left out of the preference over time" in (
        report.notes()
    )
    json.dumps(report.to_json_dict(), allow_nan=False)
    assert report.to_json_dict()["over_time"]["rows"] == report.over_time_rows()


def test_one_unit_has_no_interval() -> None:
    delta, se, low, high = delta_ci([3], [2], [9], [6], [4], [1])
    assert delta[0] == 0.25
    assert np.isnan(se[0])
    assert np.isnan(low[0])
    assert np.isnan(high[0])
    table = hand_log().filter(pc.field("user_id") == 1)
    rows = analyze_interleaving_logs(table, n_resamples=50, rng=0).over_time_rows()
    assert rows[0]["cum_units"] == 1
    assert rows[0]["se"] is None
    assert rows[0]["ci_low"] is None


def direct_series(table: pa.Table, outcomes: np.ndarray, users: np.ndarray) -> list[dict]:
    """Cumulative Δ and its clustered SE per UTC day, from the raw arrays with NumPy."""
    days = table.column("timestamp").to_numpy().astype("datetime64[D]")
    _, codes = np.unique(users, return_inverse=True)
    credit = (outcomes == -1) + (outcomes == 0) / 2   # B's credit (outcome -1: B wins)
    out = []
    for day in np.arange(days.min(), days.max() + 1):
        upto = days <= day
        s = np.bincount(codes[upto], weights=credit[upto], minlength=codes.max() + 1)
        n = np.bincount(codes[upto], minlength=codes.max() + 1)
        s, n = s[n > 0], n[n > 0]
        ratio = s.sum() / n.sum()
        se = np.sqrt(len(n) / (len(n) - 1) * np.sum((s - ratio * n) ** 2)) / n.sum()
        out.append(
            {
                "day": str(day),
                "n": int(n.sum()),
                "units": len(n),
                "delta": ratio - 0.5,
                "se": se,
                "impressions": int((days == day).sum()),
            }
        )
    return out


@pytest.fixture(scope="module")
def daily(interleaving_logs):
    """The shared log analysed per day (the default period), once for the tests below."""
    return analyze_interleaving_logs(interleaving_logs.impressions, n_resamples=2000, rng=3)


def test_series_against_numpy_statsmodels_and_the_whole_log(interleaving_logs, il_outcomes, daily):
    import statsmodels.api as sm

    table = interleaving_logs.impressions
    outcomes, users = il_outcomes(table)
    report = daily
    rows = report.over_time_rows()
    expected = direct_series(table, outcomes, users)
    assert [r["start"][:10] for r in rows] == [e["day"] for e in expected]
    assert len(rows) == 14
    for got, want in zip(rows, expected, strict=True):
        assert (got["cum_impressions"], got["cum_units"], got["impressions"]) == (
            want["n"],
            want["units"],
            want["impressions"],
        )
        assert got["delta"] == pytest.approx(want["delta"], abs=1e-14)
        assert got["se"] == pytest.approx(want["se"], rel=1e-9)
    # statsmodels: the mean impression credit with cluster-robust (CR1) SEs by user
    credit = (outcomes == -1) + (outcomes == 0) / 2   # B's credit (outcome -1: B wins)
    fit = sm.OLS(credit, np.ones(len(credit))).fit(cov_type="cluster", cov_kwds={"groups": users})
    final, whole = rows[-1], report.analysis
    assert final["se"] == pytest.approx(fit.bse[0], rel=1e-9)
    low, high = fit.conf_int(alpha=0.05)[0] - 0.5
    assert (final["ci_low"], final["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    # the last period is the whole log: the same Δ and counts, a CI close to the bootstrap's
    assert final["delta"] == whole.delta
    assert (final["cum_wins_a"], final["cum_wins_b"], final["cum_ties"]) == (
        whole.wins_a,
        whole.wins_b,
        whole.ties,
    )
    assert final["cum_units"] == whole.units
    width = whole.ci_high - whole.ci_low
    assert final["ci_low"] == pytest.approx(whole.ci_low, abs=0.05 * width)
    assert final["ci_high"] == pytest.approx(whole.ci_high, abs=0.05 * width)


def test_other_periods_and_units(interleaving_logs, daily) -> None:
    table = interleaving_logs.impressions
    for period, count in (("6h", 56), ("week", 2), (dt.timedelta(hours=12), 28)):
        rows = analyze_interleaving_logs(
            table, n_resamples=50, rng=0, period=period
        ).over_time_rows()
        assert len(rows) == count
        assert sum(r["impressions"] for r in rows) == daily.analysis.impressions
        assert rows[-1]["delta"] == daily.over_time_rows()[-1]["delta"]
        assert rows[-1]["se"] == pytest.approx(daily.over_time_rows()[-1]["se"], rel=1e-12)
    by_query = analyze_interleaving_logs(table, unit="query", n_resamples=50, rng=0)
    assert by_query.over_time.unit == "query"
    assert by_query.over_time_rows()[-1]["cum_units"] == by_query.analysis.units
    assert analyze_interleaving_logs(table, n_resamples=50, period=None).over_time is None


def test_periods_and_errors(tmp_path, capsys) -> None:
    assert period_seconds("Hour") == ("hour", 3600)
    assert period_seconds("90s") == ("90s", 90)
    assert period_seconds(dt.timedelta(minutes=30)) == ("30m", 1800)
    for bad in ("fortnight", "0h", "-1d", dt.timedelta(seconds=0.5), 3):
        with pytest.raises(OptionError, match="period"):
            period_seconds(bad)  # type: ignore[arg-type]
    log = hand_log()
    with pytest.raises(OptionError, match="at most 10,000"):
        analyze_interleaving_logs(log, n_resamples=50, period="1s")
    untimed = log.drop_columns(["timestamp"])
    assert analyze_interleaving_logs(untimed, n_resamples=50).over_time is None
    path = tmp_path / "untimed.parquet"
    pq.write_table(untimed, path)
    assert main(["interleaving-report", str(path), "--over-time"]) == 2
    assert "--over-time needs impression timestamps" in capsys.readouterr().err


def test_command_prints_the_series(tmp_path, capsys) -> None:
    path = tmp_path / "hand.parquet"
    pq.write_table(hand_log(), path)
    assert main(["interleaving-report", str(path), "--over-time", "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "preference over time: cumulative Δ (B-A, positive: B preferred) per day (UTC)" in out
    assert "cumulative delta B-A" in out
    assert "2024-03-02" in out
    assert "-0.0833 [-0.4693, +0.3026]" in out   # day 2 of test_hand_worked_log: 2.5/6 - 1/2
    assert main(["interleaving-report", str(path), "--over-time", "-f", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("period,start,end,impressions")
    assert len(lines) == 5
    assert main(["interleaving-report", str(path), "--period", "12h", "-f", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["over_time"]["period"] == "12h"
    assert len(payload["over_time"]["rows"]) == 7
