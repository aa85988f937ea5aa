"""Relative precision: precision over the best precision possible at that depth."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, hits, safe_divide
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def relative_precision(r: Rankings, *, cutoff: int, rel: int) -> NDArray[np.float64]:
    """RelP@k = (relevant docs in the top k) / min(k, R).

    Precision up to rank R, recall after it: 1 exactly when the top k is as good as it can
    be. A ranking shorter than k counts as padded. Edge cases: 0 when R = 0.
    (trec_eval ``relative_P``.)
    """
    found = hits(r, rel, cutoff)
    return safe_divide(found, np.minimum(cutoff, r.num_rel(rel)).astype(np.float64))


def set_relative_precision(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """SetRelP = (relevant retrieved) / min(retrieved, R); 0 when nothing is retrieved or R = 0.

    Relative precision of the whole retrieved set (trec_eval ``set_relative_P``; note that
    ``relative_P.50`` differs from ``-M 50 -m set_relative_P`` when fewer than 50 docs are
    retrieved).
    """
    found = hits(r, rel, None)
    return safe_divide(found, np.minimum(r.n_ret, r.num_rel(rel)).astype(np.float64))


SPEC = MeasureSpec(
    name="RelP",
    summary="relative precision at k: relevant docs in the top k over min(k, R)",
    kernel=relative_precision,
    params=(REL,),
    cutoff="required",
    trec_cut=("relative_P",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="trec_eval m_rel_P.c",
    family="Top-k precision and recall",
    user_model="scans the top k; every rank weighs the same",
    grades="binary",
    use_when="precision at k that a query with fewer than k relevant documents can still max out",
    unjudged="counted as non-relevant (trec_eval's rule)",
)

SET_SPEC = MeasureSpec(
    name="SetRelP",
    summary="relative precision of the retrieved set: relevant retrieved over min(retrieved, R)",
    kernel=set_relative_precision,
    params=(REL,),
    trec=("set_relative_P",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="trec_eval m_set_rel_P.c",
    family="Set retrieval",
    user_model="reads the whole retrieved set, unordered",
    grades="binary",
    use_when="set precision that a query with few relevant documents can still max out",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("SetP(relative=True)",),
)
