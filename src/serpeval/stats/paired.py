"""Paired tests on per-query scores: Student's t, Wilcoxon signed-rank, and the effect size d_z.

Every function takes the per-query scores of two systems, ``x`` and ``y`` (same shape, the
last axis is the queries, in the same order), or their differences ``x - y`` alone. Leading
axes are independent comparisons, so one call tests every (system, measure) pair at once.
Differences are always ``x - y`` (scipy's convention for ``ttest_rel(x, y)``): a positive
mean delta means ``x`` scored higher.

Identical systems (all differences 0) give statistic 0 and p = 1 without dividing by zero.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

import numpy as np

from serpeval.core.checks import check_level
from serpeval.core.errors import OptionError
from serpeval.stats.validation import Alternative, check_alternative, paired_differences, scalar_or_array, spread

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray

__all__ = ["ZERO_METHODS", "PairedTest", "ZeroMethod", "cohens_dz", "inverted_bound", "paired_t", "wilcoxon"]

#: How Wilcoxon's test treats zero differences (scipy.stats.wilcoxon's ``zero_method``).
ZeroMethod = Literal["wilcox", "pratt", "zsplit"]
ZERO_METHODS: tuple[ZeroMethod, ...] = get_args(ZeroMethod)


class PairedTest(NamedTuple):
    """The result of a paired test; array fields have the input's leading shape.

    Attributes:
        test: ``"t"``, ``"wilcoxon"``, ``"randomization"`` or ``"bootstrap"``.
        alternative: ``"two-sided"``, ``"greater"`` (mean of ``x - y`` > 0) or ``"less"``.
        n: number of queries (paired observations).
        mean_delta: mean of ``x - y``.
        statistic: the test statistic (t; Wilcoxon's W as scipy reports it; the sum of
            differences for the randomization test; the studentized mean for the bootstrap).
        p_value: the p-value for ``alternative``.
        ci_low, ci_high: the confidence interval of the mean delta (NaN when the test has
            none: Wilcoxon and randomization; one side infinite for one-sided tests).
        confidence: the interval's confidence level.
        resamples: permutations or bootstrap resamples used (0 for analytic tests).
        method: how the p-value was obtained, in words.
    """

    test: str
    alternative: Alternative
    n: int
    mean_delta: Any
    statistic: Any
    p_value: Any
    ci_low: Any
    ci_high: Any
    confidence: float
    resamples: int = 0
    method: str = ""

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict per comparison (the leading axes flattened in C order)."""
        fields = ("mean_delta", "statistic", "p_value", "ci_low", "ci_high")
        columns = {f: np.atleast_1d(np.asarray(getattr(self, f), dtype=np.float64)).ravel()
                   for f in fields}
        rows = []
        for i in range(len(columns["p_value"])):
            row: dict[str, Any] = {"comparison": i, "test": self.test,
                                   "alternative": self.alternative, "n": self.n}
            row.update({f: float(columns[f][i]) for f in fields})
            row.update({"confidence": self.confidence, "resamples": self.resamples,
                        "method": self.method})
            rows.append(row)
        return rows


def _ratio(numerator: NDArray[np.float64], denominator: NDArray[np.float64]) -> NDArray[np.float64]:
    """``numerator / denominator`` with 0/0 = 0 and x/0 = +-inf (no warnings)."""
    out = np.where(numerator == 0, 0.0, np.copysign(np.inf, numerator))
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def cohens_dz(x: ArrayLike, y: ArrayLike | None = None) -> Any:
    """Paired Cohen's d_z: the mean difference in units of the differences' standard deviation.

    .. math:: d_z = \\bar d / s_d, \\quad s_d = \\sqrt{\\sum_q (d_q - \\bar d)^2 / (n - 1)}

    Equals ``t / sqrt(n)`` of the paired t-test. Rough reading (Cohen 1988): 0.2 small,
    0.5 medium, 0.8 large.

    Edge cases: all differences equal -> 0 when they are 0, +-inf otherwise.

    Returns:
        float (1-D input) or ``float64[...]`` (one per leading index).
    """
    d = paired_differences(x, y)
    return scalar_or_array(_ratio(d.mean(axis=-1), spread(d)))


def paired_t(x: ArrayLike, y: ArrayLike | None = None, *, alternative: Alternative = "two-sided",
             confidence: float = 0.95) -> PairedTest:
    """Student's paired t-test of the mean of ``x - y`` (scipy.stats.ttest_rel).

    .. math:: t = \\bar d / (s_d / \\sqrt n), \\quad df = n - 1

    The interval is :math:`\\bar d \\pm t_{df, 1-\\alpha/2}\\, s_d/\\sqrt n` (one-sided bounds
    for one-sided alternatives), so for a two-sided test it excludes 0 exactly when
    p < 1 - confidence.

    Edge cases: all differences 0 -> t = 0, p = 1 for every alternative, interval [0, 0]
    (scipy returns NaN); all differences equal and non-zero -> t = +-inf, p = 0 (or 1 for
    the alternative pointing the other way).

    Args:
        x, y: per-query scores ``[..., n_queries]``; or ``x`` alone holding the differences.
        alternative: ``"two-sided"``, ``"greater"`` (mean delta > 0) or ``"less"``.
        confidence: level of the interval (0.95).

    Returns:
        :class:`PairedTest` with ``test="t"``.

    Raises:
        StatsError: fewer than 2 queries, shapes differ, non-finite scores.

    Examples:
        >>> r = paired_t([0.5, 0.6, 0.7], [0.4, 0.4, 0.5])  # d = .1, .2, .2
        >>> round(r.statistic, 4), round(r.p_value, 4)
        (5.0, 0.0377)
    """
    # Student's t through scipy.special (stdtr, stdtrit), the functions scipy.stats.t's cdf, sf
    # and ppf call (the same values bit for bit, ``+ 0.0`` as ppf's ``* scale + loc`` adds),
    # without importing scipy.stats (~0.5 s, most of a ``serpeval gate`` process).
    from scipy import special

    check_alternative(alternative)
    level = check_level(confidence, "confidence", example=0.95)
    d = paired_differences(x, y)
    n = d.shape[-1]
    df = n - 1
    mean = d.mean(axis=-1)
    se = spread(d) / np.sqrt(n)
    t = _ratio(mean, se)
    if alternative == "two-sided":
        p = 2.0 * special.stdtr(df, -np.abs(t))
        half = (special.stdtrit(df, 0.5 + level / 2.0) + 0.0) * se
        low, high = mean - half, mean + half
    elif alternative == "greater":
        p = special.stdtr(df, -t)
        low, high = mean - (special.stdtrit(df, level) + 0.0) * se, np.full_like(mean, np.inf)
    else:
        p = special.stdtr(df, t)
        low, high = np.full_like(mean, -np.inf), mean + (special.stdtrit(df, level) + 0.0) * se
    # No difference at all is no evidence for any alternative (the one-sided t formula would
    # say 0.5); the permutation, rank and bootstrap tests give 1 there too.
    p = np.where((se == 0) & (mean == 0), 1.0, np.minimum(p, 1.0))
    return PairedTest("t", alternative, n, scalar_or_array(mean), scalar_or_array(t),
                      scalar_or_array(p), scalar_or_array(low), scalar_or_array(high), level,
                      0, f"Student's paired t-test, df = {df}")


def _exact_applies(flat: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per row of differences: no zero and no tie among ``|d|`` (compared exactly, as scipy does).

    scipy.stats.wilcoxon's ``method="auto"`` uses the exact null distribution for up to 50
    differences only when its whole input has neither; otherwise a permutation test (up to
    13) or the normal approximation. Rows that differ in this flag must not share a call.
    """
    magnitude = np.sort(np.abs(flat), axis=1)
    tied = np.any(magnitude[:, 1:] == magnitude[:, :-1], axis=1)
    return ~(tied | np.any(flat == 0, axis=1))


def _auto_permutes() -> bool:
    """Whether scipy.stats.wilcoxon's ``method="auto"`` runs a permutation test on up to 13
    differences with ties or zeros (scipy 1.15 on; before, the normal approximation)."""

    import scipy

    found = re.match(r"(\d+)\.(\d+)", scipy.__version__)
    return found is not None and (int(found[1]), int(found[2])) >= (1, 15)


def _signed_rank_sums(d: NDArray[np.float64],
                      zero_method: ZeroMethod) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """W+ and W- of each row (last axis) as scipy.stats.wilcoxon computes them: average ranks
    of ``|d|``; ``"wilcox"`` ranks the non-zero differences only, ``"pratt"`` and ``"zsplit"``
    rank the zeros too (the lowest ranks), ``"zsplit"`` adds half of the zeros' ranks to each."""
    from scipy import stats

    zero = d == 0
    magnitude = np.abs(d)
    if zero_method == "wilcox":
        magnitude = np.where(zero, np.inf, magnitude)  # ranked after every non-zero: theirs unchanged
    ranks = stats.rankdata(magnitude, method="average", axis=-1)
    plus = np.sum((d > 0) * ranks, axis=-1)
    minus = np.sum((d < 0) * ranks, axis=-1)
    if zero_method == "zsplit":
        half = np.sum(zero * ranks, axis=-1) / 2
        plus, minus = plus + half, minus + half
    return plus, minus


def _permutation_wilcoxon(rows: NDArray[np.float64], alternative: Alternative,
                          zero_method: ZeroMethod) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Statistic and p-value of scipy.stats.wilcoxon where ``method="auto"`` runs its permutation
    test (ties or zeros, at most 13 differences): scipy.stats.permutation_test over all ``2^n``
    sign flips of each row with W+ as the statistic, as scipy's wilcoxon calls it, but with the
    statistic computed for all flips at once (scipy's passes each flip through a Python call:
    ~0.5 s a call at n = 13). W+ is a sum of half-integers, exact in float64: the null
    distribution, hence the p-value, is scipy's bit for bit."""
    from scipy import stats

    def w_plus(d: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
        return _signed_rank_sums(np.moveaxis(d, axis, -1), zero_method)[0]

    p = stats.permutation_test((rows,), w_plus, permutation_type="samples", vectorized=True,
                               n_resamples=9999, alternative=alternative, axis=-1).pvalue
    plus, minus = _signed_rank_sums(rows, zero_method)
    return (np.minimum(plus, minus) if alternative == "two-sided" else plus), p


def wilcoxon(x: ArrayLike, y: ArrayLike | None = None, *, alternative: Alternative = "two-sided",
             zero_method: ZeroMethod = "wilcox", confidence: float = 0.95) -> PairedTest:
    """Wilcoxon signed-rank test of ``x - y`` (scipy.stats.wilcoxon, vectorized over comparisons).

    Ranks the absolute differences; W+ is the sum of the ranks of positive differences.
    With the default ``zero_method="wilcox"`` queries with a zero difference are dropped
    (IR data has many: queries both systems fail). scipy chooses the exact null
    distribution for small samples without ties or zeros and the normal approximation
    otherwise (``method="auto"``), and it chooses once per call: comparisons with and
    without ties or zeros are passed in separate calls, so every comparison's p-value is
    the one scipy gives on it alone, whatever else is tested with it. Where scipy (1.15 on)
    runs a permutation test (ties or zeros, at most 13 differences), it is run here with
    the statistic computed for all sign flips at once: scipy's p-values, bit for bit.

    Edge cases: all differences 0 -> statistic 0, p = 1 (scipy warns and divides 0/0).

    Args:
        x, y: per-query scores ``[..., n_queries]``; or ``x`` alone holding the differences.
        alternative: ``"two-sided"``, ``"greater"`` or ``"less"``.
        zero_method: ``"wilcox"``, ``"pratt"`` or ``"zsplit"`` (see scipy.stats.wilcoxon).
        confidence: recorded in the result; the test has no interval of the mean (NaN).

    Returns:
        :class:`PairedTest` with ``test="wilcoxon"``; ``statistic`` is scipy's (the smaller
        of W+ and W- for two-sided tests, W+ otherwise).
    """
    from scipy import stats

    check_alternative(alternative)
    level = check_level(confidence, "confidence", example=0.95)
    if zero_method not in ZERO_METHODS:
        raise OptionError(f"zero_method must be 'wilcox', 'pratt' or 'zsplit'; "
                          f"got {zero_method!r}.")
    d = paired_differences(x, y)
    n = d.shape[-1]
    flat = d.reshape(-1, n)
    statistic = np.zeros(len(flat))
    p = np.ones(len(flat))
    informative = np.any(flat != 0, axis=1)
    exact_ok = _exact_applies(flat)
    # scipy picks one method (exact, permutation or normal approximation) for a whole call,
    # from zeros and ties anywhere in it; each comparison is tested in a call of its kind,
    # so its p-value is the one it would get alone.
    for rows, exact in ((informative & exact_ok, True), (informative & ~exact_ok, False)):
        if not rows.any():
            continue
        if not exact and n <= 13 and _auto_permutes():
            statistic[rows], p[rows] = _permutation_wilcoxon(flat[rows], alternative, zero_method)
            continue
        result = stats.wilcoxon(flat[rows], axis=-1, alternative=alternative, zero_method=zero_method)
        statistic[rows] = result.statistic
        p[rows] = result.pvalue
    shape = d.shape[:-1]
    nan = np.full(shape, np.nan)
    return PairedTest("wilcoxon", alternative, n, scalar_or_array(d.mean(axis=-1)),
                      scalar_or_array(statistic.reshape(shape)), scalar_or_array(p.reshape(shape)),
                      scalar_or_array(nan), scalar_or_array(nan.copy()), level, 0,
                      f"Wilcoxon signed-rank test (scipy, zero_method={zero_method!r})")


def inverted_bound(p_value: Callable[[NDArray[np.float64]], ArrayLike], d: ArrayLike, *,
                   alternative: Alternative, alpha: float, iterations: int = 60) -> NDArray[np.float64]:
    """The one-sided confidence bound of the location a one-sample test of ``d`` is about,
    by inverting the test: for ``alternative="greater"`` the lower bound
    ``L = sup {theta : p(d - theta) <= alpha}``, for ``"less"`` the upper bound
    ``U = inf {theta : p(d - theta) <= alpha}`` (a one-sided p-value falls as the shift moves
    away from the data, so the set is an interval; bisection, ``iterations`` halvings of the
    data's span, vectorized over the rows of ``d``). For the signed-rank test this is the
    Hodges-Lehmann bound of the pseudo-median: the test rejects "location <= -m" exactly
    when ``-m`` is below it, so a decision and the bound shown beside it agree.

    Edge cases: a test that cannot reject at any shift (too few non-zero differences) gives
    ``-inf`` (``greater``) or ``+inf`` (``less``).

    Args:
        p_value: the test's one-sided p-values of the rows of a ``[k, n]`` array (``alternative``
            already chosen), e.g. ``lambda rows: wilcoxon(rows, alternative="greater").p_value``.
        d: ``[..., n]`` differences, one row per comparison.
        alternative: ``"greater"`` or ``"less"``.
        alpha: the level (the bound is a ``1 - alpha`` one-sided bound).
    """
    if alternative not in ("greater", "less"):
        raise OptionError(f"an inverted bound is one-sided: alternative 'greater' or 'less'; got {alternative!r}.")
    rows = np.asarray(d, dtype=np.float64)
    shape = rows.shape[:-1]
    rows = rows.reshape(-1, rows.shape[-1])
    low, high = rows.min(axis=1), rows.max(axis=1)
    span = high - low + 1.0
    low, high = low - span, high + span      # every difference on one side of each end

    def rejects(theta: NDArray[np.float64]) -> NDArray[np.bool_]:
        return np.asarray(p_value(rows - theta[:, None]), dtype=np.float64).reshape(-1) <= alpha

    if alternative == "greater":
        possible = rejects(low)              # all differences above the shift: the smallest p
        for _ in range(iterations):
            middle = (low + high) / 2
            inside = rejects(middle)
            low, high = np.where(inside, middle, low), np.where(inside, high, middle)
        bound = np.where(possible, low, -np.inf)
    else:
        possible = rejects(high)
        for _ in range(iterations):
            middle = (low + high) / 2
            inside = rejects(middle)
            low, high = np.where(inside, low, middle), np.where(inside, middle, high)
        bound = np.where(possible, high, np.inf)
    return bound.reshape(shape)
