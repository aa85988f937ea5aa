"""Click models: the standard tables, exact probabilities (hand-worked and brute force),
sampling against the exact probabilities, stop semantics, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serpeval.core.errors import InputError, OptionError
from serpeval.online.clicks import (
    DBN,
    DCM,
    MODELS,
    PBM,
    CascadeModel,
    GradeModel,
    click_model,
    grade_table,
)

ALL_PRESETS = sorted(MODELS)


def test_standard_tables_exact() -> None:
    # Lerot / HarrieO tables (docs/online_methods.md §3.3).
    assert grade_table("perfect", 5).click == (0.0, 0.2, 0.4, 0.8, 1.0)
    assert grade_table("navigational", 5).stop == (0.2, 0.3, 0.5, 0.7, 0.9)
    assert grade_table("informational", 3).click == (0.4, 0.7, 0.9)
    assert grade_table("informational", 2).stop == (0.1, 0.5)
    assert grade_table("almost_random", 5).click == (0.4, 0.45, 0.5, 0.55, 0.6)
    assert grade_table("random", 3).stop == (0.0, 0.0, 0.0)
    assert grade_table("perfect", 3).click == (0.0, 0.5, 1.0)  # not the 5-level table at 0,2,4


def test_interpolated_table_for_four_levels() -> None:
    t = grade_table("informational", 4)  # 5-level table at 0, 4/3, 8/3, 4
    assert t.interpolated
    # .6 + (1/3)(.7 - .6) = .63333; .7 + (2/3)(.8 - .7) = .76667
    assert t.click == pytest.approx((0.4, 0.633333333, 0.766666667, 0.9))
    # The 3-level navigational table is the 5-level one at 0, 2, 4: interpolation agrees.
    assert grade_table("navigational", 3).click == (0.05, 0.5, 0.95)


def test_unknown_model_did_you_mean() -> None:
    with pytest.raises(OptionError, match="Did you mean 'navigational'"):
        click_model("navigatonal")
    with pytest.raises(OptionError, match="Known: "):
        click_model("zzz")


def test_probabilities_outside_unit_interval_rejected() -> None:
    with pytest.raises(OptionError, match=r"click probabilities must be probabilities in \[0, 1\]; found 1.2"):
        GradeModel(click=(0.1, 1.2), stop=(0.0, 0.0))
    with pytest.raises(OptionError, match="examination"):
        PBM(attractiveness=np.array([0.5]), examination=np.array([0.9, -0.1]))
    with pytest.raises(OptionError, match="gamma"):
        DBN(attractiveness=np.array([0.5]), satisfaction=np.array([0.5]), gamma=1.5)
    with pytest.raises(OptionError, match="nan"):
        CascadeModel(attractiveness=np.array([np.nan]))


def test_stop_requires_click_only_for_table_users() -> None:
    assert not click_model("informational", 3, stop_requires_click=False).stop_requires_click
    with pytest.raises(OptionError, match="defines its own stopping rule"):
        click_model("dbn", 3, stop_requires_click=False)


def test_hand_worked_navigational_probabilities() -> None:
    m = click_model("navigational", 3)
    # grades (2, 0, 1): c = (.95, .05, .5), stop after click = (.9, .2, .5)
    # P(E1) = 1, P(E2) = 1 - .95 * .9 = .145, P(E3) = .145 * (1 - .05 * .2) = .14355
    p = m.click_probabilities([[2, 0, 1]])[0]
    assert p == pytest.approx([0.95, 0.145 * 0.05, 0.14355 * 0.5])
    # Stop coin at every examined result (HarrieO / mpkato): P(E2) = 1 - .9 = .1,
    # P(E3) = .1 * (1 - .2) = .08.
    every = click_model("navigational", 3, stop_requires_click=False)
    assert every.click_probabilities([[2, 0, 1]])[0] == pytest.approx([0.95, 0.1 * 0.05, 0.08 * 0.5])


def test_sdbn_preset_is_the_navigational_user() -> None:
    grades = np.array([[2, 0, 1, 2, 0], [0, 0, 0, 1, 2]])
    nav = click_model("navigational", 3).click_probabilities(grades)
    sdbn = click_model("sdbn", 3).click_probabilities(grades)
    np.testing.assert_allclose(nav, sdbn, rtol=1e-12)


def _patterns(k: int) -> np.ndarray:
    return np.array(list(itertools.product([False, True], repeat=k)))


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_likelihood_is_a_distribution_and_matches_marginals(name: str) -> None:
    """Brute force over all 2^k click patterns: probabilities sum to 1; their weighted
    average reproduces the exact marginal click probabilities and count distribution."""
    model = click_model(name, 3)
    k = 5
    grades = np.array([2, 0, 1, 1, 0])
    patterns = _patterns(k)
    items = np.tile(grades, (len(patterns), 1))
    prob = np.exp(model.log_likelihood(items, patterns))
    assert prob.sum() == pytest.approx(1.0, abs=1e-12)
    marginal = (prob[:, None] * patterns).sum(axis=0)
    np.testing.assert_allclose(marginal, model.click_probabilities(grades[None])[0], atol=1e-12)
    counts = np.bincount(patterns.sum(axis=1), weights=prob, minlength=k + 1)
    np.testing.assert_allclose(counts, model.click_count_distribution(grades[None])[0], atol=1e-12)


@pytest.mark.parametrize("name", ["navigational", "dbn", "dcm"])
def test_conditional_probabilities_by_brute_force(name: str) -> None:
    model = click_model(name, 3)
    grades = np.array([2, 0, 1, 2])
    patterns = _patterns(4)
    items = np.tile(grades, (len(patterns), 1))
    prob = np.exp(model.log_likelihood(items, patterns))
    cond = model.conditional_click_probabilities(items, patterns)
    for row, pattern in enumerate(patterns):
        for r in range(4):
            same_prefix = (patterns[:, :r] == pattern[:r]).all(axis=1)
            expected = prob[same_prefix & patterns[:, r]].sum() / prob[same_prefix].sum()
            assert cond[row, r] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_sampling_matches_exact_click_probabilities(name: str) -> None:
    model = click_model(name, 5)
    rng = np.random.default_rng(7)
    grades = rng.integers(0, 5, size=(20, 10))
    n = 20_000
    items = np.repeat(grades, n // 20, axis=0)
    clicks = model.sample(items, rng=11)
    exact = model.click_probabilities(items)
    # Per (list, rank): empirical vs exact, within 5 standard errors.
    emp = clicks.reshape(20, n // 20, 10).mean(axis=1)
    p = exact.reshape(20, n // 20, 10)[:, 0]
    m = n // 20
    se = np.sqrt(np.maximum(p * (1 - p), 1.0 / m) / m)  # floor: rare clicks are Poisson
    assert np.all(np.abs(emp - p) <= 5 * se)


def test_sampling_is_deterministic_under_a_seed() -> None:
    model = click_model("informational", 3)
    items = np.random.default_rng(1).integers(0, 3, size=(100, 10))
    assert (model.sample(items, rng=5) == model.sample(items, rng=5)).all()
    assert not (model.sample(items, rng=5) == model.sample(items, rng=6)).all()


@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=10), min_size=1, max_size=30),
       st.integers(0, 2**32 - 1))
def test_cascade_user_clicks_at_most_once(rows: list[list[int]], seed: int) -> None:
    k = max(len(r) for r in rows)
    items = np.array([r + [-1] * (k - len(r)) for r in rows])
    clicks = click_model("cascade", 5).sample(items, rng=seed)
    assert (clicks.sum(axis=1) <= 1).all()
    assert not (clicks & (items < 0)).any()  # empty slots are never clicked


def test_pbm_click_rates_are_theta_times_alpha() -> None:
    theta = np.array([0.9, 0.6, 0.4, 0.3, 0.2])
    alpha = np.array([0.1, 0.5, 0.8])
    model = PBM(attractiveness=alpha, examination=theta)
    rng = np.random.default_rng(3)
    items = rng.integers(0, 3, size=(200_000, 5))
    clicks = model.sample(items, rng=rng)
    for g in range(3):
        for r in range(5):
            sel = items[:, r] == g
            p = theta[r] * alpha[g]
            se = np.sqrt(p * (1 - p) / sel.sum())
            assert abs(clicks[sel, r].mean() - p) < 5 * se


def test_stop_semantics_differ_as_documented() -> None:
    items = np.full((1, 10), 1)
    after_click = click_model("informational", 3).click_probabilities(items)
    every = click_model("informational", 3, stop_requires_click=False).click_probabilities(items)
    assert every[0, 0] == after_click[0, 0] == pytest.approx(0.7)
    assert (every[0, 1:] < after_click[0, 1:]).all()  # stopping without a click: fewer clicks


def test_heterogeneity_shift_moves_attractiveness_in_logit_space() -> None:
    m = GradeModel(click=(0.0, 0.5, 1.0), stop=(0.0, 0.0, 0.0))
    c, _, _ = m.cells(np.array([[0], [1], [2]]), shift=np.array([np.log(3.0)]))
    # logit(.5) + log 3 -> odds 3 -> .75; 0 and 1 stay put.
    assert c.ravel().tolist() == pytest.approx([0.0, 0.75, 1.0])


def test_items_out_of_range_and_bad_clicks() -> None:
    m = click_model("navigational", 3)
    with pytest.raises(InputError, match=r"item 3 is out of range; this model knows items 0\.\.2"):
        m.sample([[0, 3]])
    with pytest.raises(InputError, match="integer array"):
        m.sample([[0.5, 1.0]])
    with pytest.raises(InputError, match="click on an empty slot"):
        m.log_likelihood([[0, -1]], [[False, True]])
    with pytest.raises(InputError, match="shape"):
        m.log_likelihood([[0, 1]], [[False, True, False]])


def test_dcm_and_dbn_reduce_to_known_cases() -> None:
    items = np.array([[1, 0, 1, 1]])
    alpha = np.array([0.2, 0.7])
    # DCM with lambda = 0 is the cascade model.
    dcm = DCM(attractiveness=alpha, continuation=np.zeros(4))
    cm = CascadeModel(attractiveness=alpha)
    np.testing.assert_allclose(dcm.click_probabilities(items), cm.click_probabilities(items))
    # DBN with sigma = 1, gamma = 1 is also the cascade model.
    dbn = DBN(attractiveness=alpha, satisfaction=np.ones(2), gamma=1.0)
    np.testing.assert_allclose(dbn.click_probabilities(items), cm.click_probabilities(items))
    # DBN: P(E2) = 1 - (.7 * (1 - (1 - .5) * .8) + .3 * (1 - .8)) = 1 - (.7 * .6 + .06) = .52
    dbn = DBN(attractiveness=alpha, satisfaction=np.full(2, 0.5), gamma=0.8)
    assert dbn.examination_probabilities(items)[0, 1] == pytest.approx(0.52)
