"""Precision at a cutoff: P@k."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.measures._common import JUDGED_ONLY, REL, hits
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def precision(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    """P@k = (relevant docs in the top k) / k.

    Edge cases: a ranking shorter than k is padded with non-relevant docs, so P@k still
    divides by k (a run that retrieves 15 docs, 4 relevant, has P@20 = 4/20 = 0.2, as
    trec_eval's ``m_P.c`` says). Unjudged docs are not relevant. P@k is *not* monotone in k.
    """
    return hits(r, rel, cutoff) / float(cutoff)


SPEC = MeasureSpec(
    name="P",
    summary="precision at k: relevant docs in the top k, divided by k",
    kernel=precision,
    params=(REL, JUDGED_ONLY),
    cutoff="required",
    aliases=("Precision",),
    trec_cut=("P",),
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference="trec_eval m_P.c",
    family="Top-k precision and recall",
    user_model="scans the top k; every rank weighs the same",
    grades="binary",
    use_when="the share of a results page that is relevant, when every slot counts",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("P",),
)
