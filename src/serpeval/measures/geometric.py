"""Geometric-mean aggregates of AP and bpref (trec_eval's ``gm_map`` and ``gm_bpref``).

Per query they are AP and bpref; across queries the geometric mean of max(x, 1e-5) is
taken, which rewards systems that are consistent over topics more than the arithmetic mean
does (Robertson, CIKM 2006; the TREC Robust track's GMAP).
"""

from __future__ import annotations

from serpeval.measures._common import REL
from serpeval.measures.average_precision import average_precision
from serpeval.measures.bpref import bpref
from serpeval.measures.spec import MeasureSpec

GMAP_SPEC = MeasureSpec(
    name="GMAP",
    summary="AP per query, geometric mean of max(AP, 1e-5) across queries",
    kernel=average_precision,
    params=(REL,),
    trec=("gm_map",),
    aggregate="gmean",
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="Robertson, CIKM 2006 (GMAP); trec_eval m_gm_map.c",
    family="Rank-based (precision at relevant ranks)",
    user_model="AP's reader; the geometric mean rewards improving the worst queries",
    grades="binary",
    use_when="robustness: gains on hard queries weigh more than on easy ones (TREC Robust)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)

GM_BPREF_SPEC = MeasureSpec(
    name="GMBpref",
    summary="bpref per query, geometric mean of max(bpref, 1e-5) across queries",
    kernel=bpref,
    params=(REL,),
    trec=("gm_bpref",),
    aggregate="gmean",
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Buckley & Voorhees, SIGIR 2004; trec_eval m_gm_bpref.c",
    family="Incomplete judgments",
    user_model="Bpref's comparison; the geometric mean rewards improving the worst queries",
    grades="binary",
    use_when="robustness under incomplete judgments",
    unjudged="ignored, as in Bpref",
)
