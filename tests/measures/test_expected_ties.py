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
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from serpeval import evaluate
from serpeval.core.data import Qrels, Run
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


def _orders(sizes: list[int]) -> NDArray[np.intp]:
    """Every order of every tie group (groups of ``sizes`` docs, in rank order, numbered 0, 1,
    ... through the groups): one row of doc numbers per combination, in ``itertools.product``
    order."""
    starts = np.cumsum([0, *sizes])
    perms = [np.array(list(itertools.permutations(range(a, b))), dtype=np.intp).reshape(-1, b - a)
             for a, b in itertools.pairwise(starts)]
    which = np.indices([len(p) for p in perms]).reshape(len(perms), -1)
    return np.hstack([p[w] for p, w in zip(perms, which, strict=True)])


def as_queries(blocks: list[tuple[list[str], list[str], NDArray[np.intp], dict[str, int]]]) -> tuple[Qrels, Run]:
    """Qrels and a run from blocks ``(names, docs, orders, judgments)``: query ``names[i]``
    ranks the docs ``docs[orders[i]]`` (best first) with the scores n, ..., 1 (no tie left)
    and has the judgments ``judgments``. The rows of the dicts ``{name: {doc: float(n - rank)}}``
    and ``{name: judgments}``, built as columns (``from_dict`` checks each of the 10^5 to 10^6
    entries here in Python)."""
    qrels_q, qrels_d, qrels_g, run_q, run_d, run_s = [], [], [], [], [], []
    for names, docs, orders, judgments in blocks:
        n_orders, n = orders.shape
        assert len(names) == n_orders
        run_q.append(pa.array(names).take(np.repeat(np.arange(n_orders), n)))
        run_d.append(pa.array(docs).take(orders.ravel()))
        run_s.append(np.tile(np.arange(n, 0, -1, dtype=np.float64), n_orders))
        qrels_q.append(pa.array(names).take(np.repeat(np.arange(n_orders), len(judgments))))
        qrels_d.append(pa.array(list(judgments)).take(np.tile(np.arange(len(judgments)), n_orders)))
        qrels_g.append(np.tile(np.array(list(judgments.values()), dtype=np.int64), n_orders))
    qrels = Qrels(pa.chunked_array(qrels_q), pa.chunked_array(qrels_d), np.concatenate(qrels_g))
    run = Run(pa.chunked_array(run_q), pa.chunked_array(run_d), np.concatenate(run_s))
    return qrels, run


def _distinct_outcomes(orders: NDArray[np.intp], docs: list[str], judgments: dict[str, int]
                       ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The orders that give distinct rankings of grades (a doc not judged: its own mark), and
    how many orders give each. With no tie left, a query's values depend on its judgments and
    on the grade (or absence of one) at each rank, not on which doc of a grade is where: the
    mean over the distinct rankings weighted by their counts (equal counts, in fact: the
    product of the factorials of the multiplicities of the grades in each group) is the mean
    over every order (two groups of 8 docs: 2 x 40,320 orders, 2 x 3,360 distinct rankings)."""
    unjudged = min([*judgments.values(), 0]) - 1
    marks = np.array([judgments.get(d, unjudged) for d in docs], dtype=np.int64)
    _, first, counts = np.unique(marks[orders], axis=0, return_index=True, return_counts=True)
    return orders[first], counts


def brute_force(qrels: dict, run: dict, measures: list[Measure]) -> dict[str, dict[str, float]]:
    """Per measure and query: the mean over every order of every tie group (each distinct
    ranking of grades evaluated once, weighted by the number of orders that give it)."""
    blocks, weights = [], []
    for q, docs in run.items():
        # trec_eval's order first (score desc, doc id desc), then all orders within groups
        items = sorted(docs.items(), key=lambda t: (-t[1], [-b for b in t[0].encode()]))
        sizes = [len(list(g)) for _, g in itertools.groupby(items, key=lambda t: t[1])]
        orders, counts = _distinct_outcomes(_orders(sizes), [d for d, _ in items], qrels[q])
        assert counts.sum() == math.prod(math.factorial(size) for size in sizes), q  # every order counted
        blocks.append(([f"{q}#{i}" for i in range(len(orders))], [d for d, _ in items], orders, qrels[q]))
        weights.append(counts)
    res = evaluate(*as_queries(blocks), measures)
    (one,) = res.runs
    rows = {}
    for q, (names, *_) in zip(run, blocks, strict=True):
        found = pc.index_in(pa.array(names), value_set=pa.array(one.query_ids))
        assert found.null_count == 0, q  # every order evaluated
        rows[q] = found.to_numpy()
    out = {}
    for j, m in enumerate(res.measures):
        column = one.column(j)
        out[str(m)] = {q: math.fsum((column[rows[q]] * w).tolist()) / w.sum()
                       for q, w in zip(run, weights, strict=True)}
    return out


def check(qrels: dict, run: dict, measures: list[Measure]) -> None:
    expected = brute_force(qrels, run, measures)
    got = evaluate(qrels, run, measures, ties="expected")
    (one,) = got.runs
    row = {q: i for i, q in enumerate(one.query_ids.tolist())}
    for j, m in enumerate(got.measures):
        per = one.column(j).tolist()
        for q in run:
            assert per[row[q]] == pytest.approx(expected[str(m)][q], rel=1e-9, abs=1e-12), (str(m), q)


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
    orders = np.stack([rng.permutation(n) for _ in range(2000)])
    res = evaluate(*as_queries([([f"q#{t}" for t in range(len(orders))], [f"d{i}" for i in range(n)], orders,
                                 qrels["q"])]), measures)
    (one,) = res.runs
    for j, m in enumerate(res.measures):
        sample = one.column(j)
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
