"""The agreement coefficients in stats/ (arrays in, numbers out), reached through the registry,
against statsmodels, scikit-learn, scipy and krippendorff's own reference data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from serpeval.stats.registry import AGREEMENT


def _labels(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two assessors' grades 0..3 of 200 documents, the second agreeing 60% of the time."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, 200))
    return a, b


def _confusion(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.zeros((4, 4))
    np.add.at(c, (a, b), 1)
    return c


@pytest.mark.parametrize("seed", [1, 2])
def test_confusion_coefficients_match_sklearn(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed (optional oracle)")
    a, b = _labels(seed)
    confusion = _confusion(a, b)
    expected = {"observed": float(np.mean(a == b)),
                "kappa": metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3]),
                "kappa_linear": metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear"),
                "kappa_quadratic": metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic")}
    checked = []
    for name, spec in AGREEMENT.items():
        if spec.data == "confusion":
            weighted = (spec.weights,) if spec.weights else ()
            assert float(spec.function(confusion, *weighted)) == pytest.approx(expected[name], abs=1e-12)
            # vectorized over a leading axis: the same value for each of a stack of two
            stacked = spec.function(np.stack([confusion, confusion]), *weighted)
            np.testing.assert_allclose(stacked, [expected[name]] * 2, atol=1e-12)
            checked.append(name)
    assert checked == ["observed", "kappa", "kappa_linear", "kappa_quadratic"]


def test_fleiss_matches_statsmodels() -> None:
    from statsmodels.stats.inter_rater import fleiss_kappa

    rng = np.random.default_rng(7)
    truth = rng.integers(0, 3, 60)
    raters = np.stack([np.where(rng.random(60) < 0.7, truth, rng.integers(0, 3, 60)) for _ in range(4)])
    counts = np.stack([np.bincount(raters[:, i], minlength=3) for i in range(60)])
    assert AGREEMENT["fleiss"].function(counts) == pytest.approx(fleiss_kappa(counts), abs=1e-12)


def test_alpha_both_ways_match_krippendorff() -> None:
    import krippendorff

    from serpeval.stats.agreement import alpha_from_coincidences, weights_coincidence

    a, b = _labels(3)
    counts = np.zeros((200, 4), dtype=np.int64)
    np.add.at(counts, (np.arange(200), a), 1)
    np.add.at(counts, (np.arange(200), b), 1)
    expected = krippendorff.alpha(reliability_data=np.stack([a, b]).astype(float),
                                  level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    assert AGREEMENT["alpha"].function(counts) == pytest.approx(expected, abs=1e-12)
    coincidence = weights_coincidence(_confusion(a, b))
    assert float(alpha_from_coincidences(coincidence)) == pytest.approx(expected, abs=1e-12)


def test_tau_b_matches_scipy_with_ties_and_tau_ap_by_hand() -> None:
    x = np.array([0.31, 0.25, 0.25, 0.40, 0.12])
    y = np.array([0.30, 0.28, 0.20, 0.41, 0.12])
    assert AGREEMENT["tau"].function(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
    # tau_AP of y's ordering against x: y orders s3 (.41), s0, s1, s2, s4. Positions 2..5:
    # s0 below s3: x agrees (0.40 > 0.31): C = 1 of 1. s1: above it s3, s0, both higher in x: 2/2.
    # s2: above it s3, s0 (higher in x) and s1 (tied with s2 in x: left out): 2/2.
    # s4: all 4 above are higher in x: 4/4. tau_AP = 2/4 * (1 + 1 + 1 + 1) - 1 = 1.
    assert AGREEMENT["tau_ap"].function(x, y) == pytest.approx(1.0)
    # Reversing y's order gives every C(i) = 0 but the tie: tau_AP = 2/4 * 0 - 1 = -1.
    assert AGREEMENT["tau_ap"].function(x, -y) == pytest.approx(-1.0)


def test_judgments_reexports_the_same_functions() -> None:
    from serpeval.judgments import agreement as workflow
    from serpeval.stats import agreement as coefficients

    for name in ("cohen_kappa", "fleiss_kappa", "kendall_tau", "tau_ap", "tie_classes", "alpha_from_coincidences"):
        assert getattr(workflow, name) is getattr(coefficients, name)
