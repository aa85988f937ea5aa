"""The marginalised preference of probabilistic interleaving: its convolution, run in Python
floats for speed, gives the bits of the NumPy formula it replaced (``np.roll``)."""

from __future__ import annotations

import numpy as np

from serpeval.online.interleaving.probabilistic import _sign_expectation


def _by_roll(plus: np.ndarray, minus: np.ndarray) -> float:
    """The formula as NumPy arrays: ``dist (1 - p - q) + roll(dist, 1) p + roll(dist, -1) q``."""
    m = len(plus)
    dist = np.zeros(2 * m + 1)
    dist[m] = 1.0
    for p, q in zip(plus.tolist(), minus.tolist(), strict=True):
        dist = dist * (1.0 - p - q) + np.roll(dist, 1) * p + np.roll(dist, -1) * q
    return float(dist[m + 1:].sum() - dist[:m].sum())


def test_the_convolution_is_the_roll_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for _ in range(2_000):
        m = int(rng.integers(0, 11))
        q = rng.dirichlet(np.ones(int(rng.integers(2, 5))), size=m) if m else np.zeros((0, 2))
        if m and rng.random() < 0.2:
            q = q.round(2)  # sums of exactly 1 and exact ties
        if m and rng.random() < 0.1:
            q[:, 1] = q[:, 0]  # identical rankers
        got, want = _sign_expectation(q[:, 0], q[:, 1]), _by_roll(q[:, 0], q[:, 1])
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (q, got, want)
