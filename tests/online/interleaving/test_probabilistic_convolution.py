"""Probabilistic interleaving's fast paths give the bits of the NumPy formulas they replaced:
the marginalised preference's convolution, run in Python floats (``np.roll``), and the
position marginals' programme over placed sets (each set's weight built from the set below
it, the mean over rankers a ranker at a time)."""

from __future__ import annotations

import numpy as np

from serpeval.online.interleaving.probabilistic import _mean_over_rankers, _sign_expectation, position_marginals


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


def _marginals_by_masks(weights: np.ndarray, k: int) -> np.ndarray:
    """The programme as it was: every set's weight by a boolean mask per document, the mean
    over rankers of an ``[L, N, r]`` array."""
    live = np.flatnonzero((weights > 0).any(axis=0))
    w = weights[:, live]
    out = np.zeros((weights.shape[1], k))
    depth = min(k, len(live))
    if depth == 0:
        return out
    full = 1 << len(live)
    masks = np.arange(full, dtype=np.int64)
    placed = np.zeros((w.shape[0], full))
    popcount = np.zeros(full, dtype=np.int64)
    for d in range(len(live)):
        bit = ((masks >> d) & 1).astype(bool)
        placed[:, bit] += w[:, d:d + 1]
        popcount += bit
    totals = w.sum(axis=1)
    prob = np.zeros(full)
    prob[0] = 1.0
    bits = np.left_shift(1, np.arange(len(live), dtype=np.int64))
    for j in range(depth):
        level = masks[popcount == j]
        level = level[prob[level] > 0]
        remaining = totals[None, :] - placed[:, level].T
        free = (level[:, None] & bits[None, :]) == 0
        p = (w.T[None, :, :] / np.maximum(remaining[:, None, :], 1e-300)).mean(axis=2) * free
        flow = prob[level][:, None] * p
        out[live, j] = flow.sum(axis=0)
        if j + 1 < depth:
            nxt = (level[:, None] | bits[None, :])[free]
            prob += np.bincount(nxt, weights=flow[free], minlength=full)
    return out


def test_position_marginals_are_the_mask_programme_bit_for_bit() -> None:
    rng = np.random.default_rng(8)
    for _ in range(150):
        rankers, docs, k = int(rng.integers(2, 10)), int(rng.integers(1, 11)), int(rng.integers(1, 11))
        weights = rng.random((rankers, docs)) ** 3 * 10.0 ** int(rng.integers(-5, 5))
        weights[rng.random(weights.shape) < 0.2] = 0.0  # documents some rankers lack, or none has
        got, want = position_marginals(weights, k), _marginals_by_masks(weights, k)
        assert got.tobytes() == want.tobytes(), (weights, k)


def test_the_mean_over_rankers_is_numpys_bit_for_bit() -> None:
    """The mean over the rankers (list_probabilities' per impression, position_marginals' per set
    and document), a ranker at a time below 8 and stacked from 8 on."""
    rng = np.random.default_rng(10)
    for rankers in range(1, 10):
        p = rng.random((2_001, rankers)) * 10.0 ** rng.integers(-300, 300, size=(2_001, rankers))
        p[rng.random(p.shape) < 0.1] = 0.0
        got = _mean_over_rankers((p[:, s] for s in range(rankers)), rankers)
        assert got.tobytes() == p.mean(axis=1).tobytes(), rankers
