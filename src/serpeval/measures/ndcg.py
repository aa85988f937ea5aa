"""Discounted cumulative gain, plain (DCG) and normalised (nDCG), with the gain explicit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.errors import InputError
from serpeval.measures._common import GAIN, JUDGED_ONLY, safe_divide
from serpeval.measures._segments import (
    Picked,
    at_depth,
    ideal_log2,
    memo,
    picked,
    positive_docs,
    prefix_sums,
    rank_log2,
)
from serpeval.measures.gains import (
    GAINS,
    apply_gains,
    exp_shift,
    format_gain_table,
    grammar_gain_pairs,
    ideal_gains,
    parse_gain_table,
)
from serpeval.measures.spec import MeasureSpec

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.measures._common import Gain
    from serpeval.ranking import Rankings


def dcg(r: Rankings, *, cutoff: int | None, gain: Gain, gains: str = "") -> NDArray[np.float64]:
    """DCG@k = sum over ranks i <= k of gain(grade_i) / log2(i + 1).

    ``gain=linear``: gain(g) = g (trec_eval); ``gain=exp``: 2^g - 1 (Burges et al., gdeval).
    Grades <= 0 and unjudged docs give 0, unless ``gains`` lists them (``gains=1:3;2:9``
    overrides the gain of the listed grades, trec_eval's ``-m ndcg.1=3,2=9``; listed gains
    may be negative and then lower the DCG). Without a cutoff the whole ranking counts.
    The running DCG is summed down the ranking once per evaluation over the docs with a
    non-zero gain (in trec_eval's order); every cutoff reads it at rank k.

    With ``gain=exp`` a grade of 1024 or more gives a gain beyond float64 (2^1024); a query
    whose DCG is beyond float64 is refused (InputError naming it) rather than printed as
    inf. nDCG has no such limit (see ``gains.exp_shift``).
    """
    return unscale(r, dcg_at(r, gain, gains, cutoff), gain, gains, "DCG")


def ideal_dcg(r: Rankings, *, cutoff: int | None, gain: Gain, gains: str = ""
              ) -> NDArray[np.float64]:
    """DCG of the ideal ranking: every judged doc of the query (retrieved or not) by gain,
    descending, cut at k; only positive gains count (trec_eval's ``ideal_dcg``). A value
    beyond float64 is refused, as for :func:`dcg`."""
    return unscale(r, scaled_ideal_dcg(r, cutoff, gain, gains), gain, gains, "IDCG")


def scaled_ideal_dcg(r: Rankings, cutoff: int | None, gain: Gain, gains: str) -> NDArray[np.float64]:
    """:func:`ideal_dcg` divided by each query's 2^k of ``gains.exp_shift`` (k = 0 but for
    exp gains of grades above 960)."""
    return at_depth(idcg_running(r, gain, gains), r.ideal_offsets, cutoff)


def unscale(r: Rankings, values: NDArray[np.float64], gain: Gain, gains: str, what: str
            ) -> NDArray[np.float64]:
    """Multiply scaled per-query values back by 2^k; refuse a value beyond float64."""
    table = parse_gain_table(gains) if gains else {}
    shift = memo(r, ("exp_shift", gain, gains), lambda: exp_shift(r, gain, table))
    if shift is None:
        return values
    with np.errstate(over="ignore"):  # a value beyond float64 is refused just below
        out = np.ldexp(values, shift)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        q = int(bad[0])
        top = int(r.ideal_grades[r.ideal_offsets[q]])
        raise InputError(
            f"{what} with gain=exp of query {str(r.query_ids[q])!r} is beyond float64: its grades "
            f"reach {top} and 2^g - 1 is beyond float64 from g = 1024"
            f"{f' ({bad.size} queries like this)' if bad.size > 1 else ''}. "
            f"nDCG(gain=exp) is exact for any grade (the scale cancels); for {what} use gain=linear "
            "or grades below 1024."
        )
    return out


def dcg_at(r: Rankings, gain: Gain, gains: str, depth: int | NDArray[np.int64] | None,
           queries: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """DCG of each query (or of each of ``queries``) over its top ``depth`` docs, divided by
    the query's 2^k of ``gains.exp_shift`` (k = 0 but for exp gains of grades above 960)."""
    docs, running = dcg_running(r, gain, gains)
    return docs.value_at(running, docs.count_in_top(depth, queries), queries)


def dcg_running(r: Rankings, gain: Gain, gains: str) -> tuple[Picked, NDArray[np.float64]]:
    """The ranked docs with a non-zero gain and, at each, the DCG of its query down to it
    (summed in rank order once per rankings and gain; zero gains add nothing), scaled as
    :func:`dcg_at` says."""
    table = parse_gain_table(gains) if gains else {}
    docs = gain_docs(r, gain, gains)

    def make() -> NDArray[np.float64]:
        shift = memo(r, ("exp_shift", gain, gains), lambda: exp_shift(r, gain, table))
        scale = None if shift is None else shift[docs.segment]
        value = apply_gains(r.grades[docs.index], gain, table, scale)
        return prefix_sums(value / rank_log2(docs.position), docs.offsets)

    return docs, memo(r, ("dcg_running", gain, gains), make)


def gain_docs(r: Rankings, gain: Gain, gains: str) -> Picked:
    """The ranked docs whose gain is not 0 (linear and exp gains are 0 exactly for grades
    <= 0 and positive above; a table sets the gain of the grades it lists)."""
    if not gains:
        return positive_docs(r)
    table = parse_gain_table(gains)

    def nonzero() -> NDArray[np.bool_]:
        listed = np.isin(r.grades, np.array(list(table), dtype=np.int64))
        zero_gain = np.array([g for g, v in table.items() if v == 0], dtype=np.int64)
        return np.where(listed, ~np.isin(r.grades, zero_gain), r.grades > 0)

    return picked(r, ("gain", gain, gains), nonzero)


def idcg_running(r: Rankings, gain: Gain, gains: str) -> NDArray[np.float64]:
    """For each position of the ideal rankings, the ideal DCG down to it (positive gains),
    scaled as :func:`dcg_at` says."""
    def make() -> NDArray[np.float64]:
        ideal = np.maximum(sorted_ideal_gains(r, gain, gains), 0.0)
        return prefix_sums(ideal / ideal_log2(r), r.ideal_offsets)

    return memo(r, ("idcg_running", gain, gains), make)


def sorted_ideal_gains(r: Rankings, gain: Gain, gains: str) -> NDArray[np.float64]:
    """The gains of each query's judgments sorted descending (see ``_gains.ideal_gains``)."""
    table = parse_gain_table(gains) if gains else {}
    return memo(r, ("ideal_gains", gain, gains), lambda: ideal_gains(r, gain, table))


def ndcg(r: Rankings, *, cutoff: int | None, gain: Gain, gains: str = "") -> NDArray[np.float64]:
    """nDCG@k = DCG@k / IDCG@k.

    The ideal ranking comes from *all* judged docs of the query, retrieved or not, cut at
    k (trec_eval's ``ndcg_cut``; without a cutoff, trec_eval's ``ndcg``). Edge cases: 0 when
    the query has no doc with positive gain (IDCG = 0). With ``gain=linear`` this equals
    trec_eval; with ``gain=exp`` it equals gdeval's nDCG on topics that have a relevant doc.
    ``gains`` overrides the gain of listed grades (see :func:`dcg`).

    With ``gain=exp`` any grade works: 2^g - 1 is beyond float64 from g = 1024, so a query
    with grades above 960 has its gains divided by one power of two, which cancels exactly
    in the ratio (``gains.exp_shift``). E.g. grades 2000 and 1999 ranked 1999 first (the
    -1 of 2^g - 1 is below float64's precision there):
    (2^1999 + 2^2000 / log2 3) / (2^2000 + 2^1999 / log2 3) = (1/2 + 1/log2 3) / (1 + 1/(2 log2 3)).
    """
    return safe_divide(dcg_at(r, gain, gains, cutoff), scaled_ideal_dcg(r, cutoff, gain, gains))


def trec_gains(text: str) -> dict[str, str]:
    """trec_eval's ``ndcg.1=3,2=9`` parameters -> ``{"gains": "1:3;2:9"}`` (a pair that is
    not ``GRADE=GAIN`` is refused: :func:`~serpeval.measures.gains.grammar_gain_pairs`)."""
    table = grammar_gain_pairs(text)
    if not table:
        return {}
    return {"gains": format_gain_table(table)}


SPEC = MeasureSpec(
    name="nDCG",
    summary="normalised DCG: DCG@k over the DCG of the ideal ranking of all judged docs",
    kernel=ndcg,
    params=(GAIN, GAINS, JUDGED_ONLY),
    cutoff="optional",
    aliases=("NDCG",),
    trec=("ndcg",),
    trec_cut=("ndcg_cut",),
    trec_params=trec_gains,
    properties=frozenset({"bounded", "ideal_is_one", "no_relevant_is_zero", "swap_improves"}),
    reference="Jarvelin & Kekalainen, TOIS 2002; Burges et al., ICML 2005 (exp gain); "
              "trec_eval m_ndcg.c, m_ndcg_cut.c",
    family="Discounted gain",
    user_model="reads down the list with attention falling as 1/log2(rank + 1)",
    grades="graded",
    use_when="graded judgments and a top-heavy ranking (web search, MS MARCO, BEIR)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("nDCG",),
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
    family="Discounted gain",
    user_model="reads down the list with attention falling as 1/log2(rank + 1)",
    grades="graded",
    use_when="unnormalised gain when queries must keep their scale (diagnostics, nDCG's numerator)",
    unjudged="counted as non-relevant (trec_eval's rule)",
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
    family="Discounted gain",
    user_model="the DCG of the ideal ordering of the judged documents",
    grades="graded",
    use_when="diagnostics: the nDCG denominator per query",
    unjudged="not read: the ideal ranking is built from the qrels alone",
)
