"""Multiple-comparison corrections: adjusted p-values for a family of tests.

Testing 9 systems against a baseline at 0.05 each finds a "significant" difference by
chance far more often than 5% of the time. An adjusted p-value ``p~`` is compared with
the same ``alpha``; rejecting every hypothesis with ``p~ <= alpha`` controls the family's
error rate. All functions work along the last axis (one family per row), so the families
of several measures are adjusted in one call.

With ``m`` tests and ascending p-values :math:`p_{(1)} \\le \\dots \\le p_{(m)}`:

- Bonferroni: :math:`\\tilde p_i = \\min(1, m p_i)` (family-wise error, FWER);
- Holm (step-down, uniformly more powerful than Bonferroni, still FWER; the default):
  :math:`\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`;
- Benjamini-Hochberg (step-up, false discovery rate, FDR):
  :math:`\\tilde p_{(i)} = \\min_{j \\ge i} \\min(1, m p_{(j)} / j)`.

These equal ``statsmodels.stats.multitest.multipletests`` with methods ``bonferroni``,
``holm`` and ``fdr_bh``. Tukey's HSD (all pairs) lives in :mod:`serpeval.stats.tukey`.

References: Holm (1979); Benjamini & Hochberg (1995); Carterette, "Multiple testing in
statistical analysis of systems-based information retrieval experiments", TOIS 2012.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.errors import StatsError
from serpeval.stats.registry import CORRECTIONS, canonical

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["adjust", "benjamini_hochberg", "bonferroni", "canonical_correction", "holm", "unadjusted"]


def _p_values(p: ArrayLike) -> NDArray[np.float64]:
    values = np.asarray(p, dtype=np.float64)
    if values.ndim == 0:
        values = values.reshape(1)
    if np.isnan(values).any() or (values < 0).any() or (values > 1).any():
        raise StatsError("p-values to adjust must lie in [0, 1] (no NaN); got "
                         f"{values[np.isnan(values) | (values < 0) | (values > 1)][:5].tolist()}.")
    return values


def _on_sorted(p: ArrayLike, stepwise: Callable[[NDArray[np.float64], int], NDArray[np.float64]]
               ) -> NDArray[np.float64]:
    """Apply ``stepwise(ascending p-values, m)`` per row and put the results back in place."""
    values = _p_values(p)
    order = np.argsort(values, axis=-1, kind="stable")
    ranked = np.take_along_axis(values, order, axis=-1)
    out = np.empty_like(values)
    np.put_along_axis(out, order, stepwise(ranked, values.shape[-1]), axis=-1)
    return out


def bonferroni(p: ArrayLike) -> NDArray[np.float64]:
    """Bonferroni-adjusted p-values along the last axis: ``min(1, m p)``."""
    values = _p_values(p)
    return np.minimum(1.0, values * values.shape[-1])


def holm(p: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values along the last axis.

    Examples:
        >>> holm([0.01, 0.04, 0.03]).tolist()  # sorted .01 .03 .04 -> 3*.01, 2*.03, max(.06, 1*.04)
        [0.03, 0.06, 0.06]
    """
    def step_down(ranked: NDArray[np.float64], m: int) -> NDArray[np.float64]:
        return np.maximum.accumulate(np.minimum(1.0, ranked * (m - np.arange(m))), axis=-1)

    return _on_sorted(p, step_down)


def benjamini_hochberg(p: ArrayLike) -> NDArray[np.float64]:
    """Benjamini-Hochberg (FDR) adjusted p-values along the last axis.

    Examples:
        >>> benjamini_hochberg([0.01, 0.04, 0.03]).tolist()  # 3/1*.01, min(3/2*.03, 3/3*.04)
        [0.03, 0.04, 0.04]
    """
    def step_up(ranked: NDArray[np.float64], m: int) -> NDArray[np.float64]:
        scaled = np.minimum(1.0, ranked * m / np.arange(1, m + 1))
        return np.flip(np.minimum.accumulate(np.flip(scaled, axis=-1), axis=-1), axis=-1)

    return _on_sorted(p, step_up)


def unadjusted(p: ArrayLike) -> NDArray[np.float64]:
    """The p-values unchanged (the correction ``none``), checked like the others."""
    return _p_values(p).copy()


def canonical_correction(name: str | None, extra: tuple[str, ...] = ()) -> str:
    """The canonical name of a correction (None means ``none``), or :class:`OptionError`.

    Names and aliases come from :data:`serpeval.stats.registry.CORRECTIONS`; those that
    need more than p-values (``tukey``) are accepted only when the caller lists them in
    ``extra`` because it handles them itself (compare).
    """
    allowed = {key: spec for key, spec in CORRECTIONS.items() if spec.from_p_values}
    return canonical(allowed | {key: CORRECTIONS[key] for key in extra}, "none" if name is None else name,
                     "correction")


def adjust(p: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    """Adjusted p-values along the last axis (``holm``, ``bonferroni``, ``bh`` or ``none``).

    ``method`` is typed ``str``, not a ``Literal``: the aliases ``fdr_bh``,
    ``benjamini-hochberg`` and ``bonf``, in any case, are accepted too.
    """
    adjusted: NDArray[np.float64] = CORRECTIONS[canonical_correction(method)].function(p)
    return adjusted
