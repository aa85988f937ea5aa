"""RBP's per-query rescaling (trec_eval's m_rbp.c) with fractional grades, where nearly every
query has a highest grade of its own.

``normalized_gains`` looped in Python over the distinct highest grades, each step masking
every query: quadratic in the number of queries with fractional grades (80,000 queries took
5.4 s for RBP alone, 150,000 about 19 s; now a fraction of a second, measured by hand: speed is
never a timed assertion here). The values are checked against the definition written out query
by query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from serpeval import evaluate


def _rbp_oracle(ranked: list[float | None], judged: list[float], table: dict[int, float], p: float) -> float:
    """(1 - p) sum_i gain_i p^(i-1), the gains of trec_eval's table (the grades 0..G with
    gain = grade, the listed ones overridden; a fractional top grade G keeps its gain),
    rescaled to (gain - lo) / (hi - lo) when lo < 0 or hi > 1."""
    top = max([g for g in judged if g >= 0], default=-1.0)
    free = top
    if top >= 0 and top == math.floor(top):
        free = int(top)
        while free >= 0 and free in table:
            free -= 1
    values = list(table.values())
    lo = min([0.0, *values])
    hi = max([0.0, *values, *([float(free)] if free >= 0 else [])])

    def gain(g: float | None) -> float:
        if g is None:
            return 0.0
        if g == math.floor(g) and int(g) in table:
            value = table[int(g)]
        elif 0 <= g <= top:
            value = g
        else:
            return 0.0
        return (value - lo) / (hi - lo) if (lo < 0 or hi > 1) else value

    total, weight = 0.0, 1.0
    for g in ranked:
        total += gain(g) * weight
        weight *= p
    return (1 - p) * total


@pytest.mark.parametrize("table", ["", "1:5;2:1", "0:2;3:-1", "2:4;3:4.5"])
def test_fractional_rescaling_equals_the_definition(table: str) -> None:
    rng = np.random.default_rng(7)
    gains = {} if not table else {int(k): float(v) for k, v in (pair.split(":") for pair in table.split(";"))}
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(60):
        # a third of the queries with whole grades (their top may be listed in the table)
        grades = rng.integers(-1, 5, size=6).astype(float) if q % 3 == 0 else np.round(rng.uniform(-1, 4, size=6), 1)
        qrels[f"q{q}"] = {f"d{i}": float(g) for i, g in enumerate(grades)}
        run[f"q{q}"] = {f"d{i}": float(7 - i) for i in range(7)}  # d6 is not judged
    name = "RBP(p=0.8)" if not table else f"RBP(p=0.8,gains={table})"
    got = evaluate(qrels, run, [name], grades="float").per_query("run", name)
    for q in qrels:
        ranked = [qrels[q].get(f"d{i}") for i in range(7)]
        want = _rbp_oracle(ranked, list(qrels[q].values()), gains, 0.8)
        assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-15), q
