"""Multileaving: per-pair power in the preference matrix, and the method recommended by the
sensitivity measured on the same rankers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower

from serpeval.core.errors import InputError, OptionError
from serpeval.online.clicks import click_model
from serpeval.online.interleaving import credit, interleave
from serpeval.online.interleaving.analysis import preference_matrix, recommend_multileaving


def _world(seed: int, n_queries: int = 30) -> tuple[np.ndarray, list[list[list[int]]]]:
    """True grades per query (0..2) and four rankers of decreasing quality: score = grade +
    noise with sd 0.5, 0.8, 1.5, 3 (a close pair first, then clear gaps)."""
    rng = np.random.default_rng(seed)
    grades = rng.choice(3, size=(n_queries, 20), p=[0.6, 0.25, 0.15])
    rankers = []
    for sd in (0.5, 0.8, 1.5, 3.0):
        scores = grades + rng.normal(0, sd, size=grades.shape)
        rankers.append([list(np.argsort(-row, kind="stable")[:10]) for row in scores])
    return grades, rankers


def _multileave(method: str, impressions: int, seed: int, random_clicks: bool = False):
    grades, rankers = _world(0)
    rng = np.random.default_rng(seed)
    model = click_model("navigational", 3)
    queries = rng.integers(0, len(grades), size=impressions)
    shown = [interleave([[int(d) for d in r[q]] for r in rankers], method, k=10, rng=rng) for q in queries]
    shown_grades = np.array([[grades[q, d] for d in s.docs] for q, s in zip(queries, shown, strict=True)])
    clicks = (rng.random(shown_grades.shape) < 0.3) if random_clicks else model.sample(shown_grades, rng=rng)
    return [credit(s, np.flatnonzero(c).tolist()) for s, c in zip(shown, clicks, strict=True)]


def test_per_pair_power_matches_statsmodels() -> None:
    """power and needed: the one-sample normal approximation at alpha / pairs (Bonferroni),
    the measured mean and sd taken as the truth (statsmodels NormalIndPower, ratio=0)."""
    rng = np.random.default_rng(4)
    credits = rng.poisson([0.6, 0.55, 0.3], size=(2000, 3))
    res = preference_matrix(credits, ["a", "b", "c"])
    pair = np.sign(credits[:, 0] - credits[:, 1])
    effect = pair.mean() / pair.std(ddof=1)
    expected = NormalIndPower().power(effect, nobs1=2000, alpha=0.05 / 3, ratio=0)
    assert res.power[0, 1] == pytest.approx(expected, rel=1e-9)
    needed = NormalIndPower().solve_power(effect, alpha=0.05 / 3, power=0.8, ratio=0)
    assert res.needed[0, 1] == pytest.approx(needed, rel=1e-4)  # solve_power ignores the far tail
    assert res.delta[0, 1] == pytest.approx(pair.mean() / 2)
    row = res.to_dicts()[0]
    assert row["power"] == res.power[0, 1]
    assert row["impressions for 80%"] == math.ceil(res.needed[0, 1])  # shown in whole impressions
    # No preference at all: infinitely many impressions, no power beyond alpha.
    flat = preference_matrix(np.zeros((10, 2)))
    assert flat.needed[0, 1] == np.inf
    assert flat.hardest_pair_needs == np.inf


@pytest.mark.parametrize("method", ["probabilistic", "team_draft"])
def test_multileaving_is_unbiased_under_random_clicks(method: str) -> None:
    """Pairwise outcomes of random clicks (probabilistic: marginalised, t-test; team draft:
    signs of the credit differences, sign test): every pair passes at p > .001."""
    outcomes = _multileave(method, 1500, seed=1, random_clicks=True)
    res = preference_matrix(preferences=[o.preferences for o in outcomes])
    iu = np.triu_indices(4, 1)
    assert res.p_values[iu].min() > 0.001


def test_recommendation_by_measured_sensitivity() -> None:
    """Both methods on the same four rankers and navigational users; the recommendation is
    the method whose hardest pair needs fewer impressions, and both order the clear pairs
    the right way (ranker 0 is best, 3 worst)."""
    analyses = {}
    for method in ("team_draft", "probabilistic"):
        outcomes = _multileave(method, 2500, seed=2)
        analyses[method] = preference_matrix(preferences=[o.preferences for o in outcomes],
                                             names=["r0", "r1", "r2", "r3"], method=method)
        assert analyses[method].delta[0, 3] > 0  # the best beats the worst
        assert analyses[method].adjusted[0, 3] < 0.05
    assert analyses["team_draft"].to_dicts()[0]["p"] == analyses["team_draft"].p_values[0, 1]
    rec = recommend_multileaving(analyses)
    hardest = {m: a.hardest_pair_needs for m, a in analyses.items()}
    assert rec.recommended == min(hardest, key=hardest.get)
    assert [r["method"] for r in rec.to_dicts() if r["recommended"]] == [rec.recommended]
    assert recommend_multileaving(list(analyses.values())).recommended == rec.recommended


def test_bad_input() -> None:
    with pytest.raises(OptionError, match="exactly one of credits"):
        preference_matrix()
    with pytest.raises(InputError, match="antisymmetric"):
        preference_matrix(preferences=np.ones((3, 2, 2)))
    with pytest.raises(InputError, match="same rankers"):
        recommend_multileaving({"x": preference_matrix(np.eye(2), ["a", "b"]),
                                "y": preference_matrix(np.eye(2), ["a", "c"])})


def test_identical_rankers_give_exactly_no_preference() -> None:
    """Probabilistic multileaving of two copies of one ranking (and a third ranker): their
    marginalised pairwise outcome is exactly 0 in every impression (the same assignment
    probabilities on both sides), so the pair's t-test finds nothing. Before, floating-point
    noise of about 1e-16 in E[sign(h_i - h_j)] made the pair significant (p < 0.001 here,
    about 1e-74 in a larger log)."""
    ranking = ["d0", "é-1", "文書", "d-000003", *[f"d{i}" for i in range(4, 10)]]
    other = ["d-000003", "d0", "é-1", "文書", *ranking[4:]]
    rng = np.random.default_rng(1)
    outcomes = []
    for _ in range(2000):
        shown = interleave([ranking, list(ranking), other], "probabilistic", k=10, rng=rng)
        outcomes.append(credit(shown, np.flatnonzero(rng.random(10) < 0.3).tolist()))
    prefs = np.array([o.preferences for o in outcomes])
    assert (prefs[:, 0, 1] == 0.0).all()
    assert (prefs == -np.transpose(prefs, (0, 2, 1))).all()   # exactly antisymmetric
    res = preference_matrix(preferences=prefs)
    assert res.p_values[0, 1] == 1.0
    assert res.wins[0, 1] == res.wins[1, 0] == 0
    assert res.to_dicts()[0]["better"] == "-"
    # the clicks that favour the different ranker still count (a test that can fail)
    assert (prefs[:, 0, 2] != 0.0).any()


def test_real_valued_pair_counts_are_not_called_wins() -> None:
    """Probabilistic multileaving's pairwise outcomes are real: the pair is tested with the
    t-test (scipy's ttest_1samp on the pair's outcomes) and its sign counts are labelled as
    outcome signs, not wins (team draft's ±1 outcomes keep wins/losses/ties)."""
    from scipy.stats import ttest_1samp

    prefs = np.zeros((6, 2, 2))
    prefs[:, 0, 1] = [0.5, -0.25, 0.0, 0.75, 0.125, -0.5]
    prefs[:, 1, 0] = -prefs[:, 0, 1]
    res = preference_matrix(preferences=prefs, names=["bm25", "dénse"])
    assert res.test == "t-test"
    assert res.p_values[0, 1] == pytest.approx(ttest_1samp(prefs[:, 0, 1], 0.0).pvalue, rel=1e-12)
    row = res.to_dicts()[0]
    assert (row["outcome > 0"], row["outcome < 0"], row["outcome = 0"]) == (3, 2, 1)
    assert "wins" not in row
    signs = preference_matrix(np.array([[1, 0], [0, 1], [2, 1]]), ["a", "b"])
    assert signs.test == "sign test"
    assert (signs.to_dicts()[0]["wins"], signs.to_dicts()[0]["losses"]) == (2, 1)
