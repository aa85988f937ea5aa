"""Agreement coefficients: arrays in, numbers out.

Two label sets of the same items (a ``k x k`` confusion matrix ``C``, rows the first set's
label): the observed agreement ``p_o``, Cohen's kappa unweighted, linear and quadratic
(:func:`cohen_kappa`), Krippendorff's ordinal alpha (:func:`krippendorff_alpha` from value
counts, :func:`alpha_from_coincidences` from coincidence matrices). More sets:
Fleiss' kappa (:func:`fleiss_kappa`). Two orderings of the same systems: Kendall's tau-b
(:func:`kendall_tau`) and tau_AP (:func:`tau_ap`), ties being values within
:data:`MEAN_TIE_RTOL` of the magnitude (:func:`tie_classes`).

The workflow (reading label sets, aligning documents, the bootstrap over queries, result
objects) is :mod:`serpeval.judgments.agreement`. Every coefficient is registered in
:data:`serpeval.stats.registry.AGREEMENT`.

Layer: stats (arrays in, numbers out). May import core only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["MEAN_TIE_RTOL", "alpha_from_coincidences", "cohen_kappa", "fleiss_from_sums", "fleiss_kappa",
           "kendall_tau", "krippendorff_alpha", "observed_agreement", "tau_ap", "tie_classes", "tied_pairs",
           "weights_coincidence"]


def _weights(n: int, kind: str) -> NDArray[np.float64]:
    g = np.arange(n, dtype=np.float64)
    diff = np.abs(g[:, None] - g[None, :])
    if kind == "none":
        return (diff > 0).astype(np.float64)
    return diff if kind == "linear" else diff ** 2


def observed_agreement(confusion: NDArray[Any]) -> NDArray[np.float64]:
    """The share of identical labels ``p_o = trace(C) / sum(C)`` of confusion matrices ``[..., L, L]``
    (vectorized over leading axes). NaN where a matrix is empty."""
    c = np.asarray(confusion, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o: NDArray[np.float64] = np.trace(c, axis1=-2, axis2=-1) / c.sum(axis=(-2, -1))
        return p_o


def cohen_kappa(confusion: NDArray[Any], weights: str = "none") -> NDArray[np.float64]:
    """Cohen's kappa of confusion matrices ``[..., L, L]`` (vectorized over leading axes).

    ``kappa = 1 - sum(w O) / sum(w E)``, ``O = C / n``, ``E = rowsum(O) colsum(O)^T``; weights
    ``none`` (``w = 1 - I``), ``linear`` (``|i - j|``) or ``quadratic`` (``(i - j)^2``) on the
    category indices. NaN where ``sum(w E) = 0`` (all labels in one category) or ``n = 0``.
    """
    c = np.asarray(confusion, dtype=np.float64)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        o = c / n[..., None, None]
        e = o.sum(axis=-1)[..., :, None] * o.sum(axis=-2)[..., None, :]
        w = _weights(c.shape[-1], weights)
        observed = (w * o).sum(axis=(-2, -1))
        expected = (w * e).sum(axis=(-2, -1))
        return np.where(expected > 1e-15, 1.0 - observed / expected, np.nan)


def fleiss_kappa(category_counts: NDArray[Any]) -> float:
    """Fleiss' kappa of ``[items, categories]`` label counts, the same number of labels per item.

    ``kappa = (P - Pe) / (1 - Pe)``, ``P`` the mean over items of ``(sum_j n_ij^2 - m) /
    (m (m - 1))``, ``Pe = sum_j p_j^2`` with ``p_j`` the share of all labels in category ``j``.
    """
    n = np.asarray(category_counts, dtype=np.float64)
    m = n.sum(axis=1)[0]
    return float(fleiss_from_sums(((n ** 2).sum(axis=1) - m).sum() / (m * (m - 1)), n.sum(axis=0), len(n), m))


def fleiss_from_sums(p_sum: Any, totals: Any, items: Any, m: float) -> NDArray[np.float64]:
    """Fleiss' kappa from the sum of per-item agreements, category totals and the item count."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = p_sum / items
        p = totals / (np.asarray(items)[..., None] * m)
        p_e = (p ** 2).sum(axis=-1)
        return np.where(1.0 - p_e > 1e-15, (p_bar - p_e) / (1.0 - p_e), np.nan)


def alpha_from_coincidences(coincidence: NDArray[Any]) -> NDArray[np.float64]:
    """Krippendorff's ordinal alpha from coincidence matrices ``[..., L, L]`` (vectorized).

    ``alpha = 1 - (n - 1) sum(o_ck d2_ck) / sum(n_c n_k d2_ck)``, ``n_c`` the row sums of ``o``,
    ``d2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (Krippendorff 2011, "Computing
    Krippendorff's alpha-reliability", ordinal metric). NaN when no disagreement is possible.
    """
    o = np.asarray(coincidence, dtype=np.float64)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    cum = np.cumsum(n_c, axis=-1)
    lo = np.minimum.outer(np.arange(o.shape[-1]), np.arange(o.shape[-1]))
    hi = np.maximum.outer(np.arange(o.shape[-1]), np.arange(o.shape[-1]))
    between = cum[..., hi] - cum[..., lo] + n_c[..., lo]
    d2 = (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (o * d2).sum(axis=(-2, -1))
        expected = (n_c[..., :, None] * n_c[..., None, :] * d2).sum(axis=(-2, -1))
        return np.where(expected > 1e-12, 1.0 - (n - 1.0) * observed / expected, np.nan)


def krippendorff_alpha(counts: NDArray[np.int64]) -> float:
    """The ``krippendorff`` package's ordinal alpha from ``[units, categories]`` value counts.

    Units with fewer than two labels are not pairable and left out; NaN when none is left or
    every label is in one category (no disagreement is possible)."""
    import krippendorff

    pairable = counts[counts.sum(axis=1) >= 2]
    if len(pairable) == 0 or np.count_nonzero(pairable.sum(axis=0)) < 2:
        return float("nan")
    return float(krippendorff.alpha(value_counts=pairable, value_domain=list(range(counts.shape[1])),
                                    level_of_measurement="ordinal"))


#: Two system means closer than this share of the largest mean's magnitude are one tie.
#: A mean of ``n`` per-query values of magnitude at most ``M``, summed in floating point,
#: is off by at most about ``n * eps * M`` (``eps = 2.2e-16``; Higham, *Accuracy and Stability
#: of Numerical Algorithms*, 2nd ed., eq. 4.4), and the per-query values carry a few ``eps``
#: of their own; so equal means of up to ~4,500 queries (typical errors grow like
#: ``sqrt(n) eps``, far below) land within ``1e-12 M``, while means that really differ differ
#: by far more (P@10 on 1,000 queries moves in steps of ``1e-4``). Example: six relevant of
#: 30 top-10 documents give ``0.20000000000000004`` or ``0.19999999999999998`` depending on
#: the order of the per-query sums; both are 0.2.
MEAN_TIE_RTOL = 1e-12


def tie_classes(values: NDArray[Any], rtol: float = MEAN_TIE_RTOL) -> NDArray[np.int64]:
    """Dense ranks of ``values`` (0 = lowest) with values within ``rtol * max|values|`` tied.

    The sorted values start a new class where the gap to the previous one exceeds the
    tolerance (see :data:`MEAN_TIE_RTOL`), so a chain of values each within the tolerance of
    the next is one class; with ``1e-12`` of the magnitude that only joins rounding noise.
    NaN values have no class (``-1``).
    """
    v = np.asarray(values, dtype=np.float64)
    out = np.full(len(v), -1, dtype=np.int64)
    finite = np.flatnonzero(np.isfinite(v))
    if len(finite) == 0:
        return out
    tolerance = rtol * float(np.abs(v[finite]).max())
    order = finite[np.argsort(v[finite], kind="stable")]
    out[order] = np.concatenate(([0], np.cumsum(np.diff(v[order]) > tolerance)))
    return out


def tied_pairs(values: NDArray[Any], rtol: float = MEAN_TIE_RTOL) -> int:
    """How many pairs of ``values`` are ties under :func:`tie_classes`."""
    classes = tie_classes(values, rtol)
    sizes = np.bincount(classes[classes >= 0])
    return int((sizes * (sizes - 1) // 2).sum())


def kendall_tau(x: NDArray[Any], y: NDArray[Any]) -> float:
    """Kendall's tau-b of two vectors of system means (scipy's ``kendalltau`` default; ties handled).

    ``tau_b = (C - D) / sqrt((P - T_x)(P - T_y))`` over the ``P = n(n-1)/2`` pairs, ``T`` the pairs
    tied in one vector. Ties are means within :data:`MEAN_TIE_RTOL` of the magnitude
    (:func:`tie_classes`), not exact float equality, so rounding in the sums neither breaks a
    tie nor invents an order. NaN when a vector is constant or holds a NaN.
    """
    a, b = tie_classes(x), tie_classes(y)
    if (a < 0).any() or (b < 0).any():
        return float("nan")
    upper = np.triu(np.ones((len(a), len(a)), dtype=bool), k=1)
    sx = np.sign(a[:, None] - a[None, :])[upper]
    sy = np.sign(b[:, None] - b[None, :])[upper]
    denom = np.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum() / denom) if denom > 0 else float("nan")


def tau_ap(reference: NDArray[Any], scores: NDArray[Any]) -> float:
    """tau_AP (Yilmaz, Aslam & Robertson 2008) of the ordering by ``scores`` against ``reference``.

    Systems are ordered by ``scores`` (descending); for each position ``i = 2..N``, ``C(i)``
    counts the systems above it that ``reference`` also puts above it (strictly higher
    reference score); ``tau_AP = 2/(N-1) sum_i C(i)/(i-1) - 1`` (the paper's eq. 3). Swaps near
    the top cost more than at the bottom; 1 for identical orderings, -1 for reversed ones.

    Ties (the paper has none) are left out the way tau-b leaves them out: a system above ``i``
    tied with it in either vector is counted neither in ``C(i)`` nor in ``i - 1``, and a
    position whose every system above is tied with it is skipped (``N - 1`` becomes the number
    of positions used). So identical orderings with ties still give 1; NaN when every pair is
    tied or a value is NaN. Without ties this is the paper's value exactly. (Urbano & Marrero,
    "The Treatment of Ties in AP Correlation", ICTIR 2017, define other tie-aware variants,
    tau_AP,a and tau_AP,b, which count a pair tied in the reference as discordant and average
    both directions; they are not what this computes.) Ties are means within
    :data:`MEAN_TIE_RTOL` of the magnitude (:func:`tie_classes`).
    """
    ref, est = tie_classes(reference), tie_classes(scores)
    n = len(ref)
    if n < 2 or (ref < 0).any() or (est < 0).any():
        return float("nan")
    order = np.argsort(-est, kind="stable")
    r, e = ref[order], est[order]
    below = np.tril(np.ones((n, n), dtype=bool), k=-1)           # [i, j]: j is above i
    usable = below & (r[None, :] != r[:, None]) & (e[None, :] != e[:, None])
    above = usable & (r[None, :] > r[:, None])                   # ... and the reference agrees
    pairs = usable.sum(axis=1)
    used = pairs > 0
    if not used.any():
        return float("nan")
    return float(2.0 / used.sum() * (above.sum(axis=1)[used] / pairs[used]).sum() - 1.0)


def weights_coincidence(confusion: NDArray[np.float64]) -> NDArray[np.float64]:
    """Krippendorff's coincidence matrix of two coders from their confusion matrix: ``C + C^T``
    (each document's two labels are one pair in each order, ``1 / (m_u - 1) = 1``)."""
    return confusion + np.swapaxes(confusion, -1, -2)
