"""R-precision: precision at rank R, the number of relevant docs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.measures._common import JUDGED_ONLY, REL, hits, safe_divide

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

from serpeval.measures.spec import MeasureSpec


def r_precision(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """Rprec = (relevant docs in the top R) / R, R = relevant judged docs of the query.

    Edge cases: 0 when R = 0; a ranking shorter than R counts the missing ranks as
    non-relevant (trec_eval ``m_Rprec.c``).
    """
    num_rel = r.num_rel(rel)
    return safe_divide(hits(r, rel, num_rel), num_rel)


SPEC = MeasureSpec(
    name="Rprec",
    summary="R-precision: precision at rank R, R = number of relevant docs",
    kernel=r_precision,
    params=(REL, JUDGED_ONLY),
    aliases=("R-prec", "RPrec"),
    trec=("Rprec",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="trec_eval m_Rprec.c",
    family="Rank-based (precision at relevant ranks)",
    user_model="reads exactly R documents, R = the query's relevant count",
    grades="binary",
    use_when="a cutoff that adapts to each query's number of relevant documents",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("Rprec",),
)
