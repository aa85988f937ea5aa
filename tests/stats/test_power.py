"""Power, sample size and MDE: a target power at or below alpha is refused, never solved for."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from scipy import stats

from serpeval.core.errors import OptionError
from serpeval.stats.power import mde, power, sample_size, sign_test_sample_size


def _outcome(call: Callable[[], Any], seconds: float = 30.0) -> BaseException | Any:
    """``call()``'s result or exception; a call still running after ``seconds`` fails the test
    (before the fix, sample_size and mde looped forever on these targets)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(call())
        except BaseException as error:  # handed back to the test
            box.append(error)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"still running after {seconds} s: no answer"
    return box[0]


@pytest.mark.parametrize("target", [0.03, 0.05, 0.04])
@pytest.mark.parametrize("which", ["sample_size", "mde", "sign_test"])
def test_a_power_at_or_below_alpha_is_refused(which: str, target: float) -> None:
    # With no effect a two-sided test at alpha = 0.05 already rejects with probability
    # 0.05 (power(0, n) = 2 * Phi(-1.96) = 0.05 for every n), so "power 0.03" is met by any
    # n: there is nothing to solve, and bisecting towards n = 0 never ends.
    assert power(0.0, 1.0, 100) == pytest.approx(0.05, abs=1e-12)
    calls = {"sample_size": lambda: sample_size(0.1, 1.0, power=target),
             "mde": lambda: mde(1.0, 100, power=target),
             "sign_test": lambda: sign_test_sample_size(0.51, power=target)}
    result = _outcome(calls[which])
    assert isinstance(result, OptionError), result
    assert "power must be in (alpha, 1)" in str(result)


def test_sign_test_size_no_longer_grows_as_the_target_falls() -> None:
    # Before: power 0.001 gave ((1.96 / 2 - 3.09 * 0.4999) / 0.01)^2 = 3,190 impressions,
    # more than the 3,128 that power 0.2 needs: the square of a negative numerator.
    assert isinstance(_outcome(lambda: sign_test_sample_size(0.51, power=0.001)), OptionError)
    z_a, z_b = stats.norm.ppf(0.975), stats.norm.ppf(0.2)
    by_hand = ((z_a * 0.5 + z_b * (0.51 * 0.49) ** 0.5) / 0.01) ** 2
    assert sign_test_sample_size(0.51, power=0.2) == pytest.approx(by_hand, rel=1e-12)


def test_a_power_just_above_alpha_is_solved_like_statsmodels() -> None:
    # statsmodels' NormalIndPower with effect 0.1 / sd 1, alpha 0.05, power 0.06:
    # solve_power gives 17.357080866... control units (checked by hand once, and below).
    solver = pytest.importorskip("statsmodels.stats.power").NormalIndPower()
    expected = solver.solve_power(0.1, None, 0.05, 0.06)
    assert sample_size(0.1, 1.0, power=0.06) == pytest.approx(expected, rel=1e-8)
    assert power(0.1, 1.0, sample_size(0.1, 1.0, power=0.06)) == pytest.approx(0.06, rel=1e-9)
