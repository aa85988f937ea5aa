"""Interleaving at serving time: hand-worked cases (incl. the two known regressions), exact
distributions by enumeration, properties over random rankings, serialization, errors."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving import (
    METHODS,
    NEUTRAL,
    Interleaving,
    credit,
    interleave,
    optimized,
    team_draft,
)

# ------------------------------------------------------------------ exact enumeration helpers


def team_draft_lists(a: list, b: list, k: int, ignore_shared: bool = False) -> Counter:
    """Every (docs, teams) team draft can produce, with its exact probability.

    Slot decisions only read ``draws[slot] < 0.5``, so draws in {0.25, 0.75} enumerate every
    coin sequence, each with probability 2^-k.
    """
    out: Counter = Counter()
    for draws in itertools.product([0.25, 0.75], repeat=k):
        docs, teams, _ = team_draft._draft_two(a, b, k, list(draws), ignore_shared)
        out[(tuple(docs), tuple(teams))] += Fraction(1, 2**k)
    return out


def make(docs: tuple, teams: tuple, a: list, b: list, method: str = "team_draft") -> Interleaving:
    from serpeval.online.interleaving._result import rank_table

    return Interleaving(method, docs, teams, rank_table([a, b], docs), (len(a), len(b)), teams[0])


# ------------------------------------------------------------------ the two known regressions


def test_balanced_interleaving_bias_b_wins_two_thirds() -> None:
    """A = (x, y, z), B = (y, z, x); one click uniformly at random: B wins with probability 2/3."""
    a, b = ["x", "y", "z"], ["y", "z", "x"]
    lists = {interleave([a, b], "balanced", k=3, rng=seed).docs for seed in range(50)}
    assert lists == {("x", "y", "z"), ("y", "x", "z")}  # the two possible interleavings
    p_b_wins = Fraction(0)
    for docs in lists:  # each list with probability 1/2, each position clicked with 1/3
        shown = make(docs, (0, 1, 0), a, b, "balanced")
        for pos in range(3):
            if credit(shown, [pos]).outcome == -1:
                p_b_wins += Fraction(1, 2) * Fraction(1, 3)
    assert p_b_wins == Fraction(2, 3)


def test_team_draft_blind_spot_expected_tie() -> None:
    """A = (d1, d2, d3, d4), B = (d2, d3, d4, d1), only d3 relevant (clicked whenever shown):
    B ranks d3 higher, yet d3 joins each team with probability 1/2: expected tie."""
    a, b = ["d1", "d2", "d3", "d4"], ["d2", "d3", "d4", "d1"]
    expected = Fraction(0)
    for (docs, teams), p in team_draft_lists(a, b, 4).items():
        out = credit(make(docs, teams, a, b), [docs.index("d3")])
        expected += p * out.outcome
    assert expected == 0


def test_team_draft_hand_worked_distribution() -> None:
    # A = (a, b), B = (b, c), k = 3. Round 1: coin A -> a (A), b (B); coin B -> b (B), a (A).
    # Round 2: team sizes equal again; A's list is used up, so B adds c either way.
    lists = team_draft_lists(["a", "b"], ["b", "c"], 3)
    assert lists == {(("a", "b", "c"), (0, 1, 1)): Fraction(1, 2),
                     (("b", "a", "c"), (1, 0, 1)): Fraction(1, 2)}


def test_team_draft_ignore_shared_marks_common_prefix_neutral() -> None:
    a, b = ["s1", "s2", "a3", "a4"], ["s1", "s2", "b3", "b4"]
    shown = interleave([a, b], k=4, rng=3, ignore_shared=True)
    assert shown.docs[:2] == ("s1", "s2")
    assert shown.teams[:2] == (NEUTRAL, NEUTRAL)
    assert sorted(shown.teams[2:]) == [0, 1]
    out = credit(shown, [0, 1])  # clicks on shared documents are ignored, and counted
    assert out.outcome == 0
    assert out.ignored_clicks == 2
    assert out.credits == (0.0, 0.0)
    # Without the option the shared documents are drafted to teams as usual.
    plain = interleave([a, b], k=4, rng=3)
    assert NEUTRAL not in plain.teams


# ------------------------------------------------------------------ properties

ids = st.integers(0, 14)
ranking = st.lists(ids, min_size=1, max_size=10, unique=True)


@given(ranking, ranking, st.integers(1, 12), st.sampled_from(sorted(METHODS)), st.integers(0, 10**6))
def test_shown_list_properties(a: list, b: list, k: int, method: str, seed: int) -> None:
    union = set(a) | set(b)
    k = min(k, len(union))
    shown = interleave([a, b], method, k=k, rng=seed)
    assert len(shown.docs) == k
    assert len(set(shown.docs)) == k
    assert set(shown.docs) <= union
    assert interleave([a, b], method, k=k, rng=seed) == shown  # deterministic under a seed
    assert Interleaving.from_json(shown.to_json()) == shown  # logs round-trip
    for s, ranking_s in enumerate((a, b)):
        rank = {d: r for r, d in enumerate(ranking_s, 1)}
        assert shown.ranks[s] == tuple(rank.get(d, 0) for d in shown.docs)
    if method == "team_draft":  # each team keeps its ranker's relative order
        for s, ranking_s in enumerate((a, b)):
            team = shown.team_docs(s)
            assert team == sorted(team, key=ranking_s.index)
        sizes = Counter(shown.teams)
        # Teams stay within one pick of each other unless the smaller team's ranker ran out
        # of documents not already shown (e.g. A=[0,1,2,3], B=[0,4,5,1], k=6: B has only 4, 5 left).
        smaller = 0 if sizes[0] < sizes[1] else 1
        exhausted = set((a, b)[smaller]) <= set(shown.docs)
        assert abs(sizes[0] - sizes[1]) <= 1 or exhausted
    if method == "optimized":  # every shown document is the top remaining one of A or B
        for i, doc in enumerate(shown.docs):
            rest_a = [d for d in a if d not in shown.docs[:i]]
            rest_b = [d for d in b if d not in shown.docs[:i]]
            assert doc in (rest_a[:1] + rest_b[:1])


def swap(result: Interleaving) -> Interleaving:
    """The same impression with the two rankers' roles exchanged."""
    return Interleaving(
        result.method, result.docs,
        tuple(t if t == NEUTRAL else 1 - t for t in result.teams),
        result.ranks[::-1], result.lengths[::-1], result.first if result.first == NEUTRAL else 1 - result.first,
        None if result.probabilities is None else tuple(p[::-1] for p in result.probabilities),
        dict(result.params),
    )


@given(ranking, ranking, st.sampled_from(sorted(METHODS)), st.integers(0, 10**6),
       st.lists(st.integers(0, 9), max_size=5))
def test_swapping_a_and_b_mirrors_the_outcome(a: list, b: list, method: str, seed: int,
                                              clicks: list) -> None:
    k = min(5, len(set(a) | set(b)))
    shown = interleave([a, b], method, k=k, rng=seed)
    positions = [c for c in clicks if c < k]
    out, mirrored = credit(shown, positions), credit(swap(shown), positions)
    assert mirrored.outcome == -out.outcome
    assert mirrored.credits == pytest.approx(out.credits[::-1])


def test_team_draft_distribution_is_symmetric_in_a_and_b() -> None:
    a, b = ["a", "b", "c", "d"], ["c", "a", "e", "f"]
    ab = team_draft_lists(a, b, 4)
    ba = team_draft_lists(b, a, 4)
    assert {(docs, tuple(1 - t for t in teams)): p for (docs, teams), p in ba.items()} == dict(ab)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_identical_rankers_tie_in_expectation(method: str) -> None:
    a = ["a", "b", "c", "d", "e"]
    rng = np.random.default_rng(0)
    total = 0.0
    for i in range(400):
        shown = interleave([a, list(a)], method, k=5, rng=i)
        clicks = np.flatnonzero(rng.random(5) < 0.4).tolist()
        out = credit(shown, clicks)
        total += out.expected_outcome if out.expected_outcome is not None else out.outcome
    if method == "team_draft":
        # Mean of +-1 outcomes over 400 impressions: well within 4 standard errors of 0.
        assert abs(total / 400) < 4 * np.sqrt(1 / 400)
    else:  # balanced, optimized and probabilistic tie on every single impression
        assert total == 0


def test_probabilistic_marginalised_credit_hand_worked() -> None:
    # Two slots; ranker A drew slot 0 with p = (.6, .2) and slot 1 with p = (.5, .5).
    # Posterior P(slot belongs to A) = .75 and .5. Clicks on both slots:
    # P(A gets both) = .375 -> A wins; P(B both) = .125 -> B wins; else tie.
    # E[sign] = .375 - .125 = .25; expected credits (1.25, .75).
    shown = Interleaving("probabilistic", ("x", "y"), (0, 1), ((1, 2), (2, 1)), (2, 2), 0,
                         ((0.6, 0.2), (0.5, 0.5)), {"tau": 3.0})
    out = credit(shown, [0, 1])
    assert out.expected_outcome == pytest.approx(0.25)
    assert out.credits == pytest.approx((1.25, 0.75))
    assert out.outcome == pytest.approx(0.25)  # the marginalised outcome itself, not its sign
    assert out.winner == 0


def test_probabilistic_is_fair_under_random_clicks() -> None:
    """Fidelity: a user clicking at random gives no expected preference (unlike balanced)."""
    a, b = ["x", "y", "z"], ["y", "z", "x"]
    rng = np.random.default_rng(1)
    values = []
    for i in range(1000):
        shown = interleave([a, b], "probabilistic", k=3, rng=i)
        values.append(credit(shown, [int(rng.integers(3))]).expected_outcome)
    assert abs(np.mean(values)) < 4 * np.std(values) / np.sqrt(len(values))


def test_optimized_distribution_is_unbiased() -> None:
    a, b = ["x", "y", "z", "w"], ["y", "z", "x", "v"]
    lists, p, bias = optimized.distribution(tuple(a), tuple(b), 4, "inverse")
    assert p.sum() == pytest.approx(1.0)
    assert bias < 1e-9
    # A user clicking uniformly at random within the top j gives zero expected credit.
    for j in range(1, 5):
        expected = 0.0
        for lst, pl in zip(lists, p, strict=True):
            shown = make(lst, (0,) * 4, a, b, "optimized")
            shown = Interleaving("optimized", lst, (0,) * 4, shown.ranks, (4, 4), 0,
                                 params={"credit_function": "inverse"})
            for pos in range(j):
                c = credit(shown, [pos]).credits
                expected += pl * (c[0] - c[1]) / j
        assert expected == pytest.approx(0.0, abs=1e-9)


def test_optimized_on_the_balanced_bias_example() -> None:
    """A = (x, y, z), B = (y, z, x): every allowed list shows x, y, z, and
    delta = 1/rank_A - 1/rank_B is x: 1 - 1/3 = 2/3, y: 1/2 - 1 = -1/2, z: 1/3 - 1/2 = -1/6.
    A random single click gives expected credit (2/3 - 1/2 - 1/6) / 3 = 0: unbiased in credit,
    although the *sign* of one click still favours B in 2 of 3 cases (the method's unbiasedness
    is about credit, which is why the statistics should look at credit too)."""
    a, b = ["x", "y", "z"], ["y", "z", "x"]
    lists, p, _ = optimized.distribution(tuple(a), tuple(b), 3, "inverse")
    expected_credit = 0.0
    for lst, pl in zip(lists, p, strict=True):
        assert sorted(lst) == ["x", "y", "z"]
        shown = Interleaving("optimized", lst, (0, 0, 0), make(lst, (0, 0, 0), a, b).ranks, (3, 3), 0,
                             params={"credit_function": "inverse"})
        for pos in range(3):
            c = credit(shown, [pos]).credits
            expected_credit += pl * (c[0] - c[1]) / 3
    assert expected_credit == pytest.approx(0.0, abs=1e-12)


def test_optimized_teams_follow_the_top_remaining_document() -> None:
    """A slot is a ranker's when its document is that ranker's top remaining one, worked by
    hand: A = (a,) runs out after its one document; B = (b, c, d). Shown (b, a, c): b is B's top,
    a is A's top (B's top remaining is c), c is B's (A has nothing left). And with A = (x, y, z)
    shown (y, x, z): y is not A's top (x is), x is, then z, past the two shown above it."""
    assert optimized._heads(("a",), ("b", "a", "c")) == [False, True, False]
    assert optimized._heads(("b", "c", "d"), ("b", "a", "c")) == [True, False, True]
    assert optimized._heads(("x", "y", "z"), ("y", "x", "z")) == [False, True, True]
    for seed in range(20):  # every list of the distribution: A's one slot, then B's
        shown = interleave([["a"], ["b", "c", "d"]], "optimized", k=3, rng=seed)
        assert shown.teams == tuple(0 if d == "a" else 1 for d in shown.docs), shown.docs


def test_multileaving_three_rankers() -> None:
    rankings = [["a", "b", "c"], ["b", "d", "e"], ["f", "a", "g"]]
    shown = interleave(rankings, "tdm", k=6, rng=0)
    assert shown.n_rankers == 3
    assert sorted(Counter(shown.teams).values()) == [2, 2, 2]
    out = credit(shown, [shown.teams.index(2), len(shown.teams) - 1 - shown.teams[::-1].index(2)])
    assert out.winner == 2
    assert out.outcome == -1
    prefs = np.array(out.preferences)
    np.testing.assert_array_equal(prefs, -prefs.T)
    pm = credit(interleave(rankings, "pm", k=6, rng=0), [0])
    np.testing.assert_allclose(np.array(pm.preferences), -np.array(pm.preferences).T)


def test_rankings_of_different_lengths_and_no_overlap() -> None:
    shown = interleave([["a"], ["b", "c", "d", "e"]], k=5, rng=1)
    assert sorted(shown.docs) == ["a", "b", "c", "d", "e"]
    assert shown.team_docs(0) == ["a"]  # A is used up; B fills the list
    assert shown.team_docs(1) == ["b", "c", "d", "e"]


# ------------------------------------------------------------------ errors


def test_bad_input_errors() -> None:
    with pytest.raises(InputError, match="ranking 1 is empty"):
        interleave([["a"], []])
    with pytest.raises(OptionError, match="k=5 is larger than the 3 distinct documents"):
        interleave([["a", "b"], ["b", "c"]], k=5)
    with pytest.raises(OptionError, match="Did you mean 'team_draft'"):
        interleave([["a"], ["b"]], "team_drfat", k=2)
    with pytest.raises(InputError, match="lists document 'a' twice"):
        interleave([["a", "a"], ["b"]], k=2)
    with pytest.raises(InputError, match="at least 2 rankings"):
        interleave([["a"]], k=1)
    with pytest.raises(OptionError, match="balanced interleaving compares 2 rankers"):
        interleave([["a"], ["b"], ["c"]], "balanced", k=3)
    with pytest.raises(OptionError, match="does not take option"):
        interleave([["a"], ["b"]], "balanced", k=2, tau=3)
    with pytest.raises(OptionError, match="tau must be a positive number"):
        interleave([["a"], ["b"]], "probabilistic", k=2, tau=0)
    with pytest.raises(OptionError, match="rng must be an int seed >= 0"):
        interleave([["a"], ["b"]], k=2, rng=-1)
    shown = interleave([["a", "b"], ["b", "c"]], k=3, rng=0)
    with pytest.raises(InputError, match=r"click at position 3 was not shown: positions are 0-based .* \(0..2\)"):
        credit(shown, [3])
    with pytest.raises(InputError, match="must be integers"):
        credit(shown, ["top"])
    with pytest.raises(InputError, match="not an interleaving record"):
        Interleaving.from_json('{"docs": []}')


def test_k_none_shows_the_union_and_outcome_serializes() -> None:
    shown = interleave([["a", "b"], ["c"]], k=None, rng=0)
    assert len(shown) == 3
    out = credit(shown, [0])
    assert out.to_dict()["clicks"] == [0]
