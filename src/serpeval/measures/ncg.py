"""Normalised cumulative gain (NCG@k): the gain in the top k over the most the top k can hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import GAIN, JUDGED_ONLY, safe_divide
from serpeval.measures._segments import at_depth, memo, prefix_sums
from serpeval.measures.gains import GAINS, apply_gains, exp_shift, parse_gain_table
from serpeval.measures.ndcg import gain_docs, sorted_ideal_gains
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.measures._common import Gain
    from serpeval.ranking import Rankings


def ncg(r: Rankings, *, cutoff: int | None, gain: Gain, gains: str = "") -> NDArray[np.float64]:
    """NCG@k = CG@k / ICG@k, CG@k = sum over ranks i <= k of gain(grade_i).

    ICG@k is the CG@k of the ideal ranking: every judged doc of the query (retrieved or
    not) by gain, descending, positive gains only - nDCG's ideal without the discount
    (Jarvelin & Kekalainen 2002, "cumulated gain"). ``gain=linear``: gain(g) = g;
    ``gain=exp``: 2^g - 1; ``gains`` overrides listed grades as for nDCG; fractional grades
    (``grades="float"``) count as they are. Edge cases: 0 when the query has no positive
    gain (ICG = 0); without a cutoff, the whole ranking over all judged docs (the share of
    the judged gain retrieved); a ranking shorter than k adds nothing past its end while
    ICG@k still counts up to k docs; unjudged docs have gain 0. NCG@k is 1 exactly when the
    top k hold the k highest gains, in any order: unlike nDCG it ignores the order within
    the top k.
    """
    table = parse_gain_table(gains) if gains else {}
    docs = gain_docs(r, gain, gains)

    def running() -> NDArray[np.float64]:
        shift = memo(r, ("exp_shift", gain, gains), lambda: exp_shift(r, gain, table))
        scale = None if shift is None else shift[docs.segment]
        return prefix_sums(apply_gains(r.grades[docs.index], gain, table, scale), docs.offsets)

    def ideal() -> NDArray[np.float64]:
        return prefix_sums(np.maximum(sorted_ideal_gains(r, gain, gains), 0.0), r.ideal_offsets)

    cg = docs.value_at(memo(r, ("cg_running", gain, gains), running), docs.count_in_top(cutoff))
    icg = at_depth(memo(r, ("icg_running", gain, gains), ideal), r.ideal_offsets, cutoff)
    return safe_divide(cg, icg)


SPEC = MeasureSpec(
    name="NCG",
    summary="normalised cumulative gain: the gain in the top k over the ideal ranking's gain in its top k",
    kernel=ncg,
    params=(GAIN, GAINS, JUDGED_ONLY),
    cutoff="optional",
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002 (cumulated gain); ir_measures#19",
    family="Discounted gain",
    user_model="looks at the whole top k as a set; every rank within it weighs the same",
    grades="graded",
    use_when="how much of the attainable gain a fixed-size result set (a page, a RAG context) holds",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
)
