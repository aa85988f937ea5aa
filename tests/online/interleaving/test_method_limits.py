"""Limits of probabilistic (tau) and optimized (k) interleaving: refused with a message
instead of NaN credit or an enumeration that never ends."""

from __future__ import annotations

import math

import numpy as np
import pytest

from serpeval.core.errors import OptionError
from serpeval.online.interleaving import credit, interleave, optimized
from serpeval.online.interleaving.probabilistic import propensities, softmax_weights

A = [f"d{i}" for i in range(30)]
B = A[::-1]


def test_too_steep_tau_is_refused_not_nan() -> None:
    # Before: tau=400 on rankings of 30 made 31 ** -400 underflow to 0.0; the drafting divided
    # 0 by 0, every slot probability was NaN and credit() returned credits (nan, nan) and a
    # silent tie (outcome 0). The limit is -ln(tiny) / ln(31) = 708.396 / 3.434 = 206.29.
    with pytest.raises(OptionError, match=r"tau=400 is too steep.*tau <= 206\.2"):
        interleave([A, B], "probabilistic", k=20, rng=1, tau=400)
    with pytest.raises(OptionError, match="too steep"):
        softmax_weights([np.arange(10)[None, :], np.arange(10)[::-1][None, :]], 10, tau=400)
    with pytest.raises(OptionError, match="too steep"):
        propensities([A, B], A[:3], tau=1e6)


def test_steep_tau_below_the_limit_gives_finite_credit() -> None:
    limit = -math.log(np.finfo(np.float64).tiny) / math.log(31)
    shown = interleave([A, B], "probabilistic", k=30, rng=1, tau=limit * 0.999)
    assert len(set(shown.docs)) == 30
    assert np.isfinite(np.array(shown.probabilities)).all()
    out = credit(shown, list(range(30)))
    # marginalised credit: each clicked slot's posterior over the two rankers sums to 1, so the
    # credits add up to the number of clicks (30)
    assert np.isfinite(out.credits).all()
    assert sum(out.credits) == pytest.approx(30.0)


def test_optimized_refuses_more_lists_than_it_can_solve() -> None:
    a = [f"a{i}" for i in range(20)]
    b = [f"b{i}" for i in range(20)]
    # disjoint rankings: every slot can take A's or B's head, 2^k lists; k = 17 is 131,072,
    # above MAX_LISTS = 65,536 (before: k = 25 enumerated 33 million lists and never returned)
    with pytest.raises(OptionError, match=r"k=17.*more than 65,536 lists"):
        optimized.allowed_lists(tuple(a), tuple(b), 17)
    with pytest.raises(OptionError, match="too many to solve"):
        interleave([a, b], "optimized", k=25, rng=0)
    # identical rankings allow one list at any k: no limit on k itself
    assert optimized.allowed_lists(tuple(a), tuple(a), 20) == [tuple(a)]
    # k = 4 on disjoint rankings: 2^4 = 16 lists
    assert len(optimized.allowed_lists(tuple(a), tuple(b), 4)) == 16


def test_logged_records_with_impossible_teams_or_probabilities_are_refused() -> None:
    from serpeval.core.errors import InputError
    from serpeval.online.interleaving import Interleaving

    logged = interleave([["a", "b", "c"], ["c", "b", "a"]], "team_draft", k=3, rng=0).to_dict()
    # Before: a team index past the rankers passed from_dict and credit() raised IndexError
    with pytest.raises(InputError, match="team 5 for 2 rankers"):
        Interleaving.from_dict(dict(logged, teams=[0, 5, 1]))
    # Before: the string "abc" became the three documents a, b, c
    with pytest.raises(InputError, match="docs must be a list"):
        Interleaving.from_dict(dict(logged, docs="abc"))
    with pytest.raises(InputError, match="rank 7 in ranking 0 of length 3"):
        Interleaving.from_dict(dict(logged, ranks=[[7, 1, 2], [1, 2, 3]]))
    drawn = interleave([["a", "b", "c"], ["c", "b", "a"]], "probabilistic", k=3, rng=0).to_dict()
    # Before: one probability per slot instead of one per ranker: IndexError in credit()
    with pytest.raises(InputError, match="probabilities need one row per doc"):
        Interleaving.from_dict(dict(drawn, probabilities=[[0.5], [0.5], [0.5]]))
    with pytest.raises(InputError, match="must be a dict"):
        Interleaving.from_dict([1, 2])  # type: ignore[arg-type]
    # a well-formed record still round-trips
    assert Interleaving.from_json(Interleaving.from_dict(drawn).to_json()).to_dict() == drawn


def test_team_draft_is_biased_once_a_ranking_runs_out() -> None:
    """The documented exception to team draft's unbiasedness (docs/how-to/interleaving.md,
    team_draft module docstring), enumerated exactly: every coin sequence of the serving code
    and every click pattern of a user clicking each position with probability 0.3."""
    import itertools

    from serpeval.online.interleaving import team_draft

    a, b, k, c = ["a"], ["b", "c", "d"], 4, 0.3
    win_a = win_b = 0.0
    coins = list(itertools.product([0.25, 0.75], repeat=k))  # draw < 0.5: A picks on a tie
    for draws in coins:
        docs, teams, _ = team_draft._draft_two(a, b, k, list(draws), False)
        shown = team_draft.Interleaving("team_draft", tuple(docs), tuple(teams),
                                        team_draft.rank_table([a, b], docs), (1, 3), teams[0])
        for pattern in itertools.product([0, 1], repeat=k):
            p = np.prod([c if x else 1 - c for x in pattern]) / len(coins)
            outcome = team_draft.credit(shown, [i for i, x in enumerate(pattern) if x]).outcome
            win_a += p * (outcome > 0)
            win_b += p * (outcome < 0)
    # hand-worked: A holds one slot, B three, whatever the coins
    assert win_a == pytest.approx(0.3 * 0.7**3)                                  # 0.1029
    assert win_b == pytest.approx(0.7 * (1 - 0.7**3) + 0.3 * (3 * 0.3**2 * 0.7 + 0.3**3))  # 0.5247
    assert (win_b - win_a) / 2 == pytest.approx(0.2109)  # the Δ the how-to quotes


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic", "optimized"])
def test_numpy_integer_k_is_taken(method: str) -> None:
    # Before: "k must be a positive integer ...; got np.int64(3)" for a k read from an array
    shown = interleave([["a", "b", "c"], ["c", "d"]], method, k=np.int64(3), rng=0)
    assert len(shown.docs) == 3
    assert len(set(shown.docs)) == 3
    with pytest.raises(OptionError, match="k must be a positive integer"):
        interleave([["a", "b"], ["b", "a"]], method, k=np.int64(0), rng=0)


def test_batch_and_serving_share_seeds_as_documented() -> None:
    """docs/how-to/interleaving.md: balanced gives the serving list for one impression and the
    same seed; team draft only the same distribution (before, the page said "draw for draw")."""
    from serpeval.online.interleaving.batch import interleave_batch

    a = list(range(10))
    b = [3, 0, 1, 2, *range(4, 10)]
    same = {"balanced": 0, "team_draft": 0}
    for seed in range(40):
        for method in same:
            serving = interleave([a, b], method, k=10, rng=seed).docs
            batch = interleave_batch(np.array([a]), np.array([b]), method, k=10, rng=seed).docs[0]
            same[method] += serving == tuple(batch.tolist())
    assert same["balanced"] == 40
    assert same["team_draft"] < 40
