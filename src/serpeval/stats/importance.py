"""Importance-weighted means with intervals that respect clusters, and weight diagnostics.

Arrays in, numbers out (used by :mod:`serpeval.online.counterfactual`, general enough for any
weighted estimate over clustered observations).

- :func:`effective_sample_size`: Kish's ``(Σ w)² / Σ w²`` (Kong 1992; the number of
  unweighted observations with the same variance of a weighted mean); ``n`` for equal
  weights, 1 when one weight carries everything, 0 when all weights are 0.
- :func:`cluster_mean_ci`: the mean of per-observation values ``x_i`` over ``n``
  observations with the cluster-robust (sandwich) standard error
  ``se² = G/(G-1) Σ_g (S_g - n_g x̄)² / n²`` (``S_g`` the cluster's sum, ``n_g`` its size,
  ``G`` clusters), and the normal interval ``x̄ ± z se``.
- :func:`cluster_ratio_ci`: ``R = Σ x / Σ y`` (a self-normalised estimate) with the
  delta-method cluster-robust error ``se² = G/(G-1) Σ_g (S^x_g - R S^y_g)² / (Σ y)²``.
- :func:`cluster_bootstrap_ci`: the percentile interval of either statistic over
  ``n_resamples`` resamples of the clusters with replacement (seeded; one multinomial draw
  per resample, vectorized).

Edge cases: fewer than 2 clusters gives ``se = nan`` and an interval of nans (no error:
the caller's support rule refuses first); a zero denominator gives ``nan``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from serpeval.core.checks import as_generator, check_count, check_level

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["Interval", "cluster_bootstrap_ci", "cluster_mean_ci", "cluster_ratio_ci", "effective_sample_size"]


class Interval(NamedTuple):
    """An estimate, its standard error and its two-sided interval."""

    estimate: float
    se: float
    low: float
    high: float


def effective_sample_size(weights: ArrayLike) -> float:
    """Kish's effective sample size ``(Σ w)² / Σ w²`` of non-negative weights (0 if all 0).

    >>> effective_sample_size([1, 1, 1, 1])
    4.0
    >>> effective_sample_size([1, 0, 0, 0])
    1.0
    """
    w = np.asarray(weights, dtype=np.float64)
    squares = float(np.square(w).sum())  # not np.dot: a BLAS call costs more than it saves here
    return 0.0 if squares == 0 else float(w.sum()) ** 2 / squares


def _cluster_sums(values: NDArray[np.float64], clusters: NDArray[np.int64]) -> NDArray[np.float64]:
    return np.bincount(clusters, weights=values).astype(np.float64)


def _codes(clusters: ArrayLike, n: int) -> NDArray[np.int64]:
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ValueError(f"clusters must have one entry per observation ({n}); got shape {c.shape}.")
    return np.unique(c, return_inverse=True)[1].astype(np.int64)


def _z(confidence: float) -> float:
    from statistics import NormalDist  # the standard library's: no SciPy import for one quantile

    return NormalDist().inv_cdf(0.5 + check_level(confidence, "confidence", example=0.95) / 2)


def cluster_mean_ci(values: ArrayLike, clusters: ArrayLike, confidence: float = 0.95) -> Interval:
    """Mean of ``values`` with a cluster-robust normal interval (module docstring).

    >>> r = cluster_mean_ci([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1])
    >>> r.estimate, round(r.se, 6)   # sums 4 and 8, sizes 2 and 2: (4-6)²+(8-6)² = 8; 2·8/16
    (3.0, 1.0)
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), float("nan"))
    g = _codes(clusters, n)
    mean = float(x.mean())
    sums = _cluster_sums(x, g)
    sizes = np.bincount(g).astype(np.float64)
    groups = len(sums)
    if groups < 2:
        return Interval(mean, float("nan"), float("nan"), float("nan"))
    se = float(np.sqrt(groups / (groups - 1) * np.sum((sums - sizes * mean) ** 2)) / n)
    z = _z(confidence)
    return Interval(mean, se, mean - z * se, mean + z * se)


def cluster_ratio_ci(numerators: ArrayLike, denominators: ArrayLike, clusters: ArrayLike,
                     confidence: float = 0.95) -> Interval:
    """``Σ x / Σ y`` with the delta-method cluster-robust interval (module docstring).

    >>> r = cluster_ratio_ci([1.0, 0.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [0, 0, 1, 1])
    >>> round(r.estimate, 6), round(r.se, 6)   # R = 5/6; (1 - 10/6)² + (4 - 20/6)² = 8/9; 2·(8/9)/36
    (0.833333, 0.222222)
    """
    x = np.asarray(numerators, dtype=np.float64)
    y = np.asarray(denominators, dtype=np.float64)
    total = float(y.sum())
    if len(x) == 0 or total == 0:
        return Interval(float("nan"), float("nan"), float("nan"), float("nan"))
    g = _codes(clusters, len(x))
    ratio = float(x.sum()) / total
    resid = _cluster_sums(x, g) - ratio * _cluster_sums(y, g)
    groups = len(resid)
    if groups < 2:
        return Interval(ratio, float("nan"), float("nan"), float("nan"))
    se = float(np.sqrt(groups / (groups - 1) * np.sum(resid ** 2)) / abs(total))
    z = _z(confidence)
    return Interval(ratio, se, ratio - z * se, ratio + z * se)


def cluster_bootstrap_ci(numerators: ArrayLike, denominators: ArrayLike | None, clusters: ArrayLike,
                         confidence: float = 0.95, n_resamples: int = 2000,
                         rng: int | np.random.Generator | None = 0) -> Interval:
    """Percentile bootstrap over clusters of ``Σ x / Σ y`` (``y`` = 1 per observation when
    None: the mean); ``se`` is the bootstrap standard deviation."""
    x = np.asarray(numerators, dtype=np.float64)
    y = np.ones(len(x)) if denominators is None else np.asarray(denominators, dtype=np.float64)
    check_count(n_resamples, "n_resamples")
    level = check_level(confidence, "confidence", example=0.95)
    if len(x) == 0 or y.sum() == 0:
        return Interval(float("nan"), float("nan"), float("nan"), float("nan"))
    g = _codes(clusters, len(x))
    sx, sy = _cluster_sums(x, g), _cluster_sums(y, g)
    groups = len(sx)
    estimate = float(sx.sum() / sy.sum())
    draws = as_generator(rng).multinomial(groups, np.full(groups, 1.0 / groups), size=n_resamples).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (draws @ sx) / (draws @ sy)
    boot = boot[np.isfinite(boot)]
    if len(boot) < 2:
        return Interval(estimate, float("nan"), float("nan"), float("nan"))
    low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return Interval(estimate, float(boot.std(ddof=1)), float(low), float(high))
