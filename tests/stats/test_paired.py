"""Paired t-test, Wilcoxon and d_z against scipy.stats on the same numbers; hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from serpeval.core.errors import OptionError, StatsError
from serpeval.stats import cohens_dz, paired_t, wilcoxon
from serpeval.stats.validation import spread

ALTERNATIVES = ["two-sided", "greater", "less"]


def _pair(seed: int, n: int = 40, shift: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n)
    return np.clip(y + shift + rng.normal(0, 0.15, n), 0, 1), y


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_equals_scipy_ttest_rel(seed: int, alternative: str) -> None:
    x, y = _pair(seed)
    ours = paired_t(x, y, alternative=alternative, confidence=0.9)
    ref = stats.ttest_rel(x, y, alternative=alternative)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert ours.ci_low == pytest.approx(ci.low, rel=1e-12)
    assert ours.ci_high == pytest.approx(ci.high, rel=1e-12)
    assert ours.mean_delta == pytest.approx(np.mean(x - y), rel=1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_t_p_values_and_bounds_are_scipy_stats_t_bit_for_bit(alternative: str) -> None:
    """paired_t calls scipy.special's stdtr / stdtrit (no scipy.stats import); its p-values and
    bounds are what scipy.stats.t's sf, cdf and ppf give on the same t, to the last bit,
    infinite t (constant differences) and t = 0 (no difference) included."""
    rng = np.random.default_rng(11)
    for n in (2, 3, 13, 40):
        x = rng.random((4, n))
        y = rng.random((4, n))
        y[1] = x[1]             # t = 0
        y[2] = x[2] - 0.25      # t = +inf
        y[3] = x[3] + 0.25      # t = -inf
        for level in (0.5, 0.9, 0.95, 0.999):
            ours = paired_t(x, y, alternative=alternative, confidence=level)
            t, df, mean = ours.statistic, n - 1, ours.mean_delta
            se = spread(x - y) / np.sqrt(n)     # as paired_t computes it
            if alternative == "two-sided":
                p = 2.0 * stats.t.sf(np.abs(t), df)
                half = stats.t.ppf(0.5 + level / 2.0, df) * se
                low, high = mean - half, mean + half
            elif alternative == "greater":
                p, low, high = stats.t.sf(t, df), mean - stats.t.ppf(level, df) * se, np.full(4, np.inf)
            else:
                p, low, high = stats.t.cdf(t, df), np.full(4, -np.inf), mean + stats.t.ppf(level, df) * se
            p = np.where(t == 0, 1.0, np.minimum(p, 1.0))
            assert ours.p_value.tobytes() == p.tobytes(), (n, level)
            assert ours.ci_low.tobytes() == low.tobytes(), (n, level)
            assert ours.ci_high.tobytes() == high.tobytes(), (n, level)


def test_t_is_vectorized_over_leading_axes() -> None:
    rng = np.random.default_rng(5)
    x = rng.random((3, 4, 25))
    y = rng.random((3, 4, 25))
    ours = paired_t(x, y)
    ref = stats.ttest_rel(x, y, axis=-1)
    assert ours.p_value.shape == (3, 4)
    np.testing.assert_allclose(ours.p_value, ref.pvalue, rtol=1e-10)
    np.testing.assert_allclose(ours.statistic, ref.statistic, rtol=1e-12)
    assert len(ours.to_dicts()) == 12
    assert ours.to_dicts()[5]["p_value"] == pytest.approx(float(ref.pvalue[1, 1]), rel=1e-10)


def test_t_hand_worked() -> None:
    # d = .1, .2, .2: mean 1/6, sd = sqrt(((-1/15)^2 + 2 (1/30)^2) / 2) = 1/sqrt(300),
    # se = sd / sqrt(3) = 1/30, t = (1/6) / (1/30) = 5, df = 2, two-sided p = 2 * P(T_2 > 5).
    r = paired_t([0.5, 0.6, 0.7], [0.4, 0.4, 0.5])
    assert r.statistic == pytest.approx(5.0, rel=1e-12)
    # P(T_2 > t) = (1 - t / sqrt(t^2 + 2)) / 2 in closed form for 2 degrees of freedom.
    assert r.p_value == pytest.approx(1 - 5 / np.sqrt(27), rel=1e-12)


def test_identical_systems_give_p_one_without_warnings() -> None:
    x = np.array([0.1, 0.5, 0.9, 0.3])
    for result in (paired_t(x, x), wilcoxon(x, x)):
        assert result.p_value == 1.0
        assert result.statistic == 0.0
    r = paired_t(x, x)
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert cohens_dz(x, x) == 0.0


def test_constant_nonzero_difference_is_certain() -> None:
    x = np.array([0.1, 0.5, 0.9, 0.3])
    r = paired_t(x + 0.1, x)  # rounding makes some differences 0.09999999999999998
    assert r.p_value < 1e-12
    exact = paired_t(np.full(5, 0.2), np.full(5, 0.1))  # all differences bit-identical
    assert exact.statistic == np.inf
    assert exact.p_value == 0.0
    assert cohens_dz(np.full(5, 0.2), np.full(5, 0.1)) == np.inf


def test_cohens_dz_is_t_over_sqrt_n() -> None:
    x, y = _pair(3, n=60)
    t = stats.ttest_rel(x, y).statistic
    assert cohens_dz(x, y) == pytest.approx(t / np.sqrt(60), rel=1e-12)
    # hand-worked: d = 1, 2, 3 -> mean 2, sd 1 -> d_z = 2
    assert cohens_dz([1.0, 2.0, 3.0]) == pytest.approx(2.0)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_equals_scipy(alternative: str, zero_method: str) -> None:
    rng = np.random.default_rng(11)
    d = np.round(rng.normal(0.02, 0.1, (4, 30)), 2)  # rounded: ties and zeros, as in IR
    d[:, :4] = 0.0
    ours = wilcoxon(d, alternative=alternative, zero_method=zero_method)
    ref = stats.wilcoxon(d, axis=-1, alternative=alternative, zero_method=zero_method)
    np.testing.assert_allclose(ours.p_value, ref.pvalue, rtol=1e-12)
    np.testing.assert_allclose(ours.statistic, ref.statistic, rtol=1e-12)
    assert np.isnan(ours.ci_low).all()


def test_wilcoxon_hand_worked_exact() -> None:
    # d = 1..5, all positive: W+ = 15, the largest of the 2^5 equally likely sign patterns,
    # so the exact one-sided p is 1/32 and the two-sided p is 2/32.
    assert wilcoxon([1.0, 2, 3, 4, 5], alternative="greater").p_value == pytest.approx(1 / 32)
    assert wilcoxon([1.0, 2, 3, 4, 5]).p_value == pytest.approx(2 / 32)


def test_wilcoxon_mixed_rows_keep_zero_rows_at_one() -> None:
    d = np.array([[0.0, 0.0, 0.0, 0.0], [0.1, -0.2, 0.3, 0.05]])
    r = wilcoxon(d)
    assert r.p_value[0] == 1.0
    assert r.p_value[1] == pytest.approx(stats.wilcoxon(d[1]).pvalue)


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(StatsError, match="at least 2 queries; got 1"):
        paired_t([0.5], [0.4])
    with pytest.raises(StatsError, match=r"same shape .* got \(3,\) and \(2,\)"):
        paired_t([0.5, 0.4, 0.3], [0.4, 0.1])
    with pytest.raises(StatsError, match="1 NaN or infinite"):
        paired_t([0.5, np.nan, 0.3], [0.4, 0.1, 0.2])
    with pytest.raises(OptionError, match="alternative must be one of"):
        paired_t([0.5, 0.4], [0.4, 0.1], alternative="bigger")
    with pytest.raises(OptionError, match="confidence must be a number between 0 and 1"):
        paired_t([0.5, 0.4], [0.4, 0.1], confidence=95)
    with pytest.raises(OptionError, match="zero_method"):
        wilcoxon([0.5, 0.4], [0.4, 0.1], zero_method="drop")


# ----------------------------------------------------------------------------- inverted bounds


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_inverting_the_t_test_gives_its_own_interval(alternative: str) -> None:
    """The t-test's p-values inverted by bisection give the analytic one-sided bound."""
    from serpeval.stats.paired import inverted_bound

    d = np.random.default_rng(7).normal(0.02, 0.1, size=(3, 40))
    analytic = paired_t(d, alternative=alternative, confidence=0.9)
    inverted = inverted_bound(lambda rows: paired_t(rows, alternative=alternative).p_value, d,
                              alternative=alternative, alpha=0.1)
    expected = analytic.ci_low if alternative == "greater" else analytic.ci_high
    np.testing.assert_allclose(inverted, expected, rtol=0, atol=1e-12)


def test_the_inverted_signed_rank_bound_is_where_the_test_starts_to_reject() -> None:
    """Shifts just below the bound are rejected by the signed-rank test, shifts just above are
    not (the test decides exactly where the bound says), against scipy's own p-values; and it
    is the Hodges-Lehmann bound: an order statistic of the Walsh averages (n = 12, exact)."""
    from serpeval.stats.paired import inverted_bound

    d = np.random.default_rng(3).normal(0.05, 0.2, size=12)
    bound = float(inverted_bound(lambda rows: wilcoxon(rows, alternative="greater").p_value, d,
                                 alternative="greater", alpha=0.05))
    assert stats.wilcoxon(d - (bound - 1e-9), alternative="greater").pvalue <= 0.05
    assert stats.wilcoxon(d - (bound + 1e-9), alternative="greater").pvalue > 0.05
    walsh = np.sort([(d[i] + d[j]) / 2 for i in range(12) for j in range(i, 12)])
    assert np.min(np.abs(walsh - bound)) < 1e-9


def test_a_test_that_cannot_reject_gives_an_infinite_bound() -> None:
    from serpeval.stats.paired import inverted_bound

    two = np.array([[0.1, 0.3]])  # the signed-rank test of 2 differences never reaches 0.05
    assert inverted_bound(lambda rows: wilcoxon(rows, alternative="greater").p_value, two,
                          alternative="greater", alpha=0.05).tolist() == [-np.inf]
    assert inverted_bound(lambda rows: wilcoxon(rows, alternative="less").p_value, two,
                          alternative="less", alpha=0.05).tolist() == [np.inf]
    with pytest.raises(OptionError, match="one-sided"):
        inverted_bound(lambda rows: rows, two, alternative="two-sided", alpha=0.05)  # type: ignore[arg-type]


@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_huge_and_tiny_scores_give_the_scale_free_answer(factor: float) -> None:
    # x = (1, 2, 3), y = (0, 0, 1): d = (1, 2, 2), t = 5 with df 2, p = 0.0377 (scipy below on
    # the unscaled numbers). Multiplying every score by 1e200 changes no test statistic; before,
    # the squares overflowed (sd = inf), so t = 0, d_z = 0 and p = 1.
    from serpeval.stats import paired_bootstrap
    from serpeval.stats.tukey import tukey_hsd

    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 1.0])
    ref = stats.ttest_rel(x, y)
    ours = paired_t(x * factor, y * factor)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert ours.ci_low == pytest.approx(ref.confidence_interval().low * factor, rel=1e-12)
    assert cohens_dz(x * factor, y * factor) == pytest.approx(5 / np.sqrt(3), rel=1e-12)
    boot, plain = (paired_bootstrap(a, b, n_resamples=500, rng=1) for a, b in ((x * factor, y * factor), (x, y)))
    assert boot.p_value == plain.p_value
    assert boot.ci_low == pytest.approx(plain.ci_low * factor, rel=1e-12)
    scores = np.array([[1.0, 2.0, 3.5], [0.0, 0.0, 1.0], [2.0, 2.0, 2.0]])
    big, small = tukey_hsd(scores * factor), tukey_hsd(scores)
    np.testing.assert_allclose(big.p_value, small.p_value, rtol=1e-12)
    np.testing.assert_allclose(big.mean_diff, small.mean_diff * factor, rtol=1e-12)


def test_differences_that_overflow_are_refused() -> None:
    # Finite scores whose difference is infinite: before, t = inf and p = 0 (the randomization
    # test said 0 too, the bootstrap 1), none of them an answer.
    from serpeval.stats import paired_bootstrap, randomization_test

    for test in (paired_t, wilcoxon, randomization_test, paired_bootstrap, cohens_dz):
        with pytest.raises(StatsError, match="overflow float64"):
            test([1e308, 1e308, 1e308], [-1e308, -1e308, -1e307])
