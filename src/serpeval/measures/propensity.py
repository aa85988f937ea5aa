"""Propensity-scored precision and nDCG (psP@k, psnDCG@k; Jain, Prabhu & Varma, KDD 2016).

Extreme classification's unbiased measures for missing labels: a relevant document counts
1/p_l, its inverse propensity, so that finding a rare ("tail") relevant document is worth
more than finding a popular one. Here a query is an instance and a document a label.

* **Propensities.** Given per document (``evaluate(propensities=...)``, the CLI's
  ``--propensities FILE``: ``doc_id propensity`` lines), or by Jain et al.'s formula
  ``p_l = 1 / (1 + C (N_l + B)^-A)`` with ``C = (ln N - 1) (B + 1)^A``, N the number of judged
  queries of the qrels and N_l the number of them in which document l is relevant (grade >=
  ``rel``). ``A`` and ``B`` are parameters (the paper's defaults 0.55 and 1.5; 0.5/0.4 for
  Wikipedia, 0.6/2.6 for Amazon). With N <= 2 queries C would be negative (ln N < 1) and the
  formula meaningless (N = N_l = 1 gives 1/p = 0); C is then 0: every propensity is 1. A
  given propensity must be in (0, 1]: 0 (an infinite weight) and anything else are refused
  with one line, as is a relevant document without one.
* **Weights.** Each judgment gets the weight ``w = 1/p_l`` when its grade is >= ``rel``, 0
  when it is judged non-relevant, and stays negative (unjudged) when its grade is; the run is
  ranked against these weights (:func:`weighted_index`, done by ``evaluate``), so every tie
  policy and ``judged_only`` apply as to any measure. The kernels read the weights as the
  ranked grades (called directly on ordinary rankings, each grade is its own weight: binary
  qrels then mean unit propensities).
* **Normalisation** (``norm``): ``dataset`` (the default, as pyxclib's ``psprecision`` /
  ``psndcg`` and the Extreme Classification Repository report it): the mean over queries
  equals (sum of the queries' psP@k) / (sum of their best achievable psP@k), the best being
  the k highest weights of the query's judgments; each query's value is its unnormalised
  score times Q / (that sum), so paired tests see the paper's scores up to one constant.
  ``query``: each query over its own best (in [0, 1]). ``none``: the paper's unnormalised
  formulas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.errors import InputError
from serpeval.measures._common import REL, safe_divide
from serpeval.measures._segments import at_depth, ideal_log2, memo, positive_docs, prefix_sums, rank_log2
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.measures.spec import Measure
    from serpeval.ranking import QrelsIndex, Rankings

__all__ = ["DCG_SPEC", "SPEC", "inverse_propensities", "weight_key", "weighted_index"]

A = Param("A", float, 0.55, "Jain et al.'s A in p = 1/(1 + C (N_l + B)^-A) (0.5 Wikipedia, 0.6 Amazon)",
          minimum=0.0, maximum=100.0)
B = Param("B", float, 1.5, "Jain et al.'s B in p = 1/(1 + C (N_l + B)^-A) (0.4 Wikipedia, 2.6 Amazon)",
          minimum=0.0, maximum=1e6)
NORM = Param("norm", str, "dataset",
             "dataset: mean = sum of scores / sum of best scores (pyxclib); query: each query over its best; "
             "none: the paper's unnormalised score", choices=("dataset", "query", "none"))


def _normalised(r: Rankings, value: NDArray[np.float64], best: NDArray[np.float64], norm: str
                ) -> NDArray[np.float64]:
    if norm == "none":
        return value
    if norm == "query":
        return safe_divide(value, best)
    total = math.fsum(best.tolist())  # exactly rounded: the same whatever the order of the queries
    return value * (r.n_queries / total) if total > 0 else np.zeros_like(value)


def _weights(r: Rankings) -> tuple[Any, NDArray[np.float64], NDArray[np.float64]]:
    """The ranked docs with a positive weight, their running sums of weights and of
    discounted weights (memoised per rankings)."""
    docs = positive_docs(r)

    def make() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        w = r.grades[docs.index].astype(np.float64)
        return prefix_sums(w, docs.offsets), prefix_sums(w / rank_log2(docs.position), docs.offsets)

    plain, discounted = memo(r, "ps_running", make)
    return docs, plain, discounted


def _ideal(r: Rankings) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Running sums over each query's ideal ranking (weights descending): plain and discounted."""
    def make() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        w = np.maximum(r.ideal_grades, 0).astype(np.float64)
        return prefix_sums(w, r.ideal_offsets), prefix_sums(w / ideal_log2(r), r.ideal_offsets)

    return memo(r, "ps_ideal_running", make)


def ps_precision(r: Rankings, *, cutoff: int, A: float, B: float, rel: int, norm: str) -> NDArray[np.float64]:
    """psP@k = (1/k) sum over ranks i <= k of y_i / p_i (Jain et al. 2016, eq. 1).

    y_i = 1 for a relevant doc (grade >= ``rel``), p_i its propensity: given per document
    (``--propensities FILE``, ``evaluate(propensities=...)``; in (0, 1], 0 is refused), or
    Jain et al.'s p_l = 1 / (1 + C (N_l + B)^-A), C = (ln N - 1)(B + 1)^A, N the judged
    queries, N_l those where doc l is relevant (C = 0 when N <= 2: every p is 1). The best
    achievable psP@k is the same sum over the k relevant judgments of the query with the
    highest 1/p. ``norm`` divides by it per query, over the whole evaluation (``dataset``,
    pyxclib's definition: mean = sum of psP@k / sum of best), or not at all. Edge cases: a
    query without a relevant judgment has psP@k = 0 (and adds 0 to the best); a ranking
    shorter than k is padded with non-relevant docs; unjudged docs have weight 0.
    """
    del A, B, rel  # applied to the qrels by weighted_index, before the ranking
    docs, plain, _ = _weights(r)
    value = docs.value_at(plain, docs.count_in_top(cutoff)) / cutoff
    best = at_depth(_ideal(r)[0], r.ideal_offsets, cutoff) / cutoff
    return _normalised(r, value, best, norm)


def ps_ndcg(r: Rankings, *, cutoff: int, A: float, B: float, rel: int, norm: str) -> NDArray[np.float64]:
    """psnDCG@k = psDCG@k / sum_{i=1}^{min(k, R)} 1/log2(i + 1), psDCG@k = sum over ranks i <= k
    of y_i / (p_i log2(i + 1)) (Jain et al. 2016, eq. 2).

    R = the query's relevant judgments (grade >= ``rel``); y and p as for psP@k. The best
    achievable psnDCG@k ranks the relevant judgments by 1/p, descending. ``norm`` as for
    psP@k (``dataset``: pyxclib's ``psndcg``, mean = sum of psnDCG@k / sum of best). Edge
    cases: 0 for a query without a relevant judgment; unjudged docs have weight 0.
    """
    del A, B, rel
    docs, _, discounted = _weights(r)
    relevant = np.bincount(r.ideal_segment[r.ideal_grades > 0], minlength=r.n_queries)
    depth = np.minimum(relevant, cutoff)
    ones = np.cumsum(1.0 / np.log2(np.arange(2, int(depth.max(initial=0)) + 2)))
    n = np.zeros(r.n_queries)
    n[depth > 0] = ones[depth[depth > 0] - 1]
    value = safe_divide(docs.value_at(discounted, docs.count_in_top(cutoff)), n)
    best = safe_divide(at_depth(_ideal(r)[1], r.ideal_offsets, cutoff), n)
    return _normalised(r, value, best, norm)


_COMMON = dict(
    params=(A, B, REL, NORM),
    cutoff="required",
    bounds=None,
    properties=frozenset({"no_relevant_is_zero", "swap_improves"}),
    reference="Jain, Prabhu & Varma, KDD 2016 (propensity-scored losses for extreme multi-label learning); "
              "pyxclib xc_metrics psprecision/psndcg (normalisation); ranx#59",
    family="Propensity-scored",
    grades="binary",
    unjudged="weight 0 (not relevant)",
    notes="ir_measures and ranx have none; pyxclib's psprecision/psndcg normalise the dataset means "
          "(norm=dataset, the default here); per query: norm=query; the paper's raw scores: norm=none.",
)

SPEC = MeasureSpec(
    name="psP",
    summary="propensity-scored precision at k: relevant docs in the top k weighted by 1/propensity",
    kernel=ps_precision,
    user_model="scans the top k; a rare relevant document is worth more than a popular one",
    use_when="missing or popularity-biased labels (extreme classification, recommendation tails)",
    **_COMMON,  # type: ignore[arg-type]
)

DCG_SPEC = MeasureSpec(
    name="psnDCG",
    summary="propensity-scored nDCG at k: DCG of 1/propensity weights over the binary ideal DCG",
    kernel=ps_ndcg,
    user_model="reads down the list with attention 1/log2(rank + 1); rare relevant documents weigh more",
    use_when="missing or popularity-biased labels, rewarding tail documents near the top",
    **_COMMON,  # type: ignore[arg-type]
)


# ----------------------------------------------------------------------------- the weights


def weight_key(measure: Measure) -> tuple[float, float, int] | None:
    """``(A, B, rel)`` of a propensity-scored measure (the weights it needs), None for any other."""
    if measure.spec.kernel not in (ps_precision, ps_ndcg):
        return None
    params = dict(measure.params)
    return (float(params.get("A", A.default)), float(params.get("B", B.default)), int(params.get("rel", REL.default)))


def inverse_propensities(doc_ids: pa.ChunkedArray, grades: NDArray[Any], n_queries: int, a: float, b: float,
                         rel: int, given: Mapping[str, float] | None = None, source: str = "<propensities>"
                         ) -> NDArray[np.float64]:
    """1/p of the document of every judgment: from ``given`` (doc id -> propensity in (0, 1]),
    or Jain et al.'s formula with N = ``n_queries`` and N_l = the judgments of doc l with
    grade >= ``rel`` (one per query: a qrels judges a doc once per query).

    Raises:
        InputError: a propensity of 0 or outside (0, 1], or a relevant document without one.
    """
    if given is not None:
        keys = pa.array(list(given.keys()), pa.string())
        values = np.array([float(v) for v in given.values()], dtype=np.float64)
        bad = ~((values > 0) & (values <= 1))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{source}: document {keys[i].as_py()!r} has propensity {float(values[i])!r}; a "
                             "propensity is a probability in (0, 1] (0 would weigh its document infinitely). "
                             "Fix or drop it.")
        positions = pc.index_in(doc_ids, value_set=keys)  # null where the file has no such doc
        found = positions.is_valid().to_numpy(zero_copy_only=False)
        lacking = ~found & (grades >= rel)
        if lacking.any():
            i = int(np.argmax(lacking))
            raise InputError(f"{source}: relevant document {doc_ids[i].as_py()!r} has no propensity "
                             f"({int(lacking.sum())} relevant judgments lack one). Give every relevant document one.")
        out = np.ones(len(doc_ids))
        out[found] = 1.0 / values[positions.drop_null().to_numpy()]
        return out
    relevant = grades >= rel
    codes = pc.dictionary_encode(doc_ids).combine_chunks()
    index = codes.indices.to_numpy(zero_copy_only=False)
    frequency = np.bincount(index[relevant], minlength=len(codes.dictionary)).astype(np.float64)
    # C < 0 when ln N < 1 (N <= 2 queries): the formula would give propensities above 1 (or an
    # infinite weight: N = N_l = 1 gives 1/p = 0), so C is taken as 0 there: propensity 1.
    log_n = math.log(n_queries) - 1.0 if n_queries > 0 else 0.0
    inverse = np.ones(len(index))  # only relevant judgments are weighted (their N_l >= 1)
    if log_n <= 0.0:
        return inverse
    try:
        c = log_n * (b + 1.0) ** a
    except OverflowError:  # (B + 1)^A beyond float64 (A = 100, B = 1e6 are in the domain)
        # the same formula as C (N_l + B)^-A = (ln N - 1) ((B + 1) / (N_l + B))^A, whose
        # ratio is at most 1 (N_l >= 1): finite for every A and B
        inverse[relevant] = 1.0 + log_n * ((b + 1.0) / (frequency[index[relevant]] + b)) ** a
        return inverse
    inverse[relevant] = 1.0 + c * (frequency[index[relevant]] + b) ** -a
    return inverse


def weighted_index(index: QrelsIndex, key: tuple[float, float, int], given: Mapping[str, float] | None = None,
                   source: str = "<propensities>") -> QrelsIndex:
    """``index`` with every judgment's grade replaced by its propensity weight (see the module
    docstring): 1/p for grade >= rel, 0 for a judged non-relevant doc, the grade when negative."""
    a, b, rel = key
    grades = index.grades
    inverse = inverse_propensities(index.doc_ids, grades, len(index.query_ids), a, b, rel, given, source)
    weights: Any = np.where(grades >= rel, inverse, np.where(grades >= 0, 0.0, grades.astype(np.float64))) + 0.0
    order = np.lexsort((-weights, index.row_query))  # the ideal rankings: by query code, weights descending
    return replace(index, grades=weights, ideal_grades=weights[order])
