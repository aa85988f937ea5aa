"""Interpolated precision at recall levels (trec_eval's ``iprec_at_recall``) and its average
over levels (``11pt_avg``): the points of the classic recall-precision graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from serpeval.measures._common import JUDGED_ONLY, REL
from serpeval.measures._segments import c_round, c_trunc, memo, relevant_docs, suffix_max
from serpeval.measures.cparse import atof
from serpeval.measures.spec import MeasureSpec, Param, format_value

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

ROUNDING = Param(
    "rounding", str, "round",
    "how a recall level x becomes a number of relevant docs c from R: round = lround(x*R) "
    "(trec_eval 10.0), v9 = (long)(x*R + 0.9) (trec_eval 9.x, pytrec_eval)",
    choices=("round", "v9"),
)
STANDARD_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def relevant_count_for(levels: Sequence[float], num_rel: NDArray[np.int64], rounding: str
                       ) -> list[NDArray[np.int64]]:
    """For each recall level x, per query the number of relevant docs c it stands for.

    ``round``: C's ``lround(x * R)`` (halves away from zero); ``v9``: ``(long)(x * R + 0.9)``.
    The product is the same double C computes, so the cut is the same.
    """
    R = num_rel.astype(np.float64)
    if rounding == "v9":
        return [c_trunc(x * R + 0.9) for x in levels]
    return [c_round(x * R) for x in levels]


def interpolated_precisions(r: Rankings, rel: int, levels: Sequence[float], rounding: str
                            ) -> list[NDArray[np.float64]]:
    """Interpolated precision of every query at each recall level (see :func:`iprec`)."""
    docs = relevant_docs(r, rel)

    def best_from_each() -> NDArray[np.float64]:
        """At each relevant doc: the best precision at its rank or below (interpolation)."""
        return suffix_max(docs.nth / (docs.position + 1.0), docs.segment)

    best = memo(r, ("iprec", rel), best_from_each)
    found, starts = docs.count, docs.offsets[:-1]
    out = []
    for c in relevant_count_for(levels, r.num_rel(rel), rounding):
        value = np.zeros(r.n_queries)
        ok = (c <= found) & (found > 0)
        value[ok] = best[starts[ok] + np.maximum(c[ok], 1) - 1]
        out.append(value)
    return out


def iprec(r: Rankings, *, cutoff: None, rel: int, recall: float, rounding: str
          ) -> NDArray[np.float64]:
    """Interpolated precision at recall level x: the best precision at any rank from the
    c-th relevant doc down, c = the number of relevant docs that recall x stands for.

    Precision at rank i is (relevant docs in the top i) / i; the interpolated value at the
    c-th relevant doc (rank i_c) is max over i >= i_c of it (the standard recall-precision
    graph). c comes from x and R (all relevant judged docs) by ``rounding``: lround(x*R) in
    trec_eval 10.0, (long)(x*R + 0.9) in 9.x, so the two differ at e.g. R = 7, x = 0.3
    (c = 2 vs 3). Edge cases: 0 when c exceeds the relevant docs retrieved (recall x is
    never reached) or no relevant doc is retrieved; c <= 0 (level 0) reads from the first
    relevant doc. (trec_eval divides 0/0 and prints -nan when ``-J`` leaves nothing
    retrieved; serpeval gives 0.)
    """
    return interpolated_precisions(r, rel, [recall], rounding)[0]


def parse_levels(text: str) -> tuple[float, ...]:
    """``"0.2;0.5;0.8"`` (or commas/blanks) -> sorted levels; the standard 11 when empty."""
    parts = [p for p in text.replace(",", ";").replace(" ", ";").split(";") if p]
    if not parts:
        return STANDARD_LEVELS
    try:
        levels = [float(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"expected recall levels separated by ';' such as '0.2;0.5;0.8', got {text!r}"
        ) from None
    if not all(0.0 <= x <= 1.0 for x in levels):
        raise ValueError(f"recall levels must be numbers in [0, 1], got {text!r}")
    return tuple(sorted(levels))


LEVELS = Param(
    "levels", str, "",
    "recall levels in [0, 1] to average, separated by ';' (default: 0, 0.1, ..., 1, the 11 points)",
    normalize=lambda text: ";".join(format_value(x) for x in parse_levels(text)),
)


def iprec_average(r: Rankings, *, cutoff: None, rel: int, levels: str, rounding: str
                  ) -> NDArray[np.float64]:
    """The mean of interpolated precision over recall levels (11-point average by default).

    (1/L) * sum over levels x of IPrec(x), summed from the highest level down, in the order
    trec_eval's ``m_11pt_avg.c`` adds them. Same rounding rules and edge cases as IPrec.
    Levels are sorted (trec_eval does not sort ``-m 11pt_avg.x,y`` parameters, and its
    interpolation loop then skips levels given out of order; serpeval sorts them).
    """
    chosen = parse_levels(levels)
    total = np.zeros(r.n_queries)
    for value in reversed(interpolated_precisions(r, rel, chosen, rounding)):
        total = total + value
    return total / float(len(chosen))


def _trec_level(text: str) -> dict[str, float]:
    if "," in text:
        raise ValueError("one recall level per measure; write iprec_at_recall_0.10, "
                         "iprec_at_recall_0.20, ...")
    return {"recall": atof(text)}


def _trec_levels(text: str) -> dict[str, str]:
    return {"levels": ";".join(repr(atof(p)) for p in text.split(","))}


SPEC = MeasureSpec(
    name="IPrec",
    summary="interpolated precision at a recall level: best precision from the c-th relevant "
            "doc down",
    kernel=iprec,
    params=(REL, Param("recall", float, 0.0, "recall level x (c = round(x*R) relevant docs)",
                       minimum=0.0, maximum=1.0), ROUNDING, JUDGED_ONLY),
    at_param="recall",
    trec=("iprec_at_recall",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="van Rijsbergen 1979 (interpolation); trec_eval m_iprec_at_recall.c",
    trec_params=_trec_level,
    notes="IPrec@x (ir_measures' spelling) and ir_measures' IPrec objects are IPrec(recall=x,rounding=v9): "
          "ir_measures computes IPrec with pytrec_eval (trec_eval 9.0.8), which rounds levels that way.",
    family="Rank-based (precision at relevant ranks)",
    user_model="the best precision reachable at or after a recall level",
    grades="binary",
    use_when="precision-recall curves (interpolated precision at 11 standard recall levels)",
    unjudged="counted as non-relevant; judged_only=True removes them first (a condensed list)",
    ir_measures=("IPrec",),
)

AVG_SPEC = MeasureSpec(
    name="IPrecAvg",
    summary="interpolated precision averaged over recall levels (11-point average by default)",
    kernel=iprec_average,
    params=(REL, LEVELS, ROUNDING),
    trec=("11pt_avg",),
    properties=frozenset({"bounded", "no_relevant_is_zero"}),
    reference="Salton & McGill 1983 (11-point average); trec_eval m_11pt_avg.c",
    trec_params=_trec_levels,
    family="Rank-based (precision at relevant ranks)",
    user_model="the mean of interpolated precision over recall levels",
    grades="binary",
    use_when="the classic 11-point average precision",
    unjudged="counted as non-relevant (trec_eval's rule)",
)
