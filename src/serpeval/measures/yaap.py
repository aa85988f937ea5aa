"""YAAP, "yet another average precision" (Robertson, ECIR 2012): AP on a log-odds scale."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL
from serpeval.measures.average_precision import precision_sum
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def yaap(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """YAAP = log((1 + S) / (1 + R - S)), S = sum over relevant retrieved docs of P@rank.

    S is AP before dividing by R, so YAAP grows with AP on a single topic, but it is not
    squashed near 0 and 1 and averages better across topics. Edge cases: 0 when R = 0;
    unbounded (log(1/(1+R)) <= YAAP <= log(1+R)).
    """
    found = precision_sum(r, rel, None)
    return np.log((1.0 + found) / (1.0 + r.num_rel(rel).astype(np.float64) - found))


SPEC = MeasureSpec(
    name="YAAP",
    summary="yet another AP: log((1 + S) / (1 + R - S)), S = AP * R",
    kernel=yaap,
    params=(REL,),
    trec=("yaap",),
    bounds=None,
    properties=frozenset({"no_relevant_is_zero", "swap_improves"}),
    reference="Robertson, ECIR 2012; trec_eval m_yaap.c",
    family="Rank-based (precision at relevant ranks)",
    user_model="AP's reader, on a log-odds scale",
    grades="binary",
    use_when="trec_eval's yaap (parity)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
