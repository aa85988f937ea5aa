"""Always-valid monitoring (mSPRT): the formula, its guarantee, and the look-by-look replay."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from serpeval.core.errors import OptionError
from serpeval.stats.sequential import always_valid, mixture_rho2


def mixture_lr(d: float, v: float, tau2: float) -> float:
    """The mixture likelihood ratio by numerical integration over the effect theta ~ N(0, tau2):
    int N(d; theta, v) / N(d; 0, v) dN(theta; 0, tau2)."""

    def integrand(theta: float) -> float:
        return (
            stats.norm.pdf(d, theta, math.sqrt(v))
            / stats.norm.pdf(d, 0.0, math.sqrt(v))
            * stats.norm.pdf(theta, 0.0, math.sqrt(tau2))
        )

    sd = math.sqrt(tau2)
    return integrate.quad(integrand, -12 * sd, 12 * sd, epsabs=0, epsrel=1e-12, limit=200)[0]


@pytest.mark.parametrize(
    ("d", "v", "n"), [(0.01, 1e-5, 2000), (-0.004, 4e-6, 9000), (0.0, 1e-4, 300)]
)
def test_mixture_ratio_matches_numerical_integration(d: float, v: float, n: float) -> None:
    seq = always_valid([d], [v], [n], alpha=0.05, tuning_n=5000)
    tau2 = n * v * seq.rho2  # tau^2 = s^2 rho^2 with s^2 = n v
    assert float(seq.p_value[0]) == pytest.approx(min(1.0, 1.0 / mixture_lr(d, v, tau2)), rel=1e-9)


def test_confidence_sequence_is_where_the_ratio_reaches_one_over_alpha() -> None:
    d, v, n, alpha = 0.02, 2e-5, 4000, 0.05
    seq = always_valid([d], [v], [n], alpha=alpha)
    tau2 = n * v * seq.rho2
    for edge in (float(seq.ci_lower[0]), float(seq.ci_upper[0])):
        # shifting the null to the boundary theta0 gives Lambda = 1 / alpha exactly
        assert mixture_lr(d - edge, v, tau2) == pytest.approx(1 / alpha, rel=1e-8)


def test_rho_is_tuned_to_the_sample_size_given() -> None:
    # rho^2 = (-2 log .05 + log(1 - 2 log .05)) / 1000 = (5.991465 + log 6.991465) / 1000
    assert mixture_rho2(1000, 0.05) == pytest.approx((5.991464547 + 1.944690) / 1000, rel=1e-6)
    with pytest.raises(OptionError):
        always_valid([0.1], [0.1], [10], alpha=1.2)


def test_running_minimum_and_intersection() -> None:
    seq = always_valid([0.05, 0.0, 0.03], [1e-4, 5e-5, 3e-5], [100, 200, 300])
    assert np.all(np.diff(seq.p_value) <= 0)
    assert np.all(np.diff(seq.ci_lower) >= 0)
    assert np.all(np.diff(seq.ci_upper) <= 0)


def test_a_look_without_variance_is_no_evidence() -> None:
    """An early look where every unit of both arms is alike (3 units per arm, control never
    clicks, treatment always) has variance 0: it gives p = 1 and an unbounded interval, and the
    later looks decide. Its infinite likelihood ratio made every later p 0 and the sequence an
    inverted interval."""
    res = always_valid([1.0, -0.0077, 0.04], [0.0, 0.0045, 0.002], [6, 211, 400])
    assert res.p_value[0] == 1.0
    assert (res.ci_lower[0], res.ci_upper[0]) == (-math.inf, math.inf)
    later = always_valid([-0.0077, 0.04], [0.0045, 0.002], [211, 400], tuning_n=400)
    np.testing.assert_array_equal(res.p_value[1:], later.p_value)
    np.testing.assert_array_equal(res.ci_lower[1:], later.ci_lower)
    assert (res.ci_lower <= res.ci_upper).all()


def test_peeking_inflates_errors_but_always_valid_p_does_not() -> None:
    # 2,000 A/A experiments, 20 looks each at 100, 200, ..., 2000 units per arm, vectorized.
    rng = np.random.default_rng(7)
    experiments, per_look, looks = 2000, 100, 20
    c = rng.normal(0, 1, (experiments, looks, per_look)).sum(axis=2).cumsum(axis=1)
    t = rng.normal(0, 1, (experiments, looks, per_look)).sum(axis=2).cumsum(axis=1)
    n = per_look * np.arange(1, looks + 1)
    effect = (t - c) / n
    variance = np.broadcast_to(2.0 / n, effect.shape)  # unit variance 1 per arm
    seq = always_valid(effect, variance, np.broadcast_to(2 * n, effect.shape), alpha=0.05)
    naive_p = 2 * stats.norm.sf(np.abs(effect) / np.sqrt(variance))
    peeking = np.mean((naive_p < 0.05).any(axis=1))
    always = np.mean((seq.p_value < 0.05).any(axis=1))
    assert peeking > 0.15  # stopping at the first fixed-horizon p < .05 rejects a true null often
    assert always <= 0.05  # always-valid: at most alpha however often one looks


def test_monitor_replay_ends_where_the_fixed_analysis_is(ab_logs) -> None:
    from serpeval.online.experiments import analyze_ab, monitor_ab

    seq = monitor_ab(ab_logs.impressions, metric="ctr", looks=4)
    full = analyze_ab(ab_logs.impressions, metrics="ctr").to_dicts()[0]
    rows = seq.to_dicts()
    assert [r["look"] for r in rows] == [1, 2, 3, 4]
    assert np.all(np.diff([r["units_control"] for r in rows]) >= 0)
    last = rows[-1]
    for key in ("units_control", "units_treatment", "effect", "ci_lower", "ci_upper", "p_value"):
        assert last[key] == pytest.approx(full[key], rel=1e-9)
    assert seq.tuning_n == last["units_control"] + last["units_treatment"]
    daily = monitor_ab(ab_logs.impressions, metric="ctr").to_dicts()
    assert len(daily) == 14
    assert daily[-1]["effect"] == pytest.approx(full["effect"], rel=1e-9)
    with pytest.raises(OptionError, match="looks"):
        monitor_ab(ab_logs.impressions, looks=0)


def test_look_ends_are_utc_wall_times_whatever_the_zone_of_the_timestamps(ab_logs) -> None:
    """DuckDB gave the looks' ends back zone-aware for a zone-aware timestamp column and naive
    for a naive one, Spark (sessions in UTC) naive for both: the same log gave rows that were
    not equal (an aware and a naive datetime never are). Now every end is naive UTC: the same
    instants written as UTC, as +02:00 (the wall times two hours later) or naive give the same
    rows; the ends of the daily looks are midnights."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc

    from serpeval.online.experiments import monitor_ab

    table = ab_logs.impressions
    index = table.schema.get_field_index("timestamp")
    naive = table.column("timestamp")
    assert naive.type.tz is None
    aware_utc = table.set_column(index, "timestamp", pc.assume_timezone(naive, "UTC"))
    aware_plus2 = table.set_column(index, "timestamp", pc.cast(aware_utc.column("timestamp"),
                                                                pa.timestamp("us", tz="+02:00")))
    rows = [monitor_ab(t, metric="ctr", looks=3).to_dicts() for t in (table, aware_utc, aware_plus2)]
    for other in rows[1:]:  # the same numbers (DuckDB's float sums may differ in the last bits)
        assert other == [{k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}
                         for row in rows[0]]
    ends = [r["end"] for r in rows[0]]
    assert all(isinstance(e, dt.datetime) and e.tzinfo is None for e in ends)
    assert ends[-1] > naive.to_pylist()[-1] - dt.timedelta(seconds=1)  # the last end is the last impression's
    assert ends[-1] == max(naive.to_pylist()) + dt.timedelta(microseconds=1)
    daily = monitor_ab(aware_plus2, metric="ctr").to_dicts()
    assert all((e := r["end"]).tzinfo is None and (e.hour, e.minute, e.second) == (0, 0, 0) for r in daily)
