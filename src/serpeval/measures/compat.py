"""Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021): rank-biased overlap with an ideal ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import safe_divide
from serpeval.measures._segments import relevant_docs
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

PERSISTENCE = Param("p", float, 0.95, "RBO persistence: the weight of depth i is p^(i-1) (ir_measures: 0.95)",
                    minimum=0.0, maximum=1.0)
NORMALIZE = Param("normalize", bool, True,
                  "divide by the compatibility of the ideal ranking with itself (1 for a perfect ranking)")


def compat(r: Rankings, *, cutoff: None, p: float, normalize: bool) -> NDArray[np.float64]:
    """Compat = RBO(ranking, ideal) / RBO(ideal, ideal), RBO(A, B) = sum_{i<=D} p^(i-1) |A_i ∩ B_i| / i
    over sum_{i<=D} p^(i-1).

    A_i, B_i: the top i of the ranking and of the ideal ranking; D = max(docs retrieved, R),
    R = judged docs with grade >= 1. The ideal ranking lists the relevant docs by grade,
    descending; within a grade the retrieved ones first, in their rank order (the ideal most
    compatible with the ranking; ir_measures orders them by run score, the same when scores
    are positive), then the others. A relevant doc d at rank r_d and ideal position q_d is in
    both tops from depth max(r_d, q_d) on, so the numerator is a sum over the retrieved
    relevant docs of S(D) - S(max(r_d, q_d) - 1), S(n) = sum_{i<=n} p^(i-1) / i. RBO(ideal,
    ideal) = sum_{i<=R} p^(i-1) + R (S(D) - S(R)). Edge cases: 0 when the query has no
    relevant judgment or nothing is retrieved; ``normalize=False`` gives the plain RBO.
    """
    n_rel = r.num_rel(1)
    depth = np.maximum(r.n_ret, n_rel)
    width = int(depth.max(initial=0))
    weight = p ** np.arange(width, dtype=np.float64)  # p^(i-1) for i = 1..width
    total_w = np.concatenate(([0.0], np.cumsum(weight)))  # W(n)
    total_s = np.concatenate(([0.0], np.cumsum(weight / np.arange(1, width + 1))))  # S(n)

    docs = relevant_docs(r, 1)
    grade = r.grades[docs.index]
    seg = docs.segment
    # Ideal position: judged docs of a higher grade, plus the retrieved relevant docs of the
    # same grade ranked above, plus one.
    levels = np.unique(r.ideal_grades)
    n_levels = len(levels)
    ideal_key = r.ideal_segment * n_levels + (n_levels - 1 - np.searchsorted(levels, r.ideal_grades))
    doc_key = seg * n_levels + (n_levels - 1 - np.searchsorted(levels, grade))
    higher = np.searchsorted(ideal_key, doc_key, side="left") - r.ideal_offsets[:-1][seg]
    order = np.lexsort((docs.position, grade, seg))
    group_start = np.ones(len(order), dtype=bool)
    group_start[1:] = (seg[order][1:] != seg[order][:-1]) | (grade[order][1:] != grade[order][:-1])
    starts = np.flatnonzero(group_start)
    same_above = np.empty(len(order), dtype=np.int64)
    same_above[order] = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    ideal_rank = higher + same_above + 1
    meet = np.maximum(docs.position + 1, ideal_rank)
    score = np.bincount(seg, weights=total_s[depth[seg]] - total_s[meet - 1], minlength=r.n_queries)
    if not normalize:
        return safe_divide(score, total_w[depth])
    best = total_w[n_rel] + n_rel * (total_s[depth] - total_s[n_rel])
    return safe_divide(score, best)


SPEC = MeasureSpec(
    name="Compat",
    summary="compatibility: rank-biased overlap of the ranking with the ideal ranking (normalised)",
    kernel=compat,
    params=(PERSISTENCE, NORMALIZE),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Clarke, Vtyurina & Smucker, TOIS 2021; ir_measures' compat provider",
    notes="ir_measures breaks score ties by doc id ascending (serpeval: descending, trec_eval's rule) "
          "and orders the same-grade relevant docs of the ideal by run score (unretrieved ones score 0).",
    family="Persistence and goal (C/W/L)",
    user_model="rank-biased overlap with the ideal ranking (persistence p)",
    grades="graded",
    use_when="preference judgments or graded qrels read as an ideal ordering (Clarke et al.)",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("Compat",),
)
