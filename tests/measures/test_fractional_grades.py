"""Fractional grades (``grades="float"``, issue 29 item 2).

* Integer-valued float qrels give bit-identical values to the integer path, for every
  registered measure (and the parameter variants that read grades differently), through the
  compiled kernels and through the NumPy code that replaces them.
* Fractional grades against an independent pure-Python implementation of nDCG (linear and
  exp gain), DCG, ERR, RBP (the three scales), P@k and AP at ``rel=1`` (a grade of 0.5 is
  not relevant there), and hand-worked examples with the arithmetic in comments.
* pytrec_eval and ir_measures refuse float relevance; ranx truncates it to an integer (so
  neither is an oracle for fractional grades: see ``docs/how-to/fractional-grades.md``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.integrations.ranx_oracle import ranx_evaluate

from serpeval.core import native
from serpeval.core.data import Qrels, Run
from serpeval.core.errors import InvalidParameterError, ParseError
from serpeval.evaluation.evaluate import evaluate
from serpeval.io import as_qrels
from serpeval.measures import REGISTRY, parse_measure
from serpeval.ranking import rank

CUTOFF = 5


def _measures() -> list:
    out = []
    for spec in REGISTRY:
        if spec.subtopics:
            continue
        if spec.cutoff == "required":
            out.append(spec.bind({}, CUTOFF, spec.name))
        elif spec.cutoff == "none":
            out.append(spec.bind({}, None, spec.name))
        else:
            out += [spec.bind({}, None, spec.name), spec.bind({}, CUTOFF, spec.name)]
    # variants that read the grades another way
    out += [parse_measure(text) for text in (
        "nDCG(gain=exp)@5", "nDCG(gains=1:3;2:9)@5", "DCG(gain=exp)", "P(rel=2)@5", "AP(rel=2)",
        "ERR(max_grade=2)@5", "RBP(scale=grade)", "RBP(scale=binary,min_grade=2)", "RBP(gains=0:1;3:-1)",
        "G(gains=1:0.5)", "nDCG(judged_only=true)@5",
    )]
    return out


MEASURES = _measures()


@st.composite
def collections(draw, grades: st.SearchStrategy, max_queries: int = 4, max_docs: int = 10) -> tuple[dict, dict]:
    """Qrels with the given grades and a run mixing judged and unjudged docs (integer scores: ties)."""
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, max_queries))):
        n = draw(st.integers(1, max_docs))
        judged = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        judged[0] = True
        qrels[f"q{q}"] = {f"d{i}": draw(grades) for i in range(n) if judged[i]}
        retrieved = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        ranking = {f"d{i}": float(draw(st.integers(0, 5))) for i in range(n) if retrieved[i]}
        if ranking:
            run[f"q{q}"] = ranking
    assume(run)
    return qrels, run


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=collections(grades=st.one_of(st.integers(-2, 4), st.sampled_from([0, 1, 961, 1000, 1100]))))
def test_integer_valued_float_grades_are_bit_identical_for_every_measure(kernels: str, data, monkeypatch) -> None:
    if kernels == "numpy":
        monkeypatch.setattr(native, "available", lambda: False)
    qrels, run = data
    as_int = rank(Qrels.from_dict(qrels), Run.from_dict(run))
    as_float = rank(Qrels.from_dict({q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()},
                                    grades="float"), Run.from_dict(run))
    assert as_float.grades.dtype == np.float64
    assert as_int.grades.dtype == np.int64
    assert np.array_equal(as_float.grades, as_int.grades)
    assert np.array_equal(as_float.ideal_grades, as_int.ideal_grades)
    for measure in MEASURES:
        try:
            expected = measure.compute(as_int)
        except Exception as exc:
            with pytest.raises(type(exc)):
                measure.compute(as_float)
            continue
        got = measure.compute(as_float)
        # bit for bit: the same float64 patterns (NaN included)
        assert expected.view(np.int64).tolist() == got.view(np.int64).tolist(), str(measure)


# ----------------------------------------------------------------------------- independent reference


def _ranked(qrels: dict, run: dict, q: str) -> list[float | None]:
    """Grades in trec_eval's order (score desc, doc id desc); None: not in the qrels."""
    by_id = sorted(run[q].items(), key=lambda item: item[0].encode(), reverse=True)  # ties: doc id desc (bytes)
    docs = sorted(by_id, key=lambda item: -item[1])  # stable: score descending
    return [qrels[q].get(d) for d, _ in docs]


def _gain(g: float | None, exp: bool) -> float:
    if g is None or g <= 0:
        return 0.0
    return 2.0 ** g - 1.0 if exp else g


def ref_dcg(grades: list, k: int | None, exp: bool) -> float:
    return sum(_gain(g, exp) / math.log2(i + 2) for i, g in enumerate(grades[:k]))


def ref_ndcg(qrels: dict, run: dict, q: str, k: int | None, exp: bool) -> float:
    ideal = sorted((g for g in qrels[q].values()), reverse=True)
    best = ref_dcg(ideal, k, exp)
    return ref_dcg(_ranked(qrels, run, q), k, exp) / best if best > 0 else 0.0


def ref_err(grades: list, k: int | None, max_grade: int = 4) -> float:
    total, reach = 0.0, 1.0
    for i, g in enumerate(grades[:k]):
        stop = (2.0 ** min(max(g or 0.0, 0.0), max_grade) - 1.0) / 2.0 ** max_grade
        total += reach * stop / (i + 1)
        reach *= 1.0 - stop
    return total


def ref_rbp(qrels: dict, grades: list, q: str, p: float, scale: str) -> float:
    if scale == "binary":
        gains = [1.0 if g is not None and g >= 1 else 0.0 for g in grades]
    elif scale == "grade":
        gains = [g if g is not None and g >= 1 else 0.0 for g in grades]
    else:  # trec: the grades over the query's highest (when above 1); unjudged 0
        top = max(qrels[q].values())
        gains = [g / top if top > 1 and g is not None and g >= 0 else (g if g is not None and g >= 0 else 0.0)
                 for g in grades]
    return (1 - p) * sum(gain * p ** i for i, gain in enumerate(gains))


def ref_precision(grades: list, k: int, rel: float = 1) -> float:
    return sum(1 for g in grades[:k] if g is not None and g >= rel) / k


def ref_ap(qrels: dict, grades: list, q: str, rel: float = 1) -> float:
    n_rel = sum(1 for g in qrels[q].values() if g >= rel)
    found, total = 0, 0.0
    for i, g in enumerate(grades):
        if g is not None and g >= rel:
            found += 1
            total += found / (i + 1)
    return total / n_rel if n_rel else 0.0


FRACTIONS = st.one_of(st.sampled_from([-1.5, -0.25, 0.0, 0.5, 1.0, 1.25, 2.5, 3.75]),
                      st.floats(-2, 5, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3)))


@pytest.mark.filterwarnings("ignore::serpeval.core.errors.MissingQueriesWarning")
@settings(max_examples=60, deadline=None)
@given(data=collections(grades=FRACTIONS))
def test_fractional_grades_match_an_independent_implementation(data) -> None:
    qrels, run = data
    names = ["nDCG", "nDCG@5", "nDCG(gain=exp)@5", "DCG@5", "ERR@5", "ERR", "RBP(p=0.8)", "RBP(p=0.8,scale=binary)",
             "RBP(p=0.8,scale=grade)", "P@5", "AP"]
    res = evaluate(qrels, run, names, grades="float")
    for q in run:
        if q not in qrels:
            continue
        g = _ranked(qrels, run, q)
        # judged docs with a negative grade rank as unjudged (grade < 0: no gain, not relevant)
        g = [None if x is not None and x < 0 else x for x in g]
        want = {
            "nDCG": ref_ndcg(qrels, run, q, None, False),
            "nDCG@5": ref_ndcg(qrels, run, q, 5, False),
            "nDCG(gain=exp)@5": ref_ndcg(qrels, run, q, 5, True),
            "DCG@5": ref_dcg(g, 5, False),
            "ERR@5": ref_err(g, 5),
            "ERR": ref_err(g, None),
            "RBP(p=0.8)": ref_rbp(qrels, g, q, 0.8, "trec"),
            "RBP(p=0.8,scale=binary)": ref_rbp(qrels, g, q, 0.8, "binary"),
            "RBP(p=0.8,scale=grade)": ref_rbp(qrels, g, q, 0.8, "grade"),
            "P@5": ref_precision(g, 5),
            "AP": ref_ap(qrels, g, q),
        }
        row = res.runs[0].values[list(res.runs[0].query_ids).index(q)]
        values = dict(zip([str(m) for m in res.measures], row.tolist(), strict=True))
        for name, expected in want.items():
            measure = str(parse_measure(name))
            assert values[measure] == pytest.approx(expected, rel=1e-12, abs=1e-15), (q, name, qrels[q], run[q])


def test_hand_worked_fractional_example() -> None:
    # q1: d1 2.5, d2 0.5, d3 -0.5 (judged, not relevant: a negative grade), d4 1.0 (not retrieved).
    # Ranking (score desc): d2 (0.9), d3 (0.8), d5 (0.7, unjudged), d1 (0.1): grades 0.5, -, -, 2.5.
    qrels = {"q1": {"d1": 2.5, "d2": 0.5, "d3": -0.5, "d4": 1.0}}
    run = {"q1": {"d1": 0.1, "d2": 0.9, "d3": 0.8, "d5": 0.7}}
    res = evaluate(qrels, run, ["nDCG@10", "nDCG(gain=exp)@10", "P@2", "P(rel=0)@1", "AP", "ERR@10", "RBP(p=0.5)"],
                   grades="float")
    got = res.means("run")
    # DCG = 0.5/log2(2) + 2.5/log2(5); IDCG = 2.5 + 1/log2(3) + 0.5/log2(4)
    assert got["nDCG@10"] == pytest.approx((0.5 + 2.5 / math.log2(5)) / (2.5 + 1 / math.log2(3) + 0.25))
    # exp: gains 2^0.5 - 1 = 0.41421, 2^2.5 - 1 = 4.65685, 2^1 - 1 = 1
    e = (2 ** 0.5 - 1 + (2 ** 2.5 - 1) / math.log2(5)) / (2 ** 2.5 - 1 + 1 / math.log2(3) + (2 ** 0.5 - 1) / 2)
    assert got["nDCG(gain=exp)@10"] == pytest.approx(e)
    assert got["P@2"] == 0.0  # 0.5 < rel=1: not relevant
    assert got["P(rel=0)@1"] == 1.0  # 0.5 >= 0
    assert got["AP"] == pytest.approx((1 / 4) / 2)  # relevant (>= 1): d1 (rank 4), d4 (not retrieved); R = 2
    # ERR: R = (2^g - 1)/16: rank 1 0.41421/16, rank 4 4.65685/16
    r1, r4 = (2 ** 0.5 - 1) / 16, (2 ** 2.5 - 1) / 16
    assert got["ERR@10"] == pytest.approx(r1 + (1 - r1) * r4 / 4)
    # RBP (trec scale): gains over the top grade 2.5: 0.2 at rank 1, 1 at rank 4
    assert got["RBP(p=0.5)"] == pytest.approx(0.5 * (0.2 + 0.5 ** 3))


def test_default_is_integer_and_float_qrels_keep_their_type() -> None:
    with pytest.raises(ParseError, match=r"not a whole number.*--grades float"):
        evaluate({"q1": {"d1": 2.5}}, {"q1": {"d1": 1.0}}, ["P@1"])
    qrels = as_qrels({"q1": {"d1": 2.5}}, grades="float")
    assert qrels.grades == "float"
    assert qrels.relevance.tolist() == [2.5]
    assert evaluate(qrels, {"q1": {"d1": 1.0}}, ["nDCG@1"]).means("run")["nDCG@1"] == 1.0
    assert qrels.to_dict() == {"q1": {"d1": 2.5}}
    with pytest.raises(ParseError, match="not a whole number"):
        qrels.as_grades("int")
    assert as_qrels({"q1": {"d1": 2}}).as_grades("float").relevance.dtype == np.float64
    with pytest.raises(InvalidParameterError, match="grades must be one of int, float"):
        as_qrels({"q1": {"d1": 2}}, grades="real")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 2.0 ** 53, "2.5", None])
def test_bad_float_grades_are_one_line(value) -> None:
    with pytest.raises(ParseError) as info:
        Qrels.from_dict({"q1": {"d1": 1, "d2": value}}, grades="float")
    message = str(info.value)
    assert "\n" not in message
    assert "query 'q1', doc 'd2'" in message
    assert "expected a finite real relevance grade" in message


def test_negative_zero_is_zero() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": -0.0}}, grades="float")
    assert math.copysign(1.0, qrels.relevance[0]) == 1.0
    r = rank(qrels, Run.from_dict({"q1": {"d1": 1.0}}))
    assert r.grades.tolist() == [0.0]  # judged, not relevant (not the unjudged -2)


def test_other_tools_refuse_or_truncate_float_grades() -> None:
    """Why the references above are independent implementations: pytrec_eval refuses float
    relevance, ranx truncates it (nDCG@10 of grades 2.5, 0.5, 1 equals that of 2, 0, 1)."""
    qrels = {"q1": {"d1": 2.5, "d2": 0.5, "d4": 1.0}}
    run = {"q1": {"d1": 0.1, "d2": 0.9, "d5": 0.7}}
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with pytest.raises(TypeError, match="integer"):
        pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    # ranx interpreted in a child process (tests/integrations/ranx_oracle.py): compiling its
    # numba kernels took ~10 s with numba's cache cold; the same float either way, checked by hand
    (theirs,) = (r["result"] for r in ranx_evaluate(qrels, [run], "ndcg@10", return_mean=True))
    truncated = evaluate({"q1": {"d1": 2, "d2": 0, "d4": 1}}, run, ["nDCG@10"]).means("run")["nDCG@10"]
    ours = evaluate(qrels, run, ["nDCG@10"], grades="float").means("run")["nDCG@10"]
    assert theirs == pytest.approx(truncated)
    assert ours != pytest.approx(theirs)


def test_fractional_grades_under_expected_ties_average_every_order() -> None:
    import itertools

    qrels = {"q1": {"a": 0.5, "b": 2.5, "c": 0.0, "d": 1.25}}
    names = ["nDCG@2", "ERR@2", "RBP(p=0.5)", "NCG@1"]
    got = evaluate(qrels, {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}, names, grades="float", ties="expected")
    orders = [evaluate(qrels, {"q1": {d: 3.0 - i for i, d in enumerate(perm)}}, names, grades="float").means("run")
              for perm in itertools.permutations("abc")]
    for name in names:
        assert got.means("run")[name] == pytest.approx(sum(o[name] for o in orders) / len(orders), rel=1e-12)
