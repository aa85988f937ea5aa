"""All-pairs comparison of N systems: Tukey's HSD and the randomized Tukey HSD test.

Both control the family-wise error over all ``N (N - 1) / 2`` pairs at once, by comparing
every pairwise difference of means with the distribution of the *largest* difference
(the range of the N means) under the null hypothesis that all systems are equal.

Tukey HSD (honestly significant difference), for scores ``x[i, q]`` of system ``i`` on
query ``q`` with means :math:`\\bar x_i`:

.. math:: q_{ij} = |\\bar x_i - \\bar x_j| / \\sqrt{MSE / n}, \\qquad
          p_{ij} = P(Q_{N, df} \\ge q_{ij})

with ``Q`` the studentized range distribution: scipy's tail, accurate to about 1e-13
absolute, capped by the Bonferroni bound :math:`N (N-1) P(T_{df} \\ge q_{ij} / \\sqrt 2)`
(the true p never exceeds it; for two systems it is the paired t-test's p exactly). Where
scipy's value is below 1e-10 the bound is used instead: that far in the tail scipy returns
~9e-14 for 1e-23, or 0 for 1e-96, and the bound is the tail's leading term.
``blocked=True`` (the default, right for IR
where every system runs the same queries) takes MSE from the two-way ANOVA without
replication, systems x queries, so the large query-to-query variance is removed:
residuals :math:`x_{iq} - \\bar x_{i\\cdot} - \\bar x_{\\cdot q} + \\bar x`,
:math:`df = (N - 1)(n - 1)`. ``blocked=False`` is the one-way ANOVA of independent groups,
:math:`df = N (n - 1)`, identical to ``scipy.stats.tukey_hsd`` (but for p-values below
1e-10, where scipy's stop at its quadrature's floor). Intervals:
:math:`\\bar x_i - \\bar x_j \\pm Q_{N, df; 1-\\alpha} \\sqrt{MSE/n}`.

Randomized Tukey HSD (Carterette, TOIS 2012; Sakai 2014): on each of ``m`` permutations the
N scores of every query are shuffled among the systems; the null distribution is that of
the range ``max_i mean_i - min_i mean_i``. ``p_ij = (#{range* >= |diff_ij|} + 1) / (m + 1)``.
No normality or equal-variance assumption, and the permutations keep each query's scores
together (the blocked design).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_level
from serpeval.stats.paired import _ratio
from serpeval.stats.validation import check_resamples, chunk_rows, row_scale, system_scores

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["TukeyResult", "randomized_tukey", "tukey_hsd"]

#: Below this, scipy's studentized_range.sf (about 1e-13 absolute accuracy) is replaced by the
#: Bonferroni bound of the tail (see :func:`tukey_hsd`).
TUKEY_TAIL_FLOOR = 1e-10


class TukeyResult(NamedTuple):
    """All-pairs comparison; matrices ``[..., N, N]`` indexed ``[i, j]`` for system i vs j.

    Attributes:
        method: ``"tukey-hsd"`` or ``"randomized-tukey"``.
        means: ``[..., N]`` mean score of each system.
        mean_diff: ``means[i] - means[j]``.
        statistic: the studentized range ``q_ij`` (HSD) or ``|mean_diff|`` (randomized).
        p_value: family-wise adjusted p-value of each pair (1 on the diagonal).
        ci_low, ci_high: simultaneous intervals of ``mean_diff`` (HSD; NaN when randomized).
        confidence: the intervals' level.
        df: residual degrees of freedom (HSD; 0 when randomized).
        mse: ``[...]`` mean squared error of the ANOVA (NaN when randomized).
        resamples: permutations (0 for HSD).
        blocked: whether query effects were removed (always True for randomized).
    """

    method: str
    means: Any
    mean_diff: Any
    statistic: Any
    p_value: Any
    ci_low: Any
    ci_high: Any
    confidence: float
    df: int
    mse: Any
    resamples: int = 0
    blocked: bool = True

    def to_dicts(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        """One dict per pair ``i < j`` (and per leading index, as ``family``)."""
        n_systems = np.shape(self.means)[-1]
        labels = names or [str(i) for i in range(n_systems)]
        square = (-1, n_systems, n_systems)
        matrices = {f: np.asarray(getattr(self, f), dtype=np.float64).reshape(square)
                    for f in ("mean_diff", "statistic", "p_value", "ci_low", "ci_high")}
        rows = []
        for family in range(matrices["p_value"].shape[0]):
            for i in range(n_systems):
                for j in range(i + 1, n_systems):
                    row: dict[str, Any] = {"family": family, "system": labels[i], "vs": labels[j]}
                    row.update({f: float(m[family, i, j]) for f, m in matrices.items()})
                    row.update({"method": self.method, "confidence": self.confidence})
                    rows.append(row)
        return rows


def tukey_hsd(scores: ArrayLike, *, blocked: bool = True, confidence: float = 0.95) -> TukeyResult:
    """Tukey's HSD over all pairs of systems (scores ``[..., N, n_queries]``).

    Edge cases: zero residual variance (e.g. identical systems) gives q = 0 and p = 1 for
    equal means, q = inf and p = 0 otherwise.

    Examples:
        >>> r = tukey_hsd([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7], [0.2, 0.4, 0.6]])
        >>> round(float(r.mean_diff[1, 0]), 4), float(r.p_value[1, 0]), float(r.p_value[0, 2])
        (0.1, 0.0, 1.0)

        B is A + 0.1 on every query: no residual variance, so that difference is certain
        (p = 0) and A, C (equal) get p = 1.
    """
    from scipy import stats

    level = check_level(confidence, "confidence", example=0.95)
    x = system_scores(scores)
    # Residuals are squared below: a layer beyond SQUARE_SAFE (or below its inverse) is divided
    # by its largest |x| first (q and p do not change with the scale; means, differences,
    # intervals and MSE are multiplied back). Other layers are used as they are.
    factor = row_scale(x.reshape(*x.shape[:-2], -1))[..., None]
    x = x / factor
    n_systems, n = x.shape[-2], x.shape[-1]
    means = x.mean(axis=-1)
    residual = x - means[..., None]
    if blocked:
        residual = residual - x.mean(axis=-2, keepdims=True) + means.mean(axis=-1)[..., None, None]
        df = (n_systems - 1) * (n - 1)
    else:
        df = n_systems * (n - 1)
    mse = (residual * residual).sum(axis=(-2, -1)) / df
    # A residual at rounding level (identical or shifted systems) is no variance at all.
    scale = np.abs(x).max(axis=(-2, -1)) + np.finfo(float).tiny
    mse = np.where(np.sqrt(mse) <= 1e-12 * scale, 0.0, mse)
    se = np.sqrt(mse / n)[..., None, None]
    diff = means[..., :, None] - means[..., None, :]
    q = _ratio(np.abs(diff), np.broadcast_to(se, diff.shape))
    finite_q = np.where(np.isfinite(q), q, 0.0)
    tail = stats.studentized_range.sf(finite_q, n_systems, df)
    # scipy's quadrature is accurate to about 1e-13 absolute only: far in the tail it returns
    # ~9e-14 where the answer is 1e-23, or 0 where it is 1e-96. The range exceeds q only if
    # some pair's difference does, and each pair's |mean_i - mean_j| / sqrt(2 MSE / n) is |t|
    # with df degrees of freedom, so p <= N (N - 1) / 2 * 2 P(T_df >= q / sqrt 2) (Bonferroni):
    # the exact value for 2 systems, and for more the tail's leading term, used where scipy's
    # value is below TUKEY_TAIL_FLOOR (1e-10, a thousand times its accuracy).
    bound = n_systems * (n_systems - 1) * stats.t.sf(finite_q / np.sqrt(2.0), df)
    tail = np.where(tail < TUKEY_TAIL_FLOOR, bound, np.minimum(tail, bound))
    p = np.where(q == 0, 1.0, tail)
    p = np.where(np.isinf(q), 0.0, np.minimum(p, 1.0))
    half = stats.studentized_range.ppf(level, n_systems, df) * se
    means, diff, half = means * factor[..., 0], diff * factor, half * factor
    with np.errstate(over="ignore", under="ignore"):   # an MSE beyond float64 is inf (or 0)
        mse = mse * factor[..., 0, 0] ** 2
    return TukeyResult("tukey-hsd", means, diff, q, p, diff - half, diff + half, level, df,
                       mse if np.ndim(mse) else float(mse), 0, blocked)


def randomized_tukey(scores: ArrayLike, *, n_permutations: int = 10_000, rng: RngLike = None,
                     confidence: float = 0.95) -> TukeyResult:
    """Randomized Tukey HSD over all pairs of systems (scores ``[..., N, n_queries]``).

    Leading indices (e.g. measures) share the permutations, which are drawn once per chunk
    as ``rng.permuted`` rows of ``0..N-1`` for every query.

    Edge cases: identical systems give p = 1 (every permuted range is >= 0).

    Args:
        scores: per-query scores, systems x queries (leading axes allowed).
        n_permutations: ``m`` (10,000).
        rng: seed or generator (never global state).
        confidence: recorded in the result (no intervals are computed).
    """
    level = check_level(confidence, "confidence", example=0.95)
    m = check_resamples(n_permutations, "n_permutations")
    x = system_scores(scores)
    lead, n_systems, n = x.shape[:-2], x.shape[-2], x.shape[-1]
    flat = x.reshape(-1, n_systems, n)
    generator = as_generator(rng)
    by_query = np.swapaxes(flat, 1, 2)                     # [L, n, N]
    ranges = np.empty((len(flat), m))
    chunk = chunk_rows(n * n_systems)
    identity = np.broadcast_to(np.arange(n_systems), (chunk, n, n_systems))
    for start in range(0, m, chunk):
        rows = min(chunk, m - start)
        order = generator.permuted(identity[:rows], axis=-1)      # [rows, n, N]
        for layer, values in enumerate(by_query):
            shuffled = np.take_along_axis(np.broadcast_to(values, order.shape), order, axis=-1)
            sums = shuffled.sum(axis=1)
            ranges[layer, start:start + rows] = (sums.max(axis=1) - sums.min(axis=1)) / n
    means = flat.mean(axis=-1)
    diff = means[:, :, None] - means[:, None, :]
    slack = 1e-9 * np.abs(flat).sum(axis=(1, 2)) / n
    ranges.sort(axis=1)
    extreme = np.empty(diff.shape, dtype=np.int64)
    for layer in range(len(flat)):
        below = np.searchsorted(ranges[layer], np.abs(diff[layer]) - slack[layer], side="left")
        extreme[layer] = m - below
    p = (extreme + 1.0) / (m + 1.0)
    shape = (*lead, n_systems, n_systems)
    nan = np.full(shape, np.nan)
    return TukeyResult("randomized-tukey", means.reshape(*lead, n_systems), diff.reshape(shape),
                       np.abs(diff).reshape(shape), p.reshape(shape), nan, nan.copy(), level, 0,
                       np.full(lead, np.nan) if lead else float("nan"), m, True)
