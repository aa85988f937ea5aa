"""Discounted cumulative gain, plain (DCG) and normalised (nDCG), with the gain explicit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import GAIN, discounted, safe_divide, within
from serpeval.measures._gains import GAINS, apply_gains, ideal_gains, parse_gain_table, trec_gain_pairs
from serpeval.measures._spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def dcg(r: Rankings, *, cutoff: int | None, gain: str, gains: str = "") -> NDArray[np.float64]:
    """DCG@k = sum over ranks i <= k of gain(grade_i) / log2(i + 1).

    ``gain=linear``: gain(g) = g (trec_eval); ``gain=exp``: 2^g - 1 (Burges et al., gdeval).
    Grades <= 0 and unjudged docs give 0, unless ``gains`` lists them (``gains=1:3;2:9``
    overrides the gain of the listed grades, trec_eval's ``-m ndcg.1=3,2=9``; listed gains
    may be negative and then lower the DCG). Without a cutoff the whole ranking counts.
    """
    keep = within(r, cutoff)
    table = parse_gain_table(gains) if gains else {}
    return r.total(discounted(apply_gains(r.grades, gain, table), r.position), keep)


def ideal_dcg(r: Rankings, *, cutoff: int | None, gain: str, gains: str = "") -> NDArray[np.float64]:
    """DCG of the ideal ranking: every judged doc of the query (retrieved or not) by gain,
    descending, cut at k; only positive gains count (trec_eval's ``ideal_dcg``)."""
    keep = None if cutoff is None else r.ideal_position < cutoff
    table = parse_gain_table(gains) if gains else {}
    ideal = np.maximum(ideal_gains(r, gain, table), 0.0)
    return r.ideal_total(discounted(ideal, r.ideal_position), keep)


def ndcg(r: Rankings, *, cutoff: int | None, gain: str, gains: str = "") -> NDArray[np.float64]:
    """nDCG@k = DCG@k / IDCG@k.

    The ideal ranking comes from *all* judged docs of the query, retrieved or not, cut at
    k (trec_eval's ``ndcg_cut``; without a cutoff, trec_eval's ``ndcg``). Edge cases: 0 when
    the query has no doc with positive gain (IDCG = 0). With ``gain=linear`` this equals
    trec_eval; with ``gain=exp`` it equals gdeval's nDCG on topics that have a relevant doc.
    ``gains`` overrides the gain of listed grades (see :func:`dcg`).
    """
    return safe_divide(dcg(r, cutoff=cutoff, gain=gain, gains=gains),
                       ideal_dcg(r, cutoff=cutoff, gain=gain, gains=gains))


def trec_gains(text: str) -> dict[str, str]:
    """trec_eval's ``ndcg.1=3,2=9`` parameters -> ``{"gains": "1:3;2:9"}``."""
    table, _ = trec_gain_pairs(text)
    if not table:
        return {}
    return {"gains": ";".join(f"{g}:{v!r}" for g, v in table.items())}


SPEC = MeasureSpec(
    name="nDCG",
    summary="normalised DCG: DCG@k over the DCG of the ideal ranking of all judged docs",
    kernel=ndcg,
    params=(GAIN, GAINS),
    cutoff="optional",
    aliases=("NDCG",),
    trec=("ndcg",),
    trec_cut=("ndcg_cut",),
    trec_params=trec_gains,
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005 (exp gain); "
              "trec_eval m_ndcg.c, m_ndcg_cut.c",
)

DCG_SPEC = MeasureSpec(
    name="DCG",
    summary="discounted cumulative gain: sum of gain(grade) / log2(rank + 1) over the top k",
    kernel=dcg,
    params=(GAIN, GAINS),
    cutoff="optional",
    trec=("dcg",),
    trec_cut=("dcg_cut",),
    bounds=None,
    properties=frozenset({"no_relevant_is_zero", "cutoff_monotone", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; trec_eval m_ndcg.c (dcg)",
    trec_params=trec_gains,
)

IDCG_SPEC = MeasureSpec(
    name="IDCG",
    summary="ideal DCG: the DCG of the query's judged docs sorted by gain (the nDCG denominator)",
    kernel=ideal_dcg,
    params=(GAIN, GAINS),
    cutoff="optional",
    trec=("ideal_dcg",),
    bounds=None,
    properties=frozenset({"no_relevant_is_zero", "cutoff_monotone"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; trec_eval m_ndcg.c (ideal_dcg)",
    trec_params=trec_gains,
)
