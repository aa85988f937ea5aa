"""Average precision (MAP when averaged over queries), optionally cut at k."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import JUDGED_ONLY, REL, safe_divide
from serpeval.measures._segments import memo, prefix_sums, relevant_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def average_precision(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """AP = (1/R) * sum over relevant retrieved docs at rank i (<= k) of P@i.

    R is the number of relevant judged docs of the query, retrieved or not, also for AP@k
    (trec_eval's ``map_cut``), so AP@k is non-decreasing in k. Edge cases: 0 when R = 0 or
    no relevant doc is retrieved. The sum runs down the ranking once per evaluation
    (exactly in trec_eval's order) and every cutoff reads its running value at rank k.
    """
    return safe_divide(precision_sum(r, rel, cutoff), r.num_rel(rel))


def precision_sum(r: Rankings, rel: int, cutoff: int | None) -> NDArray[np.float64]:
    """Per query: the sum of P@i over the ranks i <= cutoff of relevant docs (AP times R).

    Summed once per rankings, relevant doc after relevant doc in rank order (trec_eval's
    order); each cutoff reads the running sum at its last relevant doc.
    """
    docs = relevant_docs(r, rel)

    def running() -> NDArray[np.float64]:
        return prefix_sums(docs.nth / (docs.position + 1.0), docs.offsets)

    return docs.value_at(memo(r, ("ap_running", rel), running), docs.count_in_top(cutoff))


SPEC = MeasureSpec(
    name="AP",
    summary="average precision: mean of P@i over the ranks i of relevant docs, divided by R",
    kernel=average_precision,
    params=(REL, JUDGED_ONLY),
    cutoff="optional",
    aliases=("MAP",),
    trec=("map",),
    trec_cut=("map_cut",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "cutoff_monotone",
                          "swap_improves"}),
    reference="trec_eval m_map.c, m_map_cut.c",
    family="Rank-based (precision at relevant ranks)",
    user_model="reads down to every relevant document; precision at each relevant rank",
    grades="binary",
    use_when="one summary of the whole ranking for recall-oriented tasks (ad hoc TREC, MAP)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("AP",),
)
