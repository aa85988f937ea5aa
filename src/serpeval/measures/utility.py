"""Set utility: a linear value of the retrieved set from the contingency table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.measures._common import REL, hits
from serpeval.measures.cparse import atof
from serpeval.measures.spec import MAX_WEIGHT, MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def utility(r: Rankings, *, cutoff: None, rel: int, a: float, b: float, c: float, d: float,
            collection: int) -> NDArray[np.float64]:
    """Utility = a*RR + b*NR + c*RN + d*NN over the contingency table of the retrieved set.

    RR = relevant retrieved, NR = retrieved non-relevant (unjudged docs included), RN =
    relevant not retrieved (R - RR), NN = non-relevant not retrieved
    (``collection`` + RR - retrieved - R, with ``collection`` the number of docs in the
    collection, trec_eval's ``-N``, default 0). Defaults a=1, b=-1, c=d=0 (TREC filtering's
    linear utility). Summed left to right as trec_eval does; averaged over queries (trec_eval
    averages too, though a sum could be argued for).
    """
    rel_ret = hits(r, rel, None)
    n_ret = r.n_ret.astype(np.float64)
    num_rel = r.num_rel(rel).astype(np.float64)
    return (a * rel_ret + b * (n_ret - rel_ret) + c * (num_rel - rel_ret)
            + d * (collection + rel_ret - n_ret - num_rel))


def _trec_coefficients(text: str) -> dict[str, float]:
    values = [atof(p) for p in text.split(",")]
    if len(values) != 4:
        raise ValueError(
            f"utility takes 4 coefficients a,b,c,d (e.g. utility.1,-1,0,0), got {len(values)}")
    return dict(zip("abcd", values, strict=True))


SPEC = MeasureSpec(
    name="Utility",
    summary="set utility a*relret + b*nonrelret + c*relmissed + d*nonrelmissed",
    kernel=utility,
    params=(
        REL,
        Param("a", float, 1.0, "worth of a relevant doc retrieved", minimum=-MAX_WEIGHT, maximum=MAX_WEIGHT),
        Param("b", float, -1.0, "worth of a non-relevant (or unjudged) doc retrieved",
              minimum=-MAX_WEIGHT, maximum=MAX_WEIGHT),
        Param("c", float, 0.0, "worth of a relevant doc not retrieved", minimum=-MAX_WEIGHT, maximum=MAX_WEIGHT),
        Param("d", float, 0.0, "worth of a non-relevant doc not retrieved (needs collection)",
              minimum=-MAX_WEIGHT, maximum=MAX_WEIGHT),
        Param("collection", int, 0, "number of docs in the collection (trec_eval -N)",
              minimum=0, maximum=GRADE_LIMIT),
    ),
    trec=("utility",),
    bounds=None,
    reference="Lewis, TREC-4 filtering (1995); trec_eval m_utility.c",
    trec_params=_trec_coefficients,
    family="Set retrieval",
    user_model="pays a for each relevant document returned, b for each non-relevant one (and c, d for missed)",
    grades="binary",
    use_when="filtering tasks with explicit costs and benefits (TREC filtering)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
