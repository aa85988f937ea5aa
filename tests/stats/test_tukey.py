"""Tukey HSD against scipy / statsmodels; the randomized Tukey test against exact enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from serpeval.core.errors import StatsError
from serpeval.stats import randomization_test, randomized_tukey, tukey_hsd


def _scores(seed: int, n_systems: int = 4, n: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.random(n) * 0.6                       # a strong query effect, as in IR
    effects = np.linspace(0, 0.08, n_systems)[:, None]
    return topic + effects + rng.normal(0, 0.05, (n_systems, n))


@pytest.mark.parametrize("seed", [0, 1])
def test_one_way_equals_scipy_tukey_hsd(seed: int) -> None:
    x = _scores(seed)
    ours = tukey_hsd(x, blocked=False, confidence=0.9)
    ref = stats.tukey_hsd(*x)
    ci = ref.confidence_interval(confidence_level=0.9)
    np.testing.assert_allclose(ours.p_value, ref.pvalue, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(ours.mean_diff, ref.statistic, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours.ci_low, ci.low, rtol=1e-9)
    np.testing.assert_allclose(ours.ci_high, ci.high, rtol=1e-9)


def test_blocked_uses_the_two_way_anova_residual() -> None:
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    x = _scores(2)
    k, n = x.shape
    frame = pd.DataFrame({"y": x.ravel(), "system": np.repeat(np.arange(k), n).astype(str),
                          "query": np.tile(np.arange(n), k).astype(str)})
    fit = smf.ols("y ~ C(system) + C(query)", frame).fit()
    ours = tukey_hsd(x)
    assert ours.df == fit.df_resid == (k - 1) * (n - 1)
    assert ours.mse == pytest.approx(fit.mse_resid, rel=1e-10)
    means = x.mean(axis=1)
    q = abs(means[3] - means[0]) / np.sqrt(fit.mse_resid / n)
    expected = stats.studentized_range.sf(q, k, fit.df_resid)
    assert ours.p_value[3, 0] == pytest.approx(expected, rel=1e-8)
    # Removing the query effect makes the test far more sensitive than the one-way version.
    assert ours.p_value[3, 0] < tukey_hsd(x, blocked=False).p_value[3, 0]


def test_two_systems_blocked_equals_paired_t() -> None:
    x = _scores(3, n_systems=2)
    assert tukey_hsd(x).p_value[0, 1] == pytest.approx(stats.ttest_rel(x[0], x[1]).pvalue, rel=1e-8)


def test_far_tail_p_values_are_not_scipys_quadrature_floor() -> None:
    # Robust04 AP, BM25 vs BM25+RM3 (249 topics, t = 10.88) gave a Tukey p of 9.29e-14 against
    # the paired t-test's 8.3e-23: scipy's studentized_range.sf bottoms out near 1e-13. Two
    # systems: Tukey HSD (blocked) is the paired t-test exactly, however small p is.
    rng = np.random.default_rng(4)
    x = _scores(4, n_systems=2, n=249)
    x[1] += 0.04 + rng.normal(0, 0.001, 249)
    expected = stats.ttest_rel(x[0], x[1]).pvalue
    assert expected < 1e-20
    assert tukey_hsd(x).p_value[0, 1] == pytest.approx(expected, rel=1e-9)
    # Three systems: the family's p lies between the pair's own two-sided t p-value and
    # Bonferroni's N (N - 1) / 2 times it (oracle: scipy's t distribution on q / sqrt 2).
    three = np.vstack([x, x[0] + rng.normal(0, 0.05, 249)])
    r = tukey_hsd(three)
    t_p = 2 * stats.t.sf(r.statistic[1, 0] / np.sqrt(2), r.df)
    assert 1e-300 < t_p < 1e-15
    assert t_p <= r.p_value[1, 0] <= 3 * t_p


def test_hsd_degenerate_and_hand_worked() -> None:
    # B = A + 0.1 on every query and C = A: no residual variance at all.
    r = tukey_hsd([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7], [0.2, 0.4, 0.6]])
    assert r.mse == 0.0
    assert r.p_value[1, 0] == 0.0
    assert r.p_value[0, 2] == 1.0
    same = tukey_hsd(np.tile([0.1, 0.5, 0.3], (3, 1)))
    np.testing.assert_array_equal(same.p_value, np.ones((3, 3)))


def _enumerated_tukey(x: np.ndarray) -> np.ndarray:
    """Exact randomized-Tukey p-values: every assignment of each query's scores to systems."""
    k, n = x.shape
    means = x.mean(axis=1)
    observed = np.abs(means[:, None] - means[None, :])
    hits = np.zeros((k, k))
    total = 0
    for orders in itertools.product(list(itertools.permutations(range(k))), repeat=n):
        permuted = np.array([[x[orders[q][i], q] for q in range(n)] for i in range(k)]).mean(axis=1)
        hits += permuted.max() - permuted.min() >= observed - 1e-12
        total += 1
    return hits / total


def test_randomized_tukey_agrees_with_enumeration() -> None:
    x = np.random.default_rng(4).random((3, 4))          # 6^4 = 1296 assignments
    exact = _enumerated_tukey(x)
    m = 100_000
    ours = randomized_tukey(x, n_permutations=m, rng=3).p_value
    tolerance = 4 * np.sqrt(exact * (1 - exact) / m) + 2 / m
    assert np.all(np.abs(ours - exact) <= tolerance)


def test_randomized_tukey_with_two_systems_is_the_randomization_test() -> None:
    x = np.random.default_rng(6).random((2, 10))
    exact = randomization_test(x[0], x[1], exact=True).p_value
    ours = randomized_tukey(x, n_permutations=100_000, rng=1).p_value[0, 1]
    assert abs(ours - exact) <= 4 * np.sqrt(exact * (1 - exact) / 100_000) + 2e-5


def test_randomized_tukey_layers_and_identity() -> None:
    x = np.stack([_scores(7, 3, 20), _scores(8, 3, 20)])  # two measures share permutations
    both = randomized_tukey(x, n_permutations=3000, rng=2)
    first = randomized_tukey(x[0], n_permutations=3000, rng=2)
    np.testing.assert_array_equal(both.p_value[0], first.p_value)
    assert both.p_value.shape == (2, 3, 3)
    same = randomized_tukey(np.tile([0.1, 0.5, 0.3, 0.2], (3, 1)), rng=0)
    np.testing.assert_array_equal(same.p_value, np.ones((3, 3)))
    rows = first.to_dicts(["a", "b", "c"])
    assert [(r["system"], r["vs"]) for r in rows] == [("a", "b"), ("a", "c"), ("b", "c")]


def test_too_few_systems_or_queries() -> None:
    with pytest.raises(StatsError, match="at least 2 systems; got 1"):
        tukey_hsd([[0.1, 0.2, 0.3]])
    with pytest.raises(StatsError, match="at least 2 queries; got 1"):
        randomized_tukey([[0.1], [0.2]])
