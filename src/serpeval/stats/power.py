"""Power, minimum detectable effect and sample size: the one family of these computations.

**Two-arm test of means or ratios** (A/B tests: :func:`power`, :func:`sample_size`,
:func:`mde`).

For a two-sided z-test at level alpha with per-unit variance ``s^2`` (for a ratio metric:
its delta-method variance, which already carries the clustering of impressions within
users), ``n`` control units and ``ratio * n`` treatment units:

    se(n) = s * sqrt(1/n + 1/(ratio n))
    power(delta, n) = Phi(delta/se - z) + Phi(-delta/se - z),   z = z_{1 - alpha/2}

(both tails; statsmodels ``NormalIndPower`` with ``effect_size = delta / s``). The sample
size solves ``power(delta, n) = target`` for n; its closed-form start,

    n ~ (z_{1-alpha/2} + z_{power})^2 (1 + 1/ratio) s^2 / delta^2,

is the familiar ``16 s^2 / delta^2`` at alpha = 0.05, power = 0.8. The MDE solves the same
equation for delta. CUPED shrinks ``s^2`` by ``1 - rho^2`` (pass ``variance_reduction``).

**Sign test of a preference** (interleaving: :func:`sign_test_sample_size`). With ``p`` =
P(B wins | not a tie) (two-sided: ``p`` and ``1 - p`` need the same), the sign test at level
alpha needs

    n = ((z_{1-alpha/2} / 2 + z_{power} sqrt(p (1 - p))) / (p - 1/2))^2

non-tied impressions, and ``n / (1 - tie_rate)`` impressions in all.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from serpeval.core.checks import check_level
from serpeval.core.errors import OptionError

__all__ = ["mde", "power", "sample_size", "sign_test_sample_size"]


def _check(
    alpha: float, target: float | None = None, ratio: float = 1.0, variance_reduction: float = 0.0
) -> None:
    check_level(alpha)
    # A two-sided test rejects with probability alpha when there is no effect at all, and its
    # power only grows with the effect and with n: a target of alpha or less is met by any n
    # and any effect, so there is no sample size or MDE to solve for.
    if target is not None and not alpha < target < 1.0:
        raise OptionError(f"power must be in (alpha, 1) = ({alpha:g}, 1): a two-sided test at level alpha "
                          f"already rejects with probability alpha without any effect; got {target!r}.")
    if not ratio > 0:
        raise OptionError(f"ratio (treatment units per control unit) must be > 0; got {ratio!r}.")
    if not 0.0 <= variance_reduction < 1.0:
        raise OptionError(f"variance_reduction must be in [0, 1); got {variance_reduction!r}.")


def _se(variance: float, n: float, ratio: float, variance_reduction: float) -> float:
    if not variance > 0:
        raise OptionError(f"the per-unit variance must be > 0; got {variance!r}.")
    return math.sqrt(variance * (1.0 - variance_reduction) * (1.0 / n + 1.0 / (ratio * n)))


def power(
    effect: float,
    variance: float,
    n: float,
    *,
    ratio: float = 1.0,
    alpha: float = 0.05,
    variance_reduction: float = 0.0,
) -> float:
    """Probability that a two-sided z-test at ``alpha`` detects ``effect`` with ``n`` control units.

    Examples:
        >>> round(power(0.1, 1.0, 1570), 3)  # 16 s^2 / delta^2 = 1600 units: about 80%
        0.8
    """
    _check(alpha, ratio=ratio, variance_reduction=variance_reduction)
    if not n > 0:
        raise OptionError(f"n must be > 0; got {n!r}.")
    return _power_at(effect, variance, n, ratio, alpha, variance_reduction)


def sample_size(
    effect: float,
    variance: float,
    *,
    power: float = 0.8,
    ratio: float = 1.0,
    alpha: float = 0.05,
    variance_reduction: float = 0.0,
) -> float:
    """Control units needed to detect ``effect`` (absolute) with ``power`` (round up yourself).

    The treatment arm needs ``ratio`` times as many.

    Examples:
        >>> # CTR 10% (a proportion: s^2 = .1 * .9) and a +1% relative lift, delta = .001:
        >>> round(sample_size(0.001, 0.09))  # (1.95996 + 0.84162)^2 * 2 * .09 / .001^2 = 1412795
        1412795
    """
    from scipy.stats import norm

    _check(alpha, power, ratio, variance_reduction)
    if effect == 0:
        raise OptionError("the effect to detect must be non-zero.")
    target = power
    closed = (
        (norm.isf(alpha / 2) + norm.isf(1 - target)) ** 2
        * (1 + 1 / ratio)
        * variance
        * (1 - variance_reduction)
        / effect**2
    )

    def gap(n: float) -> float:
        return _power_at(effect, variance, n, ratio, alpha, variance_reduction) - target

    return _root(gap, closed, xtol=1e-12)


def mde(
    variance: float,
    n: float,
    *,
    power: float = 0.8,
    ratio: float = 1.0,
    alpha: float = 0.05,
    variance_reduction: float = 0.0,
) -> float:
    """The smallest absolute effect detected with ``power`` by ``n`` control units.

    Examples:
        >>> round(mde(1.0, 1600), 4)  # (1.95996 + 0.84162) * sqrt(2 / 1600) = 0.09905
        0.0991
    """
    from scipy.stats import norm

    _check(alpha, power, ratio, variance_reduction)
    if not n > 0:
        raise OptionError(f"n must be > 0; got {n!r}.")
    se = _se(variance, n, ratio, variance_reduction)
    closed = (norm.isf(alpha / 2) + norm.isf(1 - power)) * se

    def gap(delta: float) -> float:
        return _power_at(delta, variance, n, ratio, alpha, variance_reduction) - power

    return _root(gap, closed, xtol=1e-15)


def sign_test_sample_size(p_win: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Non-tied impressions a two-sided sign test needs to detect ``p_win`` != 1/2 (formula above).

    Examples:
        >>> round(sign_test_sample_size(0.51), 2)  # ((1.96*.5 + .8416*.4999)/.01)^2
        19619.84

    ``power`` must exceed ``alpha``: below ``alpha / 2`` the formula's numerator turns
    negative and its square grows again as the target falls (a power of 0.001 would ask for
    3,190 impressions at ``p_win = 0.51``, more than power 0.2's 3,128), which answers nothing.
    """
    from scipy.stats import norm

    _check(alpha, check_level(power, "power", example=0.8))
    if isinstance(p_win, bool) or not isinstance(p_win, (int, float)) or not 0.0 < p_win < 1.0 \
            or p_win == 0.5:
        raise OptionError(f"the win probability must be in (0, 1) and differ from 1/2; got {p_win!r}.")
    z_a, z_b = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return float(((z_a * 0.5 + z_b * math.sqrt(p_win * (1 - p_win))) / (p_win - 0.5)) ** 2)


def _root(gap: Callable[[float], float], closed: float, *, xtol: float) -> float:
    """The root of the increasing ``gap`` just below the closed-form start ``closed`` (where
    the power of both tails is already at least the target)."""
    from scipy.optimize import brentq

    low = closed / 2
    while gap(low) > 0:
        low /= 2
    return float(brentq(gap, low, closed * 1.0000001, xtol=xtol, rtol=1e-15, maxiter=500))


def _power_at(
    effect: float, variance: float, n: float, ratio: float, alpha: float, variance_reduction: float
) -> float:
    from scipy.stats import norm

    shift = abs(effect) / _se(variance, n, ratio, variance_reduction)
    z = norm.isf(alpha / 2)
    return float(norm.sf(z - shift) + norm.cdf(-z - shift))
