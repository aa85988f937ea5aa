"""The interleaving statistics moved to stats/one_sample.py (issue 28 item 1): each checked
against scipy or statsmodels, and reached through the registry (ONE_SAMPLE, POWER)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from serpeval.stats import one_sample, power, registry
from serpeval.stats.one_sample import (
    cluster_bootstrap_ratio,
    normal_power,
    sign_test,
    t_test_from_sums,
    zero_mean_test,
)


@pytest.mark.parametrize(("successes", "trials"), [(1, 6), (0, 1), (7, 7), (13, 40), (520, 1000), (3, 4)])
def test_the_sign_test_is_scipys_binomtest(successes: int, trials: int) -> None:
    assert sign_test(successes, trials) == pytest.approx(sps.binomtest(successes, trials, 0.5).pvalue, rel=1e-12)


def test_no_trials_is_no_evidence() -> None:
    assert sign_test(0, 0) == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_t_test_from_sums_is_scipys_ttest_1samp(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (2, 3, 17, 400):
        x = rng.normal(0.1, 1.3, size=n)
        got = t_test_from_sums(float(x.sum()), float((x ** 2).sum()), n)
        assert got == pytest.approx(sps.ttest_1samp(x, 0.0).pvalue, rel=1e-9)


def test_the_t_test_edge_cases() -> None:
    assert t_test_from_sums(0.7, 0.49, 1) == 1.0          # one value: no variance to test with
    assert t_test_from_sums(0.0, 0.0, 5) == 1.0           # all zero: mean 0, nothing against it
    assert t_test_from_sums(2.5, 1.25, 5) == 0.0          # all 0.5: zero variance, a non-zero mean


def test_zero_mean_test_takes_the_sign_test_for_signs_and_the_t_test_otherwise() -> None:
    signs = np.array([1.0, 1, 1, -1, 0, 0, 1, 1])         # 5 positive, 1 negative, 2 zeros dropped
    p, name = zero_mean_test(signs)
    assert name == "sign test"
    assert p == pytest.approx(sps.binomtest(5, 6, 0.5).pvalue, rel=1e-12)
    real = np.array([0.5, -0.25, 0.75, 0.1, 0.3, -0.6])
    p, name = zero_mean_test(real)
    assert name == "t-test"
    assert p == pytest.approx(sps.ttest_1samp(real, 0.0).pvalue, rel=1e-9)


def _delta_method_se(num: np.ndarray, den: np.ndarray) -> float:
    """Cluster-robust (delta-method) standard error of Σnum / Σden over m clusters."""
    m = len(den)
    ratio = num.sum() / den.sum()
    resid = num - ratio * den
    return float(np.sqrt(m * (resid ** 2).sum() / (m - 1)) / den.sum() * np.sqrt((m - 1) / m))


@pytest.mark.parametrize("ratio", [8, 10**9])   # draws by pattern / by cluster index
def test_the_cluster_bootstrap_spread_is_the_delta_method_standard_error(
        monkeypatch: pytest.MonkeyPatch, ratio: int) -> None:
    monkeypatch.setattr(one_sample, "PATTERN_RATIO", ratio)
    rng = np.random.default_rng(5)
    den = rng.integers(1, 6, size=2000)                         # impressions per user
    num = rng.binomial(den * 2, 0.55)                           # integer scores per user
    draws = cluster_bootstrap_ratio(num, den, 4000, np.random.default_rng(0))
    assert draws.shape == (4000,)
    assert draws.mean() == pytest.approx(num.sum() / den.sum(), abs=3 * _delta_method_se(num, den) / 60)
    assert draws.std(ddof=1) == pytest.approx(_delta_method_se(num, den), rel=0.06)


def test_the_cluster_bootstrap_by_index_is_the_textbook_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index draws: each resample is m clusters drawn uniformly, the ratio of their sums."""
    monkeypatch.setattr(one_sample, "PATTERN_RATIO", 10**9)
    num = np.array([3, 0, 5, 2, 2, 7, 1])
    den = np.array([2, 1, 4, 2, 1, 5, 3])
    got = cluster_bootstrap_ratio(num, den, 50, np.random.default_rng(3))
    drawn = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    expected = [sum(num[i] for i in row) / sum(den[i] for i in row) for row in drawn]
    assert got.tolist() == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("mean", "sd", "n"), [(0.05, 1.0, 400), (0.2, 0.9, 100), (-0.1, 0.5, 60)])
def test_normal_power_is_statsmodels_one_sample_normal_power(mean: float, sd: float, n: int) -> None:
    smp = pytest.importorskip("statsmodels.stats.power")
    got_power, got_needed = normal_power(np.array([mean]), np.array([sd]), n, alpha=0.05, target_power=0.8)
    # statsmodels' NormalIndPower with ratio=0 is the one-sample z-test
    ref = smp.NormalIndPower().power(abs(mean) / sd, nobs1=n, alpha=0.05, ratio=0, alternative="two-sided")
    assert float(got_power[0]) == pytest.approx(ref, rel=1e-9)
    # the closed form leaves out the far tail (below 1e-3 of the power here)
    needed = smp.NormalIndPower().solve_power(abs(mean) / sd, alpha=0.05, power=0.8, ratio=0)
    assert float(got_needed[0]) == pytest.approx(needed, rel=1e-3)


def test_normal_power_edge_cases() -> None:
    got_power, got_needed = normal_power(np.array([0.0, 0.3, 0.0]), np.array([1.0, 0.0, 0.0]), 10,
                                         alpha=0.05, target_power=0.8)
    assert got_power[0] == pytest.approx(0.05)     # no effect: the test's own level
    assert got_power[1] == 1.0                     # no spread, an effect: always found
    assert np.isinf(got_needed[0])
    assert np.isinf(got_needed[2])


def test_each_moved_statistic_is_one_registry_line() -> None:
    assert registry.ONE_SAMPLE["sign"].function is one_sample.sign_test
    assert registry.ONE_SAMPLE["t"].function is one_sample.t_test_from_sums
    assert registry.ONE_SAMPLE["cluster_bootstrap"].function is one_sample.cluster_bootstrap_ratio
    assert registry.POWER["one_sample_power"].function is one_sample.normal_power
    assert registry.POWER["sign_test_sample_size"].function is power.sign_test_sample_size
    assert registry.POWER["power"].function is power.power
    for table in (registry.ONE_SAMPLE, registry.POWER):
        spellings = [s.lower() for spec in table.values() for s in (spec.name, *spec.aliases)]
        assert len(spellings) == len(set(spellings))
        for name, spec in table.items():
            assert spec.name == name
            assert spec.label
            assert spec.description
            assert callable(spec.function)
            assert all(registry.canonical(table, s.upper(), "statistic") == name
                       for s in (spec.name, *spec.aliases))


def test_the_sign_test_through_the_registry_is_binomtest() -> None:
    assert registry.ONE_SAMPLE["sign"].function(13, 40) == pytest.approx(sps.binomtest(13, 40).pvalue, rel=1e-12)
