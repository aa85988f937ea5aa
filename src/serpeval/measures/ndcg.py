"""Discounted cumulative gain, plain (DCG) and normalised (nDCG), with the gain explicit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import GAIN, discounted, gains, safe_divide, within
from serpeval.measures._spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def dcg(r: Rankings, *, cutoff: int | None, gain: str) -> NDArray[np.float64]:
    """DCG@k = sum over ranks i <= k of gain(grade_i) / log2(i + 1).

    ``gain=linear``: gain(g) = g (trec_eval); ``gain=exp``: 2^g - 1 (Burges et al., gdeval).
    Grades <= 0 and unjudged docs give 0. Without a cutoff the whole ranking counts.
    """
    keep = within(r, cutoff)
    return r.total(discounted(gains(r.grades, gain), r.position), keep)


def ideal_dcg(r: Rankings, *, cutoff: int | None, gain: str) -> NDArray[np.float64]:
    """DCG of the ideal ranking: every judged doc of the query (retrieved or not) by grade."""
    keep = None if cutoff is None else r.ideal_position < cutoff
    return r.ideal_total(discounted(gains(r.ideal_grades, gain), r.ideal_position), keep)


def ndcg(r: Rankings, *, cutoff: int | None, gain: str) -> NDArray[np.float64]:
    """nDCG@k = DCG@k / IDCG@k.

    The ideal ranking comes from *all* judged docs of the query, retrieved or not, cut at
    k (trec_eval's ``ndcg_cut``; without a cutoff, trec_eval's ``ndcg``). Edge cases: 0 when
    the query has no doc with positive gain (IDCG = 0). With ``gain=linear`` this equals
    trec_eval; with ``gain=exp`` it equals gdeval's nDCG on topics that have a relevant doc.
    """
    return safe_divide(dcg(r, cutoff=cutoff, gain=gain), ideal_dcg(r, cutoff=cutoff, gain=gain))


SPEC = MeasureSpec(
    name="nDCG",
    summary="normalised DCG: DCG@k over the DCG of the ideal ranking of all judged docs",
    kernel=ndcg,
    params=(GAIN,),
    cutoff="optional",
    aliases=("NDCG",),
    trec=("ndcg",),
    trec_cut=("ndcg_cut",),
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005 (exp gain); "
              "trec_eval m_ndcg.c, m_ndcg_cut.c",
)

DCG_SPEC = MeasureSpec(
    name="DCG",
    summary="discounted cumulative gain: sum of gain(grade) / log2(rank + 1) over the top k",
    kernel=dcg,
    params=(GAIN,),
    cutoff="optional",
    trec=("dcg",),
    trec_cut=("dcg_cut",),
    bounds=None,
    properties=frozenset({"no_relevant_is_zero", "cutoff_monotone", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; trec_eval m_dcg.c",
)
