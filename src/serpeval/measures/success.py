"""Success at k: whether any relevant doc is in the top k."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpeval.measures._common import JUDGED_ONLY, REL, hits
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def success(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """Success@k = 1 if a relevant doc is ranked in the top k, else 0 (trec_eval ``success``).

    Without a cutoff the whole ranking counts. Averaged over queries it is the hit rate.
    """
    return (hits(r, rel, cutoff) > 0).astype(float)


SPEC = MeasureSpec(
    name="Success",
    summary="1 if a relevant doc is in the top k, else 0 (hit rate when averaged)",
    kernel=success,
    params=(REL, JUDGED_ONLY),
    cutoff="optional",
    aliases=("HitRate", "Hit_Rate"),
    trec_cut=("success",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "cutoff_monotone",
                          "swap_improves"}),
    reference="trec_eval m_success.c",
    family="Cascade",
    user_model="succeeds when one relevant document is in the top k",
    grades="binary",
    use_when="hit rate: did the page contain any good answer (QA, recommendation)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("Success",),
)
