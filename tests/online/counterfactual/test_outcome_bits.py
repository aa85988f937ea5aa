"""The batched marginalised outcome (the interleaved estimator's credit) runs its convolution
on the clicked impressions only, the rolls as shifted slices: the bits of the NumPy formula
it replaced (``np.roll`` over every impression, ``np.where`` by click)."""

from __future__ import annotations

import numpy as np

from serpeval.online.counterfactual.estimators import marginalised_outcome


def _by_roll(slots: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    total = slots.sum(axis=2, keepdims=True)
    q = np.divide(slots, total, out=np.zeros_like(slots), where=total > 0)
    n, k, _ = slots.shape

    def one_way(plus: np.ndarray, minus: np.ndarray) -> np.ndarray:
        dist = np.zeros((n, 2 * k + 1))
        dist[:, k] = 1.0
        for j in range(k):
            p, m = plus[:, j][:, None], minus[:, j][:, None]
            step = dist * (1.0 - p - m) + np.roll(dist, 1, axis=1) * p + np.roll(dist, -1, axis=1) * m
            dist = np.where(clicks[:, j][:, None], step, dist)
        return np.asarray(dist[:, k + 1:].sum(axis=1) - dist[:, :k].sum(axis=1))

    e = (one_way(q[:, :, 0], q[:, :, 1]) - one_way(q[:, :, 1], q[:, :, 0])) / 2.0
    return np.where(np.abs(e) > 1e-12, np.round(e, 12), 0.0)


def test_the_outcome_is_the_roll_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(9)
    for _ in range(60):
        n, k = int(rng.integers(1, 400)), int(rng.integers(1, 11))
        slots = rng.random((n, k, 2)) ** 2
        slots[rng.random(slots.shape) < 0.05] = 0.0
        if rng.random() < 0.3:
            slots = slots.round(2)  # exact ties
        if rng.random() < 0.2:
            slots[:, :, 1] = slots[:, :, 0]  # identical rankers
        clicks = rng.random((n, k)) < rng.random()
        assert marginalised_outcome(slots, clicks).tobytes() == _by_roll(slots, clicks).tobytes()
