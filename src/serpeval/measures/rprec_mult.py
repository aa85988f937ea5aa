"""Precision at multiples of R (trec_eval's ``Rprec_mult``): precision- vs recall-oriented."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, hits
from serpeval.measures._segments import c_trunc
from serpeval.measures.cparse import atof
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def rprec_mult(r: Rankings, *, cutoff: None, rel: int, mult: float) -> NDArray[np.float64]:
    """Precision at rank c = (long)(x * R + 0.9), x = ``mult``, R = relevant judged docs.

    (relevant docs in the top c) / c; a ranking shorter than c counts as padded with
    non-relevant docs, so it is (relevant retrieved) / c. x = 1 is R-precision. The +0.9
    rounding is trec_eval's (10.0 still uses it here, unlike iprec_at_recall). Edge cases:
    0 when c <= 0 (R = 0, or x * R < 0.1).
    """
    c = c_trunc(mult * r.num_rel(rel).astype(np.float64) + 0.9)
    found = hits(r, rel, np.maximum(c, 0))
    out = np.zeros(r.n_queries)
    positive = c > 0
    out[positive] = found[positive] / c[positive].astype(np.float64)
    return out


def _trec_mult(text: str) -> dict[str, float]:
    if "," in text:
        raise ValueError("one multiple per measure; write Rprec_mult_0.20, Rprec_mult_0.40, ...")
    return {"mult": atof(text)}


SPEC = MeasureSpec(
    name="RprecMult",
    summary="precision at rank x*R: x < 1 looks at precision, x > 1 at recall",
    kernel=rprec_mult,
    params=(REL, Param("mult", float, 1.0, "the multiple x of R (x * R must be a rank)",
                       minimum=0.0, maximum=1e6)),
    trec=("Rprec_mult",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="trec_eval m_Rprec_mult.c",
    trec_params=_trec_mult,
    family="Rank-based (precision at relevant ranks)",
    user_model="reads x*R documents, R = the query's relevant count",
    grades="binary",
    use_when="precision (x < 1) or recall (x > 1) at a depth scaled to each query",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
