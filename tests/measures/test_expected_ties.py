"""ties="expected": every registered measure against brute force over all orders of each tie
group (issue 29 item 1).

The brute force is independent of :mod:`serpeval.measures.expected`: every order of every
tie group of a query becomes a query of its own, ranked by distinct scores under the
trec_eval policy, and the query's value is the plain mean over those orders.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval import evaluate
from serpeval.core.errors import InvalidParameterError
from serpeval.measures import REGISTRY, Measure, parse_measure
from serpeval.measures.expected import ADDITIVE, CLOSED_FORMS, ORDER_FREE, method

CUTOFF = 3


#: Jain et al.'s propensities depend on the number of queries, which the brute force (one
#: query per order) changes: these are checked against brute force with the query count kept.
PER_COLLECTION = {"psP", "psnDCG"}


def every_measure() -> list[Measure]:
    """One measure of every non-diversity family, with a cutoff where it takes one."""
    out = []
    for spec in REGISTRY:
        if spec.subtopics or spec.name in PER_COLLECTION:
            continue
        out.append(spec(CUTOFF) if spec.cutoff != "none" else spec())
        if spec.cutoff == "optional":
            out.append(spec())
    return out


MEASURES = every_measure() + [parse_measure(m) for m in (
    "RBP(p=0.5,scale=binary)", "RBP(scale=grade,min_grade=2)", "RBP(p=0.8,gains=0:1;2:5)", "RBP(p=0)", "RBP(p=1)",
    "nDCG(gain=exp,gains=1:0.5)@3", "AP(rel=2)", "RR(rel=2)@2", "Bpref(rel=2)", "ERR(max_grade=3)@2")]


def brute_force(qrels: dict, run: dict, measures: list[Measure]) -> dict[str, dict[str, float]]:
    """Per measure and query: the mean over every order of every tie group."""
    bq: dict[str, dict[str, int]] = {}
    br: dict[str, dict[str, float]] = {}
    counts = {}
    for q, docs in run.items():
        # trec_eval's order first (score desc, doc id desc), then all orders within groups
        items = sorted(docs.items(), key=lambda t: (-t[1], [-b for b in t[0].encode()]))
        groups = [[d for d, _ in g] for _, g in itertools.groupby(items, key=lambda t: t[1])]
        combos = list(itertools.product(*[itertools.permutations(g) for g in groups]))
        counts[q] = len(combos)
        for i, combo in enumerate(combos):
            order = [d for group in combo for d in group]
            bq[f"{q}#{i}"] = qrels[q]
            br[f"{q}#{i}"] = {d: float(len(order) - j) for j, d in enumerate(order)}
    res = evaluate(bq, br, measures)
    out = {}
    for m in res.measures:
        per = res.per_query("run", m)
        out[str(m)] = {q: math.fsum(per[f"{q}#{i}"] for i in range(counts[q])) / counts[q] for q in run}
    return out


def check(qrels: dict, run: dict, measures: list[Measure]) -> None:
    expected = brute_force(qrels, run, measures)
    got = evaluate(qrels, run, measures, ties="expected")
    for m in got.measures:
        per = got.per_query("run", m)
        for q in run:
            assert per[q] == pytest.approx(expected[str(m)][q], rel=1e-9, abs=1e-12), (str(m), q)


@st.composite
def tied_query(draw: st.DrawFn, max_group: int = 4, first_group: int | None = None) -> tuple[dict, dict]:
    """A query with a few tie groups (at most ``max_group`` docs each, the first one up to
    ``first_group``; grades -1..3, docs not in the qrels too) and judged docs that were not
    retrieved."""
    n_groups = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, max_group)) for _ in range(n_groups)]
    if first_group is not None:
        sizes[draw(st.integers(0, n_groups - 1))] = draw(st.integers(1, first_group))
    run, qrels, k = {}, {}, 0
    for g, size in enumerate(sizes):
        for _ in range(size):
            doc = f"d{k}" if draw(st.booleans()) else f"doc{k:03d}"
            k += 1
            run[doc] = float(n_groups - g)
            grade = draw(st.integers(-2, 3))
            if grade > -2:
                qrels[doc] = grade
    for extra in range(draw(st.integers(0, 2))):
        qrels[f"unret{extra}"] = draw(st.integers(0, 2))
    if not qrels:
        qrels["unret"] = 1
    return qrels, run


@settings(max_examples=25, deadline=None)
@given(st.lists(tied_query(max_group=3, first_group=6), min_size=1, max_size=3))
def test_every_measure_equals_brute_force(queries: list[tuple[dict, dict]]) -> None:
    qrels = {f"q{i}": q for i, (q, _) in enumerate(queries)}
    run = {f"q{i}": r for i, (_, r) in enumerate(queries)}
    check(qrels, run, MEASURES)


def test_groups_of_eight() -> None:
    """Two tie groups of 8 (8! = 40,320 orders each), mixed grades, one straddling the cutoffs."""
    grades = [3, 1, 0, -1, 1, 2, 0, 1]
    run = {"q1": {**{f"a{i}": 2.0 for i in range(8)}, "top": 5.0}, "q2": {f"b{i}": 0.5 for i in range(8)}}
    qrels = {"q1": {f"a{i}": g for i, g in enumerate(grades) if g >= 0} | {"top": 0, "x": 2},
             "q2": {f"b{i}": g for i, g in enumerate(reversed(grades)) if g >= 0}}
    measures = [m for m in MEASURES if m.spec.name in CLOSED_FORMS] + [parse_measure(m) for m in (
        "ERR@5", "Bpref", "infAP", "RBP", "Judged@3", "IPrec(recall=0.2)", "INST")]
    check(qrels, run, measures)


def test_large_group_against_monte_carlo() -> None:
    """A group of 400 docs (60 relevant): the closed forms agree with the mean of 2,000 seeded
    random orders within 5 standard errors."""
    rng = np.random.default_rng(29)
    n = 400
    grades = rng.permutation(np.repeat([0, 1, 2], [340, 40, 20]))
    qrels = {"q": {f"d{i}": int(g) for i, g in enumerate(grades)}}
    measures = ["P@10", "AP", "RR", "nDCG@20", "Success@5", "Rprec", "R@50", "DCG(gain=exp)@10", "ERR@20", "RBP",
                "Bpref"]
    got = evaluate(qrels, {"q": {f"d{i}": 1.0 for i in range(n)}}, measures, ties="expected").means("run")
    orders = [rng.permutation(n) for _ in range(2000)]
    runs = {f"q#{t}": {f"d{i}": float(n - j) for j, i in enumerate(order)} for t, order in enumerate(orders)}
    res = evaluate({q: qrels["q"] for q in runs}, runs, measures)
    for m in res.measures:
        sample = np.array(list(res.per_query("run", m).values()))
        se = sample.std(ddof=1) / math.sqrt(len(sample))
        assert abs(sample.mean() - got[str(m)]) <= 5 * se + 1e-12, str(m)


# default parameters only: a gains table may give grade 0 more than an unjudged doc, which
# optimistic and pessimistic treat alike
monotone = [m for m in every_measure() if "swap_improves" in m.spec.properties]


@settings(max_examples=25, deadline=None)
@given(st.lists(tied_query(max_group=4), min_size=1, max_size=3))  # at most 24^3 orders a query
def test_optimistic_expected_pessimistic_order(queries: list[tuple[dict, dict]]) -> None:
    """For measures where moving a more relevant doc up never lowers the value:
    pessimistic <= expected <= optimistic, per query."""
    qrels = {f"q{i}": q for i, (q, _) in enumerate(queries)}
    run = {f"q{i}": r for i, (_, r) in enumerate(queries)}
    values = {t: evaluate(qrels, run, monotone, ties=t) for t in ("pessimistic", "expected", "optimistic")}
    for m in monotone:
        low, mid, high = (values[t].per_query("run", m) for t in ("pessimistic", "expected", "optimistic"))
        for q in run:
            slack = 1e-9 * max(1.0, abs(mid[q]))  # the expectation is a mean of many terms
            assert low[q] - slack <= mid[q] <= high[q] + slack, (str(m), q, low[q], mid[q], high[q])


def test_enumeration_refuses_too_many_orders() -> None:
    run = {"q": {f"d{i}": 1.0 for i in range(40)}}
    qrels = {"q": {f"d{i}": i % 2 for i in range(40)}}
    with pytest.raises(InvalidParameterError, match="too many to enumerate exactly"):
        evaluate(qrels, run, ["infAP"], ties="expected")
    # the closed forms have no such limit
    assert evaluate(qrels, run, ["AP"], ties="expected").means("run")["AP"] > 0


def test_method_is_stated() -> None:
    assert "closed form" in method(REGISTRY["AP"])
    assert "each tie group on its own" in method(REGISTRY["infAP"])
    assert "every distinct grade arrangement" in method(REGISTRY["INST"])
    assert "closed form" in method(REGISTRY["Bpref"])
    assert "closed form" in method(REGISTRY["ERR"])
    assert "does not depend on the order" in method(REGISTRY["SetP"])
    assert method(REGISTRY["alpha_nDCG"]).startswith("refused")
    assert {s.name for s in REGISTRY} >= ORDER_FREE
    assert set(CLOSED_FORMS) <= {s.name for s in REGISTRY}
    assert {s.name for s in REGISTRY} >= ADDITIVE
