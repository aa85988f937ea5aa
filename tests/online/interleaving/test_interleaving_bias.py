"""Bias under random clicks: every interleaving method and credit function, in CI.

A user who clicks regardless of the documents must give a mean outcome of zero. Team draft,
probabilistic (marginalised outcome) and optimized (credit difference) pass; balanced
interleaving is biased and the analysis refuses it unless asked. The exact tests enumerate
every list (and, for probabilistic, every drafting path) with its probability, so they check
the expectation itself, not a sample of it.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving import BIASED, METHODS, Interleaving, credit, interleave
from serpeval.online.interleaving import optimized as oi
from serpeval.online.interleaving import probabilistic as pi
from serpeval.online.interleaving._result import rank_table
from serpeval.online.interleaving.analysis import aa_check, analyze_outcomes
from serpeval.stats.one_sample import sign_test

# The pair: B moves A's 4th document to the top.
A = [f"d{i}" for i in range(10)]
B = ["d3", "d0", "d1", "d2", *A[4:]]
# Joachims' balanced-bias example, and two queries whose rankings hold documents the other
# lacks (mixed ids). Both rankings are long enough for every k-slot list: when k exceeds what
# one ranking can supply, team draft fills the list from the other team and is biased too.
PAIRS = {
    "issue": ([A], [B]),
    "rotation": ([["x", "y", "z"]], [["y", "z", "x"]]),
    "disjoint tails": ([["a", "b", "c", "é", "文", "f", "g", "h", "i", "j"], A],
                       [["b", "a", "q", "r", "c", "s", "t", "u", "v", "w"], A[::-1]]),
}

#: Every method with every option that changes its credit (a new method must be added here).
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("team_draft", {"ignore_shared": False}),
    ("team_draft", {"ignore_shared": True}),
    ("probabilistic", {"tau": 3.0}),
    ("probabilistic", {"tau": 1.0}),
    *[("optimized", {"credit_function": fn}) for fn in oi.CREDIT_FUNCTIONS],
    ("balanced", {}),
]


def test_every_method_is_covered() -> None:
    assert {name for name, _ in VARIANTS} == set(METHODS)
    assert frozenset({"balanced"}) == BIASED


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize(("method", "options"), VARIANTS,
                         ids=[f"{m}-{'-'.join(map(str, o.values()))}" for m, o in VARIANTS])
def test_random_clicks_give_no_preference(method: str, options: dict[str, Any], pair: str) -> None:
    """The random-clicker check at alpha = 0.001: unbiased methods pass, balanced fails where
    it is known to (the issue's pair: p < 1e-10). Fixed seeds, so the verdict is reproducible."""
    a, b = PAIRS[pair]
    check = aa_check(a, b, method=method, impressions=4000, rng=11, **options)
    if method in BIASED and pair != "disjoint tails":
        assert not check.ok, check.detail
        assert check.p_value < 1e-10
    elif method not in BIASED:
        assert check.ok, check.detail


@pytest.mark.parametrize(("method", "options"), [v for v in VARIANTS if v[0] not in BIASED])
def test_aa_check_with_itself(method: str, options: dict[str, Any]) -> None:
    check = aa_check([A, B], None, method=method, impressions=1000, rng=3, **options)
    assert check.ok, check.detail
    assert check.name == "A/A check"


def test_the_sign_of_the_optimized_outcome_would_be_biased() -> None:
    """What the fix removed: on the issue's pair the *sign* of the outcome favours A under
    random clicks (p < 1e-10), while the outcome itself passes the check above (for
    probabilistic the exact test below shows the same)."""
    rng = np.random.default_rng(5)
    signs = []
    for _ in range(4000):
        shown = interleave([A, B], "optimized", k=10, rng=rng)
        clicked = np.flatnonzero(rng.random(10) < 0.3).tolist()
        signs.append(np.sign(credit(shown, clicked).outcome))
    wins, losses = signs.count(1), signs.count(-1)
    assert wins > losses
    assert sign_test(wins, wins + losses) < 1e-10


def _exact_probabilistic(a: list[str], b: list[str], k: int, click: float,
                         use_sign: bool) -> float:
    """E[outcome] under clicks with probability ``click`` per slot: every drafting path
    (ranker per slot, document drawn) enumerated with its probability."""
    union = list(dict.fromkeys(a + b))
    ranks = np.array(rank_table([a, b], union), dtype=float)
    ranks = np.where(ranks > 0, ranks, np.array([len(a), len(b)])[:, None] + 1.0)
    weights = ranks ** -3.0
    total = 0.0

    def walk(unplaced: np.ndarray, docs: list[int], probs: list[tuple[float, float]], pr: float) -> None:
        nonlocal total
        if len(docs) == k:
            shown_docs = [union[d] for d in docs]
            shown = Interleaving("probabilistic", tuple(shown_docs), (0,) * k,
                                 rank_table([a, b], shown_docs), (len(a), len(b)), 0, tuple(probs))
            for pattern in itertools.product((0, 1), repeat=k):
                p_clicks = np.prod([click if c else 1 - click for c in pattern])
                value = pi.credit(shown, [i for i, c in enumerate(pattern) if c]).outcome
                total += pr * p_clicks * (np.sign(value) if use_sign else value)
            return
        live = np.where(unplaced, weights, 0.0)
        for d in np.flatnonzero(unplaced):
            per_ranker = weights[:, d] / live.sum(axis=1)
            rest = unplaced.copy()
            rest[d] = False
            walk(rest, [*docs, int(d)], [*probs, (float(per_ranker[0]), float(per_ranker[1]))],
                 pr * per_ranker.mean())  # the ranker of the slot is a fair coin

    walk(np.ones(len(union), dtype=bool), [], [], 1.0)
    return total


def test_probabilistic_outcome_is_exactly_unbiased() -> None:
    a, b = ["d0", "d1", "d2", "d3"], ["d3", "d0", "d1", "d2"]
    assert _exact_probabilistic(a, b, 4, 0.3, use_sign=False) == pytest.approx(0.0, abs=1e-12)
    # The sign of the same outcome is not (the pre-fix behaviour): a test that can fail.
    assert abs(_exact_probabilistic(a, b, 4, 0.3, use_sign=True)) > 1e-3


@pytest.mark.parametrize("credit_function", oi.CREDIT_FUNCTIONS)
def test_optimized_outcome_is_exactly_unbiased(credit_function: str) -> None:
    """E[outcome] = Σ_L p_L Σ_clicks P(clicks) outcome(L, clicks), every list of the solved
    distribution and every click pattern (independent clicks with probability .3)."""
    a, b = ("d0", "d1", "d2", "d3", "d4"), ("d3", "d0", "d1", "d2", "d4")
    lists, p, bias = oi.distribution(a, b, 5, credit_function)  # type: ignore[arg-type]
    assert bias < 1e-9
    value = sign = 0.0
    for docs, p_list in zip(lists, p, strict=True):
        shown = Interleaving("optimized", docs, (0,) * 5, rank_table([list(a), list(b)], docs),
                             (5, 5), 0, params={"credit_function": credit_function})
        for pattern in itertools.product((0, 1), repeat=5):
            weight = p_list * np.prod([0.3 if c else 0.7 for c in pattern])
            out = oi.credit(shown, [i for i, c in enumerate(pattern) if c]).outcome
            value += weight * out
            sign += weight * np.sign(out)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert abs(sign) > 1e-3


def test_optimized_outcome_is_the_credit_difference() -> None:
    # A = (x, y), B = (y, x), inverse credit: a click on x gives A 1/1 and B 1/2: 1 - 1/2 = .5.
    shown = Interleaving("optimized", ("x", "y"), (0, 1), ((1, 2), (2, 1)), (2, 2), 0,
                         params={"credit_function": "inverse"})
    out = credit(shown, [0])
    assert out.credits == (1.0, 0.5)
    assert out.outcome == 0.5
    assert out.method == "optimized"


def test_analysis_refuses_a_biased_method_unless_asked() -> None:
    shown = interleave([["x", "y", "z"], ["y", "z", "x"]], "balanced", k=3, rng=0)
    outcomes = [credit(shown, [i % 3]) for i in range(30)]
    with pytest.raises(OptionError, match=r"balanced interleaving is biased.*allow_biased=True"):
        analyze_outcomes(outcomes)
    with pytest.raises(OptionError, match="balanced interleaving is biased"):
        analyze_outcomes([o.to_dict() for o in outcomes])
    with pytest.raises(OptionError, match="balanced interleaving is biased"):
        analyze_outcomes([o.outcome for o in outcomes], method="balanced")
    assert analyze_outcomes(outcomes, allow_biased=True, n_resamples=10).impressions == 30


def test_real_valued_outcomes_use_the_t_test() -> None:
    """Δ = -mean/2 (B - A: outcomes are positive when A's credit is larger); p from scipy's
    one-sample t-test; units prefer A when their sum is > 0."""
    from scipy.stats import ttest_1samp

    values = np.array([0.5, -0.25, 0.0, 0.75, 0.125, -0.5, 0.25, 0.0])
    units = ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4"]  # sums .25, .75, -.375, .25
    res = analyze_outcomes(values, units, n_resamples=200, rng=0)
    assert res.test == "t-test"
    assert res.delta == pytest.approx(-values.mean() / 2)
    assert res.p_value == pytest.approx(ttest_1samp(values, 0.0).pvalue, rel=1e-12)
    assert (res.wins_a, res.wins_b, res.ties) == (4, 2, 2)
    assert (res.prefer_a, res.prefer_b) == (3, 1)
    assert res.ci_low <= res.delta <= res.ci_high
    assert "p (t-test)" in res.to_dicts()[0]
    # ±1/0 outcomes keep the exact sign test.
    assert analyze_outcomes([1, 1, -1, 0], n_resamples=10).test == "sign test"


def test_real_valued_per_unit_preference_is_the_mean_per_unit() -> None:
    """Each unit's mean outcome, not its sign: u1 (.5, -.25) -> .125, u2 (0, .75, .75) -> .5,
    u3 (.125) -> .125, u4 (-.5, -1.0) -> -.75. Preference (B - A) = -mean of the unit means
    = -(.125 + .5 + .125 - .75)/4 = 0, although three units of four lean to A; the p-value is
    scipy's one-sample t-test over the unit means (the old sign test over units: 3 vs 1)."""
    from scipy.stats import ttest_1samp

    values = np.array([0.5, -0.25, 0.0, 0.75, 0.75, 0.125, -0.5, -1.0])
    units = ["u1", "u1", "u2", "u2", "u2", "ü3", "user-0004", "user-0004"]
    res = analyze_outcomes(values, units, n_resamples=200, rng=0)
    unit_means = np.array([0.125, 0.5, 0.125, -0.75])
    assert res.preference == pytest.approx(0.0, abs=1e-15)
    assert res.preference_test == "t-test"
    assert res.preference_p_value == pytest.approx(ttest_1samp(unit_means, 0.0).pvalue, rel=1e-12)
    assert (res.prefer_a, res.prefer_b) == (3, 1)   # descriptive: units whose mean is > 0 / < 0
    row = res.to_dicts()[0]
    assert row["units mean > 0 (A)"] == 3
    assert row["outcome > 0 (A)"] == 4
    assert "wins A" not in row   # signs of real outcomes are not wins
    assert "prefer A" not in row
    assert row["units test"] == "t-test"
    # Without units each impression is its unit: the per-unit test is the impression t-test.
    alone = analyze_outcomes(values, n_resamples=10)
    assert alone.preference_p_value == pytest.approx(alone.p_value, rel=1e-12)
    assert alone.preference == pytest.approx(-values.mean())
    # ±1/0 outcomes keep the per-unit sign test and their column names.
    signs = analyze_outcomes([1, 1, -1, 0, -1, -1], ["a", "a", "b", "b", "c", "c"], n_resamples=10)
    assert signs.preference_test == "sign test"
    assert "prefer A" in signs.to_dicts()[0]
    assert signs.preference_p_value == pytest.approx(sign_test(2, 3))


# An optimized design without an unbiased solution (linear credit, k = 6): A is short and B
# lacks nothing of A, so no distribution over the allowed lists gives zero expected credit at
# every cut-off. Its bias sits above the k-th cut-off: uniform random clicks, whose expected
# credit is the k-th cut-off's, see exactly nothing.
SHORT_A = ["é5", "d1", "文9", "d-0004"]
LONG_B = ["d10", "d7", "d11", "文9", "d1", "d6", "d2", "d-0004", "d8", "é5"]


def test_a_design_without_an_unbiased_solution_is_reported() -> None:
    bias = oi.distribution(tuple(SHORT_A), tuple(LONG_B), 6, "linear")[2]
    assert bias == pytest.approx(0.125, abs=1e-9)   # the LP's slack: 1/8 credit at one cut-off
    assert bias > oi.BIAS_TOLERANCE
    feasible = oi.distribution(tuple(A), tuple(B), 6, "linear")[2]
    assert feasible < oi.BIAS_TOLERANCE
    # A random clicker of either kind cannot tell it in 2,000 impressions (the effect is
    # about 1e-3 standard deviations), so the check reads the design's bias itself.
    check = aa_check([SHORT_A], [LONG_B], method="optimized", k=6, impressions=2000, rng=4,
                     credit_function="linear")
    assert not check.ok
    assert "2000 of 2000 impressions from optimized designs without an unbiased solution" in check.detail
    assert "largest bias 0.125" in check.detail
    assert aa_check([A], [B], method="optimized", k=6, impressions=500, rng=4, credit_function="linear").ok


def test_the_analysis_leaves_biased_designs_out_and_counts_them() -> None:
    """Impressions of the biased design are left out of every statistic (the numbers equal
    those of the other impressions alone) and counted with the largest bias; allow_biased
    keeps them in, still counted; a log of nothing else is refused."""
    rng = np.random.default_rng(8)
    outcomes, users = [], []
    for i in range(600):
        pair = [SHORT_A, LONG_B] if i % 3 == 0 else [A, B]
        shown = interleave(pair, "optimized", k=6, rng=rng, credit_function="linear")
        outcomes.append(credit(shown, np.flatnonzero(rng.random(6) < 0.3).tolist()))
        users.append(f"user-{i % 97}")
    assert {o.bias > oi.BIAS_TOLERANCE for o in outcomes} == {True, False}
    res = analyze_outcomes(outcomes, users, n_resamples=300, rng=0)
    clean = [(o.outcome, u) for o, u in zip(outcomes, users, strict=True) if o.bias <= oi.BIAS_TOLERANCE]
    alone = analyze_outcomes([o for o, _ in clean], [u for _, u in clean], n_resamples=300, rng=0)
    assert res.biased_impressions == 200
    assert res.max_bias == pytest.approx(0.125, abs=1e-9)
    assert not res.biased_included
    assert res.impressions == alone.impressions == 400
    assert (res.delta, res.p_value, res.ci_low, res.preference_p_value) == \
        (alone.delta, alone.p_value, alone.ci_low, alone.preference_p_value)
    row = res.to_dicts()[0]
    assert (row["biased impressions"], row["biased"]) == (200, "excluded")
    kept = analyze_outcomes([o.to_dict() for o in outcomes], users, n_resamples=300, rng=0, allow_biased=True)
    assert kept.impressions == 600
    assert kept.biased_impressions == 200
    assert kept.biased_included
    with pytest.raises(InputError, match=r"all 200 impressions come from optimized designs without an "
                                         r"unbiased solution.*allow_biased=True"):
        analyze_outcomes([o for o in outcomes if o.bias > oi.BIAS_TOLERANCE])


@pytest.mark.parametrize("model", ["uniform", "position", "cascade"])
def test_random_clickers_click_as_documented(model: str) -> None:
    """Click rates per rank (c = .3, 20,000 lists of 5) inside the central 99.9% of the
    binomial count at the documented probability: uniform c; position-biased c / r;
    cascade c (1 - c/2)^(r-1) (a user reaches rank r unless one of the r-1 earlier
    positions was clicked and the stop coin, 1/2, came up)."""
    from scipy.stats import binom

    from serpeval.online.interleaving.analysis import random_clicks

    c, n, ranks = 0.3, 20_000, np.arange(1, 6)
    expected = {"uniform": np.full(5, c), "position": c / ranks,
                "cascade": c * (1 - c / 2) ** (ranks - 1)}[model]
    rng = np.random.default_rng(2)
    counts = np.sum([random_clicks(model, 5, c, rng) for _ in range(n)], axis=0)
    assert (binom.ppf(0.0005, n, expected) <= counts).all()
    assert (counts <= binom.isf(0.0005, n, expected)).all()
    with pytest.raises(OptionError, match="unknown random clicker 'gaze'"):
        random_clicks("gaze", 5, c, rng)


def test_python_pairwise_sum_is_numpys() -> None:
    """Probabilistic interleaving sums short lists in Python floats: NumPy's pairwise sum, bit
    for bit (blocks of 8 from 8 values on, halves above 128), for every length up to 300."""
    rng = np.random.default_rng(12)
    for n in [*range(40), *range(120, 140), 255, 256, 257, 300]:
        for _ in range(20):
            x = rng.random(n) * 10.0 ** rng.integers(-9, 9, n) * rng.choice([-1.0, 1.0], n)
            assert np.float64(pi._np_sum(x.tolist())).tobytes() == x.sum().tobytes()


def _draft_by_numpy(rankings, k, rng, tau):
    """Probabilistic drafting as it was written with NumPy arrays (the reference)."""
    union = list(dict.fromkeys(d for ranking in rankings for d in ranking))
    ranks = np.array(rank_table(rankings, union), dtype=np.float64)
    lengths = np.array([len(r) for r in rankings], dtype=np.float64)
    weights = np.where(ranks > 0, ranks, lengths[:, None] + 1.0) ** -float(tau)
    live = weights.copy()
    docs, probs = [], []
    for pick_team, pick_doc in rng.random((k, 2)).tolist():
        team = int(pick_team * len(rankings))
        totals = live.sum(axis=1)
        cdf = live[team].cumsum() / totals[team]
        doc = min(int(cdf.searchsorted(pick_doc, side="right")), len(union) - 1)
        probs.append(tuple((weights[:, doc] / totals).tolist()))
        live[:, doc] = 0.0
        docs.append(union[doc])
    return tuple(docs), tuple(probs)


@pytest.mark.parametrize("tau", [0.5, 3.0, 7.0])
def test_probabilistic_drafting_is_the_numpy_formula_bit_for_bit(tau: float) -> None:
    long_a = [f"d{i}" for i in range(150)]
    pairs = [[A, B], [long_a, long_a[::-1]], [A, B[::-1], [f"e{i}" for i in range(12)]],
             [*PAIRS["disjoint tails"][0], *PAIRS["disjoint tails"][1]][::2]]
    for rankings in pairs:
        union = len({d for r in rankings for d in r})
        for seed in range(30):
            k = union if seed % 5 == 0 else min(10, union)
            shown = pi.interleave(rankings, k, np.random.default_rng(seed), tau=tau)
            docs, probs = _draft_by_numpy(rankings, k, np.random.default_rng(seed), tau)
            assert shown.docs == docs
            assert np.array(shown.probabilities).tobytes() == np.array(probs).tobytes()
