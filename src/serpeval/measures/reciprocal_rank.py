"""Reciprocal rank of the first relevant doc (MRR when averaged), optionally cut at k."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import JUDGED_ONLY, REL
from serpeval.measures._segments import relevant_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def reciprocal_rank(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """RR = 1 / rank of the first relevant doc; 0 if none is retrieved (within the top k).

    Without a cutoff the whole ranking counts, as trec_eval's ``recip_rank``. RR@10 is
    MS MARCO's MRR@10.
    """
    docs = relevant_docs(r, rel)
    found = docs.count > 0
    first = docs.position[docs.offsets[:-1][found]]
    if cutoff is not None:
        found[found] = first < cutoff
        first = first[first < cutoff]
    out = np.zeros(r.n_queries)
    out[found] = 1.0 / (first + 1.0)
    return out


SPEC = MeasureSpec(
    name="RR",
    summary="reciprocal rank of the first relevant doc (0 if none)",
    kernel=reciprocal_rank,
    params=(REL, JUDGED_ONLY),
    cutoff="optional",
    aliases=("MRR",),
    trec=("recip_rank",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "cutoff_monotone",
                          "swap_improves"}),
    reference="trec_eval m_recip_rank.c",
    family="Cascade",
    user_model="stops at the first relevant document",
    grades="binary",
    use_when="known-item and navigational queries, QA: one good answer is enough (MRR)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("RR",),
)
