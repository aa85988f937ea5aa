"""The peer tools' definitions (issue 30 item 1): OpenSearch SRW's P@k, MAP@k and NDCG@k, Quepid's P@10 and nDCG@10.

Each is checked against a line-by-line Python transcription of the peer's own code (cited
below), written on the peer's inputs (a list of returned doc ids and a map doc id -> rating),
with Hypothesis over random runs and qrels, and on hand-worked examples with the arithmetic
in comments.

Sources:
* SRW: opensearch-project/search-relevance, ``src/main/java/org/opensearch/searchrelevance/
  metrics/calculator/Evaluation.java`` at d8be5d1b18de545ca98270a76f20f6504b603f3a.
* Quepid: o19s/quepid at f80322f3acb12cde69493b6bd9fda1ac08eb0d60, ``db/scorers/p@10.js``,
  ``db/scorers/ndcg@10.js``; the helpers ``eachDoc``, ``hasDocRating``, ``docRating``,
  ``eachDocWithRating`` from ``app/assets/javascripts/factories/ScorerFactory.js`` and
  ``bestDocs`` from ``app/assets/javascripts/services/ratingsStoreSvc.js``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from serpeval.core.data import Qrels, Run
from serpeval.measures import REGISTRY, parse_measure
from serpeval.measures.srw import java_round2
from serpeval.ranking import rank

# ----------------------------------------------------------------------------- Java (SRW)


def java_math_round(x: float) -> int:
    """java.lang.Math.round(double): the closest long, ties toward +infinity; NaN -> 0."""
    if math.isnan(x):
        return 0
    return math.floor(Fraction(x) + Fraction(1, 2))  # exact: no rounding error in adding 1/2


def java_divide(a: float, b: float) -> float:
    """Java's double division: x/0 is NaN for x = 0 (and +-Infinity otherwise)."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def srw_precision_at_k(doc_ids: list[str], judgment_scores: dict[str, str], k: int) -> float:
    # calculatePrecisionAtK
    relevant_count = 0
    count = 0
    for doc_id in doc_ids:
        if count >= k:
            break
        if doc_id in judgment_scores and float(judgment_scores[doc_id]) > 0:
            relevant_count += 1
        count += 1  # noqa: SIM113 - a transcription of Java's loop, kept as written
    precision = java_divide(float(relevant_count), min(k, len(doc_ids))) if k > 0 else 0.0
    return java_math_round(precision * 100.0) / 100.0


def srw_count_relevant(judgment_ratings: dict[str, str]) -> int:
    # countRelevant
    num_rel = 0
    for value in judgment_ratings.values():
        if float(value) > 0:
            num_rel += 1
    return num_rel


def srw_map_at_k(doc_ids: list[str], judgment_scores: dict[str, str], k: int) -> float:
    # calculateMAPAtK
    total = 0.0
    relevant_count = 0
    num_rel = srw_count_relevant(judgment_scores)
    size = min(k, len(doc_ids))
    for i in range(size):
        doc_id = doc_ids[i]
        if doc_id in judgment_scores and float(judgment_scores[doc_id]) > 0:
            relevant_count += 1
            total += relevant_count / (i + 1)
    value = total / num_rel if relevant_count > 0 else 0.0
    return java_math_round(value * 100.0) / 100.0


def srw_ndcg_at_k(doc_ids: list[str], judgment_scores: dict[str, str], k: int) -> float:
    # calculateNDCGAtK
    dcg = 0.0
    idcg = srw_idcg(doc_ids, judgment_scores, k)
    size = min(k, len(doc_ids))
    for i in range(size):
        doc_id = doc_ids[i]
        if doc_id in judgment_scores:
            relevance = float(judgment_scores[doc_id])
            dcg += (math.pow(2, relevance) - 1) / (math.log(i + 2) / math.log(2))
    value = dcg / idcg if idcg > 0 else 0.0
    return java_math_round(value * 100.0) / 100.0


def srw_idcg(doc_ids: list[str], judgment_scores: dict[str, str], k: int) -> float:
    # calculateIDCG: every judgment, sorted descending, cut at min(size, k)
    relevance_scores = [float(rel) for rel in judgment_scores.values()]
    relevance_scores.sort(reverse=True)
    relevance_scores = relevance_scores[: min(len(relevance_scores), k)]
    idcg = 0.0
    for i in range(len(relevance_scores)):
        idcg += (math.pow(2, relevance_scores[i]) - 1) / (math.log(i + 2) / math.log(2))
    return idcg


# ----------------------------------------------------------------------------- JavaScript (Quepid)


def quepid_p_at_10(docs: list[str], ratings: dict[str, int], k: int) -> float:
    # p@10.js: eachDoc(f, k) visits positions i < k where docExistsAt(i)
    count, total = 0, 0
    for i in range(k):
        if i < len(docs):  # docExistsAt
            if docs[i] in ratings and ratings[docs[i]] > 0:  # hasDocRating(i) && docRating(i) > 0
                count = count + 1
            total = total + 1.0
    return count / total if total else 0.0


def quepid_ndcg_at_10(docs: list[str], ratings: dict[str, int], top_k: int) -> float:
    # ndcg@10.js
    missing_rating = 0
    scores: list[float] = [0.0] * top_k
    # eachDocWithRating visits bestDocs: every rated doc, ratingsStore.bestDocs() sorted descending
    ideal_scores = [rating for rating in ratings.values()]
    ideal_scores.sort(reverse=True)
    for i in range(top_k):
        if i >= len(ideal_scores):
            ideal_scores.append(missing_rating)  # `if (!idealScores[i]) idealScores[i] = missing_rating`
        elif not ideal_scores[i]:
            ideal_scores[i] = missing_rating
        if i < len(docs) and docs[i] in ratings:  # hasDocRating(i)
            scores[i] = ratings[docs[i]]
        else:
            scores[i] = missing_rating

    def dcg(vals: list[float], k: int) -> float:
        out = 0.0
        for j in range(k):
            den = math.log2(j + 2)
            num = math.pow(2, vals[j]) - 1
            out += (num / den) if den else 0
        return out

    num = dcg(scores, top_k)
    den = dcg(ideal_scores, len(ideal_scores))
    return (num / den) if den else 0.0


# ----------------------------------------------------------------------------- the comparison


def ranked_ids(run: dict[str, float]) -> list[str]:
    """The returned list: score descending, ties by doc id descending (serpeval's and trec_eval's rule)."""
    by_id = sorted(run.items(), key=lambda item: item[0].encode(), reverse=True)
    return [d for d, _ in sorted(by_id, key=lambda item: -item[1])]


def serpeval_values(qrels: dict, run: dict, name: str, grades: str = "int") -> dict[str, float]:
    r = rank(Qrels.from_dict(qrels, grades=grades), Run.from_dict(run))  # type: ignore[arg-type]
    return dict(zip(r.query_ids.tolist(), parse_measure(name).compute(r).tolist(), strict=True))


REFERENCES = {
    "SRW_P": lambda docs, qrels, k: srw_precision_at_k(docs, {d: str(g) for d, g in qrels.items()}, k),
    "SRW_AP": lambda docs, qrels, k: srw_map_at_k(docs, {d: str(g) for d, g in qrels.items()}, k),
    "SRW_nDCG": lambda docs, qrels, k: srw_ndcg_at_k(docs, {d: str(g) for d, g in qrels.items()}, k),
    "Quepid_P": quepid_p_at_10,
    "Quepid_nDCG": quepid_ndcg_at_10,
}


SCALE = st.integers(0, 3)  # the peers' rating scales start at 0


@st.composite
def collections(draw, grades: st.SearchStrategy = SCALE) -> tuple[dict, dict]:
    """Qrels (grades 0..3 unless told) and a run mixing judged and unjudged docs, with ties."""
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 16))
        judged = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        judged[0] = True
        qrels[f"q{q}"] = {f"d{i:02d}": draw(grades) for i in range(n) if judged[i]}
        retrieved = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        ranking = {f"d{i:02d}": float(draw(st.integers(0, 6))) for i in range(n) if retrieved[i]}
        if ranking:
            run[f"q{q}"] = ranking
    assume(run)
    return qrels, run


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("k", [1, 3, 10])
@settings(max_examples=40, deadline=None)
@given(data=collections())
def test_equals_the_transcribed_peer_code(name: str, k: int, data) -> None:
    qrels, run = data
    got = serpeval_values(qrels, run, f"{name}@{k}")
    for q, value in got.items():
        expected = REFERENCES[name](ranked_ids(run[q]), qrels[q], k)
        if name.startswith("SRW"):
            assert value == expected, (q, value, expected)  # rounded to 0.01: exactly equal
        else:
            assert value == pytest.approx(expected, rel=1e-12, abs=1e-15), (q, value, expected)


# Quepid's other default scorers coincide with serpeval's own measures (on Quepid's scales,
# which start at 0): the how-to names these equivalents instead of registering copies.


def quepid_ap_at_10(docs: list[str], ratings: dict[str, int], k: int) -> float:
    # ap@10.js
    count = 0
    total_rel = 0
    total = 0.0
    k = len(docs) if len(docs) < k else k  # numReturned() < k ? numReturned() : k
    for i in range(k):  # eachDoc(f, k)
        if i < len(docs) and docs[i] in ratings and ratings[docs[i]] > 0:
            count += 1
            total += count / (i + 1)
    for rating in ratings.values():  # eachDocWithRating: every rated doc
        if rating > 0:
            total_rel += 1
    return total / total_rel if total_rel else math.nan  # JavaScript: 0 / 0 is NaN


def quepid_dcg_at_10(docs: list[str], ratings: dict[str, int], k: int) -> float:
    # dcg@10.js; docRating(i) of an unrated doc is null, and Math.pow(2, null) is 1
    score = 0.0
    for i in range(min(k, len(docs))):
        d = math.log2(i + 2)
        n = math.pow(2, ratings.get(docs[i]) or 0) - 1
        score += (n / d) if d else 0
    return score


def quepid_ndcg_cut_at_10(docs: list[str], ratings: dict[str, int], k: int) -> float:
    # ndcg_cut@10.js: topRatings(k) is the first k of bestDocs (every rated doc, by rating descending)
    ideal = sorted(ratings.values(), reverse=True)[:k]
    ideal += [0] * (k - len(ideal))
    scores = [ratings[docs[i]] if i < len(docs) and docs[i] in ratings else 0 for i in range(k)]

    def dcg(vals: list[int], kk: int) -> float:
        return sum((math.pow(2, vals[i]) - 1) / math.log2(i + 2) for i in range(kk))

    den = dcg(ideal, k)
    return dcg(scores, k) / den if den else 0.0


def quepid_rr_at_10(docs: list[str], ratings: dict[str, int], k: int) -> float:
    # rr@10.js
    rank_ = 0
    for i in range(min(k, len(docs))):
        if rank_ == 0 and docs[i] in ratings and ratings[docs[i]] > 0:
            rank_ = i + 1
    return 1.0 / rank_ if rank_ > 0 else 0.0


def quepid_err_at_10(docs: list[str], ratings: dict[str, int], k: int, top: int = 3) -> float:
    # err@10.js; `max` is the scorer's highest scale value (3 on a 0..3 scale)
    k = len(docs) if len(docs) < k else k
    scores = [ratings.get(docs[i], 0) for i in range(k)]  # hasDocRating(i) ? docRating(i) : missing_rating
    err, trust = 0.0, 1.0
    for i in range(len(scores)):
        rank_ = i + 1.0
        p_useful = (math.pow(2, scores[i]) - 1.0) / math.pow(2, top)
        err = err + trust * (p_useful / rank_)
        trust = trust * (1.0 - p_useful)
    return err


QUEPID_EQUIVALENTS = {
    "AP": quepid_ap_at_10,
    "DCG(gain=exp)": quepid_dcg_at_10,
    "nDCG(gain=exp)": quepid_ndcg_cut_at_10,
    "RR": quepid_rr_at_10,
    "ERR(max_grade=3)": quepid_err_at_10,
}


@pytest.mark.parametrize("name", sorted(QUEPID_EQUIVALENTS))
@settings(max_examples=25, deadline=None)
@given(data=collections(), k=st.sampled_from([1, 3, 10]))
def test_quepids_other_scorers_are_serpevals_own_measures(name: str, data, k: int) -> None:
    qrels, run = data
    got = serpeval_values(qrels, run, f"{name}@{k}")
    for q, value in got.items():
        expected = QUEPID_EQUIVALENTS[name](ranked_ids(run[q]), qrels[q], k)
        if math.isnan(expected):  # Quepid's ap@10 with no relevant rating: 0 / 0
            assert value == 0.0
            continue
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15), (q, value, expected)


@pytest.mark.parametrize("name", ["SRW_P", "SRW_AP", "SRW_nDCG", "Quepid_P", "Quepid_nDCG"])
@settings(max_examples=25, deadline=None)
@given(data=collections(grades=st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0])))
def test_fractional_ratings_follow_the_peer_code(name: str, data) -> None:
    """SRW keeps ratings as strings parsed with Double.valueOf (an LLM judgment of 0.25 is
    relevant: rating > 0); the JS scorers compare ratings with > 0 too."""
    qrels, run = data
    got = serpeval_values(qrels, run, f"{name}@5", grades="float")
    for q, value in got.items():
        expected = REFERENCES[name](ranked_ids(run[q]), qrels[q], 5)
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15), (q, value, expected)


@pytest.mark.parametrize("name", ["SRW_P", "SRW_AP", "SRW_nDCG"])
@settings(max_examples=25, deadline=None)
@given(data=collections())
def test_rounding_false_is_the_unrounded_value(name: str, data) -> None:
    qrels, run = data
    raw = serpeval_values(qrels, run, f"{name}(rounding=False)@4")
    rounded = serpeval_values(qrels, run, f"{name}@4")
    for q in raw:
        assert rounded[q] == java_math_round(raw[q] * 100.0) / 100.0
        assert abs(rounded[q] - raw[q]) <= 0.005 + 1e-12


@pytest.mark.parametrize("name", sorted(REFERENCES))
@settings(max_examples=25, deadline=None)
@given(data=collections(grades=st.integers(-2, 3)))
def test_a_negative_grade_counts_as_rating_zero(name: str, data) -> None:
    qrels, run = data
    clipped = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    assert serpeval_values(qrels, run, f"{name}@5") == serpeval_values(clipped, run, f"{name}@5")


# ----------------------------------------------------------------------------- hand-worked

QRELS = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 1}}  # 4 relevant; ideal grades 3, 2, 1, 1, 0
RUN = {"q": {"c": 5.0, "x": 4.0, "a": 3.0}}  # returned: c (1), x (unjudged), a (3)


def one(name: str, qrels: dict = QRELS, run: dict = RUN) -> float:
    return serpeval_values(qrels, run, name)["q"]


def test_hand_worked_precision() -> None:
    # 2 relevant (c, a) in 3 returned: SRW 2/min(10, 3) = 0.666.. -> 0.67; Quepid 2/3; serpeval's P@10 2/10
    assert one("SRW_P@10") == 0.67
    assert one("SRW_P(rounding=False)@10") == pytest.approx(2 / 3, rel=1e-15)
    assert one("Quepid_P@10") == pytest.approx(2 / 3, rel=1e-15)
    assert one("P@10") == pytest.approx(0.2)
    # at k = 2: c relevant, x not: 1/2 everywhere
    assert one("SRW_P@2") == 0.5 == one("Quepid_P@2") == one("P@2")


def test_hand_worked_average_precision() -> None:
    # c at rank 1: 1/1; a at rank 3: 2/3; sum 5/3 over R = 4 -> 0.41666.. -> 0.42
    assert one("SRW_AP@10") == 0.42
    assert one("SRW_AP(rounding=False)@10") == pytest.approx(5 / 12, rel=1e-15)
    assert one("SRW_AP@10") == round(one("AP@10"), 2)
    # k = 2: only c: 1/4 = 0.25
    assert one("SRW_AP@2") == 0.25


def test_hand_worked_ndcg() -> None:
    # DCG@10: c (2^1-1)/log2(2) = 1; a (2^3-1)/log2(4) = 7/2 -> 4.5
    dcg = 1.0 + 7.0 / 2.0
    # SRW's ideal: all 5 judgments cut at min(5, 10): 7/1 + 3/log2(3) + 1/2 + 1/log2(5) + 0
    ideal_all = 7.0 + 3.0 / math.log2(3) + 0.5 + 1.0 / math.log2(5)
    assert one("SRW_nDCG@10") == round(dcg / ideal_all, 2) == 0.46  # 4.5 / 9.8235 = 0.4581
    assert one("SRW_nDCG(rounding=False)@10") == pytest.approx(dcg / ideal_all, rel=1e-14)
    # Quepid: the same ideal here (5 rated docs <= 10), no rounding
    assert one("Quepid_nDCG@10") == pytest.approx(dcg / ideal_all, rel=1e-14)
    # k = 2: DCG = 1 (c); SRW's ideal cut at 2: 7 + 3/log2(3) = 8.8928; Quepid's stays over all 5
    assert one("SRW_nDCG(rounding=False)@2") == pytest.approx(1.0 / (7.0 + 3.0 / math.log2(3)), rel=1e-14)
    assert one("SRW_nDCG@2") == 0.11
    assert one("Quepid_nDCG@2") == pytest.approx(1.0 / ideal_all, rel=1e-14)  # 0.1018
    # serpeval's nDCG(gain=exp)@2 is SRW's without the rounding
    assert one("nDCG(gain=exp)@2") == pytest.approx(one("SRW_nDCG(rounding=False)@2"), rel=1e-14)


def test_quepid_ndcg_cannot_reach_one_with_more_relevant_docs_than_k() -> None:
    # 3 docs of grade 1, ranked perfectly, k = 2: DCG 1 + 1/log2(3); ideal over all three adds 1/2
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    top2 = 1.0 + 1.0 / math.log2(3)
    assert one("Quepid_nDCG@2", qrels, run) == pytest.approx(top2 / (top2 + 0.5), rel=1e-14)
    assert one("nDCG(gain=exp)@2", qrels, run) == pytest.approx(1.0)
    assert one("SRW_nDCG@2", qrels, run) == 1.0
    assert one("Quepid_nDCG@3", qrels, run) == pytest.approx(1.0)


def test_nothing_retrieved_and_no_relevant_judgment_give_zero() -> None:
    qrels = {"q": {"a": 1}, "r": {"b": 0}}
    run = {"r": {"b": 1.0}}
    for name in REFERENCES:
        values = serpeval_values(qrels, run, f"{name}@10") | {}
        r = rank(Qrels.from_dict(qrels), Run.from_dict(run), missing="zero")
        assert parse_measure(f"{name}@10").compute(r).tolist() == [0.0, 0.0], name
        assert values["r"] == 0.0


def test_java_rounding() -> None:
    # half up toward +infinity; 2/3 -> 0.67; NaN (0/0) -> 0; 0.285 * 100 is 28.499999999999996 -> 0.28 in Java too
    values = np.array([0.125, 2 / 3, 0.005, 0.285, np.nan, 1.0, 0.0, 0.994999])
    assert java_round2(values).tolist() == [0.13, 0.67, 0.01, 0.28, 0.0, 1.0, 0.0, 0.99]
    assert [java_math_round(v * 100.0) / 100.0 for v in values] == java_round2(values).tolist()
    # floor(y + 0.5) in floating point would give 1 for the largest double below 1/2; Java gives 0
    below_half = np.nextafter(0.5, 0.0)
    assert java_math_round(below_half) == 0


def test_huge_grades_give_the_exact_ratio() -> None:
    """2^1100 overflows the peers' doubles (Infinity / Infinity); serpeval scales every gain of
    the query by the same power of two, so the ratio is the exact one (computed here in
    rationals, with the discounts in float64 as the kernels use them)."""
    qrels = {"q": {"a": 1100, "b": 1099, "c": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    gain = {d: Fraction(2) ** g - 1 for d, g in qrels["q"].items()}
    dcg = gain["b"] / Fraction(math.log2(2)) + gain["a"] / Fraction(math.log2(3))
    ideal2 = gain["a"] / Fraction(math.log2(2)) + gain["b"] / Fraction(math.log2(3))
    ideal_all = ideal2 + gain["c"] / Fraction(math.log2(4))
    assert one("SRW_nDCG(rounding=False)@2", qrels, run) == pytest.approx(float(dcg / ideal2), rel=1e-14)
    assert one("SRW_nDCG@2", qrels, run) == 0.86  # (1/2 + 1/log2 3) / (1 + 1/(2 log2 3)) = 1.1309 / 1.3155 = 0.8597
    assert one("Quepid_nDCG@2", qrels, run) == pytest.approx(float(dcg / ideal_all), rel=1e-14)


def test_registered_with_the_grammar() -> None:
    for name in ("SRW_P", "SRW_AP", "SRW_nDCG", "Quepid_P", "Quepid_nDCG"):
        spec = REGISTRY[name]
        assert spec.cutoff == "required"
        assert "commit" in spec.reference
        measure = parse_measure(f"{name.lower()}@10")
        assert str(measure) == f"{name}@10"
        assert parse_measure(str(measure)) == measure
    assert str(parse_measure("SRW_MAP(rounding=false)@5")) == "SRW_AP(rounding=False)@5"
    assert str(parse_measure("Quepid_NDCG@10")) == "Quepid_nDCG@10"


def test_serpeval_measures_names_the_peer_definitions(capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.cli import main

    for name, peers in (("P", "SRW_P, Quepid_P"), ("nDCG@10", "SRW_nDCG, Quepid_nDCG"), ("AP", "SRW_AP")):
        assert main(["measures", name]) == 0
        assert f"define it their own way: {peers} " in capsys.readouterr().out
    assert main(["measures", "SRW_nDCG@10"]) == 0
    out = capsys.readouterr().out
    assert "d8be5d1b18de545ca98270a76f20f6504b603f3a" in out
    assert "define it their own way" not in out
    assert main(["measures", "R@10"]) == 0
    assert "define it their own way" not in capsys.readouterr().out
