"""The treatment x group interaction: does a paired effect differ between groups of queries?

:func:`interaction_test`: the one-way ANOVA F of the per-query deltas across groups, with a
permutation p-value (the deltas are shuffled over queries, the memberships stay, so a query
in several groups moves with all of its memberships) and, when the groups are disjoint, the
F distribution's p-value (scipy ``f_oneway``). Registered as ``interaction`` in
:data:`serpeval.stats.registry.GROUP_TESTS`; the per-group breakdown that uses it is
:mod:`serpeval.comparison.segments`.

Layer: stats (arrays in, numbers out). May import core only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import RngLike, as_generator, check_count

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["f_statistic", "interaction_test"]


def f_statistic(d: NDArray[np.float64], matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """One-way ANOVA F over memberships for each row of ``d`` ``[..., n_queries]``.

    With group sums ``S_g``, sizes ``n_g``, ``N = sum n_g``, ``G`` groups:
    ``SSB = sum S_g^2 / n_g - (sum S_g)^2 / N``, ``SSW = sum_g sum_{q in g} d_q^2 - sum S_g^2 / n_g``,
    ``F = (SSB / (G - 1)) / (SSW / (N - G))`` (0 when both are 0, inf when only SSW is).
    """
    sizes = matrix.sum(axis=0)
    total = sizes.sum()
    sums = d @ matrix
    squares = (d * d) @ matrix
    between_raw = (sums * sums / sizes).sum(axis=-1)
    ssb = between_raw - sums.sum(axis=-1) ** 2 / total
    ssw = squares.sum(axis=-1) - between_raw
    g = matrix.shape[1]
    ssb = np.maximum(ssb, 0.0)
    ssw = np.maximum(ssw, 0.0)
    numerator = ssb / (g - 1)
    denominator = ssw / (total - g)
    tiny = 1e-12 * np.maximum(squares.sum(axis=-1), 1e-300)
    return np.where(ssw > tiny, numerator / np.where(ssw > tiny, denominator, 1.0),
                    np.where(ssb > tiny, np.inf, 0.0))


def interaction_test(deltas: Any, membership: Any, *, n_permutations: int = 10_000,
                     rng: RngLike = None) -> tuple[float, float, float, int]:
    """Permutation test of "the mean delta is the same in every group".

    Args:
        deltas: per-query deltas ``[n_queries]``.
        membership: ``bool[n_queries, n_groups]`` (a query may be in several groups).

    Returns:
        ``(F, permutation p, parametric p or NaN, permutations)``; F and both p-values are
        NaN with fewer than 2 non-empty groups or no within-group degrees of freedom.
    """
    from scipy import stats

    permutations = check_count(n_permutations, "n_permutations")
    d = np.asarray(deltas, dtype=np.float64)
    m = np.asarray(membership, dtype=bool)
    m = m[:, m.any(axis=0)]
    inside = m.any(axis=1)
    d, m = d[inside], m[inside].astype(np.float64)
    g, total = m.shape[1], m.sum()
    if g < 2 or total - g < 1:
        return float("nan"), float("nan"), float("nan"), 0
    observed = float(f_statistic(d, m))
    generator = as_generator(rng)
    exceed = 0
    batch = max(1, min(permutations, 2_000_000 // max(len(d), 1)))
    done = 0
    while done < permutations:
        size = min(batch, permutations - done)
        shuffled = generator.permuted(np.broadcast_to(d, (size, len(d))), axis=1)
        exceed += int((f_statistic(shuffled, m) >= observed * (1 - 1e-12)).sum())
        done += size
    p_perm = (1 + exceed) / (1 + permutations)
    disjoint = bool((m.sum(axis=1) == 1).all())
    p_anova = float(stats.f.sf(observed, g - 1, total - g)) if disjoint and np.isfinite(observed) else \
        (0.0 if disjoint else float("nan"))
    return observed, float(p_perm), p_anova, permutations
