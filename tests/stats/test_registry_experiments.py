"""The experiment statistics in stats/ (issue 28): two-sample effects, the sample-ratio check
and the sequential test are registered like the paired tests, and reached through the registry
they give scipy's and statsmodels' numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from serpeval.stats import effects, registry, sequential, srm


def test_each_experiment_statistic_is_one_registry_line() -> None:
    assert registry.TWO_SAMPLE["z"].function is effects.compare_means
    assert registry.TWO_SAMPLE["welch"].function is effects.compare_means
    assert registry.TWO_SAMPLE["two_proportion"].function is effects.two_proportion_ztest
    assert registry.TWO_SAMPLE["cuped"].function is effects.cuped
    assert registry.SAMPLE_RATIO["srm"].function is srm.srm_check
    assert registry.SEQUENTIAL["msprt"].function is sequential.always_valid
    for table in (registry.TWO_SAMPLE, registry.SAMPLE_RATIO, registry.SEQUENTIAL):
        for name, spec in table.items():
            assert spec.name == name
            assert spec.label
            assert spec.description
            spellings = [s.lower() for s in (spec.name, *spec.aliases)]
            assert all(registry.canonical(table, s.upper(), "statistic") == name for s in spellings)


def test_welch_through_the_registry_is_scipys() -> None:
    # arms of unequal size and variance: control 0.30 (s^2 0.21, n 1200), treatment 0.33 (s^2 0.24, n 950)
    welch = registry.TWO_SAMPLE["welch"].function
    got = welch(0.30, 0.21, 1200, 0.33, 0.24, 950, use_t=True)
    ref = sps.ttest_ind_from_stats(0.33, np.sqrt(0.24), 950, 0.30, np.sqrt(0.21), 1200, equal_var=False)
    assert float(got.statistic) == pytest.approx(ref.statistic, rel=1e-12)
    assert float(got.p_value) == pytest.approx(ref.pvalue, rel=1e-9)


def test_two_proportions_through_the_registry_are_statsmodels() -> None:
    proportions_ztest = pytest.importorskip("statsmodels.stats.proportion").proportions_ztest
    got = registry.TWO_SAMPLE["two_proportion"].function(120, 1000, 151, 1010)
    z, p = proportions_ztest([151, 120], [1010, 1000])
    assert float(got.statistic) == pytest.approx(z, rel=1e-12)
    assert float(got.p_value) == pytest.approx(p, rel=1e-9)


def test_the_sample_ratio_check_through_the_registry_is_scipys_chisquare() -> None:
    counts = {"control": 5050, "treatment": 4830, "ünïcode arm": 5120}
    got = registry.SAMPLE_RATIO["srm"].function(counts, warn=False)
    ref = sps.chisquare([5050, 4830, 5120])  # equal planned shares: expected 5000 each
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-9)
