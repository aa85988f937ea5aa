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
    assert serpeval.dcg([3, 2, 3], k=10, gain="exp") == pytest.approx(7 + 3 / math.log2(3) + 3.5)
    assert serpeval.dcg([3, 2, 3], k=1, gain="exp") == 7.0
    assert serpeval.dcg([3, 2, 3], k=2, gain="linear") == pytest.approx(3 + 2 / math.log2(3))


def test_dcg_and_ndcg_default_to_linear_gain_as_the_measure_and_trec_eval() -> None:
    """One default gain: g (trec_eval's, and the nDCG measure's), not 2^g - 1 (issue 28)."""
    # Wikipedia's DCG example: 3/1 + 2/log2(3) + 3/log2(4) + 0 + 1/log2(6) + 2/log2(7) = 6.861
    linear = 3 + 2 / math.log2(3) + 3 / 2 + 1 / math.log2(6) + 2 / math.log2(7)
    assert serpeval.dcg([3, 2, 3, 0, 1, 2], k=6) == pytest.approx(linear)
    assert round(linear, 3) == 6.861
    # README's example: DCG = 3 + 2/log2(3); IDCG of [3, 3, 2, 1] = 3 + 3/log2(3) + 2/2 + 1/log2(5)
    expected = (3 + 2 / math.log2(3)) / (3 + 3 / math.log2(3) + 1 + 1 / math.log2(5))
    assert serpeval.ndcg([3, 2, 0], ideal_grades=[3, 3, 2, 1], k=10) == pytest.approx(expected)
    assert round(expected, 4) == 0.674
    # The same query through the nDCG@10 measure (its default gain is linear).
    result = serpeval.evaluate({"q": {"a": 3, "b": 3, "c": 2, "d": 1}},
                               {"q": {"a": 3.0, "c": 2.0, "x": 1.0}}, ["nDCG@10"])
    assert result.per_query("run", "nDCG@10")["q"] == pytest.approx(expected)


@pytest.mark.parametrize("value", [
    lambda: serpeval.reciprocal_rank([0, 1]), lambda: serpeval.reciprocal_rank([0, 0]),
    lambda: serpeval.dcg([3, 2]), lambda: serpeval.dcg([3, 2], gain="exp"),
    lambda: serpeval.ndcg([1, 0], [1, 1]), lambda: serpeval.ndcg([0], [0]),
])
def test_plain_formulas_return_python_floats(value: object) -> None:
    """Plain Python floats (their repr is the number, as the docstrings show), not np.float64."""
    got = value()  # type: ignore[operator]
    assert type(got) is float


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
