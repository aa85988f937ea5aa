"""Every measure parameter has a domain, refused outside it with the allowed range; at the
edges of every domain, and with grades up to the limit, no measure gives NaN or infinity.

And ``gain=exp`` with huge grades: nDCG is exact (hand-worked below), DCG/IDCG beyond float64
are refused naming the query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import serpeval
from serpeval.core.data import GRADE_LIMIT
from serpeval.core.errors import InputError, InvalidParameterError
from serpeval.measures import REGISTRY, parse_measure
from serpeval.measures.spec import MAX_CUTOFF

L2 = math.log2

# Grades at every scale, the limits included; a doc not judged (z), a negative grade (n).
QRELS = {
    "huge": {"a": GRADE_LIMIT, "b": 2000, "c": 1, "n": -GRADE_LIMIT, "e": 0},
    "small": {"a": 1, "b": 2, "c": 0},
    "exp": {"x": 1500, "y": 1499, "w": 960},
}
RUN = {
    "huge": {"a": 1.0, "b": 3.0, "c": 2.0, "n": 5.0, "z": 4.0},
    "small": {"a": 2.0, "b": 1.0, "z": 3.0},
    "exp": {"x": 1.0, "y": 2.0, "w": 0.5},
}


def per_query(qrels: dict, run: dict, measure: str) -> np.ndarray:
    return serpeval.evaluate(qrels, run, [measure]).runs[0].values[:, 0]


def edge_measures() -> list[str]:
    """Every measure of the registry with each numeric parameter at each end of its domain."""
    out = []
    for spec in REGISTRY:
        if spec.subtopics:
            continue  # subtopic qrels: tests/measures/test_diversity.py has their edges
        at = "@5" if spec.cutoff == "required" else ""
        out.append(spec.name + at)
        if spec.cutoff != "none":
            out.append(f"{spec.name}@{MAX_CUTOFF}")
        for p in spec.params:
            if p.type in (int, float):
                for bound in (p.minimum, p.maximum):
                    value = int(bound) if p.type is int else float(bound)
                    out.append(f"{spec.name}({p.name}={value!r}){at}")
    return out


def test_every_numeric_parameter_has_a_domain() -> None:
    """A new parameter cannot forget its range; text parameters have choices or a checker."""
    for spec in REGISTRY:
        for p in spec.params:
            if p.type is bool:  # two values: nothing to bound
                continue
            if p.type in (int, float):
                assert p.minimum is not None, (spec.name, p.name)
                assert p.maximum is not None, (spec.name, p.name)
            else:
                assert p.choices or p.normalize is not None, (spec.name, p.name)


@pytest.mark.parametrize("text", edge_measures())
def test_domain_edges_give_finite_values(text: str) -> None:
    measure = parse_measure(text)
    values = per_query(QRELS, RUN, text)
    assert np.isfinite(values).all(), (text, values)
    if measure.spec.bounds is not None and measure.spec.name not in ("DCG", "IDCG"):
        lo, hi = measure.spec.bounds
        assert ((values >= lo) & (values <= hi + 1e-12)).all(), (text, values)


EDGE_TABLES = [
    f"-{GRADE_LIMIT}:-1e100;{GRADE_LIMIT}:1e100;1:1e100;2:-1e100",
    "0:1e100;1:1e100;2:1e100",
    f"{GRADE_LIMIT}:-1e100;-1:1e100;-2:1e100",  # unjudged docs with a gain: not in the ideal
]


@pytest.mark.parametrize("table", EDGE_TABLES)
@pytest.mark.parametrize("spec_name", [s.name for s in REGISTRY if s.param("gains") is not None])
def test_gain_tables_at_the_edges_give_finite_values(spec_name: str, table: str) -> None:
    """Gains of ±1e100 next to unit gains, for the extreme grades and for unjudged docs: no
    NaN or infinity (G took log2 of 0 or less: 2 + 1e100 - 1e100 is 0 in float64, and a
    ranking ahead of its ideal has a negative lag)."""
    for gain in ("", "gain=exp,") if REGISTRY[spec_name].param("gain") else ("",):
        text = f"{spec_name}({gain}gains={table})"
        if gain and spec_name in ("DCG", "IDCG"):
            with pytest.raises(InputError, match="beyond float64"):  # 2^1500 for query 'exp'
                per_query(QRELS, RUN, text)
            continue
        values = per_query(QRELS, RUN, text)
        assert np.isfinite(values).all(), (text, values)


@pytest.mark.parametrize(
    ("spec_name", "param"),
    [(s.name, p.name) for s in REGISTRY for p in s.params if p.type in (int, float)],
)
def test_just_outside_each_bound_is_refused_with_the_range(spec_name: str, param: str) -> None:
    spec = REGISTRY[spec_name]
    p = spec.param(param)
    assert p is not None
    at = "@5" if spec.cutoff == "required" else ""
    if p.type is int:
        outside = [int(p.minimum) - 1, int(p.maximum) + 1]
    else:
        outside = [float(np.nextafter(p.minimum, -np.inf)), float(np.nextafter(p.maximum, np.inf)),
                   "nan", "inf", "-inf"]
    for value in outside:
        text = f"{spec_name}({param}={value!r}){at}".replace("'", "")
        with pytest.raises(InvalidParameterError, match=rf"the '{param}' parameter of {spec_name} must be "):
            parse_measure(text)
        with pytest.raises(InvalidParameterError, match=r" in \["):  # the message states the range
            spec(**{param: value}, cutoff=5 if at else None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("IPrec(recall=2)", r"the 'recall' parameter of IPrec must be a number in \[0, 1\]\. Got '2' instead"),
        ("IPrec(recall=-0.1)", r"must be a number in \[0, 1\]"),
        ("iprec_at_recall_1.5", r"must be a number in \[0, 1\]\. Got 1\.5 instead"),
        ("IPrecAvg(levels=0.5;2)", r"recall levels must be numbers in \[0, 1\], got '0\.5;2'"),
        ("11pt_avg.0.5,2", r"recall levels must be numbers in \[0, 1\]"),
        ("SetF(beta=1e308)", r"the 'beta' parameter of SetF must be a number in \[0, 1e\+100\]\. Got '1e308'"),
        ("set_F.1e300", r"set_F's parameter is beta squared and must be at most 1e200, got '1e300'"),
        ("RprecMult(mult=-1)", r"must be a number in \[0, 1000000\]"),
        ("Rprec_mult_2000000", r"must be a number in \[0, 1000000\]"),
        ("ERR(max_grade=54)", r"the 'max_grade' parameter of ERR must be an int in \[1, 53\]"),
        ("Utility(a=1e101)", r"must be a number in \[-1e\+100, 1e\+100\]"),
        ("utility.1,-1e300,0,0", r"the 'b' parameter of Utility must be a number in \[-1e\+100, 1e\+100\]"),
        (f"Utility(collection={2**53})", r"must be an int in \[0, 9007199254740991\]"),
        (f"P@{2**63}", r"the cutoff must be an integer from 1 to 9223372036854775807 \(2\^63 - 1\)"),
        (f"ndcg_cut_{2**63}", r"the cutoff must be an integer from 1 to 9223372036854775807"),
        (f"P(rel={2**53})@5", r"the 'rel' parameter of P must be an int in \[0, 9007199254740991\]"),
        (f"nDCG(gains={2**53}:1)", r"a grade must be an integer within ±9007199254740991 \(2\^53 - 1\)"),
        ("nDCG(gains=1:1e101)", r"the gain of grade 1 must be a number within ±1e100, got '1e101'"),
        ("ndcg.1=inf", r"the gain of grade 1 must be a number within ±1e100"),
        ("RBP(p=1.5)", r"must be a number in \[0, 1\]"),
    ],
)
def test_out_of_domain_messages_are_pinned(text: str, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        parse_measure(text)


# ---------------------------------------------------------------------------- exp gain, by hand


def test_exp_gain_with_grades_beyond_float64_is_exact() -> None:
    """Grades 2000 and 1999, ranked 1999 first. 2^g - 1 = 2^g in float64 at this scale, so
    DCG = 2^1999/1 + 2^2000/log2 3 and IDCG = 2^2000/1 + 2^1999/log2 3; dividing both by
    2^2000: nDCG = (1/2 + 1/log2 3) / (1 + 1/(2 log2 3)) = 1.1309298 / 1.3154649 = 0.8597187
    (it printed NaN)."""
    expected = (0.5 + 1 / L2(3)) / (1 + 0.5 / L2(3))
    assert expected == pytest.approx(0.8597187, abs=1e-7)
    got = per_query({"q": {"x": 2000, "y": 1999}}, {"q": {"x": 1.0, "y": 2.0}}, "nDCG(gain=exp)")
    assert got[0] == pytest.approx(expected, rel=1e-15)
    # @1: 2^1999 / 2^2000 = 1/2 exactly
    assert per_query({"q": {"x": 2000, "y": 1999}}, {"q": {"x": 1.0, "y": 2.0}}, "nDCG(gain=exp)@1")[0] == 0.5


def test_exp_gain_at_the_grade_limit() -> None:
    """The largest grade, 2^53 - 1, ranked second behind a grade-1 doc: DCG = 1 + 2^G/log2 3,
    IDCG = 2^G + 1/log2 3, so nDCG = 1/log2 3 (the grade-1 terms are 2^-G smaller)."""
    got = per_query({"q": {"top": GRADE_LIMIT, "one": 1}}, {"q": {"one": 2.0, "top": 1.0}}, "nDCG(gain=exp)")
    assert got[0] == pytest.approx(1 / L2(3), rel=1e-15)


def test_exp_gain_near_the_float64_edge_matches_plain_arithmetic() -> None:
    """Grades 1000, 999 and 3 fit float64 unscaled (2^1000 ~ 1e301), so the value can be worked
    in plain floats: ranking 3, 1000, 999 (the query is scaled by 2^-40 inside, which cancels)."""
    dcg = (2.0**3 - 1) + (2.0**1000 - 1) / L2(3) + (2.0**999 - 1) / L2(4)
    idcg = (2.0**1000 - 1) + (2.0**999 - 1) / L2(3) + (2.0**3 - 1) / L2(4)
    qrels, run = {"q": {"a": 1000, "b": 999, "c": 3}}, {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}
    assert per_query(qrels, run, "nDCG(gain=exp)")[0] == pytest.approx(dcg / idcg, rel=1e-15)
    assert per_query(qrels, run, "DCG(gain=exp)")[0] == pytest.approx(dcg, rel=1e-15)
    assert per_query(qrels, run, "IDCG(gain=exp)")[0] == pytest.approx(idcg, rel=1e-15)
    assert per_query(qrels, run, "DCG(gain=exp)@1")[0] == 7.0  # 2^3 - 1, scaled and back exactly


def test_other_queries_are_untouched_by_the_scaling() -> None:
    """A query with small grades gives the same bits alone or next to a huge-grade query."""
    small = {"s": {"a": 3, "b": 1, "c": 2, "d": 0}}
    run = {"s": {"a": 0.1, "b": 0.9, "c": 0.5, "z": 0.7}}
    for measure in ("nDCG(gain=exp)", "nDCG(gain=exp)@2", "DCG(gain=exp)", "IDCG(gain=exp)@3", "DCG(gain=exp)@1",
                    "nDCG(gain=exp,gains=1:5)"):
        alone = per_query(small, run, measure)
        if measure.startswith(("DCG", "IDCG")):
            with pytest.raises(InputError):  # t's DCG is 2^1500: refused, see below
                per_query({**small, "t": {"x": 1500}}, {**run, "t": {"x": 1.0}}, measure)
            huge = {"t": {"x": 1000}}  # 2^1000 fits float64 but is scaled by 2^-40 inside
        else:
            huge = {"t": {"x": 1500}}
        together = per_query({**small, **huge}, {**run, "t": {"x": 1.0}}, measure)
        assert together[0] == alone[0], measure  # queries in id order: "s" before "t"


def test_exp_gain_with_a_gain_table_and_huge_grades() -> None:
    """Listed grades keep their listed gain, however large the grade: grade 5000 listed with
    gain 1 and grade 1 with gain 2; ranking 5000, 1: (1 + 2/log2 3) / (2 + 1/log2 3)."""
    qrels, run = {"q": {"a": 5000, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    got = per_query(qrels, run, "nDCG(gain=exp,gains=5000:1;1:2)")
    assert got[0] == pytest.approx((1 + 2 / L2(3)) / (2 + 1 / L2(3)), rel=1e-15)
    # 5000 listed (gain 5) but 1200 not: gains 5 and 2^1200 - 1, ranking 5000, 1200:
    # (5 + 2^1200/log2 3) / (2^1200 + 5/log2 3) = 1/log2 3 to 1e-300
    qrels = {"q": {"a": 5000, "b": 1200}}
    got = per_query(qrels, run, "nDCG(gain=exp,gains=5000:5)")
    assert got[0] == pytest.approx(1 / L2(3), rel=1e-15)


def test_dcg_beyond_float64_is_refused_naming_the_query() -> None:
    qrels, run = {"q7": {"a": 1100, "b": 3}}, {"q7": {"a": 1.0, "b": 3.0}}
    for measure in ("DCG(gain=exp)", "IDCG(gain=exp)", "DCG(gain=exp)@2"):
        with pytest.raises(InputError, match=r"(I)?DCG with gain=exp of query 'q7' is beyond float64: its grades "
                                             r"reach 1100 .* nDCG\(gain=exp\) is exact for any grade"):
            per_query(qrels, run, measure)
    # DCG@1 reads only b (grade 3): 7, no overflow, no refusal
    assert per_query(qrels, run, "DCG(gain=exp)@1")[0] == 7.0


# ---------------------------------------------------------------------------- other measures, by hand


def test_rbp_with_a_huge_top_grade() -> None:
    """RBP rescales gains by the query's top grade G (grade / G): grades 10^15 and 5*10^14
    ranked in that order give (1 - p)(1 + 0.5 p) = 0.1 * 1.45 = 0.145. (It built a list of
    every grade from G down to 0 and never finished.)"""
    got = per_query({"q": {"a": 10**15, "b": 5 * 10**14}}, {"q": {"a": 2.0, "b": 1.0}}, "RBP")
    assert got[0] == pytest.approx(0.1 * 1.45, rel=1e-15)


def test_err_at_the_largest_max_grade() -> None:
    """max_grade = 53: R(53) = (2^53 - 1)/2^53 = 1 - 2^-53 (exact in float64); a grade of 60
    counts as 53. Two such docs: ERR = R/1 + (1 - R) R / 2."""
    r = 1 - 2.0**-53
    got = per_query({"q": {"a": 53, "b": 60}}, {"q": {"a": 2.0, "b": 1.0}}, "ERR(max_grade=53)")
    assert got[0] == pytest.approx(r + (1 - r) * r / 2, rel=1e-15)


def test_set_f_at_the_largest_beta_is_recall() -> None:
    """F = (1 + b^2) P R / (b^2 P + R) tends to R as b grows; b = 1e100 (b^2 = 1e200): 2 of 3
    relevant docs retrieved -> 2/3 (it gave NaN from b = 1e155, where b^2 is infinite)."""
    got = per_query({"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 1.0, "b": 0.5, "x": 0.2}}, "SetF(beta=1e100)")
    assert got[0] == pytest.approx(2 / 3, rel=1e-12)


def test_plain_formulas_with_huge_exp_grades() -> None:
    """serpeval.ndcg / serpeval.dcg with gain="exp" on lists of grades: same hand-worked
    values as the measures; a DCG beyond float64 is refused (both printed nan / inf)."""
    expected = (0.5 + 1 / L2(3)) / (1 + 0.5 / L2(3))
    assert serpeval.ndcg([1999, 2000], [2000, 1999], gain="exp") == pytest.approx(expected, rel=1e-15)
    assert serpeval.ndcg([1, 1100], [1100, 1], gain="exp") == pytest.approx(1 / L2(3), rel=1e-15)
    assert serpeval.dcg([1000, 3], gain="exp") == pytest.approx(2.0**1000 + 7 / L2(3), rel=1e-15)
    assert serpeval.dcg([3, 2, 3, 0, 1, 2], k=6, gain="exp") == pytest.approx(
        7 + 3 / L2(3) + 7 / 2 + 1 / L2(6) + 3 / L2(7))
    with pytest.raises(InvalidParameterError, match=r"the DCG of these grades is beyond float64: the highest is "
                                                    r"1100\.0"):
        serpeval.dcg([1100, 3], gain="exp")
