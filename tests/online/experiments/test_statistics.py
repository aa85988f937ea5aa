"""Every A/B statistic against scipy / statsmodels / tea-tasting on the same data, to 1e-9."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from serpeval.core.errors import OptionError, StatsError
from serpeval.online.logs.moments import Moments
from serpeval.stats import effects, power
from serpeval.stats.srm import SampleRatioMismatchWarning, srm_check

TOL = 1e-9


def moments_of(columns: dict[str, np.ndarray]) -> Moments:
    """Moments of one group, computed directly with NumPy."""
    names = sorted(columns)
    data = np.vstack([columns[n] for n in names]).astype(float)
    cov = np.cov(data, ddof=1)
    return Moments(
        n=np.array(float(data.shape[1])),
        means={n: np.array(data[i].mean()) for i, n in enumerate(names)},
        covs={
            (a, b): np.array(cov[i, j])
            for i, a in enumerate(names)
            for j, b in enumerate(names)
            if a <= b
        },
    )


def test_delta_method_hand_worked() -> None:
    # Users (clicks, impressions) = (1, 2), (0, 1), (3, 3): R = 4/6; mu_Y = 4/3, mu_X = 2;
    # var Y = ((1/3)^2 + (4/3)^2 + (5/3)^2) / 2 = 7/3; var X = (0 + 1 + 1) / 2 = 1;
    # cov = (0 + 4/3 + 5/3) / 2 = 3/2. Per-unit delta variance
    # (7/3 - 2 (2/3)(3/2) + (4/9) 1) / 2^2 = (7/9) / 4 = 7/36.
    m = moments_of({"clicks": np.array([1, 0, 3]), "impressions": np.array([2, 1, 3])})
    assert float(m.ratio("clicks", "impressions")) == pytest.approx(4 / 6, abs=1e-15)
    assert float(m.ratio_var("clicks", "impressions")) == pytest.approx(7 / 36, abs=1e-15)
    # a per-unit mean is the ratio with the constant 1: its variance is the plain variance
    assert float(m.ratio_var("clicks", None)) == pytest.approx(7 / 3, abs=1e-15)


def test_pooled_moments_equal_moments_of_the_union() -> None:
    rng = np.random.default_rng(1)
    a = {"y": rng.poisson(2, 50), "x": rng.poisson(3, 50) + 1}
    b = {"y": rng.poisson(4, 70), "x": rng.poisson(2, 70) + 1}
    pooled = moments_of(a).pool(moments_of(b))
    union = moments_of({k: np.concatenate([a[k], b[k]]) for k in a})
    assert float(pooled.n) == float(union.n)
    for key, value in union.covs.items():
        assert float(pooled.covs[key]) == pytest.approx(float(value), rel=1e-12)
    for key, value in union.means.items():
        assert float(pooled.means[key]) == pytest.approx(float(value), rel=1e-12)


def test_welch_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    c, t = rng.gamma(2.0, 1.5, 300), rng.gamma(2.2, 1.5, 200)
    e = effects.compare_means(
        c.mean(), c.var(ddof=1), len(c), t.mean(), t.var(ddof=1), len(t), use_t=True
    )
    ref = stats.ttest_ind(t, c, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert float(e.statistic) == pytest.approx(ref.statistic, rel=TOL)
    assert float(e.p_value) == pytest.approx(ref.pvalue, rel=TOL)
    assert float(e.df) == pytest.approx(ref.df, rel=TOL)
    assert float(e.ci_lower) == pytest.approx(ci.low, rel=TOL)
    assert float(e.ci_upper) == pytest.approx(ci.high, rel=TOL)


def test_z_test_matches_statsmodels() -> None:
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    rng = np.random.default_rng(3)
    c, t = rng.normal(1.0, 2.0, 400), rng.normal(1.3, 1.0, 250)
    e = effects.compare_means(c.mean(), c.var(ddof=1), len(c), t.mean(), t.var(ddof=1), len(t))
    cm = CompareMeans(DescrStatsW(t), DescrStatsW(c))
    z, p = cm.ztest_ind(usevar="unequal")
    low, high = cm.zconfint_diff(alpha=0.05, usevar="unequal")
    assert float(e.statistic) == pytest.approx(z, rel=TOL)
    assert float(e.p_value) == pytest.approx(p, rel=TOL)
    assert (float(e.ci_lower), float(e.ci_upper)) == pytest.approx((low, high), rel=TOL)


def test_two_proportion_ztest_matches_statsmodels() -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest

    e = effects.two_proportion_ztest([100, 3870], [1000, 10000], [130, 3990], [1000, 10000])
    for i, (xc, nc, xt, nt) in enumerate([(100, 1000, 130, 1000), (3870, 10000, 3990, 10000)]):
        z, p = proportions_ztest([xt, xc], [nt, nc])
        low, high = confint_proportions_2indep(xt, nt, xc, nc, method="wald", compare="diff")
        assert float(e.statistic[i]) == pytest.approx(z, rel=TOL)
        assert float(e.p_value[i]) == pytest.approx(p, rel=TOL)
        assert (float(e.ci_lower[i]), float(e.ci_upper[i])) == pytest.approx((low, high), rel=TOL)
        # the relative interval: statsmodels' log interval for the ratio p_T / p_C
        low, high = confint_proportions_2indep(xt, nt, xc, nc, method="log", compare="ratio")
        assert float(e.rel_effect[i]) == pytest.approx((xt / nt) / (xc / nc) - 1, rel=TOL)
        assert (float(e.rel_ci_lower[i]), float(e.rel_ci_upper[i])) == pytest.approx(
            (low - 1, high - 1), rel=TOL
        )


def test_zero_standard_error_is_no_test() -> None:
    """No variance in either arm: the standard error of the difference is 0, z = effect / 0
    is no p-value (it was p = 0 and "better" for 0 vs 1, p = 1 for identical arms): NaN
    statistic, p-value and intervals; the effect is still given."""
    for control, treatment in [(0.5, 0.5), (0.0, 1.0)]:
        for use_t in (False, True):
            e = effects.compare_means(control, 0.0, 10, treatment, 0.0, 10, use_t=use_t)
            assert float(e.effect) == treatment - control
            assert float(e.se) == 0.0
            assert np.isnan([e.statistic, e.p_value, e.ci_lower, e.ci_upper, e.rel_ci_lower,
                             e.rel_ci_upper]).all()
            assert bool(effects.no_variance(e))
    # vectorized: only the comparison without variance has no test
    e = effects.compare_means([0.0, 0.0], [0.0, 1.0], [5, 5], [1.0, 0.5], [0.0, 1.0], [5, 5])
    assert list(np.isnan(e.p_value)) == [True, False]
    assert list(effects.no_variance(e)) == [True, False]
    # two proportions: all 0 in both arms has no test; 0/10 vs 10/10 keeps its pooled test
    # but its unpooled (Wald) interval, of width 0, is NaN
    none = effects.two_proportion_ztest(0, 10, 0, 10)
    assert np.isnan([none.p_value, none.ci_lower]).all()
    assert bool(effects.no_variance(none))
    split = effects.two_proportion_ztest(0, 10, 10, 10)
    assert float(split.p_value) == pytest.approx(7.744216e-06, rel=1e-6)  # z = 1 / sqrt(.25 * .2)
    assert np.isnan([split.ci_lower, split.ci_upper]).all()
    assert not bool(effects.no_variance(split))
    with pytest.raises(StatsError, match="at least 2 units"):
        effects.compare_means(0.5, 1.0, 1, 0.5, 1.0, 10)


def _tea(frame, metric):
    import tea_tasting as tt

    return tt.Experiment(m=metric).analyze(frame, control="control")["m"]


def _assert_same(row: dict, ref) -> None:
    pairs = [
        ("value_control", ref.control),
        ("value_treatment", ref.treatment),
        ("effect", ref.effect_size),
        ("ci_lower", ref.effect_size_ci_lower),
        ("ci_upper", ref.effect_size_ci_upper),
        ("rel_effect", ref.rel_effect_size),
        ("rel_ci_lower", ref.rel_effect_size_ci_lower),
        ("rel_ci_upper", ref.rel_effect_size_ci_upper),
        ("p_value", ref.pvalue),
    ]
    for name, expected in pairs:
        assert row[name] == pytest.approx(expected, rel=TOL, abs=1e-15), name


@pytest.fixture(scope="module")
def analysed(ab_logs, per_unit):
    from serpeval.online.experiments import analyze_ab

    metrics = ["ctr", "abandonment", "clicks_at_1", "mrr", "clicks_per_user"]
    plain = analyze_ab(ab_logs.impressions, metrics=metrics)
    cuped = analyze_ab(ab_logs.impressions, pre=ab_logs.pre, metrics=metrics)
    units = per_unit(ab_logs.impressions, ab_logs.pre).rename(columns={"user": "user_id"})
    return (
        {r["metric"]: r for r in plain.to_dicts()},
        {r["metric"]: r for r in cuped.to_dicts()},
        units,
    )


@pytest.mark.parametrize(
    ("metric", "numer"),
    [("ctr", "clicks"), ("abandonment", "abandoned"), ("clicks_at_1", "click_at_1"), ("mrr", "rr")],
)
def test_ratio_metrics_match_tea_tasting(analysed, metric: str, numer: str) -> None:
    import tea_tasting as tt

    plain, cuped, units = analysed
    _assert_same(plain[metric], _tea(units, tt.RatioOfMeans(numer, "impressions", use_t=False)))
    ref = _tea(
        units, tt.RatioOfMeans(numer, "impressions", f"pre_{numer}", "pre_impressions", use_t=False)
    )
    _assert_same(cuped[metric], ref)


def test_user_mean_matches_tea_tasting_and_scipy(analysed) -> None:
    import tea_tasting as tt

    plain, cuped, units = analysed
    _assert_same(plain["clicks_per_user"], _tea(units, tt.Mean("clicks", use_t=True)))
    _assert_same(cuped["clicks_per_user"], _tea(units, tt.Mean("clicks", "pre_clicks", use_t=True)))
    c = units.loc[units.variant == "control", "clicks"].to_numpy()
    t = units.loc[units.variant == "treatment", "clicks"].to_numpy()
    assert plain["clicks_per_user"]["p_value"] == pytest.approx(
        stats.ttest_ind(t, c, equal_var=False).pvalue, rel=TOL
    )


def test_cuped_reduces_variance_by_rho_squared(analysed) -> None:
    plain, cuped, _units = analysed
    for metric in ("ctr", "mrr"):
        reduction = cuped[metric]["variance_reduction"]
        assert 0.05 < reduction < 0.6
        width_plain = plain[metric]["ci_upper"] - plain[metric]["ci_lower"]
        width_cuped = cuped[metric]["ci_upper"] - cuped[metric]["ci_lower"]
        assert width_cuped < width_plain


def test_holm_correction_matches_statsmodels(analysed) -> None:
    from statsmodels.stats.multitest import multipletests

    plain, _, _ = analysed
    rows = list(plain.values())
    expected = multipletests([r["p_value"] for r in rows], method="holm")[1]
    assert [r["p_value_adjusted"] for r in rows] == pytest.approx(list(expected), rel=TOL)


# ----------------------------------------------------------------------------- SRM


def test_srm_matches_scipy_chisquare_and_warns() -> None:
    counts = {"control": 5210, "treatment": 4790}
    ref = stats.chisquare([5210, 4790], [5000, 5000])
    with pytest.warns(SampleRatioMismatchWarning, match="SAMPLE RATIO MISMATCH"):
        check = srm_check(counts)
    assert check.statistic == pytest.approx(ref.statistic, rel=TOL)
    assert check.p_value == pytest.approx(ref.pvalue, rel=TOL)
    assert check.mismatch


def test_srm_planned_split_and_no_warning_when_fine() -> None:
    ref = stats.chisquare([900, 2100], [900, 2100])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check = srm_check({"c": 900, "t": 2100}, {"c": 0.3, "t": 0.7})
    assert check.p_value == pytest.approx(ref.pvalue, rel=TOL)
    assert not check.mismatch
    with pytest.raises(OptionError, match="no share for variant"):
        srm_check({"c": 1, "t": 2}, {"c": 1.0})
    with pytest.raises(OptionError, match=r"names variant\(s\) \['u'\] that have no units"):
        srm_check({"c": 1, "t": 2}, {"c": 1.0, "t": 1.0, "u": 1.0})
    with pytest.raises(StatsError, match="two variants"):
        srm_check({"c": 1})


# ----------------------------------------------------------------------------- power


@pytest.mark.parametrize("ratio", [1.0, 2.0, 0.5])
def test_power_and_sample_size_match_statsmodels(ratio: float) -> None:
    from statsmodels.stats.power import NormalIndPower

    solver = NormalIndPower()
    variance, delta = 0.42**2, 0.01
    d = delta / math.sqrt(variance)
    assert power.power(delta, variance, 20_000, ratio=ratio) == pytest.approx(
        solver.power(d, 20_000, 0.05, ratio=ratio), rel=TOL
    )
    # Solutions are checked through statsmodels' power function (to 1e-9); its own root
    # finders stop earlier (about 1e-6 for n, 1e-4 for the effect), hence the looser checks.
    n = power.sample_size(delta, variance, power=0.8, ratio=ratio)
    assert solver.power(d, n, 0.05, ratio=ratio) == pytest.approx(0.8, rel=TOL)
    assert n == pytest.approx(
        solver.solve_power(d, nobs1=None, alpha=0.05, power=0.8, ratio=ratio), rel=1e-5
    )
    effect = power.mde(variance, 20_000, ratio=ratio)
    assert solver.power(effect / math.sqrt(variance), 20_000, 0.05, ratio=ratio) == pytest.approx(
        0.8, rel=TOL
    )
    assert effect / math.sqrt(variance) == pytest.approx(
        solver.solve_power(None, nobs1=20_000, alpha=0.05, power=0.8, ratio=ratio), rel=1e-4
    )


def test_cuped_aware_power_and_bad_options() -> None:
    # variance_reduction rho^2 = .3 scales the variance by .7, so the sample size by .7
    base = power.sample_size(0.01, 0.2)
    assert power.sample_size(0.01, 0.2, variance_reduction=0.3) == pytest.approx(
        0.7 * base, rel=1e-9
    )
    for bad in ({"alpha": 1.5}, {"power": 0.01}, {"ratio": 0.0}, {"variance_reduction": 1.0}):
        with pytest.raises(OptionError):
            power.sample_size(0.01, 0.2, **bad)
    with pytest.raises(OptionError, match="non-zero"):
        power.sample_size(0.0, 0.2)
