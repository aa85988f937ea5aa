"""Parameters and small kernel helpers shared by several measures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from serpeval.core.data import GRADE_LIMIT
from serpeval.measures._segments import relevant_docs
from serpeval.measures.spec import Param

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from serpeval.ranking import Rankings

REL = Param(
    "rel", int, 1,
    "minimum grade that counts as relevant (inclusive); trec_eval's -l",
    minimum=0, maximum=GRADE_LIMIT,
)
JUDGED_ONLY = Param(
    "judged_only", bool, False,
    "compute on the judged docs only: unjudged retrieved docs are removed and the ranks closed "
    "up (ir_measures' judged_only=True; trec_eval's -J for this one measure)",
)
#: Gain of a grade g: ``linear`` = g (trec_eval), ``exp`` = 2^g - 1 (Burges, gdeval).
Gain = Literal["linear", "exp"]
GAIN_KINDS: tuple[Gain, ...] = get_args(Gain)

GAIN = Param(
    "gain", str, "linear",
    "gain of a grade g: linear = g (trec_eval), exp = 2^g - 1 (Burges, gdeval)",
    choices=GAIN_KINDS,
)


def within(r: Rankings, cutoff: int | None) -> NDArray[np.bool_]:
    """Mask of ranked docs at rank <= cutoff (all of them when cutoff is None)."""
    if cutoff is None:
        return np.ones(len(r.grades), dtype=bool)
    return r.position < cutoff


def hits(r: Rankings, rel: int, cutoff: int | NDArray[np.int64] | None) -> NDArray[np.int64]:
    """Per query: relevant docs retrieved at rank <= cutoff (per query when an array; all
    retrieved when None), counted by binary search in the relevant docs' ranks."""
    return relevant_docs(r, rel).count_in_top(cutoff)


def safe_divide(num: NDArray[np.number[Any]], den: NDArray[np.number[Any]] | float) -> NDArray[np.float64]:
    """``num / den`` with 0 where ``den`` is 0 (integer counts are divided as float64)."""
    numerator = np.asarray(num, dtype=np.float64)
    denominator = np.broadcast_to(np.asarray(den, dtype=np.float64), numerator.shape)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out

