"""The plain formulas on lists of grades (hand-worked)."""

from __future__ import annotations

import math

import pytest

import serpeval
from serpeval.core.errors import InvalidParameterError


@pytest.mark.parametrize(("flags", "expected"), [([1, 0, 0], 1.0), ([0, 1], 0.5), ([0, 0, 0, 0, 1], 0.2),
                                                 ([0, 0], 0.0), ([], 0.0)])
def test_reciprocal_rank(flags: list[int], expected: float) -> None:
    assert serpeval.reciprocal_rank(flags) == expected


def test_reciprocal_rank_with_cutoff() -> None:
    assert serpeval.reciprocal_rank([0, 0, 1], k=2) == 0.0


def test_dcg_exponential_gain() -> None:
    # (2^3-1)/log2(2) + (2^2-1)/log2(3) + (2^3-1)/log2(4) = 7 + 3/1.58496 + 3.5
    assert serpeval.dcg([3, 2, 3], k=10) == pytest.approx(7 + 3 / math.log2(3) + 3.5)
    assert serpeval.dcg([3, 2, 3], k=1) == 7.0
    assert serpeval.dcg([3, 2, 3], k=2, gain="linear") == pytest.approx(3 + 2 / math.log2(3))


def test_ndcg_uses_all_judged_grades_as_ideal() -> None:
    # ranking [0, 1]; ideal from judged grades [1, 1]: DCG = 1/log2(3), IDCG = 1 + 1/log2(3)
    assert serpeval.ndcg([0, 1], [1, 1], k=10) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert serpeval.ndcg([2, 1], [1, 2]) == 1.0
    assert serpeval.ndcg([1, 0], [0, 0]) == 0.0  # ideal DCG = 0


def test_formula_errors() -> None:
    with pytest.raises(InvalidParameterError, match="k must be an integer >= 1"):
        serpeval.dcg([1], k=0)
    with pytest.raises(InvalidParameterError, match="gain must be 'exp' or 'linear'"):
        serpeval.dcg([1], gain="log")
    with pytest.raises(InvalidParameterError, match="finite numbers"):
        serpeval.ndcg([1], [float("nan")])
