"""Exact propensities of probabilistic interleaving and A/B designs (issue 32).

Checked against an independent enumeration of every drafting path (a plain Python recursion
written from Hofmann et al. 2011's description), against the serving-time sampler's
frequencies, and against hand-worked two-document cases.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving import interleave
from serpeval.online.interleaving.probabilistic import (
    MAX_MARGINAL_DOCS,
    ab_propensities,
    interleave_batch,
    list_probabilities,
    position_marginals,
    propensities,
    softmax_weights,
)


def _naive_distribution(rankings: list[list[str]], k: int, tau: float = 3.0) -> dict[tuple[str, ...], float]:
    """P(list) of every list of length k by recursion over slots (independent reference)."""
    union = list(dict.fromkeys(d for r in rankings for d in r))
    weight = [{d: (r.index(d) + 1 if d in r else len(r) + 1) ** -tau for d in union} for r in rankings]
    out: dict[tuple[str, ...], float] = {}

    def go(prefix: tuple[str, ...], p: float) -> None:
        if len(prefix) == k:
            out[prefix] = out.get(prefix, 0.0) + p
            return
        for d in union:
            if d in prefix:
                continue
            q = 0.0
            for w in weight:
                q += w[d] / sum(w[e] for e in union if e not in prefix) / len(rankings)
            go((*prefix, d), p * q)

    go((), 1.0)
    return out


RANKINGS = [["a", "b", "c", "d"], ["c", "e", "a", "b"]]


def test_list_prefix_and_positions_match_enumeration() -> None:
    dist = _naive_distribution(RANKINGS, 3)
    assert sum(dist.values()) == pytest.approx(1.0)
    for shown, p in list(dist.items())[:40]:
        prop = propensities(RANKINGS, list(shown))
        assert prop.list_probability == pytest.approx(p, rel=1e-12)
        for j in range(3):  # prefix: the sum over lists that share it
            assert prop.prefix[j] == pytest.approx(
                sum(q for lst, q in dist.items() if lst[:j + 1] == shown[:j + 1]), rel=1e-12)
        assert prop.positions is not None
        for j in range(3):  # marginal: the sum over lists with that doc at j
            assert prop.positions[j] == pytest.approx(
                sum(q for lst, q in dist.items() if lst[j] == shown[j]), rel=1e-12)


def test_position_marginals_columns_sum_to_one_and_match_enumeration() -> None:
    union = ["a", "b", "c", "d", "e"]
    codes = [np.array([[union.index(d) for d in r]]) for r in RANKINGS]
    w = softmax_weights(codes, len(union))
    m = position_marginals(w[0], 4)
    np.testing.assert_allclose(m.sum(axis=0), 1.0, rtol=1e-12)
    dist = _naive_distribution(RANKINGS, 4)
    for d, j in itertools.product(range(5), range(4)):
        ref = sum(p for lst, p in dist.items() if lst[j] == union[d])
        assert m[d, j] == pytest.approx(ref, abs=1e-14)


def test_slots_equal_the_serving_interleavings_probabilities() -> None:
    for seed in range(20):
        shown = interleave(RANKINGS, method="probabilistic", k=4, rng=seed)
        prop = propensities(RANKINGS, list(shown.docs))
        assert shown.probabilities is not None
        np.testing.assert_allclose(prop.slots, shown.probabilities, rtol=1e-12)


def test_sampler_frequencies_agree_with_exact_list_probabilities() -> None:
    union = ["a", "b", "c", "d", "e"]
    codes = [np.repeat(np.array([[union.index(d) for d in r]]), 40_000, axis=0) for r in RANKINGS]
    w = softmax_weights(codes, len(union))
    docs, teams = interleave_batch(w, 2, rng=3)
    assert set(np.unique(teams)) == {0, 1}
    dist = _naive_distribution(RANKINGS, 2)
    keys, counts = np.unique(docs, axis=0, return_counts=True)
    for key, count in zip(keys, counts, strict=True):
        p = dist[tuple(union[c] for c in key)]
        se = np.sqrt(p * (1 - p) / 40_000)
        assert abs(count / 40_000 - p) < 5 * se + 1e-4
    # batch list probabilities of the sampled lists equal the naive ones
    _, prefix = list_probabilities(w[:50], docs[:50])
    for row in range(50):
        assert prefix[row, -1] == pytest.approx(dist[tuple(union[c] for c in docs[row])], rel=1e-12)


def test_hand_worked_two_documents() -> None:
    # tau = 3: A = (a, b) gives a 1 and b 1/8, so P_A(a) = 8/9; B = (b, a) gives P_B(a) = 1/9.
    p = propensities([["a", "b"], ["b", "a"]], ["b", "a"])
    assert p.slots is not None
    assert p.slots[0] == pytest.approx((1 / 9, 8 / 9))
    assert p.list_probability == pytest.approx(0.5)
    # a document missing from one ranking gets rank len + 1 there: A = (a), B = (b)
    p = propensities([["a"], ["b"]], ["a"])
    # A = (a) gives b rank 2 (weight 1/8): P_A(a) = 8/9; B = (b): P_B(a) = 1/9; mean 1/2.
    assert p.list_probability == pytest.approx(0.5)
    p = propensities([["a", "x"], ["b"]], ["a"])
    # A: a 1, x 1/8, b (rank 3) 1/27 -> P_A(a) = 1/(1 + 1/8 + 1/27); B: b 1, a and x rank 2: 1/8 each
    assert p.list_probability == pytest.approx((1 / (1 + 1 / 8 + 1 / 27) + (1 / 8) / (1 + 1 / 4)) / 2)


def test_ab_propensities() -> None:
    control, treatment = ["a", "b", "c"], ["a", "c", "b"]
    p = ab_propensities([control, treatment], [0.5, 0.5], ["a", "c", "b"])
    assert p.list_probability == 0.5
    assert p.prefix == (1.0, 0.5, 0.5)
    assert p.positions == (1.0, 0.5, 0.5)
    assert ab_propensities([control, treatment], [0.3, 0.7], ["a", "b", "d"]).list_probability == 0.0
    with pytest.raises(OptionError, match="sum to 1"):
        ab_propensities([control, treatment], [0.5, 0.6], control)


def test_bad_input() -> None:
    with pytest.raises(InputError, match="in none of the interleaved rankings"):
        propensities(RANKINGS, ["zz"])
    with pytest.raises(InputError, match="twice"):
        propensities(RANKINGS, ["a", "a"])
    big = [[f"a{i}" for i in range(11)], [f"b{i}" for i in range(11)]]
    assert propensities(big, ["a0"]).positions is None  # 22 documents: no exact marginals
    with pytest.raises(OptionError, match=f"at most {MAX_MARGINAL_DOCS}"):
        position_marginals(np.ones((2, 22)), 3)
    with pytest.raises(OptionError, match="tau"):
        softmax_weights([np.array([[0]])], 1, tau=0)


def test_pairwise_marginals_match_enumeration() -> None:
    from serpeval.online.interleaving.probabilistic import MAX_PAIRWISE_DOCS, pairwise_marginals

    union = ["a", "b", "c", "d", "e"]
    codes = [np.array([[union.index(d) for d in r]]) for r in RANKINGS]
    g = pairwise_marginals(softmax_weights(codes, len(union))[0], 3)
    dist = _naive_distribution(RANKINGS, 3)
    ref = np.zeros_like(g)
    for lst, p in dist.items():
        for j, m in itertools.product(range(3), range(3)):
            ref[j, union.index(lst[j]), m, union.index(lst[m])] += p
    np.testing.assert_allclose(g, ref, atol=1e-14)
    with pytest.raises(OptionError, match=f"at most {MAX_PAIRWISE_DOCS}"):
        pairwise_marginals(np.ones((2, 16)), 2)
