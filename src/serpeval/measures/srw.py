"""OpenSearch Search Relevance Workbench's definitions: ``SRW_P@k``, ``SRW_AP@k``, ``SRW_nDCG@k``.

Transcribed from ``src/main/java/org/opensearch/searchrelevance/metrics/calculator/Evaluation.java``
of opensearch-project/search-relevance as of commit d8be5d1b18de545ca98270a76f20f6504b603f3a
(2025-06-14; the file last changed in d17ddf6ebe2ec5f0d97f1e338b42c81fe48047f0, "Use the size
parameter to do the calculations (#61)"). SRW calls them with the hits of a search of
``size`` = k (``EvaluationMetrics.calculateEvaluationMetrics(docIds, judgments, k)``), so the
retrieved list is at most k long there; serpeval's run may be deeper and is read to rank k.

What all three share, and how they differ from serpeval's own P@k, AP@k and nDCG@k:

* every per-query value is rounded to 2 decimals by Java's ``Math.round(x * 100.0) / 100.0``
  (half up, toward +infinity; NaN rounds to 0); ``rounding=False`` gives the unrounded value
  (for significance tests, where the rounding only adds noise);
* a document is relevant when its rating is above 0 (``Double.valueOf(rating) > 0``), so a
  fractional rating such as 0.4 counts as relevant (serpeval's ``rel=1`` would not);
* a retrieved document with no judgment counts as rating 0.

A negative qrels grade is "judged but unusable" in serpeval (trec_eval's convention; the
rankings keep no value for it), so these kernels count it as rating 0 on both sides. SRW
itself would add the gain 2^g - 1 < 0; SRW's rating scales start at 0, so judgments written
by SRW never reach that case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.segments import weighted_bincount
from serpeval.measures._common import safe_divide
from serpeval.measures._segments import memo
from serpeval.measures.gains import apply_gains, exp_shift
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

__all__ = [
    "AP_SPEC", "NDCG_SPEC", "PEER_FAMILY", "P_SPEC", "exp_gains", "java_round2", "srw_ap", "srw_ndcg", "srw_precision",
]

SOURCE = ("opensearch-project/search-relevance, src/main/java/org/opensearch/searchrelevance/metrics/calculator/"
          "Evaluation.java at commit d8be5d1b18de545ca98270a76f20f6504b603f3a (2025-06-14)")

PEER_FAMILY = "Peer tools' definitions"
"""The family of the peer tools' measures: ``serpeval measures P`` names ``SRW_P`` and ``Quepid_P``."""

ROUNDING = Param(
    "rounding", bool, True,
    "round each per-query value to 2 decimals as SRW does (Java's Math.round(x * 100.0) / 100.0); "
    "False keeps the unrounded value",
)


def java_round2(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Math.round(x * 100.0) / 100.0`` as Java computes it: the closest long to ``x * 100``
    with ties toward +infinity (``floor(y + 1/2)`` without the rounding error of adding 1/2 in
    floating point), NaN to 0, then divided by 100."""
    y = np.nan_to_num(np.asarray(values, dtype=np.float64) * 100.0, nan=0.0)
    low = np.floor(y)
    return (low + (y - low >= 0.5)) / 100.0


def _finish(values: NDArray[np.float64], rounding: bool) -> NDArray[np.float64]:
    return java_round2(values) if rounding else values


def _relevant_top(r: Rankings, cutoff: int) -> NDArray[np.bool_]:
    """Ranked docs at rank <= k whose rating is above 0 (unjudged docs, grade < 0, are not)."""
    return (r.position < cutoff) & (r.grades > 0)


def srw_precision(r: Rankings, *, cutoff: int, rounding: bool) -> NDArray[np.float64]:
    """SRW_P@k = round2(relevant in the top k / min(k, retrieved)); relevant: rating > 0.

    SRW's ``calculatePrecisionAtK``: the count of docs with a rating above 0 among the first
    k retrieved, divided by ``Math.min(k, docIds.size())``, rounded to 2 decimals. Unlike
    serpeval's P@k (trec_eval's, which divides by k, padding a short ranking with
    non-relevant docs) a ranking of 3 docs, 2 relevant, has SRW_P@10 = 0.67, not 0.2.
    Edge cases: nothing retrieved gives 0/0, which Java's Math.round turns into 0.
    """
    hits = r.total(np.ones(len(r.grades)), _relevant_top(r, cutoff))
    return _finish(safe_divide(hits, np.minimum(r.n_ret, cutoff)), rounding)


def srw_ap(r: Rankings, *, cutoff: int, rounding: bool) -> NDArray[np.float64]:
    """SRW_AP@k = round2(sum over relevant d at rank i <= min(k, retrieved) of
    (relevant at ranks <= i) / i, divided by R); R = judged docs with rating > 0.

    SRW's ``calculateMAPAtK`` (reported as ``MAP@k``, per query). The same as serpeval's
    ``AP@k`` (trec_eval's ``map_cut``, which divides by all relevant docs too) but for the
    rounding and the threshold (rating > 0 rather than grade >= 1). Edge cases: 0 when no
    relevant doc is retrieved in the top k (also when the query has no relevant judgment).
    """
    pick = np.flatnonzero(_relevant_top(r, cutoff))  # in query order, then rank order
    seg = r.segment[pick]
    counts = np.bincount(seg, minlength=r.n_queries)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    seen = np.arange(len(pick)) - first[seg] + 1  # relevantCount after this doc
    total = weighted_bincount(seg, seen / (r.position[pick] + 1.0), r.n_queries)
    n_rel = np.bincount(r.ideal_segment[r.ideal_grades > 0], minlength=r.n_queries)
    return _finish(safe_divide(total, n_rel), rounding)


def exp_gains(r: Rankings, grades: NDArray[np.int64] | NDArray[np.float64], segment: NDArray[np.int64]
              ) -> NDArray[np.float64]:
    """2^g - 1 for g > 0 and 0 otherwise, each divided by its query's 2^s of
    :func:`serpeval.measures.gains.exp_shift` (s = 0 unless the query has a grade above 960):
    the DCG and its ideal are scaled alike, so their ratio is exact for any grade, where the
    peers' own code would divide infinity by infinity from grade 1024 on."""
    shift = memo(r, ("exp_shift", "exp", ""), lambda: exp_shift(r, "exp", {}))
    return apply_gains(grades, "exp", {}, None if shift is None else shift[segment])  # type: ignore[arg-type]


def srw_ndcg(r: Rankings, *, cutoff: int, rounding: bool) -> NDArray[np.float64]:
    """SRW_nDCG@k = round2(DCG@k / IDCG@k), gain 2^g - 1, discount log(i+1)/log(2) at rank i.

    SRW's ``calculateNDCGAtK``: DCG over the first min(k, retrieved) docs, each judged doc
    adding (2^rating - 1) / (log(i + 1) / log 2); IDCG over *every* judgment of the query
    (retrieved or not, rating 0 included), sorted descending and cut at min(k, judgments)
    (``calculateIDCG``); 0 when IDCG is 0. Equal to serpeval's ``nDCG(gain=exp)@k`` up to the
    rounding to 2 decimals and the last bits of the discount (SRW divides natural logs).
    Note: an earlier commit of the same pull request (1caa195915b1, 2025-06-06) cut the ideal
    list at the number retrieved instead of k; the merged code (d17ddf6) cuts at k, as here.
    Edge cases: 0 when no judgment of the query has a rating above 0; nothing retrieved gives 0;
    grades from 1024 on, where SRW's doubles overflow (Infinity / Infinity, rounded to 0), give
    the exact ratio (gains scaled by a power of two, see :func:`exp_gains`).
    """
    top = r.position < cutoff
    seg = r.segment[top]
    dcg = weighted_bincount(seg, exp_gains(r, r.grades[top], seg) / _java_log2(r.position[top]), r.n_queries)
    ideal = r.ideal_position < cutoff
    ideal_seg = r.ideal_segment[ideal]
    idcg = weighted_bincount(ideal_seg, exp_gains(r, r.ideal_grades[ideal], ideal_seg)
                             / _java_log2(r.ideal_position[ideal]), r.n_queries)
    return _finish(safe_divide(dcg, idcg), rounding)


def _java_log2(position: NDArray[np.int64]) -> NDArray[np.float64]:
    """SRW's discount at 0-based position i: ``Math.log(i + 2) / Math.log(2)``."""
    return np.log(position + 2.0) / np.log(2.0)


_COMMON = {
    "params": (ROUNDING,),
    "cutoff": "required",
    "family": PEER_FAMILY,
    "use_when": "reproducing, or reconciling with, the numbers OpenSearch's Search Relevance Workbench reports",
    "unjudged": "counted as rating 0 (not relevant)",
}

P_SPEC = MeasureSpec(
    name="SRW_P",
    summary="OpenSearch SRW's Precision@k: relevant (rating > 0) in the top k / min(k, retrieved), "
            "rounded to 0.01",
    kernel=srw_precision,
    aliases=("SRW_Precision",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference=SOURCE + ", calculatePrecisionAtK",
    user_model="scans the docs returned in the top k; a short list is not penalised",
    grades="binary",
    **_COMMON,  # type: ignore[arg-type]
)

AP_SPEC = MeasureSpec(
    name="SRW_AP",
    summary="OpenSearch SRW's MAP@k per query: AP over the top k, divided by all relevant judgments, "
            "rounded to 0.01",
    kernel=srw_ap,
    aliases=("SRW_MAP",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves", "cutoff_monotone"}),
    reference=SOURCE + ", calculateMAPAtK",
    user_model="precision at each relevant rank in the top k, over all relevant docs",
    grades="binary",
    **_COMMON,  # type: ignore[arg-type]
)

NDCG_SPEC = MeasureSpec(
    name="SRW_nDCG",
    summary="OpenSearch SRW's NDCG@k: gain 2^g - 1, ideal over all judgments cut at k, rounded to 0.01",
    kernel=srw_ndcg,
    aliases=("SRW_NDCG",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves", "ideal_is_one"}),
    reference=SOURCE + ", calculateNDCGAtK and calculateIDCG",
    user_model="graded gains discounted by log2 of the rank, top k",
    grades="graded",
    **_COMMON,  # type: ignore[arg-type]
)
