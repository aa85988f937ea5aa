"""Paired bootstrap: intervals against scipy.stats.bootstrap, the p-value against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from serpeval.core.errors import OptionError
from serpeval.stats import paired_bootstrap


def _differences(seed: int, n: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.gamma(2.0, 0.05, n) - 0.08  # skewed, so BCa differs from percentile


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("seed", [0, 1])
def test_intervals_equal_scipy_bootstrap(seed: int, method: str, alternative: str) -> None:
    # Both draw the resamples as rng.integers(0, n, (B, n)) from the same seed, so the
    # bootstrap distributions are the same and the intervals agree to rounding.
    d = _differences(seed)
    ours = paired_bootstrap(d, ci=method, n_resamples=4000, confidence=0.9,
                            alternative=alternative, rng=seed + 100)
    ref = stats.bootstrap((d,), np.mean, method="BCa" if method == "bca" else "percentile",
                          n_resamples=4000, confidence_level=0.9, alternative=alternative,
                          rng=np.random.default_rng(seed + 100))
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, rel=1e-9, abs=1e-15)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, rel=1e-9, abs=1e-15)


def test_bca_agrees_with_scipy_statistically_on_other_draws() -> None:
    # Different seeds: the two intervals differ only by Monte Carlo error (~0.3% of the width).
    d = _differences(5, n=60)
    ours = paired_bootstrap(d, n_resamples=40_000, rng=1)
    ref = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=40_000,
                          rng=np.random.default_rng(2)).confidence_interval
    width = ref.high - ref.low
    assert abs(ours.ci_low - ref.low) < 0.02 * width
    assert abs(ours.ci_high - ref.high) < 0.02 * width


def test_vectorized_rows_match_scipy_per_row() -> None:
    rng = np.random.default_rng(8)
    d = rng.normal(0.02, 0.1, (3, 30))
    ours = paired_bootstrap(d, n_resamples=3000, ci="percentile", rng=4)
    ref = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=3000, axis=-1,
                          rng=np.random.default_rng(4)).confidence_interval
    np.testing.assert_allclose(ours.ci_low, ref.low, rtol=1e-9)
    np.testing.assert_allclose(ours.ci_high, ref.high, rtol=1e-9)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_studentized_p_equals_a_plain_loop(alternative: str) -> None:
    d = _differences(3, n=25)
    b = 500
    ours = paired_bootstrap(d, n_resamples=b, alternative=alternative, rng=9)
    # The textbook algorithm (Efron & Tibshirani alg. 16.2), one resample at a time.
    rng = np.random.default_rng(9)
    picks = rng.integers(0, len(d), (b, len(d)))
    n = len(d)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    hits = 0
    for row in picks:
        sample = d[row]
        t_star = (sample.mean() - d.mean()) / (sample.std(ddof=1) / np.sqrt(n))
        if alternative == "two-sided":
            hits += abs(t_star) >= abs(t)
        elif alternative == "greater":
            hits += t_star >= t
        else:
            hits += t_star <= t
    assert ours.p_value == pytest.approx((hits + 1) / (b + 1))
    assert ours.statistic == pytest.approx(t)


def test_degenerate_samples() -> None:
    zero = paired_bootstrap(np.zeros(20), rng=1)
    assert (zero.p_value, zero.ci_low, zero.ci_high) == (1.0, 0.0, 0.0)
    constant = paired_bootstrap(np.full(20, 0.1), rng=1, n_resamples=999)
    assert constant.p_value == pytest.approx(1 / 1000)  # every resample equals the sample
    assert constant.ci_low == constant.ci_high == pytest.approx(0.1)


def test_bootstrap_options() -> None:
    with pytest.raises(OptionError, match="ci must be one of 'bca', 'percentile'"):
        paired_bootstrap([0.1, 0.2, 0.3], ci="basic")
    with pytest.raises(OptionError, match="n_resamples must be an integer >= 2"):
        paired_bootstrap([0.1, 0.2, 0.3], n_resamples=1)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_bca_counts_resampled_means_equal_to_the_observed_one_as_ties(alternative: str) -> None:
    # P@10-like deltas: multiples of 0.1, many of them 0. A resample whose mean equals the
    # observed mean in exact arithmetic must count half in BCa's bias correction z0; in
    # floating point such means land 1 ulp above or below at random (here 116 of 4000
    # resamples are exact ties and only 8 compare equal as floats; counting the others by
    # their rounding moved the upper bound from 0.1044 to 0.1022). The oracle
    # recomputes BCa in integer arithmetic (tenths) on the same draws,
    # rng.integers(0, n, (B, n)), which the docstring promises and scipy also makes.
    from scipy.special import ndtr, ndtri

    rng = np.random.default_rng(11)
    tenths = rng.choice([-3, -2, -1, 0, 0, 0, 1, 1, 2, 4], size=45)
    d = tenths / 10.0
    n, b, level = len(d), 4000, 0.95
    ours = paired_bootstrap(d, n_resamples=b, ci="bca", confidence=level, alternative=alternative, rng=7)
    picks = np.random.default_rng(7).integers(0, n, (b, n))
    sums = tenths[picks].sum(axis=1)                      # exact integers
    observed = tenths.sum()
    assert (sums == observed).sum() > 100                 # the case this is about
    z0 = ndtri(((sums < observed).sum() + 0.5 * (sums == observed).sum()) / b)
    jack = (d.sum() - d) / (n - 1)
    u = jack.mean() - jack
    a = (u ** 3).sum() / (6.0 * (u ** 2).sum() ** 1.5)
    tail = (1 - level) / 2 if alternative == "two-sided" else 1 - level
    means = np.sort(sums / (10.0 * n))
    low_level = ndtr(z0 + (z0 + ndtri(tail)) / (1 - a * (z0 + ndtri(tail))))
    assert ours.ci_low == pytest.approx(np.quantile(means, low_level), rel=1e-9)
    if alternative == "two-sided":
        high_level = ndtr(z0 + (z0 - ndtri(tail)) / (1 - a * (z0 - ndtri(tail))))
        assert ours.ci_high == pytest.approx(np.quantile(means, high_level), rel=1e-9)
