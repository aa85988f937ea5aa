"""The interaction test in stats/ (registered as GROUP_TESTS["interaction"]) against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from serpeval.stats.registry import GROUP_TESTS


def test_disjoint_groups_give_scipy_f_oneway() -> None:
    rng = np.random.default_rng(4)
    deltas = np.concatenate([rng.normal(0.0, 0.1, 12), rng.normal(0.05, 0.1, 7), rng.normal(0.2, 0.1, 9)])
    group = np.repeat([0, 1, 2], [12, 7, 9])
    membership = group[:, None] == np.arange(3)[None, :]
    f, p_perm, p_anova, used = GROUP_TESTS["interaction"].function(deltas, membership, n_permutations=999, rng=0)
    expected = sps.f_oneway(deltas[group == 0], deltas[group == 1], deltas[group == 2])
    assert f == pytest.approx(expected.statistic, rel=1e-10)
    assert p_anova == pytest.approx(expected.pvalue, rel=1e-8)
    assert used == 999
    # The permutation p-value is (1 + b) / 1000 with b the shuffles reaching F: a multiple of 1/1000.
    assert round(p_perm * 1000) == pytest.approx(p_perm * 1000, abs=1e-9)


def test_overlapping_groups_have_no_parametric_p() -> None:
    deltas = np.array([0.1, -0.2, 0.3, 0.0, 0.25, -0.05])
    membership = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [0, 1]], dtype=bool)
    f, _p, p_anova, _ = GROUP_TESTS["interaction"].function(deltas, membership, n_permutations=99, rng=0)
    # Memberships as observations: group A = .1, -.2, .3 (mean 1/15), B = .3, 0, .25, -.05 (mean .125).
    a, b = np.array([0.1, -0.2, 0.3]), np.array([0.3, 0.0, 0.25, -0.05])
    assert f == pytest.approx(sps.f_oneway(a, b).statistic, rel=1e-10)
    assert np.isnan(p_anova)


def test_comparison_uses_the_stats_function() -> None:
    from serpeval.comparison import segments
    from serpeval.stats import interaction

    assert segments.interaction_test is interaction.interaction_test is GROUP_TESTS["interaction"].function
