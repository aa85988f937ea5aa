"""One checker per kind of argument, with one wording and one error class.

Every function, statistic and command that takes a significance level, a confidence, a
probability, a count or a random generator checks it here, so a bad value reads the same
wherever it is given: ``alpha must be a number between 0 and 1 (e.g. 0.05); got 2.``. Each raises
:class:`~serpeval.core.errors.OptionError` and returns the value in its canonical type.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from serpeval.core.errors import OptionError

__all__ = ["RngLike", "as_generator", "check_count", "check_level", "check_probability"]

#: What every ``rng=`` argument accepts: a seed >= 0, a generator (used as is), or None
#: (fresh OS entropy). Never global state.
RngLike = int | np.random.Generator | None


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def as_generator(rng: RngLike) -> np.random.Generator:
    """A NumPy generator from a seed >= 0, a generator (used as is) or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0):
        return np.random.default_rng(rng)
    raise OptionError(f"rng must be an int seed >= 0, a numpy.random.Generator or None; got {rng!r}.")


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int if it is an integer >= ``minimum`` (resamples, impressions, days)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise OptionError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_level(value: Any, name: str = "alpha", *, upper: float = 1.0, example: float = 0.05) -> float:
    """``value`` as a float if it lies strictly between 0 and ``upper``.

    A significance level (``alpha``, in (0, 1); a one-sided gate takes (0, 0.5)), a
    confidence (``confidence``, 0.95 for a 95% interval) or a target power.
    """
    if not _is_number(value) or not 0.0 < float(value) < upper:
        raise OptionError(f"{name} must be a number between 0 and {upper:g} (e.g. {example:g}); got {value!r}.")
    return float(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` as a float if it is a probability in [0, 1] (NaN refused)."""
    if not _is_number(value) or not (0.0 <= float(value) <= 1.0) or math.isnan(float(value)):
        raise OptionError(f"{name} must be a probability in [0, 1]; got {value!r}.")
    return float(value)
