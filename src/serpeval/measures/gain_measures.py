"""Buckley's experimental gain measures of trec_eval (4/2008): binG and G.

Both combine qualities of AP and nDCG: the discount of a doc depends on how much worse the
ranking above it is than it could be, not on its rank alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import REL, safe_divide
from serpeval.measures._gains import GAINS, apply_gains, parse_gain_table
from serpeval.measures._segments import prefix_sums, relevant_running
from serpeval.measures._spec import MeasureSpec
from serpeval.measures.ndcg import sorted_ideal_gains, trec_gains

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def bin_g(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """binG = (1/R) * sum over relevant retrieved docs d of 1 / log2(2 + n_d).

    n_d = docs ranked above d that are not relevant (unjudged ones included). Binary gain:
    every relevant doc is worth 1. Edge cases: 0 when no relevant doc is retrieved.
    """
    is_rel = r.grades >= rel
    nonrel_above = r.position[is_rel] + 1 - relevant_running(r, rel)[is_rel]
    term = 1.0 / np.log2(2.0 + nonrel_above)
    total = np.bincount(r.segment[is_rel], weights=term, minlength=r.n_queries)
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
    trec_eval's ``-m G.1=3,2=9``). Edge cases: 0 when the query has no positive gain.
    """
    table = parse_gain_table(gains) if gains else {}
    gain = apply_gains(r.grades, "linear", table)
    ideal = sorted_ideal_gains(r, "linear", gains)
    cost = np.maximum(ideal_at_ranks(r, ideal), 1.0)
    spent = prefix_sums(cost, r.offsets)
    gained = prefix_sums(gain, r.offsets)
    nonzero = gain != 0
    term = gain[nonzero] / np.log2(2.0 + spent[nonzero] - gained[nonzero])
    total = np.bincount(r.segment[nonzero], weights=term, minlength=r.n_queries)
    best = r.ideal_total(np.maximum(ideal, 0.0))
    return safe_divide(total, best)


BIN_G_SPEC = MeasureSpec(
    name="binG",
    summary="binary G: mean over relevant docs of 1/log2(2 + non-relevant docs above it)",
    kernel=bin_g,
    params=(REL,),
    trec=("binG",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero"}),
    reference="Buckley, trec_eval m_binG.c (experimental, 2008)",
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
)
