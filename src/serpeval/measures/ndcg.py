"""Discounted cumulative gain, plain (DCG) and normalised (nDCG), with the gain explicit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import GAIN, safe_divide
from serpeval.measures._segments import (
    Picked,
    at_depth,
    ideal_log2,
    memo,
    picked,
    prefix_sums,
    relevant_docs,
)
from serpeval.measures.gains import (
    GAINS,
    apply_gains,
    format_gain_table,
    ideal_gains,
    parse_gain_table,
    trec_gain_pairs,
)
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def dcg(r: Rankings, *, cutoff: int | None, gain: str, gains: str = "") -> NDArray[np.float64]:
    """DCG@k = sum over ranks i <= k of gain(grade_i) / log2(i + 1).

    ``gain=linear``: gain(g) = g (trec_eval); ``gain=exp``: 2^g - 1 (Burges et al., gdeval).
    Grades <= 0 and unjudged docs give 0, unless ``gains`` lists them (``gains=1:3;2:9``
    overrides the gain of the listed grades, trec_eval's ``-m ndcg.1=3,2=9``; listed gains
    may be negative and then lower the DCG). Without a cutoff the whole ranking counts.
    The running DCG is summed down the ranking once per evaluation over the docs with a
    non-zero gain (in trec_eval's order); every cutoff reads it at rank k.
    """
    return dcg_at(r, gain, gains, cutoff)


def ideal_dcg(r: Rankings, *, cutoff: int | None, gain: str, gains: str = ""
              ) -> NDArray[np.float64]:
    """DCG of the ideal ranking: every judged doc of the query (retrieved or not) by gain,
    descending, cut at k; only positive gains count (trec_eval's ``ideal_dcg``)."""
    return at_depth(idcg_running(r, gain, gains), r.ideal_offsets, cutoff)


def dcg_at(r: Rankings, gain: str, gains: str, depth: int | NDArray[np.int64] | None,
           queries: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """DCG of each query (or of each of ``queries``) over its top ``depth`` docs."""
    docs, running = dcg_running(r, gain, gains)
    return docs.value_at(running, docs.count_in_top(depth, queries), queries)


def dcg_running(r: Rankings, gain: str, gains: str) -> tuple[Picked, NDArray[np.float64]]:
    """The ranked docs with a non-zero gain and, at each, the DCG of its query down to it
    (summed in rank order once per rankings and gain; zero gains add nothing)."""
    table = parse_gain_table(gains) if gains else {}
    docs = gain_docs(r, gain, gains)

    def make() -> NDArray[np.float64]:
        value = apply_gains(r.grades[docs.index], gain, table)
        return prefix_sums(value / np.log2(docs.position + 2.0), docs.offsets)

    return docs, memo(r, ("dcg_running", gain, gains), make)


def gain_docs(r: Rankings, gain: str, gains: str) -> Picked:
    """The ranked docs whose gain is not 0."""
    if not gains:
        return relevant_docs(r, 1)  # linear and exp gains are 0 exactly for grades <= 0
    table = parse_gain_table(gains)
    return picked(r, ("gain", gain, gains), lambda: apply_gains(r.grades, gain, table) != 0)


def idcg_running(r: Rankings, gain: str, gains: str) -> NDArray[np.float64]:
    """For each position of the ideal rankings, the ideal DCG down to it (positive gains)."""
    def make() -> NDArray[np.float64]:
        ideal = np.maximum(sorted_ideal_gains(r, gain, gains), 0.0)
        return prefix_sums(ideal / ideal_log2(r), r.ideal_offsets)

    return memo(r, ("idcg_running", gain, gains), make)


def sorted_ideal_gains(r: Rankings, gain: str, gains: str) -> NDArray[np.float64]:
    """The gains of each query's judgments sorted descending (see ``_gains.ideal_gains``)."""
    table = parse_gain_table(gains) if gains else {}
    return memo(r, ("ideal_gains", gain, gains), lambda: ideal_gains(r, gain, table))


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
    return {"gains": format_gain_table(table)}


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
