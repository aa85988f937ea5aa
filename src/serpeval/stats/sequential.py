"""Always-valid inference for monitoring an A/B test while it runs (mSPRT).

Looking at a fixed-horizon p-value every day and stopping at the first p < 0.05 rejects a
true null far more often than 5%. The mixture sequential probability ratio test (Johari,
Pekelis & Walsh, "Always valid inference", Operations Research 2022) gives p-values and
confidence sequences that stay valid however often one looks and whenever one stops.

At a look with effect estimate ``d`` (treatment - control), its variance ``v`` and ``n``
units in total, write the per-unit variance ``s^2 = n v``. With a normal mixture
``N(0, tau^2)`` over the effect and ``tau^2 = s^2 rho^2``, the mixture likelihood ratio is

    Lambda = (1 + n rho^2)^(-1/2) * exp(n^2 rho^2 d^2 / (2 s^2 (1 + n rho^2)))

the always-valid p-value is the running minimum of ``min(1, 1/Lambda)``, and the
``1 - alpha`` confidence sequence is the running intersection of

    d +- sqrt(v (1 + n rho^2) / (n rho^2) * (2 log(1/alpha) + log(1 + n rho^2)))

(the asymptotic confidence sequence of Waudby-Smith et al. 2023, as GrowthBook uses it).
``rho`` is tuned so that the sequence is narrowest at ``tuning_n`` units:
``rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / tuning_n`` (default: the units at the
last look; pass the planned sample size when monitoring live).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from serpeval.core.checks import check_level
from serpeval.core.errors import OptionError, StatsError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["AlwaysValid", "always_valid", "mixture_rho2"]


@dataclass(frozen=True)
class AlwaysValid:
    """Always-valid p-values and confidence sequence, one entry per look (last axis)."""

    p_value: Any
    ci_lower: Any
    ci_upper: Any
    rho2: Any


def mixture_rho2(tuning_n: Any, alpha: float) -> Any:
    """``rho^2`` that makes the confidence sequence narrowest at ``tuning_n`` units (any shape)."""
    units = np.asarray(tuning_n, dtype=np.float64)
    if not np.all(units > 0):
        raise OptionError(f"tuning_n must be > 0; got {tuning_n!r}.")
    a = -2.0 * np.log(alpha)
    rho2 = (a + np.log(1.0 + a)) / units
    return float(rho2) if rho2.ndim == 0 else rho2


def always_valid(
    effect: ArrayLike,
    variance: ArrayLike,
    n: ArrayLike,
    *,
    alpha: float = 0.05,
    tuning_n: float | None = None,
) -> AlwaysValid:
    """mSPRT p-values and confidence sequence over looks (see the module docstring).

    Args:
        effect: effect estimate at each look (last axis = looks, in time order).
        variance: variance of the estimate at each look (``se^2``).
        n: units at each look (both arms).
        alpha: error rate of the whole sequence.
        tuning_n: units at which the sequence is narrowest (default: ``n`` at the last look).
    """
    check_level(alpha)
    d = np.asarray(effect, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    units = np.asarray(n, dtype=np.float64)
    if np.any(units <= 0) or np.any(v < 0):
        raise StatsError("each look needs units > 0 and a variance >= 0.")
    rho2 = mixture_rho2(units[..., -1] if tuning_n is None else tuning_n, alpha)
    rho2 = np.asarray(rho2)[..., None] if np.ndim(rho2) else rho2
    grow = 1.0 + units * rho2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s2 = units * v
        log_lambda = -0.5 * np.log(grow) + units * units * rho2 * d * d / (2.0 * s2 * grow)
        # a look with no variance (every unit of both arms alike, as at an early look with a
        # few units) is no evidence: likelihood ratio 1 (p = 1) and an unbounded interval, so
        # that it does not end the sequence (an infinite ratio made every later p 0)
        log_lambda = np.where(s2 > 0, log_lambda, 0.0)
        p = np.minimum(1.0, np.exp(-log_lambda))
        radius = np.where(v > 0, np.sqrt(v * grow / (units * rho2) * (2.0 * np.log(1.0 / alpha) + np.log(grow))),
                          np.inf)
    return AlwaysValid(
        p_value=np.minimum.accumulate(p, axis=-1),
        ci_lower=np.maximum.accumulate(d - radius, axis=-1),
        ci_upper=np.minimum.accumulate(d + radius, axis=-1),
        rho2=rho2,
    )
