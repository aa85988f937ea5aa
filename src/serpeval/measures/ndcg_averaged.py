"""nDCG averaged over points of the ranking (trec_eval's experimental ``ndcg_rel``, ``Rndcg``).

nDCG at a fixed k falls and rises along a ranking (it jumps up where the ideal runs out of
a gain level), so the value at one k depends on where those jumps fall for each topic.
These variants average nDCG at points that mean the same thing for every topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL
from serpeval.measures.gains import GAINS, apply_gains, parse_gain_table
from serpeval.measures.ndcg import (
    dcg_at,
    dcg_running,
    idcg_running,
    sorted_ideal_gains,
    trec_gains,
)
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def _ideal(r: Rankings, gains: str) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """The sorted ideal gains, the number P of positive ones per query, and the ideal's
    running DCG (shared with nDCG)."""
    ideal = sorted_ideal_gains(r, "linear", gains)
    n_positive = np.bincount(r.ideal_segment[ideal > 0], minlength=r.n_queries).astype(np.int64)
    return ideal, n_positive, idcg_running(r, "linear", gains)


def ndcg_rel(r: Rankings, *, cutoff: None, gains: str) -> NDArray[np.float64]:
    """nDCG averaged over the P docs with positive gain (P = positive ideal gains).

    Sum, over retrieved docs with positive gain at rank i, of DCG@i / IDCG@min(i, P); each
    of the P - (such docs retrieved) missing ones adds DCG@n / IDCG@P (n = docs retrieved);
    divide by P. Gains are the grades unless ``gains`` overrides them. Edge cases: 0 when
    the query has no positive gain.
    """
    _, n_positive, idcg = _ideal(r, gains)
    docs, dcg = dcg_running(r, "linear", gains)
    table = parse_gain_table(gains) if gains else {}
    hit = apply_gains(r.grades[docs.index], "linear", table) > 0
    seg = docs.segment[hit]
    ok = n_positive[seg] > 0
    seg, rank0 = seg[ok], docs.position[hit][ok]
    at = np.minimum(rank0, n_positive[seg] - 1)
    term = dcg[hit][ok] / idcg[r.ideal_offsets[:-1][seg] + at]
    total = np.bincount(seg, weights=term, minlength=r.n_queries)
    found = np.bincount(seg, minlength=r.n_queries)
    has = n_positive > 0
    queries = np.flatnonzero(has)
    full_dcg = dcg_at(r, "linear", gains, None, queries)
    full_idcg = idcg[r.ideal_offsets[:-1][queries] + n_positive[queries] - 1]
    missing = (n_positive[queries] - found[queries]).astype(np.float64)
    total[queries] = total[queries] + missing * full_dcg / full_idcg
    out = np.zeros(r.n_queries)
    good = total > 0
    out[good] = total[good] / n_positive[good].astype(np.float64)
    return out


def rndcg(r: Rankings, *, cutoff: None, rel: int, gains: str) -> NDArray[np.float64]:
    """nDCG averaged at the R-levels: the ranks where the ideal ranking changes gain level.

    With 5 docs of gain 3, 3 of gain 2, 10 of gain 1 (P = 18 positive), the points are
    5, 8 and 18, and (if more than P + 1 docs are retrieved) the end of the ranking:
    Rndcg = mean of DCG@j / IDCG@j over them, a ranking shorter than j read at its end.
    Gains are the grades unless ``gains`` overrides them. Edge cases: 0 when the query has
    no relevant doc (grade >= rel, the only use of ``rel``) or no positive gain. (trec_eval
    divides 0/0 and prints -nan for a topic with relevant docs but no positive gain, e.g.
    ``-l 0`` with only grade-0 judgments; serpeval gives 0.)
    """
    ideal, n_positive, idcg = _ideal(r, gains)
    pos, iseg = r.ideal_position, r.ideal_segment
    previous = np.concatenate([[np.nan], ideal[:-1]])
    change = (pos >= 1) & (pos < n_positive[iseg]) & (ideal != previous)
    ends = np.flatnonzero(n_positive > 0)
    seg = np.concatenate([iseg[change], ends])
    at = np.concatenate([pos[change], n_positive[ends]])
    order = np.lexsort((at, seg))
    seg, at = seg[order], at[order]
    terms = dcg_at(r, "linear", gains, at, seg) / idcg[r.ideal_offsets[:-1][seg] + at - 1]
    tail = np.flatnonzero((n_positive > 0) & (r.n_ret > n_positive + 1))
    tail_terms = (dcg_at(r, "linear", gains, None, tail)
                  / idcg[r.ideal_offsets[:-1][tail] + n_positive[tail] - 1])
    seg = np.concatenate([seg, tail])
    total = np.bincount(seg, weights=np.concatenate([terms, tail_terms]), minlength=r.n_queries)
    count = np.bincount(seg, minlength=r.n_queries)
    out = np.zeros(r.n_queries)
    good = (count > 0) & (r.num_rel(rel) > 0)
    out[good] = total[good] / count[good].astype(np.float64)
    return out


REL_SPEC = MeasureSpec(
    name="nDCGRel",
    summary="nDCG averaged over the docs with positive gain (missing ones at the end of the run)",
    kernel=ndcg_rel,
    params=(GAINS,),
    trec=("ndcg_rel",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="trec_eval m_ndcg_rel.c (experimental)",
    trec_params=trec_gains,
    family="Discounted gain",
    user_model="nDCG averaged over the ranks of the relevant documents",
    grades="graded",
    use_when="trec_eval's ndcg_rel (an AP-like average of nDCG)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)

R_SPEC = MeasureSpec(
    name="RnDCG",
    summary="nDCG averaged at the ranks where the ideal ranking changes gain level",
    kernel=rndcg,
    params=(REL, GAINS),
    trec=("Rndcg",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="trec_eval m_Rndcg.c (experimental)",
    trec_params=trec_gains,
    family="Discounted gain",
    user_model="nDCG averaged where the ideal ranking changes gain level",
    grades="graded",
    use_when="trec_eval's Rndcg (an R-precision-like nDCG)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
