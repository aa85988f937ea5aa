"""stats/importance.py against statsmodels' cluster-robust OLS and hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.stats.importance import (
    cluster_bootstrap_ci,
    cluster_mean_ci,
    cluster_ratio_ci,
    effective_sample_size,
)


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 60, 500)
    x = rng.exponential(1.0, 500) + 0.3 * (clusters % 5)
    y = rng.exponential(1.0, 500) + 0.1
    return x, y, clusters


def test_cluster_mean_matches_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.api")
    x, _, clusters = _data()
    fit = sm.OLS(x, np.ones((len(x), 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    r = cluster_mean_ci(x, clusters, 0.9)
    assert r.estimate == pytest.approx(float(fit.params[0]), rel=1e-12)
    assert r.se == pytest.approx(float(fit.bse[0]), rel=1e-10)
    low, high = fit.conf_int(alpha=0.1)[0]
    # statsmodels uses the t distribution with G - 1 df for clusters: compare the half-width via se
    assert r.high - r.low == pytest.approx(2 * 1.6448536269514722 * r.se, rel=1e-9)
    assert low < r.estimate < high


def test_cluster_ratio_delta_method_by_hand() -> None:
    x, y, clusters = _data(1)
    ratio = x.sum() / y.sum()
    groups = np.unique(clusters)
    resid = np.array([x[clusters == g].sum() - ratio * y[clusters == g].sum() for g in groups])
    se = np.sqrt(len(groups) / (len(groups) - 1) * (resid ** 2).sum()) / y.sum()
    r = cluster_ratio_ci(x, y, clusters)
    assert r.estimate == pytest.approx(ratio, rel=1e-12)
    assert r.se == pytest.approx(se, rel=1e-10)


def test_bootstrap_is_seeded_and_close_to_the_sandwich() -> None:
    x, y, clusters = _data(2)
    a = cluster_bootstrap_ci(x, y, clusters, n_resamples=4000, rng=1)
    b = cluster_bootstrap_ci(x, y, clusters, n_resamples=4000, rng=1)
    assert a == b
    assert a.se == pytest.approx(cluster_ratio_ci(x, y, clusters).se, rel=0.1)
    m = cluster_bootstrap_ci(x, None, clusters, n_resamples=4000, rng=1)
    assert m.estimate == pytest.approx(x.mean())
    assert m.low < x.mean() < m.high


def test_effective_sample_size_and_edges() -> None:
    assert effective_sample_size([2.0, 2.0, 2.0]) == pytest.approx(3.0)
    assert effective_sample_size([0.0, 0.0]) == 0.0
    assert effective_sample_size([3.0, 1.0]) == pytest.approx(16 / 10)
    one = cluster_mean_ci([1.0, 2.0], [0, 0])
    assert one.estimate == 1.5
    assert np.isnan(one.se)
    assert np.isnan(cluster_ratio_ci([1.0], [0.0], [0]).estimate)
    assert np.isnan(cluster_mean_ci([], []).estimate)
    with pytest.raises(ValueError, match="one entry per observation"):
        cluster_mean_ci([1.0, 2.0], [0])
