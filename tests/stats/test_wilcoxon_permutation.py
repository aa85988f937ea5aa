"""serpeval's Wilcoxon where scipy's ``method="auto"`` runs a permutation test (ties or zeros,
at most 13 differences): serpeval runs scipy's permutation_test itself with W+ vectorized over
the sign flips (scipy's own calls W+ once per flip), and must give scipy's statistic and
p-value bit for bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from serpeval.stats import wilcoxon
from serpeval.stats.paired import ZERO_METHODS, _auto_permutes
from serpeval.stats.validation import ALTERNATIVES


def _rows(rng: np.random.Generator, n: int) -> np.ndarray:
    """Ties only; zeros only; ties and zeros; a zero among distinct values; negatives tied with positives."""
    tied = np.round(rng.normal(0, 1, n), 0)
    tied[tied == 0] = 1.0
    tied[:2] = [2.0, 2.0]
    zeros = np.arange(1, n + 1) * rng.choice([-1.0, 1.0], n)
    zeros[::3] = 0.0
    both = tied.copy()
    both[1::3] = 0.0
    one_zero = np.arange(1, n + 1) * 0.5 * rng.choice([-1.0, 1.0], n)
    one_zero[-1] = 0.0
    mirrored = np.resize([1.5, -1.5, 0.5], n)
    return np.stack([tied, zeros, both, one_zero, mirrored])


@pytest.mark.parametrize("n", [3, 6, 14])  # 14: one past where scipy permutes (13 alone: ~35 s of scipy)
def test_permutation_rows_equal_scipy_alone_bit_for_bit(n: int) -> None:
    rows = _rows(np.random.default_rng(n), n)
    for alternative, zero_method in itertools.product(ALTERNATIVES, ZERO_METHODS):
        together = wilcoxon(rows, alternative=alternative, zero_method=zero_method)
        for i, row in enumerate(rows):
            alone = stats.wilcoxon(row, alternative=alternative, zero_method=zero_method)
            assert together.p_value[i] == alone.pvalue, (alternative, zero_method, i)
            assert together.statistic[i] == alone.statistic, (alternative, zero_method, i)


def test_scipy_from_1_15_permutes_small_tied_samples() -> None:
    """The guard of the fast path: it is taken exactly where scipy's "auto" is the permutation
    test (its p-value on 4 tied differences is that of enumerating the 16 sign flips; before
    scipy 1.15, the normal approximation's, which differs), so a guard that is wrong either
    way fails here rather than skipping."""
    d = np.array([1.0, 1.0, 2.0, -3.0])
    try:
        exact = stats.wilcoxon(d, method=stats.PermutationMethod()).pvalue
    except (AttributeError, ValueError, TypeError):
        pytest.skip("this scipy's wilcoxon has no permutation method to compare with")
    assert _auto_permutes() == (stats.wilcoxon(d).pvalue == exact)
