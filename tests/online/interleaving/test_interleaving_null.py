"""Every test :func:`analyze_outcomes` reports holds its level in null experiments.

A null experiment: two rankers of identical quality for the users, who click without looking
at the documents (uniform, position-biased and cascade random clicks, each user with a click
propensity of their own), several impressions per user. Under such clicks an unbiased method's
outcome has mean zero, so each reported test (the impression-level p-value, the per-user
preference's p-value, the bootstrap CI of Δ) must reject in about ``alpha`` of the
experiments: the count of rejections in ``EXPERIMENTS`` experiments must lie in the central
99.9% of Binomial(EXPERIMENTS, alpha) (scipy), a bound a miscalibrated test leaves and a
correct one stays in (seeded: the verdicts are reproducible).

Fast because it is exact where it can be: for k = 4 every list a method can show is
enumerated with its probability (team draft: every coin sequence; optimized: the LP's
distribution; probabilistic: every drafting path), and the serving code's ``credit`` gives
the outcome of every list and every one of the 2^4 click patterns once. An experiment then
draws a list index and a click pattern per impression (NumPy, no Python loop per impression)
and looks the outcome up.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from serpeval.online.interleaving import Interleaving, credit
from serpeval.online.interleaving import optimized as oi
from serpeval.online.interleaving import team_draft as td
from serpeval.online.interleaving._result import rank_table
from serpeval.online.interleaving.analysis import analyze_outcomes

K = 4
ALPHA = 0.05
#: null experiments per method and click model, half on each pair
EXPERIMENTS = 200
#: users per experiment; each has 1 + Poisson(1) impressions (most users have few)
USERS = 300
#: Two pairs (both have an unbiased optimized distribution for both credit functions): the
#: issue's pair (B moves A's 4th document to the top) and rankings with mixed ids, Unicode and
#: documents the other ranker lacks.
PAIRS = {
    "moved up": (("d0", "d1", "d2", "d3", "d4"), ("d3", "d0", "d1", "d2", "d4")),
    "mixed ids": (("a", "b", "é", "文", "doc-000017"), ("b", "a", "q", "doc-000017", "é")),
}
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("team_draft", {"ignore_shared": False}),
    ("team_draft", {"ignore_shared": True}),
    ("probabilistic", {"tau": 3.0}),
    ("optimized", {"credit_function": "inverse"}),
    ("optimized", {"credit_function": "linear"}),
]
CLICKS = ("uniform", "position", "cascade")
PATTERNS = np.array(list(itertools.product((0, 1), repeat=K)))[:, ::-1].astype(bool)  # row i: bits of i


def _outcome_table(shown: Interleaving) -> np.ndarray:
    """The outcome of every click pattern on one shown list (pattern index = bits of the clicks)."""
    return np.array([credit(shown, np.flatnonzero(pattern).tolist()).outcome for pattern in PATTERNS])


def _team_draft(a: tuple[str, ...], b: tuple[str, ...], ignore_shared: bool) -> list[tuple[float, Interleaving]]:
    """Every coin sequence (draw < .5: A picks) of the serving code's drafting, each 2^-K."""
    out = []
    for coins in itertools.product((0.25, 0.75), repeat=K):
        docs, teams, first = td._draft_two(list(a), list(b), K, list(coins), ignore_shared)
        shown = Interleaving("team_draft", tuple(docs), tuple(teams), rank_table([list(a), list(b)], docs),
                             (len(a), len(b)), first, params={"ignore_shared": ignore_shared})
        out.append((0.5 ** K, shown))
    return out


def _optimized(a: tuple[str, ...], b: tuple[str, ...], credit_function: str) -> list[tuple[float, Interleaving]]:
    lists, p, bias = oi.distribution(a, b, K, credit_function)  # type: ignore[arg-type]
    assert bias < 1e-9  # a pair with an unbiased design (the null must be a null)
    return [(float(q), Interleaving("optimized", docs, (0,) * K, rank_table([list(a), list(b)], docs),
                                    (len(a), len(b)), 0, params={"credit_function": credit_function}))
            for docs, q in zip(lists, p, strict=True) if q > 0]


def _probabilistic(a: tuple[str, ...], b: tuple[str, ...], tau: float) -> list[tuple[float, Interleaving]]:
    """Every drafting path (a fair coin picks the ranker of each slot, which draws from its
    softmax over the documents still unplaced), with the probabilities the serving code records."""
    union = list(dict.fromkeys(a + b))
    ranks = np.array(rank_table([list(a), list(b)], union), dtype=float)
    ranks = np.where(ranks > 0, ranks, np.array([len(a), len(b)])[:, None] + 1.0)
    weights = ranks ** -tau
    out: list[tuple[float, Interleaving]] = []

    def walk(unplaced: np.ndarray, docs: list[int], probs: list[tuple[float, float]], pr: float) -> None:
        if len(docs) == K:
            shown_docs = [union[d] for d in docs]
            out.append((pr, Interleaving("probabilistic", tuple(shown_docs), (0,) * K,
                                         rank_table([list(a), list(b)], shown_docs), (len(a), len(b)), 0,
                                         tuple(probs), params={"tau": tau})))
            return
        live = np.where(unplaced, weights, 0.0)
        for d in np.flatnonzero(unplaced):
            per_ranker = weights[:, d] / live.sum(axis=1)
            rest = unplaced.copy()
            rest[d] = False
            walk(rest, [*docs, int(d)], [*probs, (float(per_ranker[0]), float(per_ranker[1]))],
                 pr * per_ranker.mean())

    walk(np.ones(len(union), dtype=bool), [], [], 1.0)
    return out


@functools.cache
def _design(method: str, options: tuple[tuple[str, Any], ...], pair: str) -> tuple[np.ndarray, np.ndarray]:
    """(probability of each list, outcome table [lists, 2^K]) of one method on one pair."""
    a, b = PAIRS[pair]
    opts = dict(options)
    if method == "team_draft":
        lists = _team_draft(a, b, opts["ignore_shared"])
    elif method == "optimized":
        lists = _optimized(a, b, opts["credit_function"])
    else:
        lists = _probabilistic(a, b, opts["tau"])
    probs = np.array([p for p, _ in lists])
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    return probs / probs.sum(), np.array([_outcome_table(shown) for _, shown in lists])


def random_clicks(model: str, propensity: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """bool[n, K] clicks that ignore the documents: ``uniform`` (each position with the user's
    propensity c), ``position`` (c / rank), ``cascade`` (top-down, click with c, stop after a
    click with probability 1/2)."""
    n = len(propensity)
    u = rng.random((n, K))
    c = propensity[:, None]
    if model == "uniform":
        return u < c
    if model == "position":
        return u < c / np.arange(1, K + 1)
    clicks = u < c
    stop = rng.random((n, K)) < 0.5
    going = np.ones(n, dtype=bool)
    for i in range(K):
        clicks[:, i] &= going
        going &= ~(clicks[:, i] & stop[:, i])
    return clicks


def null_experiments(method: str, options: dict[str, Any], pair: str, clicks: str, experiments: int,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes ``[experiments, impressions]`` of null experiments and the user of each column
    (the same users, with their own click propensities per experiment)."""
    probs, table = _design(method, tuple(sorted(options.items())), pair)
    rng = np.random.default_rng(seed)
    per_user = 1 + rng.poisson(1.0, size=USERS)
    users = np.repeat([f"user-{u:03d}" for u in range(USERS)], per_user)
    n = experiments * len(users)
    lists = rng.choice(len(probs), size=n, p=probs)
    propensity = np.repeat(rng.uniform(0.1, 0.7, size=(experiments, USERS)).ravel(), np.tile(per_user, experiments))
    pattern = random_clicks(clicks, propensity, rng) @ (1 << np.arange(K))
    return table[lists, pattern].reshape(experiments, len(users)), users


def _bounds(n: int) -> tuple[int, int]:
    return int(binom.ppf(0.0005, n, ALPHA)), int(binom.isf(0.0005, n, ALPHA))


def rejection_counts(method: str, options: dict[str, Any], clicks: str, seed: int = 0) -> dict[str, int]:
    """How many of the ``EXPERIMENTS`` null experiments (half on each pair) each reported test
    rejects at ``ALPHA``."""
    counts = {"p_value": 0, "preference_p_value": 0, "ci": 0}
    for offset, pair in enumerate(sorted(PAIRS)):
        outcomes, users = null_experiments(method, options, pair, clicks, EXPERIMENTS // len(PAIRS),
                                           seed + offset)
        for e, row in enumerate(outcomes):
            res = analyze_outcomes(row, users, n_resamples=200, rng=e, confidence=1 - ALPHA, method=method)
            counts["p_value"] += res.p_value < ALPHA
            counts["preference_p_value"] += res.preference_p_value < ALPHA
            counts["ci"] += res.ci_low > 0 or res.ci_high < 0
    return counts


@pytest.mark.parametrize("clicks", CLICKS)
@pytest.mark.parametrize(("method", "options"), VARIANTS,
                         ids=[f"{m}-{'-'.join(map(str, o.values()))}" for m, o in VARIANTS])
def test_every_reported_test_holds_its_level_under_random_clicks(
        method: str, options: dict[str, Any], clicks: str) -> None:
    low, high = _bounds(EXPERIMENTS)
    counts = rejection_counts(method, options, clicks, seed=CLICKS.index(clicks) * 10)
    for test, count in counts.items():
        assert low <= count <= high, (f"{method} {options}, {clicks} clicks: {test} rejected {count} "
                                      f"of {EXPERIMENTS} null experiments at alpha {ALPHA} "
                                      f"(expected {low}..{high})")


def test_the_exact_designs_are_unbiased() -> None:
    """The harness's own premise, exactly: the mean outcome of every design under uniform
    random clicks (probability .3 per position) is zero."""
    weights = np.prod(np.where(PATTERNS, 0.3, 0.7), axis=1)
    for method, options in VARIANTS:
        for pair in PAIRS:
            probs, table = _design(method, tuple(sorted(options.items())), pair)
            assert float(probs @ table @ weights) == pytest.approx(0.0, abs=1e-12), (method, options, pair)
