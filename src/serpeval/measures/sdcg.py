"""Scaled DCG (SDCG): DCG@k over the DCG@k of k fully relevant docs (C/W/L's NDCG-k)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.measures._common import within
from serpeval.measures._segments import rank_log2
from serpeval.measures.spec import MeasureSpec, Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

MIN_REL = Param("min_rel", int, 0, "grade of gain 0 (lower grades count as it)", minimum=0, maximum=GRADE_LIMIT)
MAX_REL = Param("max_rel", int, 1, "grade of gain 1 (higher grades count as it); ir_measures requires it",
                minimum=1, maximum=GRADE_LIMIT)
LOG2_ONLY = Param("gain", str, "linear", "the gain is the scaled grade (ir_measures' dcg='log2')",
                  choices=("linear",))


def sdcg(r: Rankings, *, cutoff: int, min_rel: int, max_rel: int, gain: str) -> NDArray[np.float64]:
    """SDCG@k = sum_{i<=k} g_i / log2(i + 1)  /  sum_{i<=k} 1 / log2(i + 1).

    g_i = (clip(grade_i, min_rel, max_rel) - min_rel) / (max_rel - min_rel): grades scaled to
    [0, 1]; unjudged docs and negative grades count as grade 0 (when max_rel <= min_rel,
    a grade above min_rel has gain 1). The normaliser is the DCG of
    k docs of gain 1, as if the query had at least k fully relevant docs (cwl_eval's NDCG-k,
    ir_measures' SDCG through cwl_eval), so it never depends on the qrels' other docs and a
    ranking shorter than k is padded with gain 0. Edge cases: 0 when nothing relevant is in
    the top k.
    """
    value = scaled_gains(r, min_rel, max_rel) / rank_log2(r.position)
    return r.total(value, within(r, cutoff)) / _normaliser(cutoff)


def scaled_gains(r: Rankings, min_rel: int, max_rel: int) -> NDArray[np.float64]:
    """C/W/L's gains (cwl_eval as ir_measures calls it) of every ranked doc: (clip(grade,
    min_rel, max_rel) - min_rel) / (max_rel - min_rel), in [0, 1]; unjudged docs and negative
    grades count as grade 0; when max_rel <= min_rel, a grade above min_rel has gain 1."""
    grade = np.maximum(r.grades, 0).astype(np.float64)
    if max_rel > min_rel:
        return (np.clip(grade, min_rel, max_rel) - min_rel) / float(max_rel - min_rel)
    return (grade > min_rel).astype(np.float64)


_DIRECT = 2**20


@lru_cache(maxsize=64)
def _normaliser(k: int) -> float:
    """sum_{i<=k} 1 / log2(i + 1): the DCG of k docs of gain 1.

    Summed term by term up to 2^20 ranks; the rest of a larger k by Euler-Maclaurin,
    integral + end terms + first derivative correction (the next term is below 1e-25 there).
    f(x) = ln 2 / ln(x + 1) has the integral ln 2 * li(x + 1), li(y) = Ei(ln y).
    """
    n = min(k, _DIRECT)
    head = float(np.sum(1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))))
    if k <= _DIRECT:
        return head
    from scipy.special import expi

    ln2 = math.log(2.0)

    def f(x: float) -> float:
        return ln2 / math.log1p(x)

    def df(x: float) -> float:
        return -ln2 / ((x + 1.0) * math.log1p(x) ** 2)

    a, b = float(_DIRECT + 1), float(k)
    integral = ln2 * (float(expi(math.log1p(b))) - float(expi(math.log1p(a))))
    return head + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0


SPEC = MeasureSpec(
    name="SDCG",
    summary="scaled DCG: DCG@k over the DCG of k fully relevant docs (grades scaled to [0, 1])",
    kernel=sdcg,
    params=(MIN_REL, MAX_REL, LOG2_ONLY),
    cutoff="required",
    properties=frozenset({"bounded", "no_relevant_is_zero", "swap_improves"}),
    reference="Azzopardi, Thomas & Moffat, SIGIR 2019 (cwl_eval NDCG-k); ir_measures SDCG",
    notes="ir_measures requires max_rel (serpeval: 1, binary); it computes SDCG with cwl_eval.",
    family="Discounted gain",
    user_model="DCG's reader, scaled by k fully relevant documents",
    grades="graded",
    use_when="a DCG comparable across queries without an ideal ranking from the qrels",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("SDCG",),
)
