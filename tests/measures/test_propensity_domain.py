"""psP / psnDCG accept every A and B of their domain (A <= 100, B <= 1e6).

C = (ln N - 1)(B + 1)^A overflowed float64 for large A and B (psP(A=100,B=1000000)@1 raised
OverflowError: an internal error, exit 70 on the command line).
"""

from __future__ import annotations

import math

import pytest

from serpeval import evaluate

QRELS = {"q1": {"a": 1, "b": 1}, "q2": {"b": 1}, "q3": {"b": 1, "c": 0}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}


def _inverse(n_queries: int, n_relevant: int, a: float, b: float) -> float:
    """1/p = 1 + C (N_l + B)^-A, C = (ln N - 1)(B + 1)^A, written in logs so that it stays
    finite: 1 + (ln N - 1) exp(A (ln(B + 1) - ln(N_l + B)))."""
    return 1.0 + (math.log(n_queries) - 1.0) * math.exp(a * (math.log(b + 1.0) - math.log(n_relevant + b)))


@pytest.mark.parametrize(("a", "b"), [(100.0, 1e6), (100.0, 0.5), (0.55, 1.5)])
def test_extreme_parameters_give_the_formula(a: float, b: float) -> None:
    name = f"psP(A={a:g},B={b:g},norm=none)@1"
    got = evaluate(QRELS, RUN, [name]).per_query("run", name)
    # N = 3 judged queries; a is relevant in 1 (q1 ranks it first), b in 3 (q2 ranks it first)
    assert got["q1"] == pytest.approx(_inverse(3, 1, a, b), rel=1e-12)
    assert got["q2"] == pytest.approx(_inverse(3, 3, a, b), rel=1e-12)
    assert got["q3"] == 0.0
