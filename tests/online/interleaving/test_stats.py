"""Deciding a winner: Δ, sign test, clustered bootstrap, preference, checks, sample size."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy.stats import binom, binomtest
from statsmodels.stats.multitest import multipletests

import serpeval.online.clicks
import serpeval.online.clicks.tables
import serpeval.online.interleaving
import serpeval.online.interleaving.analysis
import serpeval.stats.one_sample
from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving import Interleaving
from serpeval.online.interleaving.analysis import (
    aa_check,
    analyze_counts,
    analyze_outcomes,
    preference_matrix,
    sample_size,
    sanity_checks,
)
from serpeval.online.interleaving.batch import interleave_batch


@pytest.mark.parametrize("module", [serpeval.online.interleaving.analysis, serpeval.online.interleaving,
                                    serpeval.online.clicks,
                                    serpeval.online.clicks.tables])
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0
    assert result.attempted > 0


def test_delta_and_sign_test_against_scipy() -> None:
    outcomes = [1] * 30 + [-1] * 18 + [0] * 52
    res = analyze_outcomes(outcomes, rng=0, n_resamples=2000)
    assert (res.wins_a, res.wins_b, res.ties, res.impressions) == (30, 18, 52, 100)
    # Δ is oriented towards B (the candidate): (wins_B + ties/2)/N - 1/2 = (18 + 26)/100 - .5
    assert res.delta == pytest.approx(-0.06)          # = (wins_B - wins_A) / 2N = -12/200
    assert res.p_value == pytest.approx(binomtest(18, 48, 0.5).pvalue)
    assert res.p_value == pytest.approx(binomtest(30, 48, 0.5).pvalue)   # two-sided: symmetric
    assert res.ci_low < res.delta < res.ci_high
    assert res.unit == "impression"
    assert res.units == 100


def test_positive_delta_means_the_candidate_b_wins() -> None:
    """One sign convention: B (the candidate) winning gives a positive Δ, a positive
    preference and ``winner == "B"``; A winning the mirror image."""
    b_better = [-1] * 60 + [1] * 20 + [0] * 20       # -1: B out-credits A (credit's label)
    res = analyze_outcomes(b_better, rng=0, n_resamples=1000)
    assert res.delta == pytest.approx((60 + 20 / 2) / 100 - 0.5)   # = +0.2
    assert res.ci_low > 0
    assert res.winner == "B"
    assert res.preference == pytest.approx((60 - 20) / 100)         # each impression a unit
    row = res.to_dicts()[0]
    assert row["delta (B-A)"] == res.delta
    assert row["preference (B-A)"] == res.preference
    mirror = analyze_outcomes([-o for o in b_better], rng=0, n_resamples=1000)
    assert mirror.delta == pytest.approx(-0.2)
    assert mirror.ci_high < 0
    assert mirror.winner == "A"
    # the mirror's CI is the negated interval (up to the order of the pattern draws)
    assert (mirror.ci_low, mirror.ci_high) == pytest.approx((-res.ci_high, -res.ci_low), abs=0.01)


def test_bootstrap_resamples_users_not_impressions() -> None:
    rng = np.random.default_rng(3)
    # 200 users with 20 impressions each; each user always gives the same outcome, so the
    # effective sample is 200, not 4000: the clustered CI must be much wider.
    per_user = rng.choice([1, -1, 0], size=200, p=[0.4, 0.3, 0.3])
    outcomes = np.repeat(per_user, 20)
    users = np.repeat(np.arange(200), 20)
    naive = analyze_outcomes(outcomes, rng=1, n_resamples=1500)
    clustered = analyze_outcomes(outcomes, users, rng=1, n_resamples=1500)
    assert clustered.delta == naive.delta
    width_naive = naive.ci_high - naive.ci_low
    width_clustered = clustered.ci_high - clustered.ci_low
    # Standard errors differ by sqrt(20) = 4.5 (design effect of identical outcomes).
    assert 3.5 < width_clustered / width_naive < 5.5
    assert clustered.units == 200
    assert clustered.unit == "user"


def test_per_user_preference_hand_worked() -> None:
    # user u1: A, A, B -> prefers A; u2: B, tie -> prefers B; u3: tie -> indifferent; u4: A.
    outcomes = [1, 1, -1, -1, 0, 0, 1]
    users = ["u1", "u1", "u1", "u2", "u2", "u3", "u4"]
    res = analyze_outcomes(outcomes, users, n_resamples=100, rng=0)
    assert (res.prefer_a, res.prefer_b, res.units) == (2, 1, 4)
    assert res.preference == pytest.approx((1 - 2) / 4)   # (prefer_B - prefer_A) / units
    assert res.preference_p_value == pytest.approx(binomtest(1, 3, 0.5).pvalue)
    assert res.to_dicts()[0]["winner"] == "none"


def test_outcome_input_forms_and_errors() -> None:
    from serpeval.online.interleaving import credit, interleave

    shown = interleave([["a", "b"], ["b", "c"]], k=3, rng=0)
    objects = [credit(shown, [0]), credit(shown, [])]
    assert analyze_outcomes(objects, n_resamples=10).impressions == 2
    assert analyze_outcomes([o.to_dict() for o in objects], n_resamples=10).impressions == 2
    with pytest.raises(InputError, match="found nan"):
        analyze_outcomes([1, float("nan"), 0])
    with pytest.raises(InputError, match="found 'x'"):
        analyze_outcomes([1, "x", 0])
    with pytest.raises(InputError, match="non-empty"):
        analyze_outcomes([])
    with pytest.raises(InputError, match="one user/query id per outcome"):
        analyze_outcomes([1, 0], units=["u"])
    with pytest.raises(OptionError, match="confidence"):
        analyze_outcomes([1, 0], confidence=95)


def test_sample_size_formula_and_exact_power() -> None:
    plan = sample_size(0.51)
    assert plan.non_tied == 19620  # ((1.96*.5 + .8416*sqrt(.51*.49))/.01)^2 = 19619.84: about 19,600
    assert sample_size(delta=0.0025, tie_rate=0.5).p_win == pytest.approx(0.505)
    # The exact two-sided binomial test at the planned size has about 80% power.
    p = 0.55
    size = sample_size(p).non_tied
    upper = binom.isf(0.025, size, 0.5)  # reject when wins > upper or wins < lower
    lower = binom.ppf(0.025, size, 0.5)
    power = binom.sf(upper, size, p) + binom.cdf(lower - 1, size, p)
    assert power == pytest.approx(0.8, abs=0.02)
    with pytest.raises(OptionError, match="exactly one"):
        sample_size(0.51, delta=0.01)
    with pytest.raises(OptionError, match="differ from 1/2"):
        sample_size(0.5)
    with pytest.raises(OptionError, match="tie_rate"):
        sample_size(0.6, tie_rate=1.0)


def test_sanity_checks_pass_on_team_draft_and_catch_a_fixed_alternation() -> None:
    rng = np.random.default_rng(0)
    n = 5000
    a = np.argsort(rng.random((n, 20)), axis=1)[:, :10]
    b = np.argsort(rng.random((n, 20)), axis=1)[:, :10]
    checks = {c.name: c for c in sanity_checks(interleave_batch(a, b, rng=1))}
    assert all(c.ok for c in checks.values())
    assert checks["competitive coverage"].value == 1.0
    # The classic bug: A always drafts first (no coin). Both balance checks fail.
    fixed = [Interleaving("team_draft", tuple("abcd"), (0, 1, 0, 1), ((1, 0, 2, 0), (0, 1, 0, 2)),
                          (2, 2), 0)] * 200
    bad = {c.name: c for c in sanity_checks(fixed)}
    assert not bad["first-pick balance"].ok
    assert not bad["per-position team balance"].ok


def test_aa_and_random_clicker_checks() -> None:
    queries = [["x", "y", "z"]] * 5
    assert aa_check(queries, impressions=2000, rng=0).ok
    # Balanced interleaving on A = (x, y, z), B = (y, z, x) prefers B under random clicks.
    other = [["y", "z", "x"]] * 5
    biased = aa_check(queries, other, method="balanced", impressions=3000, rng=0)
    assert not biased.ok
    assert biased.value > 0                       # Δ oriented towards B: B is favoured
    fair = aa_check(queries, other, method="team_draft", impressions=3000, rng=0)
    assert fair.ok


def test_preference_matrix_with_holm_against_statsmodels() -> None:
    rng = np.random.default_rng(2)
    credits = rng.poisson([0.6, 0.5, 0.3], size=(3000, 3))
    res = preference_matrix(credits, ["bm25", "rm3", "dense"])
    wins = res.wins
    assert wins[0, 1] == int((credits[:, 0] > credits[:, 1]).sum())
    pairs = [(0, 1), (0, 2), (1, 2)]
    raw = [binomtest(int(wins[i, j]), int(wins[i, j] + wins[j, i]), 0.5).pvalue for i, j in pairs]
    expected = multipletests(raw, method="holm")[1]
    np.testing.assert_allclose([res.adjusted[i, j] for i, j in pairs], expected)
    rows = res.to_dicts()
    assert rows[1]["ranker"] == "bm25"
    assert rows[1]["vs"] == "dense"
    assert rows[1]["better"] == "bm25"
    with pytest.raises(InputError, match="rankers"):
        preference_matrix([[1.0], [2.0]])


# ------------------------------------------------------------------ per-unit counts


def _random_units(m: int, seed: int, most: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-unit wins, losses, ties of ``m`` units with 1 to ``most`` impressions each."""
    rng = np.random.default_rng(seed)
    n = rng.integers(1, most + 1, size=m)
    wins = rng.binomial(n, 0.3)
    losses = rng.binomial(n - wins, 0.4)
    return wins, losses, n - wins - losses


def _patterns(wins, losses, ties) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (2 wins_B + ties, impressions) per unit, and how many units have each
    (``losses`` are A's losses: B's wins)."""
    n = wins + losses + ties
    return np.unique(np.stack([2 * losses + ties, n], axis=1), axis=0, return_counts=True)


#: (units, most impressions per unit): nearly every unit distinct (unit index draws), or
#: few distinct count patterns among many units (multinomial draws over patterns)
BRANCHES = {"unit draws": (400, 12), "pattern draws": (3000, 3)}


@pytest.mark.parametrize("branch", list(BRANCHES))
def test_counts_path_is_identical_to_the_outcomes_path(branch: str) -> None:
    m, most = BRANCHES[branch]
    wins, losses, ties = _random_units(m, seed=5, most=most)
    assert (len(_patterns(wins, losses, ties)[0]) * 8 <= m) == (branch == "pattern draws")
    # the same impressions one by one, shuffled, each labelled with its unit (sorted ids 0..m-1)
    outcomes = np.concatenate([np.repeat([1, -1, 0], [w, lo, t])
                               for w, lo, t in zip(wins, losses, ties, strict=True)])
    units = np.repeat(np.arange(m), wins + losses + ties)
    order = np.random.default_rng(1).permutation(len(outcomes))
    by_impression = analyze_outcomes(outcomes[order], units[order], n_resamples=3000, rng=7)
    by_unit = analyze_counts(wins, losses, ties, n_resamples=3000, rng=7)
    assert by_unit == by_impression                       # every field, the CI included
    assert analyze_counts(wins, losses, ties, n_resamples=3000, rng=8) != by_unit


def _loop_quantiles(draws, credit, shown, level: float) -> tuple[float, float]:
    """Δ* of each resample by a Python loop over what it took, and the CI's quantiles."""
    boot = [sum(credit[j] for j in row) / sum(shown[j] for j in row) - 0.5 for row in draws]
    return tuple(np.quantile(boot, [(1 - level) / 2, (1 + level) / 2]))


def test_bootstrap_against_a_per_resample_loop() -> None:
    """The vectorized bootstrap equals resampling one resample at a time in Python, with
    the same draws: unit indices, or how many units of each count pattern."""
    wins, losses, ties = _random_units(60, seed=2)
    res = analyze_counts(wins, losses, ties, n_resamples=500, confidence=0.9, rng=11)
    drawn = np.random.default_rng(11).integers(0, 60, size=(500, 60)).tolist()
    low, high = _loop_quantiles(drawn, losses + ties / 2, wins + losses + ties, 0.9)  # B's credit
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high), abs=1e-15)

    wins, losses, ties = _random_units(3000, seed=2, most=3)
    res = analyze_counts(wins, losses, ties, n_resamples=400, confidence=0.9, rng=11)
    pattern, multiplicity = _patterns(wins, losses, ties)
    taken = np.random.default_rng(11).multinomial(3000, multiplicity / 3000, size=400)
    drawn = [np.repeat(np.arange(len(pattern)), row).tolist() for row in taken]
    low, high = _loop_quantiles(drawn, pattern[:, 0] / 2, pattern[:, 1], 0.9)
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high), abs=1e-15)


def test_pattern_and_unit_draws_are_the_same_bootstrap(monkeypatch) -> None:
    wins, losses, ties = _random_units(3000, seed=4, most=3)
    by_pattern = analyze_counts(wins, losses, ties, n_resamples=4000, rng=0)
    monkeypatch.setattr(serpeval.stats.one_sample, "PATTERN_RATIO", 10**9)   # force unit draws
    by_unit = analyze_counts(wins, losses, ties, n_resamples=4000, rng=0)
    half = (by_unit.ci_high - by_unit.ci_low) / 2
    assert by_pattern.ci_low != by_unit.ci_low                 # other draws ...
    assert by_pattern.ci_low == pytest.approx(by_unit.ci_low, abs=0.1 * half)   # ... same law
    assert by_pattern.ci_high == pytest.approx(by_unit.ci_high, abs=0.1 * half)


def test_bootstrap_spread_matches_the_clustered_standard_error() -> None:
    """Resampling units reproduces the delta-method (cluster-robust) standard error of Δ."""
    from scipy.stats import norm

    wins, losses, ties = _random_units(3000, seed=9)
    res = analyze_counts(wins, losses, ties, n_resamples=4000, rng=0)
    n = wins + losses + ties
    score = losses + ties / 2   # B's credit: Δ is oriented towards B
    ratio = score.sum() / n.sum()
    se = np.sqrt(len(n) / (len(n) - 1) * np.sum((score - ratio * n) ** 2)) / n.sum()
    half = norm.ppf(0.975) * se
    assert res.delta == pytest.approx(ratio - 0.5, abs=1e-15)
    assert res.ci_low == pytest.approx(res.delta - half, abs=0.08 * half)
    assert res.ci_high == pytest.approx(res.delta + half, abs=0.08 * half)


def test_count_input_errors() -> None:
    with pytest.raises(InputError, match="one count per unit"):
        analyze_counts([1, 2], [0], [0, 0])
    with pytest.raises(InputError, match="non-negative whole numbers"):
        analyze_counts([1, -1], [0, 2], [0, 0])
    with pytest.raises(InputError, match="non-negative whole numbers"):
        analyze_counts([1.5], [0], [0])
    with pytest.raises(InputError, match="1 unit\\(s\\) have no impression"):
        analyze_counts([1, 0], [0, 0], [0, 0])
    with pytest.raises(InputError, match="no units"):
        analyze_counts([], [], [])
    with pytest.raises(OptionError, match="confidence"):
        analyze_counts([1], [0], [0], confidence=95)


def test_units_of_mixed_kinds_are_an_input_error() -> None:
    # Before: np.unique raised a bare TypeError ('<' not supported between NoneType and str)
    with pytest.raises(InputError, match=r"units must be ids of one kind.*NoneType, str"):
        analyze_outcomes([1, -1, 0], units=["u1", None, "u2"], rng=0)
