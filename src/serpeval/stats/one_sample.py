"""One-sample statistics: is a mean zero, how sure, how many observations to tell.

Arrays in, numbers out; the interleaving analyses (:mod:`serpeval.online.interleaving.analysis`)
run them on outcomes, per-unit sums and pairwise preferences.

* :func:`sign_test`: the exact two-sided binomial sign test of ``successes`` out of
  ``trials`` against 1/2, ``scipy.stats.binomtest(successes, trials, 0.5).pvalue``
  (1 when ``trials`` is 0: no evidence either way).
* :func:`t_test_from_sums`: the two-sided one-sample t-test of mean = 0 from ``Σx``,
  ``Σx²`` and ``n`` (``scipy.stats.ttest_1samp(x, 0)`` without the values):
  ``mean = Σx / n``, ``s² = (Σx² - n mean²) / (n - 1)``, ``t = mean / sqrt(s² / n)``,
  ``p = 2 P(T_{n-1} > |t|)``. Edge cases: ``n < 2`` gives 1; zero variance gives 1 for a
  zero mean and 0 otherwise (every value equal and non-zero).
* :func:`zero_mean_test`: which of the two a sample takes: the sign test of positives
  against negatives when every value is -1, 0 or +1 (:func:`is_sign`), else the t-test.
* :func:`cluster_bootstrap_ratio`: the ratio of sums ``Σ numerators / Σ denominators`` over
  clusters drawn with replacement (the classic bootstrap of clustered data: each cluster's
  observations come along).
* :func:`normal_power`: the normal approximation of a two-sided one-sample test's power at
  the measured mean and standard deviation, and the observations it needs for a target power:
  ``power = Φ(|d|√n/s - z) + Φ(-|d|√n/s - z)``, ``needed = ((z + z_power) s / d)²`` with
  ``z = z_{1-α/2}`` (plug-in values, not a guarantee).

Layer: stats. Imports core only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["cluster_bootstrap_ratio", "is_sign", "normal_power", "sign_test", "t_test_from_sums",
           "zero_mean_test"]

#: random draws per bootstrap chunk (8 MB of int64)
CHUNK_CELLS = 1_000_000
#: draw patterns (multinomial) rather than cluster indices when clusters outnumber patterns
#: this many times: a multinomial category costs about as much as eight cluster draws
PATTERN_RATIO = 8


def sign_test(successes: int, trials: int) -> float:
    """Two-sided exact binomial p-value of ``successes`` in ``trials`` against 1/2 (1 when no trials).

    Examples:
        >>> round(sign_test(1, 6), 4)   # 2 (1 + 6) / 2^6 = 14/64
        0.2188
    """
    from scipy.stats import binomtest

    return 1.0 if trials == 0 else float(binomtest(successes, trials, 0.5).pvalue)


def t_test_from_sums(total: float, squares: float, n: int) -> float:
    """Two-sided one-sample t-test p-value of mean = 0 from Σx, Σx² and n (independent x).

    Examples:
        >>> round(t_test_from_sums(3.0, 5.0, 3), 4)   # x = (2, 1, 0): mean 1, s^2 1, t = sqrt(3), df 2
        0.2254
    """
    from scipy.stats import t as student

    if n < 2:
        return 1.0
    mean = total / n
    var = max(squares - n * mean * mean, 0.0) / (n - 1)
    if var <= 0.0:
        return 1.0 if mean == 0.0 else 0.0
    return float(2.0 * student.sf(abs(mean) / math.sqrt(var / n), n - 1))


def is_sign(values: NDArray[np.float64]) -> bool:
    """True when every value is +1, 0 or -1 (a win/loss/tie: the sign test applies)."""
    return bool(np.isin(values, (-1.0, 0.0, 1.0)).all())


def zero_mean_test(values: NDArray[np.float64]) -> tuple[float, str]:
    """``(p, "sign test")`` for ±1/0 values (positives against negatives, zeros dropped), else
    ``(p, "t-test")`` of mean = 0; the values are taken as independent."""
    if is_sign(values):
        positive, negative = int((values > 0).sum()), int((values < 0).sum())
        return sign_test(positive, positive + negative), "sign test"
    return t_test_from_sums(float(values.sum()), float((values ** 2).sum()), len(values)), "t-test"


def cluster_bootstrap_ratio(numerators: NDArray[np.float64] | NDArray[np.int64], denominators: NDArray[np.int64],
                            n_resamples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``Σ numerators / Σ denominators`` of ``n_resamples`` bootstrap samples of the clusters.

    One entry per cluster (``denominators`` > 0). A resample takes ``m`` clusters with
    replacement and sums their entries. Two exact ways to draw it:

    * clusters sharing a (numerator, denominator) pattern are interchangeable, so when there
      are few patterns (at most ``m / PATTERN_RATIO``) each resample draws how many clusters
      of each pattern it takes, Multinomial(m, multiplicity / m), and sums pattern totals (a
      ``[resamples, patterns]`` matrix product per chunk);
    * otherwise it draws ``m`` cluster indices uniformly (a ``[resamples, m]`` index matrix
      per chunk) and sums the drawn clusters.

    Both are the classic bootstrap (how often each cluster is drawn is Multinomial(m, 1/m)).
    Sums of integers are exact, so the same seed and the same clusters (in the same order,
    for the index draws) give identical ratios however the entries were computed.
    """
    m = len(denominators)
    patterns, multiplicity = np.unique(np.stack([numerators, denominators], axis=1), axis=0,
                                       return_counts=True)
    by_pattern = len(patterns) * PATTERN_RATIO <= m
    width = len(patterns) if by_pattern else m
    out = np.empty(n_resamples)
    chunk = max(1, CHUNK_CELLS // width)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        if by_pattern:
            taken = rng.multinomial(m, multiplicity / m, size=size).astype(np.float64)
            top, bottom = (taken @ patterns.astype(np.float64)).T
        else:
            drawn = rng.integers(0, m, size=(size, m))
            top, bottom = numerators[drawn].sum(axis=1), denominators[drawn].sum(axis=1)
        out[start:start + size] = top / bottom
    return out


def normal_power(mean: ArrayLike, sd: ArrayLike, n: int, *, alpha: float,
                 target_power: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(power, needed)`` of a two-sided one-sample test of mean = 0 at level ``alpha``
    (normal approximation, the measured ``mean`` and ``sd`` taken as the truth; elementwise).

    ``power`` at ``n`` observations; ``needed``: the observations for ``target_power``. A zero
    standard deviation gives power 1 for a non-zero mean (0 shift: ``alpha``'s two tails); a
    zero mean needs infinitely many.
    """
    from scipy.stats import norm

    d, s = np.asarray(mean, dtype=np.float64), np.asarray(sd, dtype=np.float64)
    z = float(norm.isf(alpha / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(s > 0, np.abs(d) * math.sqrt(n) / s, np.where(d != 0, np.inf, 0.0))
        power = norm.sf(z - shift) + norm.cdf(-z - shift)
        needed = np.where(d != 0, ((z + float(norm.ppf(target_power))) * s / np.abs(d)) ** 2, np.inf)
    return power, needed
