"""A/A check (fast version): a run against itself plus small noise rejects at about alpha.

Two noisy copies of the same per-query scores are exchangeable, so the null hypothesis is
true and a correct level-0.05 test rejects in 5% of the simulations. 3,000 simulations run
as one vectorized call per test (the tests take ``[n_simulations, n_queries]``). The full
version, which perturbs document scores and re-evaluates real runs, is
``bench/aa_check.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.cli.demo.collection import make_collection
from serpeval.evaluation.evaluate import evaluate
from serpeval.stats import paired_bootstrap, paired_t, randomization_test, wilcoxon

ALPHA = 0.05
SIMULATIONS = 3000


@pytest.fixture(scope="module")
def null_differences() -> np.ndarray:
    collection = make_collection(n_queries=120)
    values = evaluate(collection.qrels, collection.runs, ["nDCG@10"])["baseline"].column(0)
    noise = np.random.default_rng(2024).normal(0.0, 0.05, (2, SIMULATIONS, len(values)))
    a = np.clip(values + noise[0], 0.0, 1.0)
    b = np.clip(values + noise[1], 0.0, 1.0)
    return a - b


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap"])
def test_rejection_rate_is_nominal(null_differences: np.ndarray, test: str) -> None:
    if test == "t":
        p = paired_t(null_differences).p_value
    elif test == "wilcoxon":
        p = wilcoxon(null_differences).p_value
    elif test == "randomization":
        p = randomization_test(null_differences, n_permutations=1000, rng=1).p_value
    else:
        p = paired_bootstrap(null_differences, n_resamples=1000, rng=1).p_value
    rate = float(np.mean(p <= ALPHA))
    # Binomial sd of the rate is sqrt(.05 * .95 / 3000) = 0.004; allow 3.5 sd.
    assert abs(rate - ALPHA) <= 3.5 * np.sqrt(ALPHA * (1 - ALPHA) / SIMULATIONS), rate
    # p-values under the null are roughly uniform: about half fall below 0.5.
    assert 0.45 <= float(np.mean(p <= 0.5)) <= 0.55
