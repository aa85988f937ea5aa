"""Inferred average precision (infAP) for sampled judgment pools."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, safe_divide
from serpeval.measures._segments import nonrelevant_docs, picked, relevant_docs
from serpeval.ranking import UNJUDGED

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

from serpeval.measures.spec import MeasureSpec

EPSILON = 1e-5


def infap(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """infAP (Yilmaz & Aslam, CIKM 2006), exactly as trec_eval's ``m_infap.c``.

    Walking the ranking with 0-based index j (counting every doc, including those not in
    the pool), at each judged relevant doc add 1 if j = 0, else

        1/(j+1) + (j/(j+1)) * ((rel + nonrel + unjudged) / j) * ((rel + e) / (rel + nonrel + 2e))

    where rel, nonrel and unjudged count the judged relevant, judged non-relevant and
    pooled-but-unjudged (negative grade) docs above it, and e = 1e-5. Docs outside the pool
    contribute nothing. Divide by R; 0 when R = 0.
    """
    docs = relevant_docs(r, rel)
    unjudged = picked(r, "pooled_unjudged", lambda: r.grades == UNJUDGED)
    rel_above = (docs.nth - 1).astype(np.float64)
    nonrel_above = nonrelevant_docs(r, rel).count_above(docs.index, docs.segment).astype(np.float64)
    unjudged_above = unjudged.count_above(docs.index, docs.segment).astype(np.float64)
    j = docs.position.astype(np.float64)
    term = np.ones(len(j))
    later = j > 0
    jj = j[later]
    ra, na, ua = rel_above[later], nonrel_above[later], unjudged_above[later]
    term[later] = 1.0 / (jj + 1.0) + (jj / (jj + 1.0)) * ((ra + na + ua) / jj) * (
        (ra + EPSILON) / (ra + na + 2 * EPSILON)
    )
    total = np.bincount(docs.segment, weights=term, minlength=r.n_queries)
    return safe_divide(total, r.num_rel(rel))


SPEC = MeasureSpec(
    name="infAP",
    summary="inferred AP: AP estimated from a sampled pool (negative grades = pooled, unjudged)",
    kernel=infap,
    params=(REL,),
    trec=("infAP",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="Yilmaz & Aslam, CIKM 2006; trec_eval m_infap.c",
    family="Incomplete judgments",
    user_model="AP's reader, estimated from a sampled pool",
    grades="binary",
    use_when="qrels from sampled pools (TREC's infAP pools, negative grades = pooled but unjudged)",
    unjudged="estimated from the sampled pool (pooled, unjudged = negative grade); unpooled ones count non-relevant",
    ir_measures=("infAP",),
)
