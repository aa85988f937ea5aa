"""Two-sample tests and effect estimates on summary statistics (vectorized over comparisons).

Every function takes per-arm means, per-unit variances and unit counts (NumPy arrays or
floats, broadcast together) and returns an :class:`Effect`; none sees a raw row.

- :func:`compare_means` - the z-test (delta method for ratio metrics) or Welch's t-test.
  With control C and treatment T, ``se = sqrt(s_C^2 / n_C + s_T^2 / n_T)``,
  ``z = (m_T - m_C) / se``; Welch's degrees of freedom are
  ``se^4 / ((s_C^2/n_C)^2 / (n_C - 1) + (s_T^2/n_T)^2 / (n_T - 1))``.
- Relative effect ``m_T / m_C - 1`` with a CI from the delta method on the log scale:
  ``se_log = sqrt(s_C^2 / (m_C^2 n_C) + s_T^2 / (m_T^2 n_T))``, CI
  ``(m_T / m_C) * exp(+-q se_log) - 1`` (asymmetric, never below -100%; with Welch's t, q
  uses the degrees of freedom of the log-scale variances: tea-tasting's rule).
- :func:`two_proportion_ztest` - pooled z for the p-value,
  ``z = (p_T - p_C) / sqrt(p (1 - p) (1/n_C + 1/n_T))`` with ``p`` the pooled share, and
  the unpooled (Wald) interval for the difference.
- No variance, no test: where the standard error of the difference is 0 (every unit of
  both arms has the same value), z would be +-inf (or 0/0), so the statistic, the p-value
  and both intervals are NaN; the effect and the values are still given.
- :func:`cuped` - CUPED (Deng et al., WSDM 2013) for ratio metrics: with covariate ratio
  ``Z`` (the same metric in the pre-period), ``theta = cov(R, Z) / var(Z)`` on the pooled
  arms, the adjusted value ``R - theta (Z - Z_pooled)`` and per-unit variance
  ``var R + theta^2 var Z - 2 theta cov(R, Z)`` (all by the delta method).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from serpeval.core.checks import check_level
from serpeval.core.errors import StatsError

if TYPE_CHECKING:
    from typing import Self

    from numpy.typing import ArrayLike, NDArray

__all__ = ["NO_VARIANCE", "Effect", "compare_means", "cuped", "no_variance", "two_proportion_ztest"]

#: Why a comparison with a zero standard error has no p-value and no interval (reports say it).
NO_VARIANCE = ("no variance: within each arm every unit has the same value, so the standard error "
               "of the difference is 0 and there is no test (p-value and interval undefined)")


@dataclass(frozen=True)
class Effect:
    """A two-sample comparison (arrays when vectorized over comparisons).

    Attributes:
        control, treatment: the metric in each arm.
        effect: ``treatment - control``; ``ci_lower``/``ci_upper`` its interval.
        rel_effect: ``treatment / control - 1``; ``rel_ci_lower``/``rel_ci_upper``.
        se: standard error of ``effect``; ``statistic``: z or t; ``df``: Welch's
            degrees of freedom (``inf`` for a z-test); ``p_value``: two-sided.

    Where ``se`` is 0 there is no test: ``statistic``, ``p_value`` and the intervals are NaN
    (:func:`no_variance` tells which comparisons).
    """

    control: Any
    treatment: Any
    effect: Any
    ci_lower: Any
    ci_upper: Any
    rel_effect: Any
    rel_ci_lower: Any
    rel_ci_upper: Any
    se: Any
    statistic: Any
    df: Any
    p_value: Any

    def scalar(self) -> Effect:
        """The same single comparison with plain Python floats."""
        return Effect(
            **{f.name: float(np.asarray(getattr(self, f.name)).reshape(())) for f in fields(self)}
        )


def _arrays(*values: ArrayLike) -> list[NDArray[np.float64]]:
    return [np.asarray(v, dtype=np.float64) for v in values]


def _quantile(alpha: float, df: Any) -> Any:
    from scipy import stats

    check_level(alpha)
    return (
        stats.t.ppf(1 - alpha / 2, df) if np.any(np.isfinite(df)) else stats.norm.ppf(1 - alpha / 2)
    )


def _p_two_sided(statistic: Any, df: Any) -> Any:
    from scipy import stats

    if np.any(np.isfinite(df)):
        return 2.0 * stats.t.sf(np.abs(statistic), df)
    return 2.0 * stats.norm.sf(np.abs(statistic))


def _scale(var_c: Any, n_c: Any, var_t: Any, n_t: Any, use_t: bool) -> tuple[Any, Any]:
    """Standard error of a difference of means, and Welch's df (``inf`` for a z-test)."""
    mean_var_c, mean_var_t = var_c / n_c, var_t / n_t
    se = np.sqrt(mean_var_c + mean_var_t)
    if not use_t:
        return se, np.full_like(se, np.inf)
    df = (mean_var_c + mean_var_t) ** 2 / (mean_var_c**2 / (n_c - 1) + mean_var_t**2 / (n_t - 1))
    return se, np.where(se > 0, df, np.inf)


def compare_means(
    mean_c: ArrayLike,
    var_c: ArrayLike,
    n_c: ArrayLike,
    mean_t: ArrayLike,
    var_t: ArrayLike,
    n_t: ArrayLike,
    *,
    alpha: float = 0.05,
    use_t: bool = False,
) -> Effect:
    """Difference of two means from summaries: z-test (``use_t=False``) or Welch's t-test.

    ``var_*`` are per-unit variances (for a ratio metric, the delta-method variance of
    :meth:`~serpeval.online.logs.moments.Moments.ratio_var`), ``n_*`` unit counts.
    Where the standard error of the difference is 0 (no variance in either arm) there is
    no test: the statistic, the p-value and the intervals are NaN (z = effect / 0 is not a
    p-value of 0; identical arms are not a p-value of 1 either).

    Examples:
        >>> e = compare_means(0.0, 0.0, 2, 1.0, 0.0, 2)   # 0 vs 1, no variance in either arm
        >>> float(e.effect), bool(np.isnan(e.p_value)), bool(np.isnan(e.ci_lower))
        (1.0, True, True)
    """
    mc, vc, nc, mt, vt, nt = _arrays(mean_c, var_c, n_c, mean_t, var_t, n_t)
    if np.any(nc < 2) or np.any(nt < 2):
        raise StatsError(
            "each arm needs at least 2 units for a variance; got "
            f"{int(np.min(nc))} and {int(np.min(nt))}."
        )
    effect = mt - mc
    with np.errstate(divide="ignore", invalid="ignore"):
        se, df = _scale(vc, nc, vt, nt, use_t)
        statistic = np.where(se > 0, effect / se, np.nan)  # se = 0: no test
        # the relative interval: the same test on the log scale, Var(log m) = s^2 / (m^2 n)
        se_log, df_log = _scale(vc / (mc * mc), nc, vt / (mt * mt), nt, use_t)
        rel_half = np.exp(_quantile(alpha, df_log) * se_log)
        q = _quantile(alpha, df)
    return _effect(mc, mt, se, q, rel_half, statistic, df)


def two_proportion_ztest(
    x_c: ArrayLike,
    n_c: ArrayLike,
    x_t: ArrayLike,
    n_t: ArrayLike,
    *,
    alpha: float = 0.05,
) -> Effect:
    """Two-proportion z-test: ``x`` successes out of ``n`` independent trials per arm.

    The p-value uses the pooled proportion (statsmodels ``proportions_ztest``); the
    interval for the difference is the unpooled Wald interval
    (``confint_proportions_2indep(method="wald")``); the relative interval uses the log
    rule of :func:`compare_means` with ``var = p (1 - p)``. Both arms all 0 or all 1 (a
    pooled standard error of 0) is no test: NaN statistic and p-value; where the unpooled
    standard error is 0 (0 of n against n of n) the Wald interval is NaN.

    Examples:
        >>> e = two_proportion_ztest(100, 1000, 130, 1000)
        >>> round(float(e.p_value), 4)  # pooled p = .115, z = .03 / sqrt(.115 * .885 * .002)
        0.0355
    """
    xc, nc, xt, nt = _arrays(x_c, n_c, x_t, n_t)
    if (
        np.any(nc < 1)
        or np.any(nt < 1)
        or np.any(xc < 0)
        or np.any(xt < 0)
        or np.any(xc > nc)
        or np.any(xt > nt)
    ):
        raise StatsError(
            "proportions need 0 <= successes <= trials and at least one trial per arm."
        )
    pc, pt = xc / nc, xt / nt
    pooled = (xc + xt) / (nc + nt)
    se_pooled = np.sqrt(pooled * (1 - pooled) * (1 / nc + 1 / nt))
    se = np.sqrt(pc * (1 - pc) / nc + pt * (1 - pt) / nt)
    q = _quantile(alpha, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = np.where(se_pooled > 0, (pt - pc) / se_pooled, np.nan)
        rel_half = np.exp(q * np.sqrt((1 - pc) / (pc * nc) + (1 - pt) / (pt * nt)))
    return _effect(pc, pt, se, q, rel_half, statistic, np.full_like(se, np.inf))


def _effect(
    control: Any, treatment: Any, se: Any, q: Any, rel_half: Any, statistic: Any, df: Any
) -> Effect:
    """The :class:`Effect` of two arms: ``effect +- q se`` and the relative interval
    ``(treatment / control) * rel_half^(+-1) - 1``; the p-value from ``statistic`` and ``df``.
    A zero ``se`` has no interval (NaN, not ``[effect, effect]``)."""
    effect = treatment - control
    flat = np.asarray(se) == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = treatment / control
        half = np.where(flat, np.nan, q * se)
        rel = np.where(flat, np.nan, rel_half)
        rel_lower, rel_upper = ratio / rel - 1.0, ratio * rel - 1.0
    return Effect(
        control=control,
        treatment=treatment,
        effect=effect,
        ci_lower=effect - half,
        ci_upper=effect + half,
        rel_effect=ratio - 1.0,
        rel_ci_lower=rel_lower,
        rel_ci_upper=rel_upper,
        se=se,
        statistic=statistic,
        df=df,
        p_value=_p_two_sided(statistic, df),
    )


def no_variance(effect: Effect) -> Any:
    """Where ``effect`` has no test because the standard error of the difference is 0 (bool,
    the shape of ``effect.se``); the reason to print is :data:`NO_VARIANCE`. (A two-proportion
    test of 0/n against n/n still has a p-value from its pooled standard error.)"""
    return (np.asarray(effect.se) == 0) & np.isnan(np.asarray(effect.p_value, dtype=np.float64))


class Moments(Protocol):
    """What :func:`cuped` reads of an arm's moments (``online.logs.moments.Moments`` has it)."""

    def pool(self, other: Self) -> Self:
        """The moments of both arms together."""

    def ratio(self, numer: str, denom: str | None) -> Any:
        """The ratio of means ``mean(numer) / mean(denom)`` (the mean when ``denom`` is None)."""

    def ratio_var(self, numer: str, denom: str | None) -> Any:
        """The per-unit variance of the ratio by the delta method."""

    def ratio_cov(self, n1: str, d1: str | None, n2: str, d2: str | None) -> Any:
        """The per-unit covariance of two ratios by the delta method."""


@dataclass(frozen=True)
class CupedArms:
    """CUPED-adjusted per-arm values and per-unit variances, and what the adjustment did."""

    mean_c: Any
    var_c: Any
    mean_t: Any
    var_t: Any
    theta: Any
    variance_reduction: Any


def cuped(
    control: Moments,
    treatment: Moments,
    numer: str,
    denom: str | None,
    numer_pre: str,
    denom_pre: str | None,
) -> CupedArms:
    """CUPED with the pre-period ratio ``numer_pre / denom_pre`` as covariate (see module doc).

    ``theta`` is estimated on both arms pooled, so it does not depend on the treatment.
    ``variance_reduction`` is ``1 - var_adjusted / var_raw`` on the pooled arms (= rho^2).
    """
    total = control.pool(treatment)
    var_z = total.ratio_var(numer_pre, denom_pre)
    cov_rz = total.ratio_cov(numer, denom, numer_pre, denom_pre)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(var_z > 0, cov_rz / var_z, 0.0)
    z_total = total.ratio(numer_pre, denom_pre)

    def adjust(m: Moments) -> tuple[Any, Any]:
        value = m.ratio(numer, denom) - theta * (m.ratio(numer_pre, denom_pre) - z_total)
        var = (
            m.ratio_var(numer, denom)
            + theta * theta * m.ratio_var(numer_pre, denom_pre)
            - 2 * theta * m.ratio_cov(numer, denom, numer_pre, denom_pre)
        )
        return value, var

    mean_c, var_c = adjust(control)
    mean_t, var_t = adjust(treatment)
    raw = total.ratio_var(numer, denom)
    with np.errstate(divide="ignore", invalid="ignore"):
        reduction = np.where(
            raw > 0, 1 - (raw + theta * theta * var_z - 2 * theta * cov_rz) / raw, 0.0
        )
    return CupedArms(mean_c, var_c, mean_t, var_t, theta, reduction)
