"""A small seeded version of bench/bench_counterfactual.py: over 100 simulated logs, the
intervals cover the simulator's exact truth at the nominal rate (binomial tolerance), the
design-based estimators are unbiased within Monte Carlo error, the refusal rule fires for a
candidate outside the logged documents, and the sign of a clear effect is right."""

from __future__ import annotations

import numpy as np
import pytest

from serpeval.online.counterfactual import counterfactual
from serpeval.online.simulation.counterfactual import (
    perturbed,
    simulate_log,
    synthetic_pool,
    true_interleaved,
    true_value,
)

REPS = 100
K = 2
ESTIMATORS = ["interleaved", "snips", "cascade_ips"]


@pytest.fixture(scope="module")
def replications():
    pool = synthetic_pool(20, k=3, pool_size=10, noises={"A": 1.5, "B": 1.0}, rng=21)
    pool = perturbed(pool, "B", "C", swaps=1, rng=22)
    lists = {n: pool.lists(n) for n in ("B", "C")}
    lists["far"] = {q: [f"new-{q}", *docs[:2]] for q, docs in lists["B"].items()}  # a document never shown on top
    out: dict[tuple[str, str], list] = {}
    for rep in range(REPS):
        log = simulate_log(pool, 3000, "navigational", rng=np.random.default_rng([rep, 5]))
        for e in counterfactual(log, lists, k=K, estimators=ESTIMATORS).estimates:
            out.setdefault((e.candidate, e.estimator), []).append(e)
    truth = {n: true_value(pool, n, k=K) for n in ("A", "B", "C")}
    truth_il = {n: true_interleaved(pool, n, "A", n_impressions=300_000, k=K, rng=3)[0] for n in ("B", "C")}
    return out, truth, truth_il


def test_coverage_within_binomial_tolerance(replications) -> None:
    out, truth, truth_il = replications
    for est in ESTIMATORS:
        hits, n = 0, 0
        for cand in ("B", "C"):
            t = truth_il[cand] if est == "interleaved" else truth[cand]
            got = [e for e in out[(cand, est)] if e.refused is None]
            hits += sum(e.low <= t <= e.high for e in got)
            n += len(got)
        assert n >= REPS, (est, n)  # B (a logging ranker) is always answered
        tolerance = 3 * np.sqrt(0.95 * 0.05 / n)
        assert 0.95 - tolerance <= hits / n <= 1.0, (est, hits / n)


def test_unbiased_within_monte_carlo_error(replications) -> None:
    out, truth, truth_il = replications
    checked = 0
    for est in ESTIMATORS:
        for cand in ("B", "C"):
            values = np.array([e.value for e in out[(cand, est)] if e.refused is None])
            if len(values) < REPS // 2:  # mostly refused (C's whole lists are rare): nothing to average
                continue
            checked += 1
            t = truth_il[cand] if est == "interleaved" else truth[cand]
            mc = values.std(ddof=1) / np.sqrt(len(values))
            assert abs(values.mean() - t) < 4 * mc + 2e-3, (cand, est, values.mean(), t)
    assert checked >= 4


def test_refusal_fires_where_support_is_thin(replications) -> None:
    out, _, _ = replications
    for est in ESTIMATORS:
        assert all(e.refused for e in out[("far", est)]), est


def test_sign_of_a_clear_effect(replications) -> None:
    out, _, truth_il = replications
    checked = []
    for cand in ("B", "C"):
        got = [e for e in out[(cand, "interleaved")] if e.refused is None]
        se = np.mean([e.se for e in got])
        if abs(truth_il[cand]) <= 2 * se:  # only where the true effect exceeds 2 SE
            continue
        checked.append(cand)
        assert np.mean([np.sign(e.effect) == np.sign(truth_il[cand]) for e in got]) >= 0.95
    assert checked == ["B"]  # C differs from B by one swap: its effect is within noise
