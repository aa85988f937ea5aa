"""The estimators against an independent per-impression implementation of the papers' formulas.

obp (Open Bandit Pipeline 0.5.7) would be the natural oracle for standard, independent and
reward-interaction IPS and cascade DR, but it pins torch==1.12, which has no wheel for this
Python, so ``pip install obp`` cannot resolve (checked 2026-12-05). The reference here is
written from the formulas instead (Swaminathan et al. 2017 for the slate IPS family; McInerney
et al. 2020 for the reward-interaction / cascade weights; Kiyohara et al. WSDM 2022, eq. 4,
for cascade DR; Hofmann, Whiteson & de Rijke CIKM 2012 for the interleaved comparison), one
plain Python loop per impression, with logging probabilities from an enumeration of every
drafting path (not from the dynamic programme under test).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from serpeval.online.counterfactual.api import encode_candidate
from serpeval.online.counterfactual.estimators import Context, terms
from serpeval.online.counterfactual.logging_model import LoggingModel
from serpeval.online.interleaving import Interleaving, credit
from serpeval.online.interleaving.probabilistic import propensities
from serpeval.online.simulation.counterfactual import by_grade, perturbed, simulate_log, synthetic_pool

K = 3
TAU = 3.0


def _list_distribution(rankings: list[list[int]], union: int, k: int) -> dict[tuple[int, ...], float]:
    """P(list) of every k-list under probabilistic interleaving, by enumeration of the draws
    (documents of the rankings only; any other list has probability 0)."""
    docs = sorted({d for r in rankings for d in r})
    weight = []
    for r in rankings:
        w = {d: (len(r) + 1) ** -TAU for d in docs}
        w.update({d: (i + 1) ** -TAU for i, d in enumerate(r)})
        weight.append(w)
    out: dict[tuple[int, ...], float] = {}
    for lst in itertools.permutations(docs, min(k, len(docs))):
        p, placed = 1.0, set()
        for d in lst:
            p *= sum(w[d] / sum(w[e] for e in docs if e not in placed) for w in weight) / len(weight)
            placed.add(d)
        out[lst] = p
    return out


@pytest.fixture(scope="module")
def setting():
    pool = synthetic_pool(6, k=K, pool_size=8, noises={"A": 1.5, "B": 1.0}, rng=3)
    pool = by_grade(pool, ("A", "B"), "C", noise=0.5, rng=4)
    pool = perturbed(pool, "B", "D", swaps=1, rng=5)
    log = simulate_log(pool, 400, "navigational", rng=6, impressions_per_user=4)
    dists = [_list_distribution(r, len(d), K) for r, d in zip(log.context_rankings, log.context_docs, strict=True)]
    return pool, log, dists


def _prefix_prob(dist: dict[tuple[int, ...], float], prefix: tuple[int, ...]) -> float:
    return sum(p for lst, p in dist.items() if lst[:len(prefix)] == prefix)


def _marginal(dist: dict[tuple[int, ...], float], d: int, j: int) -> float:
    return sum(p for lst, p in dist.items() if lst[j] == d)


@pytest.mark.parametrize("cand", ["A", "B", "C", "D"])
def test_ips_family_and_dr_match_per_impression_loops(setting, cand: str) -> None:
    pool, log, dists = setting
    lists, answered = encode_candidate(log, pool.lists(cand), K)
    assert answered.all()
    ctx = Context(log, LoggingModel(log, int(lists.max()) + 1), "clicks")
    model = ctx.fitted("dbn")
    q_click = model.click_probabilities(ctx.items_of(lists))
    ips, iips, rips, dr = [], [], [], []
    for i in range(len(log)):  # the reference: one impression at a time
        c = log.context[i]
        shown, clicks, target = tuple(log.shown[i]), log.clicks[i], tuple(lists[c])
        dist = dists[c]
        r = float(clicks.sum())
        ips.append(r / dist[shown] if shown == target else 0.0)
        iips.append(sum(clicks[j] / _marginal(dist, shown[j], j) for j in range(K) if shown[j] == target[j]))
        w = [1.0 / _prefix_prob(dist, shown[:j + 1]) if shown[:j + 1] == target[:j + 1] else 0.0 for j in range(K)]
        rips.append(sum(w[j] * clicks[j] for j in range(K)))
        q_tail = [sum(q_click[c][j:]) for j in range(K)] + [0.0]
        value = 0.0
        for j in range(K):  # Kiyohara et al. 2022, eq. 4, deterministic evaluation policy
            w_prev = 1.0 if j == 0 else w[j - 1]
            value += w[j] * (clicks[j] - q_tail[j]) + w_prev * q_tail[j]
        dr.append(value)
    for name, ref in (("ips", ips), ("iips", iips), ("cascade_ips", rips), ("dr", dr)):
        got = terms(name, ctx, lists)
        assert got.x.mean() == pytest.approx(np.mean(ref), rel=1e-9, abs=1e-12), name
        assert np.count_nonzero(ref) > 0, name
    sn = terms("snips", ctx, lists)
    weights = [1.0 / dists[log.context[i]][tuple(log.shown[i])] if tuple(log.shown[i]) == tuple(lists[log.context[i]])
               else 0.0 for i in range(len(log))]
    if sum(weights) > 0:
        assert sn.x.sum() / sn.y.sum() == pytest.approx(np.sum(ips) / np.sum(weights), rel=1e-9)


@pytest.mark.parametrize("cand", ["B", "C", "D"])
def test_interleaved_matches_the_serving_credit(setting, cand: str) -> None:
    pool, log, dists = setting
    lists, _ = encode_candidate(log, pool.lists(cand), K)
    ctx = Context(log, LoggingModel(log, int(lists.max()) + 1), "clicks")
    got = terms("interleaved", ctx, lists, 0)
    ref = []
    for i in range(len(log)):  # serving code: Interleaving of the target pair, its credit
        c = log.context[i]
        target = [list(map(int, lists[c][lists[c] >= 0])), log.context_rankings[c][0]]
        union = len(log.context_docs[c])
        shown = tuple(int(d) for d in log.shown[i])
        weight = _list_distribution(target, union, K).get(shown, 0.0) / dists[c][shown]
        if weight == 0:
            ref.append(0.0)
            continue
        prop = propensities(target, list(shown), tau=TAU, marginals=False)
        made = Interleaving("probabilistic", shown, (0,) * K, ((0,) * K, (0,) * K), (len(target[0]), len(target[1])),
                            0, prop.slots)
        ref.append(weight * credit(made, np.flatnonzero(log.clicks[i]).tolist()).outcome)
    assert np.count_nonzero(ref) > 20  # the comparison is not vacuous
    np.testing.assert_allclose(got.x, ref, rtol=1e-9, atol=1e-12)


def test_position_marginals_of_the_log_match_enumeration(setting) -> None:
    _, log, dists = setting
    m = LoggingModel(log).marginals()
    for c, dist in enumerate(dists):
        for d, j in itertools.product(range(len(log.context_docs[c])), range(K)):
            assert m[c, d, j] == pytest.approx(_marginal(dist, d, j), abs=1e-14)


@pytest.mark.parametrize("cand", ["B", "C", "D"])
def test_pseudo_inverse_matches_a_loop_over_the_enumerated_gamma(setting, cand: str) -> None:
    pool, log, dists = setting
    lists, _ = encode_candidate(log, pool.lists(cand), K)
    ctx = Context(log, LoggingModel(log, int(lists.max()) + 1), "clicks")
    got = terms("pseudo_inverse", ctx, lists)
    width = ctx.model.width
    coefs = []
    for c, dist in enumerate(dists):  # Γ = E[1_L 1_Lᵀ] by enumeration, q = 1_C (Swaminathan et al. 2017)
        gamma = np.zeros((K * width, K * width))
        for lst, p in dist.items():
            v = np.zeros(K * width)
            v[[j * width + d for j, d in enumerate(lst)]] = 1.0
            gamma += p * np.outer(v, v)
        q = np.zeros(K * width)
        for j, d in enumerate(lists[c][:K]):
            if 0 <= d < width:
                q[j * width + d] = 1.0
        coefs.append(np.linalg.pinv(gamma, rcond=1e-10) @ q)
    ref = [float(log.clicks[i].sum()) * sum(coefs[log.context[i]][j * width + log.shown[i][j]] for j in range(K))
           for i in range(len(log))]
    np.testing.assert_allclose(got.x, ref, rtol=1e-7, atol=1e-9)
