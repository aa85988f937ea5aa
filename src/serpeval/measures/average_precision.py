"""Average precision (MAP when averaged over queries), optionally cut at k."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, relevant, safe_divide, within
from serpeval.measures._spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def average_precision(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """AP = (1/R) * sum over relevant retrieved docs at rank i (<= k) of P@i.

    R is the number of relevant judged docs of the query, retrieved or not, also for AP@k
    (trec_eval's ``map_cut``), so AP@k is non-decreasing in k. Edge cases: 0 when R = 0 or
    no relevant doc is retrieved.
    """
    is_rel = relevant(r, rel) & within(r, cutoff)
    precision_at = r.running_count(is_rel) / (r.position + 1.0)
    return safe_divide(r.total(precision_at, is_rel), r.num_rel(rel))


SPEC = MeasureSpec(
    name="AP",
    summary="average precision: mean of P@i over the ranks i of relevant docs, divided by R",
    kernel=average_precision,
    params=(REL,),
    cutoff="optional",
    aliases=("MAP",),
    trec=("map",),
    trec_cut=("map_cut",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "cutoff_monotone",
                          "swap_improves"}),
    reference="trec_eval m_map.c, m_map_cut.c",
)
