"""Buckley's experimental gain measures of trec_eval (4/2008): binG and G.

Both combine qualities of AP and nDCG: the discount of a doc depends on how much worse the
ranking above it is than it could be, not on its rank alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, safe_divide
from serpeval.measures._segments import Picked, prefix_sums, relevant_docs
from serpeval.measures.gains import GAINS, apply_gains, parse_gain_table
from serpeval.measures.ndcg import gain_docs, sorted_ideal_gains, trec_gains
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def bin_g(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """binG = (1/R) * sum over relevant retrieved docs d of 1 / log2(2 + n_d).

    n_d = docs ranked above d that are not relevant (unjudged ones included). Binary gain:
    every relevant doc is worth 1. Edge cases: 0 when no relevant doc is retrieved.
    """
    docs = relevant_docs(r, rel)
    nonrel_above = docs.position + 1 - docs.nth
    term = 1.0 / np.log2(2.0 + nonrel_above)
    total = np.bincount(docs.segment, weights=term, minlength=r.n_queries)
    return safe_divide(total, r.num_rel(rel))


def ideal_at_ranks(r: Rankings, ideal: NDArray[np.float64]) -> NDArray[np.float64]:
    """For each ranked doc at rank i: the gain of the i-th doc of its query's ideal ranking
    (0 past the end of the judgments)."""
    length = np.diff(r.ideal_offsets)[r.segment]
    out = np.zeros(len(r.grades))
    inside = r.position < length
    out[inside] = ideal[(r.ideal_offsets[:-1][r.segment] + r.position)[inside]]
    return out


def g_measure(r: Rankings, *, cutoff: None, gains: str) -> NDArray[np.float64]:
    """G = (1 / sum of positive ideal gains) * sum over retrieved docs i with gain g_i != 0 of
    g_i / log2(2 + C_i - S_i).

    S_i = sum of the gains at ranks 1..i (the ranking's cumulative gain), C_i = sum over
    ranks 1..i of max(ideal gain at that rank, 1) (the ideal's cumulative gain, at least 1
    per rank). A doc ranked where the ideal would be gets log2(2) = 1; falling behind the
    ideal discounts it. Gains are the grades (``gains`` overrides listed grades, as
    trec_eval's ``-m G.1=3,2=9``). Edge cases: 0 when the query has no positive gain. The lag
    C_i - S_i counts as 0 where the ranking is ahead of the ideal, which only a table giving
    unjudged docs (-1, -2) a gain makes possible (they are not in the ideal): trec_eval takes
    the log of a number <= 0 there and prints nan or -inf.
    """
    table = parse_gain_table(gains) if gains else {}
    docs = gain_docs(r, "linear", gains)
    gain = apply_gains(r.grades[docs.index], "linear", table)
    gained = prefix_sums(gain, docs.offsets)  # zero gains add nothing: skip them
    ideal = sorted_ideal_gains(r, "linear", gains)
    spent = _ideal_cost(r, ideal, docs)
    term = gain / np.log2(2.0 + np.maximum(spent - gained, 0.0))
    total = np.bincount(docs.segment, weights=term, minlength=r.n_queries)
    best = r.ideal_total(np.maximum(ideal, 0.0))
    return safe_divide(total, best)


def _ideal_cost(r: Rankings, ideal: NDArray[np.float64], docs: Picked) -> NDArray[np.float64]:
    """C_i at each of ``docs``: the running sum over ranks 1..i of max(ideal gain, 1).

    With whole-number gains (grades, the default) every partial sum is a whole number, so
    C_i = i + (the running sum of max(ideal gain, 1) - 1 over the ideal ranking, read at
    rank min(i, judged docs)) equals trec_eval's sequential sum exactly. Fractional gains
    take the sum down the whole ranking, in order.
    """
    if np.array_equal(ideal, np.floor(ideal)):
        extra = prefix_sums(np.maximum(ideal, 1.0) - 1.0, r.ideal_offsets)
        length = np.diff(r.ideal_offsets)[docs.segment]
        inside = length > 0
        upto = np.minimum(docs.position, length - 1)
        found = np.zeros(len(docs.index))
        found[inside] = extra[(r.ideal_offsets[:-1][docs.segment] + upto)[inside]]
        return (docs.position + 1.0) + found
    return prefix_sums(np.maximum(ideal_at_ranks(r, ideal), 1.0), r.offsets)[docs.index]


BIN_G_SPEC = MeasureSpec(
    name="binG",
    summary="binary G: mean over relevant docs of 1/log2(2 + non-relevant docs above it)",
    kernel=bin_g,
    params=(REL,),
    trec=("binG",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Buckley, trec_eval m_binG.c (experimental, 2008)",
    family="Rank-based (precision at relevant ranks)",
    user_model="each relevant document discounted by the non-relevant ones above it",
    grades="binary",
    use_when="trec_eval's binary G (rarely used outside trec_eval parity checks)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)

G_SPEC = MeasureSpec(
    name="G",
    summary="normalised gain: gain discounted by how far the ranking lags the ideal",
    kernel=g_measure,
    params=(GAINS,),
    trec=("G",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Buckley, trec_eval m_G.c (experimental, 2008)",
    trec_params=trec_gains,
    family="Discounted gain",
    user_model="gain discounted by how far the ranking lags the ideal",
    grades="graded",
    use_when="trec_eval's normalised gain (parity with trec_eval's all_trec output)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
