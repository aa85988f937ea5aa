"""Hand-worked values of the trec_eval measures added to the registry (arithmetic in comments).

One query, judged d1:2 d3:0 d4:1 d5:-1 d6:3 d7:1 d8:0, so R (grade >= 1) = 4 (d1 d4 d6 d7),
and a run ranking d1 d2 d3 d4 d5 d6. Ranked grades: 2, -1 (d2 not in the qrels), 0, 1,
-2 (d5: a negative grade, pooled but unjudged), 3. Relevant at ranks 1, 4, 6 with precision
1/1, 2/4, 3/6. Every value below was also checked against trec_eval 10.0 / 9.0.8 on the
same two files (printed to 4 decimals).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import serpeval
from serpeval.core.errors import InvalidParameterError
from serpeval.measures import parse_measure
from serpeval.measures._segments import c_round, c_trunc, powers, prefix_sums, suffix_max

QRELS = {"q": {"d1": 2, "d3": 0, "d4": 1, "d5": -1, "d6": 3, "d7": 1, "d8": 0}}
RUN = {"q": {"d1": 6.0, "d2": 5.0, "d3": 4.0, "d4": 3.0, "d5": 2.0, "d6": 1.0}}

HAND_WORKED = {
    # c = lround(x * R): 0.3 * 4 = 1.2 -> 1: the best precision from rank 1 on = 1.
    "IPrec(recall=0.3)": 1.0,
    # (long)(1.2 + 0.9) = 2: from the 2nd relevant doc (rank 4) on: max(2/4, 3/6) = 0.5.
    "IPrec(recall=0.3,rounding=v9)": 0.5,
    "IPrec(recall=0.5)": 0.5,            # lround(2.0) = 2
    "IPrec(recall=0.9)": 0.0,            # lround(3.6) = 4 > 3 relevant retrieved
    "iprec_at_recall_0.00": 1.0,         # c = 0 reads from the first relevant doc
    # lround(x*4) for x = 0, .1, ..., 1: 0 0 1 1 2 2 2 3 3 4 4 -> 1 1 1 1 .5 .5 .5 .5 .5 0 0
    "11pt_avg": 6.5 / 11,
    # (long)(x*4 + 0.9): 0 1 1 2 2 2 3 3 4 4 4 -> 1 1 1 .5 .5 .5 .5 .5 0 0 0
    "IPrecAvg(rounding=v9)": 5.5 / 11,
    "IPrecAvg(levels=0.25;0.75)": (0.5 + 1.0) / 2,   # lround(1) = 1 -> 1; lround(3) = 3 -> .5
    "Rprec_mult_0.50": 1 / 2,            # c = (long)(2 + 0.9) = 2: 1 relevant in the top 2
    "Rprec_mult_1.00": 2 / 4,            # c = 4: 2 relevant in the top 4
    "Rprec_mult_2.00": 3 / 8,            # c = 8 > 6 retrieved: 3 relevant retrieved / 8
    "relative_P_2": 1 / 2,               # 1 relevant in the top 2 / min(2, R=4)
    "relative_P_6": 3 / 4,               # 3 / min(6, 4)
    "set_relative_P": 3 / 4,             # 3 / min(6 retrieved, 4)
    "set_map": 9 / 24,                   # 3^2 / (6 * 4)
    "unj_5": 2 / 5,                      # d2 (not in qrels) and d5 (negative grade)
    "unj_10": 2 / 10,                    # missing ranks 7-10 count as judged
    "utility": 3 - 3,                    # 1 * 3 relevant retrieved - 1 * 3 others
    # 2*3 - 1*3 - 0.5*(4 - 3) + 0.1*(100 + 3 - 6 - 4) = 6 - 3 - 0.5 + 9.3
    "Utility(a=2,c=-0.5,d=0.1,collection=100)": 11.8,
    # non-relevant docs above the relevant ones (unjudged included): 0, 2, 3
    "binG": (1 / math.log2(2) + 1 / math.log2(4) + 1 / math.log2(5)) / 4,
    # gains 2 0 0 1 0 3; ideal 3 2 1 1 0 0 -> cost max(ideal, 1) = 3 2 1 1 1 1, running
    # cost 3 5 6 7 8 9, running gain 2 2 2 3 3 6; sum of ideal gains 7.
    "G": (2 / math.log2(2 + 3 - 2) + 1 / math.log2(2 + 7 - 3) + 3 / math.log2(2 + 9 - 6)) / 7,
    "num_nonrel_judged_ret": 1.0,        # d3
    # S = 1/1 + 2/4 + 3/6 = 2: log((1 + 2) / (1 + 4 - 2)) = 0
    "yaap": 0.0,
    # rel = 2: d1 (rank 1), d6 (rank 6), R = 2: S = 1 + 2/6; log((1 + S) / (1 + 2 - S))
    "YAAP(rel=2)": math.log((1 + 4 / 3) / (3 - 4 / 3)),
    # gains /3 (highest grade 3): 2/3 0 0 1/3 0 1, weights 0.5^(i-1)
    "rbp.p=0.5": 0.5 * (2 / 3 + 1 / 3 * 0.125 + 1 * 0.03125),
    # unjudged at ranks 2 and 5: 0.5^6 + 0.5 * (0.5 + 0.0625)
    "rbp_resid.p=0.5": 0.015625 + 0.5 * 0.5625,
    "Unjudged@5": 0.4,
}

DCG_RUN = [2.0, 0, 0, 1 / math.log2(5), 0, 3 / math.log2(7)]          # gain / log2(rank + 1)
IDCG_RUN = [3.0, 2 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)]  # ideal 3 2 1 1


def _value(name: str) -> float:
    result = serpeval.evaluate(QRELS, RUN, [name])
    return result.runs[0].column(0)[0]


@pytest.mark.parametrize("name", sorted(HAND_WORKED))
def test_hand_worked(name: str) -> None:
    assert _value(name) == pytest.approx(HAND_WORKED[name], abs=1e-12)


def test_ndcg_rel_and_rndcg_hand_worked() -> None:
    dcg = np.cumsum(DCG_RUN)
    idcg = np.cumsum(IDCG_RUN)
    # ndcg_rel: at relevant ranks 1, 4, 6 DCG@i / IDCG@min(i, 4); the missing 4th adds DCG@6/IDCG@4.
    ndcg_rel = (dcg[0] / idcg[0] + dcg[3] / idcg[3] + dcg[5] / idcg[3] + dcg[5] / idcg[3]) / 4
    assert _value("ndcg_rel") == pytest.approx(ndcg_rel, abs=1e-12)   # trec_eval: 0.6206
    # Rndcg: the ideal changes level after ranks 1 (3 -> 2), 2 (2 -> 1) and 4 (1 -> 0); 6 > 4 + 1
    # docs are retrieved, so the end of the ranking is a point too.
    rndcg = (dcg[0] / idcg[0] + dcg[1] / idcg[1] + dcg[3] / idcg[3] + dcg[5] / idcg[3]) / 4
    assert _value("Rndcg") == pytest.approx(rndcg, abs=1e-12)         # trec_eval: 0.5695


def test_custom_gains_hand_worked() -> None:
    # gains 1 -> 3, 2 -> 9, 3 keeps 3: ranking 9 0 0 3 0 3, ideal 9 3 3 3 (d1, d6, d4, d7)
    dcg = 9 + 3 / math.log2(5) + 3 / math.log2(7)
    idcg = 9 + 3 / math.log2(3) + 3 / math.log2(4) + 3 / math.log2(5)
    assert _value("ndcg.1=3,2=9") == pytest.approx(dcg / idcg, abs=1e-12)      # 0.8302
    assert _value("IDCG(gains=1:3;2:9)") == pytest.approx(idcg, abs=1e-12)     # 13.6848
    assert _value("DCG(gains=2:9;1:3)") == pytest.approx(dcg, abs=1e-12)
    # A gain that lowers a grade below another reorders the ideal: 3 -> 0.5 puts d6 last.
    low = 2 / 1 + 0.5 / math.log2(7) + 1 / math.log2(5)
    ideal = 2 / 1 + 1 / math.log2(3) + 1 / math.log2(4) + 0.5 / math.log2(5)
    assert _value("nDCG(gains=3:0.5)") == pytest.approx(low / ideal, abs=1e-12)


def test_geometric_means() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    run = {"a": {"x": 2.0, "z": 1.0}, "b": {"z": 1.0}}   # AP 1 and 0
    res = serpeval.evaluate(qrels, run, ["gm_map", "GMBpref"])
    # exp((log 1 + log 1e-5) / 2) = sqrt(1e-5)
    assert res.means("run")["GMAP"] == pytest.approx(math.sqrt(1e-5), rel=1e-12)
    assert res.means("run")["GMBpref"] == pytest.approx(math.sqrt(1e-5), rel=1e-12)


@pytest.mark.parametrize(("text", "canonical"), [
    ("iprec_at_recall_0.10", "IPrec(recall=0.1)"),
    ("iprec_at_recall.0.3", "IPrec(recall=0.3)"),
    ("11pt_avg_.25,.5,.75", "IPrecAvg(levels=0.25;0.5;0.75)"),
    ("Rprec_mult_0.20", "RprecMult(mult=0.2)"),
    ("set_F.0.25", "SetF(beta=0.5)"),
    ("rbp.p=0.5", "RBP(p=0.5)"),
    ("rbp_p=0.5,2=3", "RBP(p=0.5,gains=2:3)"),
    ("ndcg.1=3,2=9", "nDCG(gains=1:3;2:9)"),
    ("ndcg_1=3,2=9,4=4.5", "nDCG(gains=1:3;2:9;4:4.5)"),
    ("ndcg_rel", "nDCGRel"),
    ("utility.2,-1,0,0", "Utility(a=2)"),
    ("relative_P_5", "RelP@5"),
    ("unj_10", "Unjudged@10"),
    ("gm_map", "GMAP"),
    ("ideal_dcg", "IDCG"),
    ("nDCG(gains=2:9;1=3)", "nDCG(gains=1:3;2:9)"),
])
def test_trec_eval_names_parse(text: str, canonical: str) -> None:
    measure = parse_measure(text)
    assert str(measure) == canonical
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize(("text", "message"), [
    ("iprec_at_recall.0.1,0.2", "one recall level per measure"),
    ("utility.1,2", "utility takes 4 coefficients"),
    ("nDCG(gains=1:x)", "expected grade:gain pairs"),
    ("nDCG(gains=1:3;1:4)", "grade 1 is listed twice"),
    ("IPrecAvg(levels=a;b)", "expected recall levels"),
    ("RBP(p=2)", "must be a number in \\[0, 1\\]"),
])
def test_bad_parameters_are_refused(text: str, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        parse_measure(text)


# ----------------------------------------------------------------------------- exact helpers


@pytest.mark.parametrize("longest", [40, 500])  # position by position; padded blocks (one long segment)
def test_prefix_sums_add_left_to_right_within_each_segment(longest: int) -> None:
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 40, 60)
    lengths[7] = longest
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.random(offsets[-1]) * 10.0 ** rng.integers(-3, 4, offsets[-1])
    got = prefix_sums(values, offsets)
    for i in range(len(lengths)):
        total = 0.0
        for j in range(offsets[i], offsets[i + 1]):
            total += values[j]          # the C loop's order
            assert got[j] == total      # bit for bit


def test_suffix_max_within_segments() -> None:
    rng = np.random.default_rng(8)
    segment = np.sort(rng.integers(0, 9, 200))
    values = rng.random(200)
    got = suffix_max(values, segment)
    for j in range(200):
        same = np.flatnonzero(segment == segment[j])
        assert got[j] == values[same[same >= j]].max()


def test_c_rounding() -> None:
    x = np.array([0.49999999999999994, 0.5, 1.5, 2.5, -2.5, 2.4999999999999996, 3.6])
    assert c_round(x).tolist() == [0, 1, 2, 3, -3, 2, 4]    # halves away from zero
    assert c_trunc(np.array([2.9, -2.9, 0.95])).tolist() == [2, -2, 0]
    assert powers(0.9, 3).tolist() == [1.0, 0.9, 0.9 * 0.9, 0.9 * 0.9 * 0.9]


@pytest.mark.parametrize("depths", ["equal", "uneven", "one deep query"])
def test_rbp_residual_adds_in_rank_order(depths: str) -> None:
    """RBPResid sums p^(i-1) over unjudged ranks one by one, as trec_eval's loop (bit for bit)."""
    from serpeval.measures.rbp import rbp_residual
    from serpeval.ranking import rank

    rng = np.random.default_rng(3)
    sizes = {"equal": [40] * 6, "uneven": [5, 40, 17, 1, 33, 40], "one deep query": [3, 2, 400]}
    qrels, run = {}, {}
    for q, n in enumerate(sizes[depths]):
        qrels[f"q{q}"] = {f"d{i}": int(rng.integers(-1, 3)) for i in range(0, 2 * n, 3)}
        run[f"q{q}"] = {f"d{i}": float(n - i) for i in range(n)}
    r = rank(serpeval.Qrels.from_dict(qrels), serpeval.Run.from_dict(run))
    got = rbp_residual(r, cutoff=None, p=0.83)
    for i, q in enumerate(r.query_ids):
        grades = r.grades[r.offsets[i]:r.offsets[i + 1]]
        total, weight = 0.0, 1.0
        for g in grades:            # m_rbp_resid.c
            if g < 0:
                total += weight
            weight *= 0.83
        expected = weight + (1 - 0.83) * total if (grades < 0).any() else 0.0
        assert got[i] == expected, q
