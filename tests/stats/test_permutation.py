"""The randomization test against a brute-force enumeration of all 2^n sign flips."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from serpeval.core.errors import OptionError
from serpeval.stats import randomization_test


def _enumerated_p(d: np.ndarray, alternative: str) -> float:
    """Exact p by listing every sign vector with itertools (independent of the vectorized code)."""
    observed = float(np.sum(d))
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        t = float(np.dot(signs, d))
        if alternative == "two-sided":
            hits += abs(t) >= abs(observed) - 1e-12
        elif alternative == "greater":
            hits += t >= observed - 1e-12
        else:
            hits += t <= observed + 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_mode_equals_enumeration(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.05, 0.2, (3, 11)), 3)
    d[0, :3] = 0.0  # zero differences and ties, as in IR
    ours = randomization_test(d, alternative=alternative, exact=True)
    expected = [_enumerated_p(row, alternative) for row in d]
    np.testing.assert_allclose(ours.p_value, expected, rtol=0, atol=1e-15)
    assert ours.resamples == 2**11
    assert "exact" in ours.method


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_monte_carlo_agrees_with_enumeration(alternative: str) -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.04, 0.2, (4, 12))
    exact = np.array([_enumerated_p(row, alternative) for row in d])
    m = 100_000
    ours = randomization_test(d, alternative=alternative, n_permutations=m, exact=False, rng=1)
    # Monte Carlo error of a proportion p from m draws: sd = sqrt(p (1 - p) / m) <= 0.0016.
    tolerance = 4 * np.sqrt(exact * (1 - exact) / m) + 2 / m
    assert np.all(np.abs(ours.p_value - exact) <= tolerance)


def test_p_is_b_plus_one_over_m_plus_one() -> None:
    d = np.random.default_rng(3).normal(0.5, 0.1, 60)  # far from 0: no flip is as extreme
    m = 999
    r = randomization_test(d, n_permutations=m, rng=0)
    assert r.p_value == pytest.approx(1 / (m + 1))  # b = 0, never 0
    p = randomization_test(d - 0.5, n_permutations=m, rng=0).p_value
    assert (p * (m + 1)) == pytest.approx(round(p * (m + 1)))  # (b + 1) / (m + 1)


def test_hand_worked_exact_example() -> None:
    # d = .8 .6 .4 .2, sum 2.0: only all-plus and all-minus reach |sum| >= 2 -> p = 2/16.
    r = randomization_test([0.9, 0.8, 0.7, 0.6], [0.1, 0.2, 0.3, 0.4])
    assert r.p_value == 0.125
    assert r.statistic == pytest.approx(2.0)


def test_identical_systems_give_p_one() -> None:
    x = np.random.default_rng(0).random(50)
    assert randomization_test(x, x, rng=0).p_value == 1.0
    assert randomization_test(x[:8], x[:8]).p_value == 1.0  # exact path


def test_seeded_and_independent_of_global_state() -> None:
    d = np.random.default_rng(9).normal(0.02, 0.2, 80)
    np.random.seed(1)  # noqa: NPY002 - the global state must not matter
    a = randomization_test(d, rng=42).p_value
    np.random.seed(2)  # noqa: NPY002
    b = randomization_test(d, rng=np.random.default_rng(42)).p_value
    assert a == b
    assert randomization_test(d, rng=43).p_value != a


def test_rows_share_flips_and_match_single_calls() -> None:
    d = np.random.default_rng(4).normal(0.01, 0.2, (5, 70))
    together = randomization_test(d, rng=5, n_permutations=2000)
    alone = [randomization_test(row, rng=5, n_permutations=2000).p_value for row in d]
    np.testing.assert_array_equal(together.p_value, alone)


def test_options_are_checked() -> None:
    with pytest.raises(OptionError, match="n_permutations must be an integer >= 1"):
        randomization_test([0.1, 0.2], n_permutations=0)
    with pytest.raises(OptionError, match="too large"):
        randomization_test(np.ones(30), exact=True)
    with pytest.raises(OptionError, match="rng must be"):
        randomization_test([0.1, 0.2, 0.3], rng="seed", exact=False)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="rng must be an int seed >= 0"):
        randomization_test([0.1, 0.2, 0.3], rng=-1, exact=False)  # numpy's ValueError before
