"""Holm, Bonferroni and Benjamini-Hochberg against statsmodels.stats.multitest.multipletests."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from serpeval.core.errors import OptionError, StatsError
from serpeval.stats import adjust, benjamini_hochberg, bonferroni, holm
from serpeval.stats.multiplicity import canonical_correction

METHODS = [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]


@pytest.mark.parametrize(("ours", "theirs"), METHODS)
@pytest.mark.parametrize("m", [1, 2, 3, 9, 45, 200])
def test_equal_to_statsmodels(ours: str, theirs: str, m: int) -> None:
    rng = np.random.default_rng(m)
    p = rng.random(m) ** 3
    p[: m // 4] = p[0]           # ties
    p[-1:] = 1.0 if m > 2 else p[-1:]
    reject, corrected, _, _ = multipletests(p, alpha=0.05, method=theirs)
    adjusted = adjust(p, ours)
    np.testing.assert_allclose(adjusted, corrected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(adjusted <= 0.05, reject)


def test_rows_are_separate_families() -> None:
    rng = np.random.default_rng(1)
    p = rng.random((4, 7)) ** 2
    for method, name in METHODS:
        expected = np.stack([multipletests(row, method=name)[1] for row in p])
        np.testing.assert_allclose(adjust(p, method), expected, rtol=1e-12)


def test_hand_worked() -> None:
    # sorted .01 .03 .04; Holm: 3*.01 = .03, 2*.03 = .06, max(.06, 1*.04) = .06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    # BH: 3/1*.01 = .03; 3/2*.03 = .045 -> min(.045, .04) = .04; 3/3*.04 = .04
    np.testing.assert_allclose(benjamini_hochberg([0.01, 0.04, 0.03]), [0.03, 0.04, 0.04])
    np.testing.assert_allclose(bonferroni([0.01, 0.5]), [0.02, 1.0])


def test_names_and_errors() -> None:
    assert canonical_correction("fdr_bh") == "bh"
    assert canonical_correction(None) == "none"
    assert canonical_correction("Tukey", extra=("tukey",)) == "tukey"
    with pytest.raises(OptionError, match="unknown correction 'sidak'; choose one of: holm"):
        adjust([0.1], "sidak")
    with pytest.raises(StatsError, match=r"must lie in \[0, 1\]"):
        holm([0.1, 1.5])
