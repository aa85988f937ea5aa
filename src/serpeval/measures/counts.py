"""Counts: queries, docs retrieved, relevant docs, relevant docs retrieved (summed over
queries), and Hits@k (relevant docs in the top k, averaged over queries as ranx does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, hits
from serpeval.measures._segments import nonrelevant_docs
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def num_ret(r: Rankings, *, cutoff: None) -> NDArray[np.float64]:
    """Docs retrieved for the query (after any depth cut)."""
    return r.n_ret.astype(float)


def num_rel(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """Relevant judged docs of the query (grade >= rel), retrieved or not."""
    return r.num_rel(rel).astype(float)


def num_rel_ret(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """Relevant docs retrieved."""
    return hits(r, rel, None).astype(float)


NUM_RET = MeasureSpec(
    name="NumRet", summary="number of docs retrieved (summed over queries)", kernel=num_ret,
    trec=("num_ret",), aggregate="sum", bounds=None, reference="trec_eval m_num_ret.c",
    family="Counts",
    user_model="none: a count",
    grades="none",
    use_when="sanity checks: how many documents each run returned",
    unjudged="not read: the value counts documents, not judgments",
    ir_measures=("NumRet",),
)
NUM_REL = MeasureSpec(
    name="NumRel", summary="number of relevant judged docs (summed over queries)", kernel=num_rel,
    params=(REL,), trec=("num_rel",), aggregate="sum", bounds=None,
    reference="trec_eval m_num_rel.c",
    family="Counts",
    user_model="none: a count",
    grades="none",
    use_when="sanity checks: how many relevant judgments the qrels hold",
    unjudged="not read: the value counts documents, not judgments",
    ir_measures=("NumRel",),
)
NUM_REL_RET = MeasureSpec(
    name="NumRelRet", summary="number of relevant docs retrieved (summed over queries)",
    kernel=num_rel_ret, params=(REL,), trec=("num_rel_ret",), aggregate="sum", bounds=None,
    properties=frozenset({"no_relevant_is_zero"}), reference="trec_eval m_num_rel_ret.c",
    family="Counts",
    user_model="none: a count",
    grades="binary",
    use_when="sanity checks and recall's numerator, summed over queries",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("NumRet(rel=1)",),
)


def num_nonrel_judged_ret(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """Retrieved docs judged non-relevant (0 <= grade < rel); unjudged docs do not count."""
    return nonrelevant_docs(r, rel).count.astype(float)


NUM_NONREL_JUDGED_RET = MeasureSpec(
    name="NumNonrelJudgedRet",
    summary="number of retrieved docs judged non-relevant (summed over queries)",
    kernel=num_nonrel_judged_ret, params=(REL,), trec=("num_nonrel_judged_ret",),
    aggregate="sum", bounds=None, reference="trec_eval m_num_nonrel_judged_ret.c",
    family="Counts",
    user_model="none: a count",
    grades="binary",
    use_when="sanity checks: judged non-relevant documents retrieved",
    unjudged="not counted: only judged non-relevant documents are",
)


def num_q(r: Rankings, *, cutoff: None) -> NDArray[np.float64]:
    """1 for every evaluated query: summed, the number of queries (trec_eval's ``num_q``)."""
    return np.ones(r.n_queries)


NUM_Q = MeasureSpec(
    name="NumQ", summary="number of evaluated queries (1 per query, summed)", kernel=num_q,
    aggregate="sum", bounds=None, reference="trec_eval num_q; ir_measures NumQ",
    notes="ir_measures (pytrec_eval) counts the judged queries the run answers, as serpeval does "
          "with missing='skip'; missing='zero' counts every judged query.",
    family="Counts",
    user_model="none: a count",
    grades="none",
    use_when="how many queries were evaluated",
    unjudged="not read: the value counts documents, not judgments",
    ir_measures=("NumQ",),
)


def hits_at(r: Rankings, *, cutoff: int | None, rel: int) -> NDArray[np.float64]:
    """Hits@k = relevant docs (grade >= rel) in the top k (all retrieved without a cutoff).

    Averaged over queries (ranx's ``hits@k``); ``NumRelRet`` is the same count without a
    cutoff, summed. Edge cases: 0 for a query with no relevant doc.
    """
    return hits(r, rel, cutoff).astype(float)


HITS = MeasureSpec(
    name="Hits", summary="relevant docs in the top k (averaged over queries)", kernel=hits_at,
    params=(REL,), cutoff="optional", bounds=None,
    properties=frozenset({"no_relevant_is_zero", "cutoff_monotone", "swap_improves"}),
    reference="ranx hits@k",
    family="Top-k precision and recall",
    user_model="scans the top k; every rank weighs the same",
    grades="binary",
    use_when="the number (not the share) of relevant documents on the page",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
