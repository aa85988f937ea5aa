"""Set-based measures over the whole retrieved list: SetP, SetR, SetF, SetAP; and F@k, the
F-measure of P@k and R@k (ranx's ``f1@k``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from serpeval.measures._common import JUDGED_ONLY, REL, hits, safe_divide
from serpeval.measures.cparse import atof
from serpeval.measures.spec import MAX_WEIGHT, MeasureSpec, Param

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings


def set_precision(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """SetP = relevant retrieved / retrieved; 0 when nothing is retrieved (trec_eval ``set_P``)."""
    return safe_divide(hits(r, rel, None), r.n_ret)


def set_recall(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """SetR = relevant retrieved / R; 0 when R = 0 (trec_eval ``set_recall``)."""
    return safe_divide(hits(r, rel, None), r.num_rel(rel))


def beta_squared(beta: float) -> float:
    """beta^2 to 15 significant digits. trec_eval's ``set_F.x`` (and ir_measures' ``SetF(beta=x)``,
    which it passes on) weighs by x = beta^2 written as a decimal; serpeval holds beta = sqrt(x),
    whose square is x only within an ulp (sqrt(0.5)^2 = 0.5000000000000001, and a mean of 0.09375
    printed 0.0937 where trec_eval prints 0.0938). 15 digits give x back exactly.

    >>> beta_squared(0.5 ** 0.5), beta_squared(0.5), beta_squared(1.0)
    (0.5, 0.25, 1.0)
    """
    return float(f"{beta * beta:.15g}")


def set_f(r: Rankings, *, cutoff: None, rel: int, beta: float) -> NDArray[np.float64]:
    """SetF = (1 + beta^2) P R / (beta^2 P + R) of SetP and SetR; 0 if nothing relevant is retrieved.

    ``beta`` is the usual F-measure beta. (trec_eval's ``set_F.x`` takes x = beta^2.)
    """
    p = set_precision(r, cutoff=None, rel=rel)
    rc = set_recall(r, cutoff=None, rel=rel)
    b2 = beta_squared(beta)
    return safe_divide((1.0 + b2) * p * rc, b2 * p + rc)


def trec_beta(text: str) -> dict[str, float]:
    """trec_eval's ``set_F.x`` weighs recall by x = beta^2: ``set_F.0.25`` is ``SetF(beta=0.5)``.

    beta = sqrt(x), so SetF squares it back to x (:func:`beta_squared`: exactly).
    """
    x = atof(text)
    if x < 0:
        raise ValueError(f"set_F's parameter is beta squared and cannot be negative, got {text!r}")
    if not x <= MAX_WEIGHT**2:
        raise ValueError(f"set_F's parameter is beta squared and must be at most 1e200, got {text!r}")
    return {"beta": math.sqrt(x)}


SET_P = MeasureSpec(
    name="SetP",
    summary="precision of the whole retrieved set",
    kernel=set_precision,
    params=(REL, JUDGED_ONLY),
    trec=("set_P",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="trec_eval m_set_P.c",
    family="Set retrieval",
    user_model="reads the whole retrieved set, unordered",
    grades="binary",
    use_when="filtering and Boolean retrieval, where the answer is a set",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("SetP",),
)
SET_R = MeasureSpec(
    name="SetR",
    summary="recall of the whole retrieved set",
    kernel=set_recall,
    params=(REL,),
    trec=("set_recall",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="trec_eval m_set_recall.c",
    family="Set retrieval",
    user_model="reads the whole retrieved set, unordered",
    grades="binary",
    use_when="filtering and Boolean retrieval: the share of the relevant set returned",
    unjudged="counted as non-relevant (trec_eval's rule)",
    ir_measures=("SetR",),
)
SET_F = MeasureSpec(
    name="SetF",
    summary="F-measure of SetP and SetR (beta weights recall)",
    kernel=set_f,
    params=(REL, Param("beta", float, 1.0, "weight of recall relative to precision",
                       minimum=0.0, maximum=MAX_WEIGHT), JUDGED_ONLY),
    trec=("set_F",),
    trec_params=trec_beta,
    notes="ir_measures passes its SetF(beta=b) to trec_eval as set_F.b, whose parameter is beta squared: "
          "an ir_measures object SetF(beta=b) is read as SetF(beta=sqrt(b)) here, the same numbers. "
          "ranx's f1 (no @k) is SetF.",
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="van Rijsbergen 1979; trec_eval m_set_F.c",
    family="Set retrieval",
    user_model="reads the whole retrieved set, unordered",
    grades="binary",
    use_when="a single set score balancing precision and recall (beta weights recall)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("SetF",),
)


def set_average_precision(r: Rankings, *, cutoff: None, rel: int) -> NDArray[np.float64]:
    """SetAP = (relevant retrieved)^2 / (retrieved * R) = SetP * SetR; 0 when either is 0.

    Unranked AP: every relevant retrieved doc has the set's precision, the missed ones 0
    (trec_eval ``set_map``, formerly exact_unranked_avg_prec).
    """
    rel_ret = hits(r, rel, None).astype(float)
    return safe_divide(rel_ret * rel_ret, r.n_ret.astype(float) * r.num_rel(rel).astype(float))


SET_AP = MeasureSpec(
    name="SetAP",
    summary="unranked AP of the retrieved set: SetP * SetR",
    kernel=set_average_precision,
    params=(REL, JUDGED_ONLY),
    trec=("set_map",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="trec_eval m_set_map.c",
    family="Set retrieval",
    user_model="reads the whole retrieved set, unordered",
    grades="binary",
    use_when="an unranked AP of a set (SetP x SetR)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("SetAP",),
)


def f_at(r: Rankings, *, cutoff: int, rel: int, beta: float) -> NDArray[np.float64]:
    """F@k = (1 + beta^2) P R / (beta^2 P + R) of P@k = hits/k and R@k = hits/R.

    hits = relevant docs in the top k; a ranking shorter than k is padded (P@k divides by
    k, as ranx's ``f1@k`` does). Edge cases: 0 when no relevant doc is in the top k.
    """
    found = hits(r, rel, cutoff)
    p = found / float(cutoff)
    rc = safe_divide(found, r.num_rel(rel))
    b2 = beta_squared(beta)
    return safe_divide((1.0 + b2) * p * rc, b2 * p + rc)


F_AT = MeasureSpec(
    name="F",
    summary="F-measure of P@k and R@k (beta weights recall); F1@k when beta = 1",
    kernel=f_at,
    params=(REL, Param("beta", float, 1.0, "weight of recall relative to precision",
                       minimum=0.0, maximum=MAX_WEIGHT)),
    cutoff="required",
    aliases=("F1",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="van Rijsbergen 1979; ranx f1@k",
    family="Top-k precision and recall",
    user_model="scans the top k; every rank weighs the same",
    grades="binary",
    use_when="one top-k score balancing precision and recall (F1@k)",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
