"""Paired bootstrap over queries: percentile and BCa intervals, and a studentized test.

Queries are resampled with replacement ``B`` times; every comparison (leading index) uses
the same resampled query sets, so a family of comparisons stays paired. A resample is a
row of counts ``c`` (how often each query was drawn), so the resampled means of all
comparisons are one matrix product ``C d^T / n``, in chunks that bound memory. Resample
indices are drawn as ``rng.integers(0, n, (B, n))``, the same draws scipy.stats.bootstrap
makes, so both give the same distribution from the same seed.

Intervals of the mean delta (Efron & Tibshirani 1993, ch. 13-14):

- percentile: the ``alpha/2`` and ``1 - alpha/2`` quantiles of the resampled means;
- BCa (bias-corrected and accelerated): quantile levels
  :math:`\\Phi(z_0 + (z_0 + z_\\alpha) / (1 - a (z_0 + z_\\alpha)))` with the bias
  correction :math:`z_0 = \\Phi^{-1}(\\#\\{\\theta^*_b < \\hat\\theta\\}/B
  + \\#\\{\\theta^*_b = \\hat\\theta\\}/(2B))` and the acceleration ``a`` from the
  jackknife means :math:`\\theta_{(i)}` (query ``i`` left out), :math:`u_i = \\bar\\theta_{(\\cdot)}
  - \\theta_{(i)}`: :math:`a = \\sum_i u_i^3 / (6 [\\sum_i u_i^2]^{3/2})`.
  A resampled mean equal to the observed one in exact arithmetic (any permutation of the
  queries; with per-query deltas on a grid, as P@10's multiples of 0.1, many other draws) is
  a tie, found from the centred differences within ``1e-9`` of their mean absolute value:
  floating-point rounding would otherwise put it below or above at random (scipy's
  ``bootstrap`` compares the float means as they come, so its BCa interval differs from this
  one on such data; on continuous data both are the same).

The p-value is the studentized bootstrap test (Efron & Tibshirani 1993, alg. 16.2; Sakai,
SIGIR 2006): with :math:`t = \\bar d / (s_d/\\sqrt n)` and, per resample,
:math:`t^*_b = (\\bar d^*_b - \\bar d) / (s^*_b/\\sqrt n)` (the resampled statistic centred
on the observed mean, i.e. under the null), ``p = (#{|t*_b| >= |t|} + 1) / (B + 1)``.

Edge cases: all differences equal -> the interval is that single value (scipy's BCa
returns NaN and warns); all 0 -> p = 1. BCa's bias correction is clipped to the
resolution of ``B`` resamples so it stays finite when the observed mean lies outside
every resampled mean.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.core.errors import OptionError
from serpeval.stats.paired import PairedTest, _ratio
from serpeval.stats.validation import (
    Alternative,
    check_alternative,
    check_resamples,
    chunk_rows,
    paired_differences,
    row_scale,
    scalar_or_array,
    spread,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["CI_METHODS", "BootstrapInterval", "paired_bootstrap"]

BootstrapInterval = Literal["bca", "percentile"]
CI_METHODS: tuple[BootstrapInterval, ...] = get_args(BootstrapInterval)


def _resampled_moments(d: NDArray[np.float64], n_resamples: int, rng: np.random.Generator
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per resample and comparison: the mean, the mean minus the observed mean, and the sd.

    Returns three ``[k, B]`` arrays. The centred mean and the sd come from the centred
    differences ``d - mean(d)``, so they carry no cancellation error.
    """
    k, n = d.shape
    centred = d - d.mean(axis=1, keepdims=True)
    squares = centred * centred
    means = np.empty((k, n_resamples))
    shifts = np.empty((k, n_resamples))
    sds = np.empty((k, n_resamples))
    chunk = chunk_rows(n, k)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        picks = rng.integers(0, n, (rows, n))
        offsets = (np.arange(rows) * n)[:, None]
        counts = np.bincount((picks + offsets).ravel(), minlength=rows * n).reshape(rows, n)
        counts = counts.astype(np.float64)
        shift = (counts @ centred.T) / n                     # [rows, k]
        var = np.maximum((counts @ squares.T) / n - shift * shift, 0.0) * (n / (n - 1))
        means[:, start:start + rows] = ((counts @ d.T) / n).T
        shifts[:, start:start + rows] = shift.T
        sds[:, start:start + rows] = np.sqrt(var).T
    return means, shifts, sds


def _quantiles(sorted_rows: NDArray[np.float64], levels: NDArray[np.float64]
               ) -> NDArray[np.float64]:
    """Per-row linear-interpolation quantiles (NumPy's default method) at per-row ``levels``."""
    b = sorted_rows.shape[1]
    position = np.clip(levels, 0.0, 1.0) * (b - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, b - 1)
    weight = position - below
    rows = np.arange(len(sorted_rows))
    low, high = sorted_rows[rows, below], sorted_rows[rows, above]
    return low + weight * (high - low)


def _bca_levels(d: NDArray[np.float64], shifts: NDArray[np.float64], alpha: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """BCa quantile levels ``(alpha_1, alpha_2)`` per comparison (Efron & Tibshirani 14.9-14.15).

    ``shifts`` are the resampled means minus the observed mean (``[k, B]``, from the centred
    differences). A resample whose mean equals the observed one in exact arithmetic (every
    permutation of the queries, and many more when the deltas are multiples of 1/10 as P@10's
    are) differs from it by rounding only, ``|shift| <= 1e-9 mean|d - mean(d)|``; it counts
    as a tie, half below, instead of below or above by the sign of the rounding error.
    """
    from scipy.special import ndtr, ndtri

    k, n = d.shape
    b = shifts.shape[1]
    scale = np.abs(d - d.mean(axis=1, keepdims=True)).mean(axis=1, keepdims=True)
    tie = np.abs(shifts) <= 1e-9 * scale
    below = (~tie & (shifts < 0)).sum(axis=1) + 0.5 * tie.sum(axis=1)
    fraction = np.clip(below / b, 0.5 / b, 1.0 - 0.5 / b)
    z0 = ndtri(fraction)
    jackknife = (d.sum(axis=1, keepdims=True) - d) / (n - 1)      # mean without query i
    u = jackknife.mean(axis=1, keepdims=True) - jackknife
    squares = (u * u).sum(axis=1)
    cubes = (u * u * u).sum(axis=1)
    a = np.divide(cubes, 6.0 * squares ** 1.5, out=np.zeros(k), where=squares > 0)
    z_alpha = ndtri(alpha)
    levels = []
    for z in (z_alpha, -z_alpha):
        shifted = z0 + z
        levels.append(ndtr(z0 + shifted / (1.0 - a * shifted)))
    return levels[0], levels[1]


def paired_bootstrap(
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    n_resamples: int = 10_000,
    ci: BootstrapInterval = "bca",
    confidence: float = 0.95,
    alternative: Alternative = "two-sided",
    rng: RngLike = None,
) -> PairedTest:
    """Paired bootstrap of the mean of ``x - y``: a BCa or percentile CI, a studentized p-value.

    Args:
        x, y: per-query scores ``[..., n_queries]``; or ``x`` alone holding the differences.
        n_resamples: bootstrap resamples ``B`` (10,000).
        ci: ``"bca"`` (default; second-order accurate, corrects bias and skew) or
            ``"percentile"``.
        confidence: interval level (0.95). For one-sided alternatives the interval is
            one-sided (the other bound infinite) at this level, as scipy does.
        alternative: ``"two-sided"``, ``"greater"`` (mean delta > 0) or ``"less"``.
        rng: seed or generator (never global state).

    Returns:
        :class:`PairedTest` with ``test="bootstrap"``; ``statistic`` is the observed
        studentized mean ``t``.

    Raises:
        OptionError: an unknown ``ci`` or ``alternative``, a bad count or confidence.
        StatsError: fewer than 2 queries, shapes differ, non-finite scores.
    """
    check_alternative(alternative)
    level = check_level(confidence, "confidence", example=0.95)
    b = check_resamples(n_resamples, "n_resamples", minimum=2)
    if ci not in CI_METHODS:
        raise OptionError(f"ci must be one of {', '.join(map(repr, CI_METHODS))}; got {ci!r}.")
    d = paired_differences(x, y)
    shape, n = d.shape[:-1], d.shape[-1]
    # Rows beyond SQUARE_SAFE are resampled divided by their largest |d| (their squares would
    # overflow); t, p and the quantile levels do not change with the scale, the means and the
    # interval are multiplied back. Other rows are used as they are.
    scale = row_scale(d.reshape(-1, n))
    flat = d.reshape(-1, n) / scale
    generator = as_generator(rng)
    means, shifts, sds = _resampled_moments(flat, b, generator)

    theta = flat.mean(axis=1)
    t = _ratio(theta, spread(flat) / np.sqrt(n))
    t_star = _ratio(shifts, sds / np.sqrt(n))
    constant = np.ptp(flat, axis=1) == 0
    t_star[constant] = 0.0  # every resample of equal values is the observed sample
    slack = 1e-9 * np.where(np.isfinite(t), np.abs(t), 0.0)[:, None]
    if alternative == "two-sided":
        hits = np.abs(t_star) >= np.abs(t)[:, None] - slack
    elif alternative == "greater":
        hits = t_star >= t[:, None] - slack
    else:
        hits = t_star <= t[:, None] + slack
    p = (hits.sum(axis=1) + 1.0) / (b + 1.0)

    alpha = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    if ci == "bca":
        low_level, high_level = _bca_levels(flat, shifts, alpha)
    else:
        low_level = np.full(len(flat), alpha)
        high_level = np.full(len(flat), 1.0 - alpha)
    ordered = np.sort(means, axis=1)
    low = np.where(constant, theta, _quantiles(ordered, low_level)) * scale[:, 0]
    high = np.where(constant, theta, _quantiles(ordered, high_level)) * scale[:, 0]
    theta = theta * scale[:, 0]
    if alternative == "greater":
        high = np.full_like(high, np.inf)
    elif alternative == "less":
        low = np.full_like(low, -np.inf)
    label = "BCa" if ci == "bca" else "percentile"
    return PairedTest("bootstrap", alternative, n, scalar_or_array(theta.reshape(shape)),
                      scalar_or_array(t.reshape(shape)), scalar_or_array(p.reshape(shape)),
                      scalar_or_array(low.reshape(shape)), scalar_or_array(high.reshape(shape)),
                      level, b, f"paired bootstrap, {b} resamples: studentized "
                      f"p = (b + 1) / (B + 1), {label} interval")
