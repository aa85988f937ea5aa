"""Recall at a cutoff: R@k."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.measures._common import JUDGED_ONLY, REL, hits, safe_divide
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def recall(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    """R@k = (relevant docs in the top k) / R, with R all relevant judged docs of the query.

    Edge cases: 0 when the query has no relevant judgment (R = 0). R counts relevant
    judged docs whether retrieved or not, so R@k < 1 whenever some are never retrieved.
    """
    return safe_divide(hits(r, rel, cutoff), r.num_rel(rel))


SPEC = MeasureSpec(
    name="R",
    summary="recall at k: relevant docs in the top k, divided by all relevant docs",
    kernel=recall,
    params=(REL, JUDGED_ONLY),
    cutoff="required",
    aliases=("Recall",),
    trec_cut=("recall",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "cutoff_monotone", "swap_improves"}),
    reference="trec_eval m_recall.c",
    family="Top-k precision and recall",
    user_model="scans the top k; every rank weighs the same",
    grades="binary",
    use_when="how much of the relevant set a top-k page (or a first-stage retriever's k) covers",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("R",),
)
