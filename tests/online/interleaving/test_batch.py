"""Batched interleaving gives exactly the serving code's lists, teams and credit."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.online.interleaving.test_interleaving import team_draft_lists

from serpeval.core.errors import InputError, OptionError
from serpeval.online.interleaving import NEUTRAL, Interleaving, balanced, credit
from serpeval.online.interleaving._result import rank_table
from serpeval.online.interleaving.batch import credit_batch, interleave_batch

ranking = st.lists(st.integers(0, 9), min_size=1, max_size=6, unique=True)


def _padded(rows: list[list[int]], width: int) -> np.ndarray:
    return np.array([r + [-1] * (width - len(r)) for r in rows])


def _batch_lists(a: list[int], b: list[int], k: int, ignore_shared: bool) -> Counter:
    """Exact distribution of batched team draft: every coin vector, each 2^-c."""
    c = (k + 1) // 2
    coins = np.array(list(itertools.product([True, False], repeat=c)))
    n = len(coins)
    width = max(len(a), len(b))
    batch = interleave_batch(_padded([a] * n, width), _padded([b] * n, width), k=k, coins=coins,
                             ignore_shared=ignore_shared)
    out: Counter = Counter()
    for docs, teams in zip(batch.docs.tolist(), batch.teams.tolist(), strict=True):
        shown = [d for d in docs if d >= 0]
        out[(tuple(shown), tuple(teams[: len(shown)]))] += Fraction(1, n)
    return out


@settings(max_examples=40)
@given(ranking, ranking, st.integers(1, 6), st.booleans())
def test_batched_team_draft_has_the_serving_distribution(a: list[int], b: list[int], k: int,
                                                        ignore_shared: bool) -> None:
    k = min(k, len(set(a) | set(b)))
    assert _batch_lists(a, b, k, ignore_shared) == team_draft_lists(a, b, k, ignore_shared)


@settings(max_examples=40)
@given(ranking, ranking, st.integers(1, 6), st.integers(0, 1000))
def test_batched_balanced_matches_serving_and_credit(a: list[int], b: list[int], k: int,
                                                     seed: int) -> None:
    k = min(k, len(set(a) | set(b)))
    width = max(len(a), len(b))
    n = 16
    batch = interleave_batch(_padded([a] * n, width), _padded([b] * n, width), "balanced", k=k,
                             rng=seed)
    rng = np.random.default_rng(seed)
    clicks = rng.random((n, k)) < 0.4
    outcome = credit_batch(batch, clicks).outcome
    for row in range(n):
        a_first = batch.first[row] == 0
        serving = balanced.interleave([a, b], k, _FixedCoin(0.0 if a_first else 0.9))
        assert tuple(batch.docs[row]) == serving.docs
        assert tuple(batch.rank_a[row]) == serving.ranks[0]
        expected = credit(serving, np.flatnonzero(clicks[row]).tolist()).outcome
        assert outcome[row] == expected


class _FixedCoin:
    """A stand-in generator whose ``random()`` returns a fixed value (decides A-first)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self, *_: object) -> float:
        return self.value


def test_batched_team_draft_credit_matches_serving() -> None:
    rng = np.random.default_rng(0)
    n = 500
    a = np.argsort(rng.random((n, 12)), axis=1)[:, :6]
    b = np.argsort(rng.random((n, 12)), axis=1)[:, :6]
    batch = interleave_batch(a, b, k=6, rng=1)
    clicks = rng.random((n, 6)) < 0.3
    got = credit_batch(batch, clicks)
    for row in range(n):
        docs = tuple(batch.docs[row].tolist())
        shown = Interleaving("team_draft", docs, tuple(batch.teams[row].tolist()),
                             rank_table([a[row].tolist(), b[row].tolist()], docs), (6, 6),
                             int(batch.first[row]))
        out = credit(shown, np.flatnonzero(clicks[row]).tolist())
        assert (got.credit_a[row], got.credit_b[row], got.outcome[row]) == (
            out.credits[0], out.credits[1], out.outcome)
        assert tuple(batch.rank_a[row]) == shown.ranks[0]


def test_batch_pads_when_the_union_is_short_and_is_balanced() -> None:
    a = np.array([[0, 1, -1], [0, -1, -1]])
    b = np.array([[1, 0, -1], [0, -1, -1]])
    batch = interleave_batch(a, b, k=3, rng=0)
    assert batch.docs[1].tolist() == [0, -1, -1]
    assert batch.teams[1, 1] == NEUTRAL
    with pytest.raises(InputError, match="click on an empty slot"):
        credit_batch(batch, [[False, False, False], [False, True, False]])
    # First-pick balance over many impressions: the coin is fair.
    rng = np.random.default_rng(5)
    n = 20_000
    a = np.argsort(rng.random((n, 20)), axis=1)[:, :10]
    b = np.argsort(rng.random((n, 20)), axis=1)[:, :10]
    first = interleave_batch(a, b, rng=2).first
    assert abs(first.mean() - 0.5) < 4 * 0.5 / np.sqrt(n)


def test_batch_input_errors() -> None:
    with pytest.raises(InputError, match="document after padding"):
        interleave_batch([[0, -1, 2]], [[1, 2, 3]])
    with pytest.raises(InputError, match="lists a document twice"):
        interleave_batch([[0, 0]], [[1, 2]])
    with pytest.raises(InputError, match="same impressions"):
        interleave_batch([[0, 1]], [[1, 2], [2, 3]])
    with pytest.raises(OptionError, match="supports team_draft and balanced"):
        interleave_batch([[0, 1]], [[1, 2]], "optimized")
    with pytest.raises(InputError, match="empty ranking"):
        interleave_batch([[-1, -1]], [[1, 2]])
